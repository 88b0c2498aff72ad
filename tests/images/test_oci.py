"""OCI image archives written without a container engine: a valid layout whose digests match
its contents, the names containerd imports them under, and the same bytes for the same input."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from kto_dev.images import oci

REFERENCE = "registry.k8s.io/pause:3.10"


@pytest.fixture
def binary(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "pause"
    path.parent.mkdir()
    path.write_bytes(b"\x7fELF not really a binary\n")
    path.chmod(0o755)
    return path


def members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_the_layout_is_valid_and_every_digest_matches_its_blob(
    tmp_path: Path, binary: Path
) -> None:
    archive = tmp_path / "pause.tar"
    digest = oci.write_binary_image(
        archive, REFERENCE, {"pause": binary}, ["/pause"], "65535:65535"
    )
    files = members(archive)
    assert json.loads(files["oci-layout"]) == {"imageLayoutVersion": "1.0.0"}
    for name, blob in files.items():
        if name.startswith("blobs/sha256/"):
            assert sha256(blob) == "sha256:" + name.rsplit("/", 1)[1]
    index = json.loads(files["index.json"])
    assert index["schemaVersion"] == 2 and index["mediaType"] == oci.INDEX
    (entry,) = index["manifests"]
    assert entry["digest"] == digest and entry["mediaType"] == oci.MANIFEST
    manifest_blob = files["blobs/sha256/" + digest.removeprefix("sha256:")]
    assert entry["size"] == len(manifest_blob)
    manifest = json.loads(manifest_blob)
    for described in [manifest["config"], *manifest["layers"]]:
        blob = files["blobs/sha256/" + described["digest"].removeprefix("sha256:")]
        assert described["size"] == len(blob)
    # The config names the uncompressed layer (its diff id), the manifest the gzip'd blob.
    (layer,) = manifest["layers"]
    assert layer["mediaType"] == oci.LAYER_GZIP
    layer_tar = gzip.decompress(files["blobs/sha256/" + layer["digest"].removeprefix("sha256:")])
    config = json.loads(files["blobs/sha256/" + manifest["config"]["digest"][7:]])
    assert config["rootfs"] == {"type": "layers", "diff_ids": [sha256(layer_tar)]}


def test_the_index_names_the_image_for_containerd_and_by_its_tag(
    tmp_path: Path, binary: Path
) -> None:
    oci.write_binary_image(tmp_path / "a.tar", REFERENCE, {"pause": binary}, ["/pause"])
    image = oci.read_archive(tmp_path / "a.tar")
    assert image.index["manifests"][0]["annotations"] == {
        "io.containerd.image.name": "registry.k8s.io/pause:3.10",
        "org.opencontainers.image.ref.name": "3.10",
    }
    assert image.name == REFERENCE


def test_the_config_holds_the_entrypoint_user_and_platform(tmp_path: Path, binary: Path) -> None:
    oci.write_binary_image(tmp_path / "a.tar", REFERENCE, {"pause": binary}, ["/pause"],
                           "65535:65535", architecture="arm64")  # fmt: skip
    config = oci.read_archive(tmp_path / "a.tar").config
    assert config["config"]["Entrypoint"] == ["/pause"]
    assert config["config"]["User"] == "65535:65535"
    assert config["architecture"] == "arm64" and config["os"] == "linux"
    oci.write_binary_image(tmp_path / "b.tar", REFERENCE, {"pause": binary}, ["/pause"])
    assert "User" not in oci.read_archive(tmp_path / "b.tar").config["config"]


def test_the_same_input_gives_the_same_bytes_and_another_input_another_digest(
    tmp_path: Path, binary: Path
) -> None:
    first = oci.write_binary_image(tmp_path / "a.tar", REFERENCE, {"pause": binary}, ["/pause"])
    binary.touch()  # a new modification time changes nothing
    second = oci.write_binary_image(tmp_path / "b.tar", REFERENCE, {"pause": binary}, ["/pause"])
    assert first == second
    assert (tmp_path / "a.tar").read_bytes() == (tmp_path / "b.tar").read_bytes()
    binary.write_bytes(b"another binary")
    third = oci.write_binary_image(tmp_path / "c.tar", REFERENCE, {"pause": binary}, ["/pause"])
    assert third != first


def test_the_layer_holds_the_files_with_their_folders_and_executable_bits(
    tmp_path: Path, binary: Path
) -> None:
    data = tmp_path / "src" / "data"
    data.write_text("x")
    oci.write_binary_image(tmp_path / "a.tar", REFERENCE,
                           {"/coredns": binary, "etc/ssl/bundle.crt": data}, ["/coredns"],
                           compress=False)  # fmt: skip
    image = oci.read_archive(tmp_path / "a.tar", read_layers=True)
    (layer,) = image.manifest["layers"]
    assert layer["mediaType"] == oci.LAYER_TAR
    with tarfile.open(fileobj=io.BytesIO(image.blobs[layer["digest"]])) as tar:
        entries = {m.name: (m.type, m.mode, m.uid, m.mtime) for m in tar}
    assert entries == {
        "coredns": (tarfile.REGTYPE, 0o755, 0, 0),
        "etc": (tarfile.DIRTYPE, 0o755, 0, 0),
        "etc/ssl": (tarfile.DIRTYPE, 0o755, 0, 0),
        "etc/ssl/bundle.crt": (tarfile.REGTYPE, 0o644, 0, 0),
    }


def test_a_layout_folder_is_packed_with_the_image_named(tmp_path: Path, binary: Path) -> None:
    # A layout as buildah leaves it: the image named by its ref.name only.
    written = oci.write_binary_image(tmp_path / "a.tar", REFERENCE, {"pause": binary}, ["/pause"])
    layout = tmp_path / "layout"
    with tarfile.open(tmp_path / "a.tar") as tar:
        tar.extractall(layout, filter="data")
    index = json.loads((layout / "index.json").read_text())
    index["manifests"][0]["annotations"] = {oci.REF_NAME: "kafka-topic-operator:0.1.0"}
    (layout / "index.json").write_text(json.dumps(index))
    digest = oci.write_layout_archive(layout, tmp_path / "b.tar", "kafka-topic-operator:0.1.0")
    assert digest == written
    image = oci.read_archive(tmp_path / "b.tar")
    assert image.name == "docker.io/library/kafka-topic-operator:0.1.0"
    assert image.index["manifests"][0]["annotations"][oci.REF_NAME] == "0.1.0"
    assert set(members(tmp_path / "b.tar")) == set(members(tmp_path / "a.tar"))


@pytest.mark.parametrize(
    ("reference", "name"),
    [
        ("kafka-topic-operator:0.1.0", "docker.io/library/kafka-topic-operator:0.1.0"),
        ("python:3.11-slim-bookworm", "docker.io/library/python:3.11-slim-bookworm"),
        ("busybox", "docker.io/library/busybox:latest"),
        ("someone/tool:1", "docker.io/someone/tool:1"),
        ("registry.k8s.io/coredns/coredns:v1.12.3", "registry.k8s.io/coredns/coredns:v1.12.3"),
        ("localhost:5000/x", "localhost:5000/x:latest"),
        ("localhost/x:2", "localhost/x:2"),
    ],
)
def test_references_are_named_as_kubernetes_asks_for_them(reference: str, name: str) -> None:
    assert oci.containerd_name(reference) == name
