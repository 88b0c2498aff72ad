"""A stand-in for the Dockerfile's base image (`python:3.11-slim-bookworm`), made from Debian's
packages, since no registry can be pulled from here.

mmdebstrap makes a minimal Debian bookworm with its Python 3.11, pip and CA certificates; the
result is added to an empty buildah container and committed under the Dockerfile's `FROM`
reference, so `buildah build --pull=never` of the unchanged Dockerfile finds it locally. Where the
official image differs in ways the Dockerfile relies on, the recipe makes this one agree: pip
installs system-wide (Debian's "externally managed" marker goes), into a folder also reachable
as `/usr/local/lib/python3.11/site-packages` (the spark target's SPARK_HOME), `python` runs
Python 3, and documentation is left out as in a slim image.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path

from kto_dev.images.buildah import Storage, run

REFERENCE = "docker.io/library/python:3.11-slim-bookworm"
SUITE = "bookworm"
# passwd: groupadd and useradd, which the Dockerfile runs and minbase leaves out.
# python-is-python3: `python`, as in the official image.
PACKAGES = ("python3", "python3-pip", "ca-certificates", "passwd", "python-is-python3")
# Kept out of the image, and out of anything the Dockerfile's steps install later (the rules
# stay in the image's dpkg configuration), as in Debian's slim images; copyright notices stay.
DPKG_OPTIONS = (
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/man/*",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
)
SITE = "/usr/local/lib/python3.11"
CUSTOMIZE = (
    'rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED',
    f'mkdir -p "$1"{SITE}/dist-packages && ln -s dist-packages "$1"{SITE}/site-packages',
)
CONFIG = (
    "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "--env", "LANG=C.UTF-8",
    "--cmd", '["python3"]',
)  # fmt: skip


def recipe_version() -> str:
    """A digest of everything above: a changed recipe makes a new base, and new images."""
    recipe = [REFERENCE, SUITE, PACKAGES, DPKG_OPTIONS, CUSTOMIZE, CONFIG]
    return hashlib.sha256(json.dumps(recipe).encode()).hexdigest()[:16]


def mmdebstrap_command(target: Path) -> list[str]:
    # With no mirror named, mmdebstrap takes Debian's own, with the stable release's updates and
    # security suites: the packages the official image is patched to.
    return [
        "mmdebstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
        *(f"--dpkgopt={option}" for option in DPKG_OPTIONS),
        *(f"--customize-hook={hook}" for hook in CUSTOMIZE),
        SUITE, str(target),
    ]  # fmt: skip


def _stamp(storage: Storage) -> Path:
    return storage.folder / f"base-{recipe_version()}.complete"


def ensure_base(storage: Storage) -> bool:
    """Makes the base image in `storage` unless this recipe's is there; True if it made it.
    Call under the cache's lock."""
    stamp = _stamp(storage)
    if stamp.exists() and storage.has_image(REFERENCE):
        return False
    with tempfile.TemporaryDirectory(prefix="base-", dir=storage.folder) as work:
        rootfs = Path(work) / "rootfs.tar"
        run(mmdebstrap_command(rootfs), "making the base image's file system with mmdebstrap")
        container = storage.buildah("from", "--pull=never", "scratch",
                                    what="an empty container").strip()  # fmt: skip
        try:
            storage.buildah("add", container, str(rootfs), "/", what="adding the file system")
            storage.buildah("config", *CONFIG, container, what="configuring the base image")
            storage.buildah("commit", "--quiet", container, REFERENCE,
                            what="committing the base image")  # fmt: skip
        finally:
            storage.buildah("rm", container, what="removing the base image's container")
    for old in storage.folder.glob("base-*.complete"):
        old.unlink()
    stamp.write_text(recipe_version() + "\n")
    return True
