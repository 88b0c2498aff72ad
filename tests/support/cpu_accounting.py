"""Where the suite's CPU goes. With KTO_TEST_CPU_LOG=<file>, each test appends a line: the CPU
seconds the whole machine spent while the test ran (busy time from /proc/stat, so that the JVMs,
servers and processes it started count too), its wall seconds and its node id, tab-separated.
The figures are a test's own only when tests run one at a time on an otherwise idle machine:
`KTO_TEST_CPU_LOG=$PWD/cpu.tsv make unit TEST_WORKERS=0`; then `python
tests/support/cpu_accounting.py cpu.tsv` sums them per file.

The sum over the suite bounds `make test` from below: no schedule of its tests on N cores takes
less than that many CPU seconds over N."""

from __future__ import annotations

import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

LOG = "KTO_TEST_CPU_LOG"
# /proc/stat's columns after the label: user nice system idle iowait irq softirq steal.
_BUSY_COLUMNS = (0, 1, 2, 5, 6, 7)


def busy_seconds(stat: str) -> float:
    """The machine's busy CPU seconds since boot, from the text of /proc/stat (pure)."""
    ticks = [int(t) for t in stat.split("\n", 1)[0].split()[1:9]]
    return sum(ticks[i] for i in _BUSY_COLUMNS) / os.sysconf("SC_CLK_TCK")


def _busy_now() -> float:
    return busy_seconds(Path("/proc/stat").read_text())


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    log = os.environ.get(LOG)
    if not log:
        yield
        return
    busy, began = _busy_now(), time.monotonic()
    yield
    cpu, wall = _busy_now() - busy, time.monotonic() - began
    with open(log, "a") as out:
        out.write(f"{cpu:.2f}\t{wall:.2f}\t{item.nodeid}\n")


def per_file(lines: list[str]) -> dict[str, tuple[float, float, int]]:
    """CPU seconds, wall seconds and tests per test file, from the log's lines (pure)."""
    totals: defaultdict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
    for line in lines:
        cpu, wall, node = line.rstrip("\n").split("\t")
        entry = totals[node.split("::", 1)[0]]
        entry[0] += float(cpu)
        entry[1] += float(wall)
        entry[2] += 1
    return {f: (c, w, int(n)) for f, (c, w, n) in totals.items()}


def main(log: str) -> None:
    totals = per_file(Path(log).read_text().splitlines())
    print(f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  file")
    for name, (cpu, wall, tests) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
        print(f"{cpu:8.1f} {wall:8.1f} {tests:6d}  {name}")
    cpu = sum(c for c, _, _ in totals.values())
    wall = sum(w for _, w, _ in totals.values())
    print(f"{cpu:8.1f} {wall:8.1f} {sum(t for *_, t in totals.values()):6d}  in all")


if __name__ == "__main__":
    main(sys.argv[1])
