"""The source root must never become a package: it would shadow the standard library's operator."""

from __future__ import annotations

import operator
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_source_root_is_not_a_package() -> None:
    assert not (ROOT / "operator" / "__init__.py").exists()


def test_stdlib_operator_is_the_one_imported() -> None:
    assert hasattr(operator, "itemgetter")


def test_ruff_rule_a_guards_the_source_root(tmp_path: Path) -> None:
    shadow = tmp_path / "operator"
    shadow.mkdir()
    (shadow / "__init__.py").write_text('"""shadow"""\n')
    ruff = Path(sys.executable).parent / "ruff"
    result = subprocess.run(
        [str(ruff), "check", "--isolated", "--select", "A005", str(shadow / "__init__.py")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert "A005" in result.stdout
