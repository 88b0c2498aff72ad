"""The per-test CPU log (tests/support/cpu_accounting.py): /proc/stat read as the kernel
documents it, the sums per file, and a test run writing its line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cpu_accounting import busy_seconds, per_file

ROOT = Path(__file__).resolve().parent.parent


def test_busy_time_is_every_column_but_idle_and_iowait() -> None:
    hz = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat = f"cpu  {hz} {2 * hz} {3 * hz} 1000000 500000 {4 * hz} {5 * hz} {6 * hz} 7 8\ncpu0 1 2"
    assert busy_seconds(stat) == 1 + 2 + 3 + 4 + 5 + 6


def test_the_sums_are_per_test_file() -> None:
    lines = ["1.50\t2.00\ttests/a.py::test_x", "0.25\t1.00\ttests/b.py::test_y[1]",
             "2.00\t0.50\ttests/a.py::test_z"]  # fmt: skip
    assert per_file(lines) == {"tests/a.py": (3.5, 2.5, 2), "tests/b.py": (0.25, 1.0, 1)}


def test_a_run_with_the_log_set_writes_a_line_per_test(tmp_path: Path) -> None:
    log = tmp_path / "cpu.tsv"
    nodes = [
        "tests/test_cpu_accounting.py::test_busy_time_is_every_column_but_idle_and_iowait",
        "tests/test_cpu_accounting.py::test_the_sums_are_per_test_file",
    ]
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *nodes],
        cwd=ROOT, env={**os.environ, "KTO_TEST_CPU_LOG": str(log)}, check=True,
        capture_output=True,
    )  # fmt: skip
    rows = [line.split("\t") for line in log.read_text().splitlines()]
    assert [node for _, _, node in rows] == nodes
