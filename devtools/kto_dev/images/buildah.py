"""buildah on a container storage of its own, inside the images cache.

Every buildah command runs with `CONTAINERS_STORAGE_CONF` naming a storage.conf in the cache
folder, so the images, layers and working containers stay there and the machine's own container
storage (and whatever a storage.conf of the machine's says) is neither read nor changed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# Overlay shares the base image's layers between images and builds in place; vfs copies every
# layer in full (gigabytes for the Spark image) but works on any filesystem, so it is only the
# fallback where the kernel or the cache's filesystem (an overlay itself, say) refuses overlay.
DRIVERS = ("overlay", "vfs")


class ImageBuildError(RuntimeError):
    """An image could not be made; the message names the command and the end of its output."""


def run(args: list[str], what: str, cwd: Path | None = None,
        env: Mapping[str, str] | None = None) -> str:  # fmt: skip
    """The command's output; on failure the error names the command and its output's tail."""
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            # One stream: a failing build step's own output comes before buildah's summary.
            stderr=subprocess.STDOUT,
            text=True,
        )
    except FileNotFoundError as e:
        raise ImageBuildError(f"{what}: {args[0]} is not installed ({e.strerror})") from e
    if done.returncode != 0:
        raise ImageBuildError(
            f"{what} failed (exit {done.returncode}): {' '.join(args)}\n"
            + done.stdout.strip()[-3000:]
        )
    return done.stdout


@dataclass(frozen=True)
class Storage:
    """buildah's private storage under `folder`: storage.conf, the images (root) and the
    run-time state (run)."""

    folder: Path

    @property
    def conf(self) -> Path:
        return self.folder / "storage.conf"

    def env(self) -> dict[str, str]:
        return {**os.environ, "CONTAINERS_STORAGE_CONF": str(self.conf)}

    def buildah(self, *args: str, what: str, cwd: Path | None = None) -> str:
        return run(["buildah", *args], what, cwd, self.env())

    def has_image(self, reference: str) -> bool:
        done = subprocess.run(
            ["buildah", "inspect", "--type", "image", "--format", "{{.FromImageID}}", reference],
            env=self.env(), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        )  # fmt: skip
        return done.returncode == 0

    def driver(self) -> str:
        for line in self.conf.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "driver":
                return value.strip().strip('"')
        raise ImageBuildError(f"{self.conf}: no storage driver")


def storage_conf(folder: Path, driver: str) -> str:
    return (
        "[storage]\n"
        f'driver = "{driver}"\n'
        f'graphroot = "{folder / "root"}"\n'
        f'runroot = "{folder / "run"}"\n'
    )


def open_storage(folder: Path) -> Storage:
    """The storage in `folder`, set up on first use with the first driver that works here."""
    storage = Storage(folder)
    if storage.conf.exists():
        return storage
    if shutil.which("buildah") is None:
        raise ImageBuildError("buildah is not installed: make system-deps installs it")
    folder.mkdir(parents=True, exist_ok=True)
    failures = []
    for driver in DRIVERS:
        storage.conf.write_text(storage_conf(folder, driver))
        try:
            # Opening the store is where a driver that cannot work here says so.
            storage.buildah("info", what=f"opening a {driver} container storage")
            return storage
        except ImageBuildError as e:
            failures.append(str(e))
            storage.conf.unlink()
            shutil.rmtree(folder / "root", ignore_errors=True)
    raise ImageBuildError("no container storage driver works here:\n" + "\n".join(failures))
