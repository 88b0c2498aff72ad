"""kstatus (sigs.k8s.io/cli-utils), the library Flux and kpt wait on, computes the status the
operator means for every captured KafkaTopic and KafkaRebalance: a Go test of its own
(tests/ecosystem/kstatus), run here with the machine's Go."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

KSTATUS = Path(__file__).parent / "kstatus"

pytestmark = pytest.mark.go


def test_kstatus_reads_every_captured_status_as_the_operator_means_it() -> None:
    go = shutil.which("go")
    assert go is not None, "Go is needed: the README lists it beside Python, Java and Maven"
    # -count=1: the captures are read at run time, so a cached pass proves nothing.
    run = subprocess.run(
        [go, "test", "-count=1", "-v", "./..."],
        cwd=KSTATUS,
        env={**os.environ, "GOFLAGS": "-mod=readonly"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for test in ("TestEachCaptureHasTheStatusFluxWaitsFor",
                 "TestStalledResourcesCarryTheOperatorsMessage",
                 "TestAGenerationNotYetObservedIsInProgress"):  # fmt: skip
        assert f"--- PASS: {test}" in run.stdout, run.stdout
