"""The node's images: the single-binary images cached by content (no container engine needed),
and, marked `node`, the real build with buildah of the base image's stand-in and both of the
Dockerfile's targets, checked from their archives and by running the operator's command."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from kto_dev.images import base, build, cache, oci
from kto_dev.images.build import Images, build_images
from kto_dev.images.buildah import Storage, open_storage

ROOT = Path(__file__).resolve().parents[2]


def fail(*args: object, **kwargs: object) -> NoReturn:
    raise AssertionError(f"nothing should have run: {args}")


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KTO_IMAGES_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_binary_image_is_made_once_per_content(
    private_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pause = tmp_path / "pause"
    pause.write_bytes(b"pause v1")
    pause.chmod(0o755)
    image = build.pause_image(pause)
    assert image.archive.is_file() and image.archive.is_relative_to(private_cache)
    assert image.containerd_name == "registry.k8s.io/pause:3.10"
    archived = oci.read_archive(image.archive)
    assert archived.name == "registry.k8s.io/pause:3.10"
    assert archived.config["config"]["Entrypoint"] == ["/pause"]
    assert archived.config["config"]["User"] == "65535:65535"
    assert cache.record(image.archive.parent)["image"] == "registry.k8s.io/pause:3.10"

    with monkeypatch.context() as m:
        m.setattr(oci, "write_binary_image", fail)
        assert build.pause_image(pause) == image  # the same content: found, not made
    pause.write_bytes(b"pause v2")
    rebuilt = build.pause_image(pause)
    assert rebuilt.archive != image.archive and rebuilt.archive.is_file()
    coredns = build.coredns_image(pause)
    assert oci.read_archive(coredns.archive).config["config"]["Entrypoint"] == ["/coredns"]
    assert coredns.containerd_name == "registry.k8s.io/coredns/coredns:v1.12.3"


def test_the_image_names_follow_the_chart_app_version() -> None:
    version = build.app_version(ROOT)
    assert build.references(ROOT) == {
        "operator": f"kafka-topic-operator:{version}",
        "spark": f"kafka-topic-operator-spark:{version}",
    }


def test_the_build_steps_read_the_host_ca_bundle_only_where_it_exists(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bundle = tmp_path / "bundle.crt"
    monkeypatch.setattr(build, "CA_BUNDLE", bundle)
    command = build.build_command(ROOT, "operator", "kafka-topic-operator:0.1.0")
    assert "--volume" not in command
    assert command[:4] == ["build", "--pull=never", "--layers", "--target"]
    bundle.write_text("certificates")
    command = build.build_command(ROOT, "operator", "kafka-topic-operator:0.1.0")
    assert command[command.index("--volume") + 1] == f"{bundle}:{bundle}:ro"


@pytest.fixture(scope="module")
def images() -> Images:
    return build_images(ROOT)


@pytest.fixture(scope="module")
def storage() -> Storage:
    return open_storage(cache.cache_root() / "storage")


@pytest.mark.node
def test_the_base_image_stands_in_under_the_dockerfile_from_reference(
    images: Images, storage: Storage
) -> None:
    assert storage.has_image(base.REFERENCE)
    assert "python:3.11-slim-bookworm" in (ROOT / "Dockerfile").read_text()
    assert storage.driver() in ("overlay", "vfs")


@pytest.mark.node
def test_the_operator_archive_runs_kto_as_the_unprivileged_user(images: Images) -> None:
    archived = oci.read_archive(images.operator.archive)
    assert archived.name == f"docker.io/library/{images.operator.reference}"
    assert images.operator.reference == f"kafka-topic-operator:{build.app_version(ROOT)}"
    settings = archived.config["config"]
    assert settings["User"] == "10001:10001"
    assert settings["Entrypoint"] == ["kto", "run"] and settings["Cmd"] == ["--help"]


@pytest.mark.node
def test_the_spark_archive_starts_with_its_entrypoint(images: Images) -> None:
    archived = oci.read_archive(images.spark.archive)
    assert archived.name == f"docker.io/library/{images.spark.reference}"
    settings = archived.config["config"]
    assert settings["User"] == "10001:10001"
    assert settings["Entrypoint"] == ["spark-entrypoint"]
    env = dict(e.split("=", 1) for e in settings["Env"])
    assert env["SPARK_HOME"] == "/usr/local/lib/python3.11/site-packages/pyspark"


@pytest.fixture
def container(images: Images, storage: Storage, request: pytest.FixtureRequest) -> Iterator[str]:
    archive: Path = getattr(images, request.param).archive
    made = storage.buildah(
        "from", "--quiet", "--pull-always", f"oci-archive:{archive}", what="from"
    )
    name = made.splitlines()[-1]
    image = storage.buildah("inspect", "--type", "container", "--format", "{{.FromImageID}}", name,
                            what="inspect")  # fmt: skip
    try:
        yield name
    finally:
        storage.buildah("rm", name, what="rm")
        storage.buildah("rmi", image.strip(), what="rmi")


def in_container(storage: Storage, name: str, *command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["buildah", "run", "--network=none", name, "--", *command],
        env=storage.env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.node
@pytest.mark.parametrize("container", [pytest.param("operator")], indirect=True)
def test_kto_runs_in_the_operator_image(storage: Storage, container: str) -> None:
    done = in_container(storage, container, "kto", "--help")
    assert done.returncode == 0 and "run" in done.stdout, done.stderr
    done = in_container(storage, container, "id", "-u")
    assert done.stdout.strip() == "10001"


@pytest.mark.node
@pytest.mark.parametrize("container", [pytest.param("spark")], indirect=True)
def test_java_and_spark_home_are_there_in_the_spark_image(storage: Storage, container: str) -> None:
    done = in_container(
        storage, container, "sh", "-c", 'test -d "$SPARK_HOME/jars" && java -version'
    )
    assert done.returncode == 0 and "openjdk" in done.stderr, done.stdout + done.stderr


@pytest.mark.node
def test_a_second_build_with_nothing_changed_runs_no_buildah(
    images: Images, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(build, "open_storage", fail)
    monkeypatch.setattr(base, "run", fail)
    monkeypatch.setattr(Storage, "buildah", fail)
    started = time.monotonic()
    assert build_images(ROOT) == images
    assert time.monotonic() - started < 1
