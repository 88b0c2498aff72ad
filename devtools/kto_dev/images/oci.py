"""OCI image archives: a tar of an OCI image layout (`oci-layout`, `index.json`, `blobs/sha256/`).

`ctr images import` loads such an archive under the name in the index's `io.containerd.image.name`
annotation. `write_binary_image` makes a whole image from a few files (a static binary and
nothing else); `write_layout_archive` packs a layout another tool wrote, naming its image. Both
write members in a fixed order with fixed times and owners, so the same input gives the same
bytes and the same digests. `read_archive` reads one back.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import platform
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

INDEX = "application/vnd.oci.image.index.v1+json"
MANIFEST = "application/vnd.oci.image.manifest.v1+json"
CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"

CONTAINERD_NAME = "io.containerd.image.name"
REF_NAME = "org.opencontainers.image.ref.name"

# The image-spec's layout version, the whole content of the `oci-layout` file.
LAYOUT_VERSION = b'{"imageLayoutVersion":"1.0.0"}'
DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The epoch as every member's time and the config's creation date: nothing of the clock leaks in.
EPOCH = "1970-01-01T00:00:00Z"

Json = dict[str, Any]


def host_architecture() -> str:
    """The machine's architecture in Go's (and so the image-spec's) spelling."""
    machine = platform.machine().lower()
    return {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm"}.get(machine, machine)


def containerd_name(reference: str) -> str:
    """The fully qualified name Kubernetes asks the runtime for: `pause:3.10` is
    `docker.io/library/pause:3.10`, a name without a tag or digest is `:latest`."""
    first, _, rest = reference.partition("/")
    if not rest:
        reference = f"docker.io/library/{reference}"
    elif "." not in first and ":" not in first and first != "localhost":
        reference = f"docker.io/{reference}"
    last = reference.rsplit("/", 1)[1]
    if ":" not in last and "@" not in last:
        reference += ":latest"
    return reference


def tag_of(reference: str) -> str:
    """What follows the name: the tag (or digest) alone, as OCI layouts name an image."""
    last = containerd_name(reference).rsplit("/", 1)[1]
    return last.split("@", 1)[1] if "@" in last else last.split(":", 1)[1]


def canonical_json(value: Json) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def descriptor(media_type: str, data: bytes) -> Json:
    return {"mediaType": media_type, "digest": digest_of(data), "size": len(data)}


def _member(
    name: str, size: int = 0, mode: int = 0o644, kind: bytes = tarfile.REGTYPE
) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.type, info.mtime = size, mode, kind, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    tar.addfile(_member(name, len(data), mode), io.BytesIO(data))


def _add_dir(tar: tarfile.TarFile, name: str) -> None:
    tar.addfile(_member(name, mode=0o755, kind=tarfile.DIRTYPE))


def layer_tar(files: Mapping[str, Path]) -> bytes:
    """A layer holding `files` (path in the image -> file here), with the folders above them;
    a file keeps its executable bit and nothing else of its owner or time."""
    entries = {name.strip("/"): source for name, source in files.items()}
    folders = {str(parent) for name in entries for parent in Path(name).parents} - {"."}
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(folders | set(entries)):
            if name not in entries:
                _add_dir(tar, name)
                continue
            source = entries[name]
            mode = 0o755 if os.access(source, os.X_OK) else 0o644
            _add_bytes(tar, name, source.read_bytes(), mode)
    return out.getvalue()


def _gzip(data: bytes) -> bytes:
    out = io.BytesIO()
    # No file name and time zero in the gzip header: the same layer compresses to the same bytes.
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=6) as z:
        z.write(data)
    return out.getvalue()


def _write_archive(archive: Path, index: Json, blobs: Mapping[str, bytes | Path]) -> None:
    """The layout as a tar at `archive`, written beside it and renamed into place."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_name(archive.name + ".partial")
    with tarfile.open(partial, mode="w", format=tarfile.PAX_FORMAT) as tar:
        _add_bytes(tar, "oci-layout", LAYOUT_VERSION)
        _add_bytes(tar, "index.json", canonical_json(index))
        _add_dir(tar, "blobs")
        _add_dir(tar, "blobs/sha256")
        for digest in sorted(blobs):
            name = "blobs/sha256/" + digest.removeprefix("sha256:")
            blob = blobs[digest]
            if isinstance(blob, Path):
                with blob.open("rb") as f:
                    tar.addfile(_member(name, blob.stat().st_size), f)
            else:
                _add_bytes(tar, name, blob)
    partial.rename(archive)


def _index(manifest: Json, reference: str) -> Json:
    named = {**manifest, "annotations": {CONTAINERD_NAME: containerd_name(reference),
                                         REF_NAME: tag_of(reference)}}  # fmt: skip
    return {"schemaVersion": 2, "mediaType": INDEX, "manifests": [named]}


def write_binary_image(
    archive: Path,
    reference: str,
    files: Mapping[str, Path],
    entrypoint: Sequence[str],
    user: str | None = None,
    *,
    compress: bool = True,
    architecture: str | None = None,
) -> str:
    """Writes an image of one layer holding `files` (path in the image -> file here) to
    `archive`, named `reference`; returns the manifest's digest."""
    layer = layer_tar(files)
    blob = _gzip(layer) if compress else layer
    layer_descriptor = descriptor(LAYER_GZIP if compress else LAYER_TAR, blob)
    arch = architecture or host_architecture()
    settings: Json = {"Entrypoint": list(entrypoint), "Env": [DEFAULT_PATH], "WorkingDir": "/"}
    if user is not None:
        settings["User"] = user
    config = canonical_json({
        "architecture": arch,
        "os": "linux",
        "created": EPOCH,
        "config": settings,
        "rootfs": {"type": "layers", "diff_ids": [digest_of(layer)]},
        "history": [{"created": EPOCH, "created_by": "files: " + " ".join(sorted(files))}],
    })  # fmt: skip
    config_descriptor = descriptor(CONFIG, config)
    manifest = canonical_json(
        {"schemaVersion": 2, "mediaType": MANIFEST, "config": config_descriptor,
         "layers": [layer_descriptor]}
    )  # fmt: skip
    manifest_descriptor = {**descriptor(MANIFEST, manifest),
                           "platform": {"architecture": arch, "os": "linux"}}  # fmt: skip
    blobs: dict[str, bytes | Path] = {config_descriptor["digest"]: config,
                                      layer_descriptor["digest"]: blob,
                                      manifest_descriptor["digest"]: manifest}  # fmt: skip
    _write_archive(archive, _index(manifest_descriptor, reference), blobs)
    return str(manifest_descriptor["digest"])


def write_layout_archive(layout: Path, archive: Path, reference: str) -> str:
    """Packs the OCI layout folder `layout` (one image, as `buildah push ... oci:FOLDER` leaves
    it) into `archive`, its index naming the image `reference`; returns the manifest digest."""
    index = json.loads((layout / "index.json").read_text())
    manifests = index.get("manifests", [])
    if len(manifests) != 1:
        raise ValueError(f"{layout}: expected one image in the layout, found {len(manifests)}")
    blobs: dict[str, bytes | Path] = {
        "sha256:" + path.name: path for path in (layout / "blobs" / "sha256").iterdir()
    }
    _write_archive(archive, _index(manifests[0], reference), blobs)
    return str(manifests[0]["digest"])


@dataclass(frozen=True)
class ArchivedImage:
    """An archive's index, its one image's manifest and config, and every blob's bytes."""

    index: Json
    manifest: Json
    config: Json
    blobs: Mapping[str, bytes]

    @property
    def name(self) -> str:
        return str(self.index["manifests"][0]["annotations"][CONTAINERD_NAME])


def read_archive(archive: Path, read_layers: bool = False) -> ArchivedImage:
    """The archive's image; layers' bytes only with `read_layers` (they can be large)."""
    with tarfile.open(archive) as tar:
        index = json.loads(_read(tar, "index.json"))
        manifest_digest = index["manifests"][0]["digest"]
        manifest = json.loads(_read(tar, _blob_path(manifest_digest)))
        config_digest = manifest["config"]["digest"]
        blobs = {manifest_digest: _read(tar, _blob_path(manifest_digest)),
                 config_digest: _read(tar, _blob_path(config_digest))}  # fmt: skip
        if read_layers:
            for layer in manifest["layers"]:
                blobs[layer["digest"]] = _read(tar, _blob_path(layer["digest"]))
    return ArchivedImage(index, manifest, json.loads(blobs[config_digest]), blobs)


def _blob_path(digest: str) -> str:
    return "blobs/sha256/" + digest.removeprefix("sha256:")


def _read(tar: tarfile.TarFile, name: str) -> bytes:
    f = tar.extractfile(name)
    if f is None:
        raise ValueError(f"{tar.name!s}: {name} is not a file")
    return f.read()
