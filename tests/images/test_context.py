"""The images' cache key: the build context as `.dockerignore` lets it in, read with Docker's
rules; the key changes with what the build reads and with nothing else."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kto_dev.images.context import content_key, context_files, is_ignored, parse_dockerignore

ROOT = Path(__file__).resolve().parents[2]

DOCKERIGNORE = """\
# only what the image needs
*
!pyproject.toml
!operator/
!scripts/entry.sh
**/__pycache__
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    files = {
        ".dockerignore": DOCKERIGNORE,
        ".gitignore": "*.egg-info/\n",
        "Dockerfile": "FROM scratch\n",
        "pyproject.toml": "[project]\n",
        "operator/pkg/a.py": "A = 1\n",
        "operator/pkg/__pycache__/a.cpython-311.pyc": "junk",
        "operator/pkg.egg-info/PKG-INFO": "junk",
        "scripts/entry.sh": "#!/bin/sh\n",
        "scripts/other.sh": "#!/bin/sh\n",
        "docs/guide.md": "# guide\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "Dockerfile", "operator/pkg/a.py"],
                   check=True)  # fmt: skip
    return tmp_path


def test_dockerignore_lets_in_only_what_it_names_the_last_matching_pattern_deciding() -> None:
    patterns = parse_dockerignore(DOCKERIGNORE)
    assert not is_ignored("pyproject.toml", patterns)
    assert not is_ignored("operator/pkg/deep/a.py", patterns)
    assert not is_ignored("scripts/entry.sh", patterns)
    assert is_ignored("scripts/other.sh", patterns)
    assert is_ignored("README.md", patterns)
    assert is_ignored("docs/guide.md", patterns)
    assert is_ignored("operator/pkg/__pycache__/a.pyc", patterns)
    assert is_ignored("Dockerfile", patterns)
    # `*` stops at a slash; `**` spans folders; `?` is one character.
    assert is_ignored("a/b.txt", parse_dockerignore("a/*.txt"))
    assert not is_ignored("a/b/c.txt", parse_dockerignore("a/*.txt"))
    assert is_ignored("a/b/c.txt", parse_dockerignore("a/**/*.txt"))
    assert is_ignored("a/c.txt", parse_dockerignore("a/**/*.txt"))
    assert is_ignored("x1", parse_dockerignore("x?"))
    assert not is_ignored("x12", parse_dockerignore("x?"))


def test_the_context_is_what_git_knows_of_less_what_dockerignore_keeps_out(repo: Path) -> None:
    # Tracked and untracked files alike; git-ignored junk never.
    assert context_files(repo) == ["operator/pkg/a.py", "pyproject.toml", "scripts/entry.sh"]


def test_the_key_changes_with_a_file_in_the_context_and_not_with_one_outside(repo: Path) -> None:
    key = content_key(repo, {"base": "1"})
    assert content_key(repo, {"base": "1"}) == key
    junk = ("operator/pkg/__pycache__/a.cpython-311.pyc", "operator/pkg.egg-info/PKG-INFO")
    for outside in ("docs/guide.md", "scripts/other.sh", *junk):
        (repo / outside).write_text("changed")
        assert content_key(repo, {"base": "1"}) == key, outside
    (repo / "docs/new.md").write_text("new")
    assert content_key(repo, {"base": "1"}) == key
    (repo / "operator/pkg/a.py").write_text("A = 2\n")
    changed = content_key(repo, {"base": "1"})
    assert changed != key
    (repo / "operator/pkg/b.py").write_text("B = 1\n")  # a new file, not yet added to git
    added = content_key(repo, {"base": "1"})
    assert added != changed
    (repo / "scripts/entry.sh").chmod(0o755)
    executable = content_key(repo, {"base": "1"})
    assert executable != added
    (repo / "Dockerfile").write_text("FROM scratch\nUSER 1\n")
    assert content_key(repo, {"base": "1"}) != executable
    assert content_key(repo, {"base": "2"}) != content_key(repo, {"base": "1"})


def test_this_repository_context_is_the_project_sources_and_the_spark_entrypoint() -> None:
    files = context_files(ROOT)
    assert {"pyproject.toml", "README.md", "scripts/spark-entrypoint.sh"} <= set(files)
    assert [f for f in files if f.startswith("operator/kafka_topic_operator/")]
    outside = [f for f in files if f not in {"pyproject.toml", "README.md",
               "scripts/spark-entrypoint.sh"} and not f.startswith("operator/")]  # fmt: skip
    assert outside == []
    assert not [f for f in files if "__pycache__" in f]
