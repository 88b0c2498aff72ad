"""The images cache, shared by every clone on the machine as the Go builds' caches are.

`KTO_IMAGES_CACHE`, else ~/.cache/kafka-topic-operator/images, holds buildah's private storage
(`storage/`) and one folder of archives per content key (`targets/KEY`, `binaries/KEY`). A folder
is made under a temporary name, stamped `.complete` and renamed into place, under the cache's
lock: a second caller waits, then finds the stamp and makes nothing.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from kto_dev import go_build

COMPLETE = go_build.COMPLETE
# Archives of older contents kept beside the newest: a few clones or branches on one machine
# each find theirs, while a long run of edits does not fill the disk with gigabyte archives.
KEEP = 3

# Fills the fresh folder it is given; returns the stamp's own fields.
Make = Callable[[Path], dict[str, object]]


def cache_root() -> Path:
    return go_build.cache_root("KTO_IMAGES_CACHE", "images")


def make_once(folder: Path, make: Make, keep: int = KEEP) -> Path:
    """`folder`, made by `make` unless its stamp is there; older siblings beyond `keep` go."""
    if go_build.is_complete(folder):
        return folder
    root = cache_root()
    with go_build.exclusive(root):
        if go_build.is_complete(folder):
            return folder
        folder.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="make-", dir=folder.parent))
        work.chmod(0o755)  # readable like the rest of the cache, not mkdtemp's owner-only
        try:
            started = time.monotonic()
            stamp = {**make(work), "seconds": round(time.monotonic() - started)}
            (work / COMPLETE).write_text(json.dumps(stamp) + "\n")
            shutil.rmtree(folder, ignore_errors=True)
            work.rename(folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        prune(folder.parent, keep)
    return folder


def prune(parent: Path, keep: int) -> None:
    """Removes all but the `keep` most recently made complete folders in `parent`."""
    made = sorted((f for f in parent.iterdir() if go_build.is_complete(f)),
                  key=lambda f: (f / COMPLETE).stat().st_mtime, reverse=True)  # fmt: skip
    for stale in made[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def record(folder: Path) -> dict[str, object]:
    """What the stamp says: what was made from what, and how long it took."""
    return go_build.build_record(folder)
