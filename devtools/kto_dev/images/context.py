"""The Dockerfile's build context as a content key: which files `.dockerignore` lets in, and a
digest over their paths, executable bits and contents, the Dockerfile and whatever else the
caller names (the base image's recipe, the image names).

Candidates are the files git knows of, tracked or not yet added, less what git ignores: the
junk a working tree collects (`__pycache__`, egg-info, virtual environments) never changes the
key. `.dockerignore` is read with Docker's rules: patterns in order, the last that matches a path
or one of its parent folders decides, `!` lets a path back in, `*` and `?` stop at `/`, `**`
spans folders.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kto_dev.images.buildah import ImageBuildError


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern[str]
    lets_in: bool


def _regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def parse_dockerignore(text: str) -> list[Pattern]:
    patterns = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        lets_in = line.startswith("!")
        cleaned = os.path.normpath(line.removeprefix("!").strip()).lstrip("/")
        patterns.append(Pattern(_regex(cleaned), lets_in))
    return patterns


def is_ignored(path: str, patterns: Iterable[Pattern]) -> bool:
    """Whether `path` (relative, with `/`) stays out of the build context."""
    parts = path.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for pattern in patterns:
        # A pattern can only change the verdict: skip those that would confirm it.
        if pattern.lets_in != ignored:
            continue
        if any(pattern.regex.match(candidate) for candidate in candidates):
            ignored = not pattern.lets_in
    return ignored


def git_files(root: Path) -> list[str]:
    """Every file git knows of under `root`, tracked or untracked, less what git ignores."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root, capture_output=True, check=True,
        ).stdout  # fmt: skip
    except (OSError, subprocess.CalledProcessError) as e:
        raise ImageBuildError(f"listing the build context with git ls-files in {root}: {e}") from e
    # A tracked file deleted from the working tree is listed too, and is not in the context.
    names = {n for n in listed.decode().split("\0") if n}
    return sorted(n for n in names if (root / n).is_file() or (root / n).is_symlink())


def context_files(root: Path) -> list[str]:
    ignore = root / ".dockerignore"
    patterns = parse_dockerignore(ignore.read_text()) if ignore.exists() else []
    return [n for n in git_files(root) if not is_ignored(n, patterns)]


def _file_digest(path: Path) -> str:
    if path.is_symlink():
        return "link:" + os.readlink(path)
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    executable = "x" if os.access(path, os.X_OK) else "-"
    return f"{executable}:{h.hexdigest()}"


def content_key(root: Path, extra: Mapping[str, str], dockerfile: str = "Dockerfile") -> str:
    """A hex digest that changes when the Dockerfile, `.dockerignore`, a file of the context or
    a value of `extra` does, and only then."""
    h = hashlib.sha256()
    lines = [f"extra {k}={v}" for k, v in sorted(extra.items())]
    for special in (dockerfile, ".dockerignore"):
        if (root / special).exists():
            lines.append(f"{special} {_file_digest(root / special)}")
    lines += [f"file {n} {_file_digest(root / n)}" for n in context_files(root)]
    for line in lines:
        h.update(line.encode() + b"\n")
    return h.hexdigest()
