"""The Spark operator's build, its pure parts: our module's go.mod carries the operator's own
replace directives (Go applies a dependency's replaces only in the main module), the Go it needs,
and what the binary is stamped with. The build itself runs in `make spark-operator`; the node's
end-to-end test (tests/node/test_spark_application.py) runs what it built."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from kto_dev import go_build
from kto_dev.spark_operator import build
from kto_dev.spark_operator.build import (
    MODULE,
    SparkOperatorBuildError,
    build_go_mod,
    go_directive,
    go_is_new_enough,
    replace_directives,
    version_ldflags,
)

# The layout of the operator's go.mod: a go line, a tool line, require blocks, a replace block
# with a comment, and a one-line replace.
UPSTREAM_GO_MOD = """module github.com/kubeflow/spark-operator/v2

go 1.24.1

tool k8s.io/code-generator

require (
\tk8s.io/api v0.33.3
\tk8s.io/client-go v0.33.3
)

require github.com/example/indirect v1.0.0 // indirect

replace (
\tk8s.io/api => k8s.io/api v0.32.5
\t// pinned below what the requirements ask for
\tk8s.io/client-go   =>   k8s.io/client-go v0.32.5 // the client of that release
)

replace github.com/example/fork v1.0.0 => github.com/example/fork-fixed v1.2.3
"""


def parsed(go_mod: str, tmp_path: Path) -> dict[str, Any]:
    """The go.mod as the build reads it: Go's own parser, `go mod edit -json`."""
    path = tmp_path / "go.mod"
    path.write_text(go_mod)
    go = go_build.find_go("any")
    done = subprocess.run([go, "mod", "edit", "-json", str(path)], capture_output=True,
                          text=True, env=go_build.go_env(), cwd=tmp_path, check=True)  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_the_replace_directives_are_read_from_the_operator_go_mod_in_order(
    tmp_path: Path,
) -> None:
    assert replace_directives(parsed(UPSTREAM_GO_MOD, tmp_path)) == [
        "k8s.io/api => k8s.io/api v0.32.5",
        "k8s.io/client-go => k8s.io/client-go v0.32.5",
        "github.com/example/fork v1.0.0 => github.com/example/fork-fixed v1.2.3",
    ]


def test_a_go_mod_without_replaces_has_none(tmp_path: Path) -> None:
    go_mod = "module m\n\ngo 1.24\n\nrequire k8s.io/api v0.33.3\n"
    assert replace_directives(parsed(go_mod, tmp_path)) == []


def test_a_replacement_by_a_local_folder_cannot_be_carried_over(tmp_path: Path) -> None:
    go_mod = "module m\n\ngo 1.24\n\nreplace (\n\tk8s.io/api => ./staging/api\n)\n"
    with pytest.raises(SparkOperatorBuildError) as refused:
        replace_directives(parsed(go_mod, tmp_path))
    assert str(refused.value) == (
        "the Spark operator's go.mod replaces modules with local folders: "
        "k8s.io/api => ./staging/api"
    )


def test_our_module_requires_the_operator_with_its_replaces(tmp_path: Path) -> None:
    go_mod = build_go_mod("2.4.0", "1.24.1", replace_directives(parsed(UPSTREAM_GO_MOD, tmp_path)))
    assert go_mod.startswith("module kto.dev/spark-operator-build\n\ngo 1.24.1\n")
    assert f"require {MODULE} v2.4.0\n" in go_mod
    assert "replace (\n\tk8s.io/api => k8s.io/api v0.32.5\n" in go_mod
    assert "\tgithub.com/example/fork v1.0.0 => github.com/example/fork-fixed v1.2.3\n)\n" in go_mod
    assert "replace" not in build_go_mod("2.4.0", "1.24.1", [])
    # Go reads back what it wrote.
    assert parsed(go_mod, tmp_path)["Replace"][0]["New"] == {"Path": "k8s.io/api",
                                                             "Version": "v0.32.5"}  # fmt: skip


def test_the_go_the_operator_needs_is_its_go_line(tmp_path: Path) -> None:
    assert go_directive(parsed(UPSTREAM_GO_MOD, tmp_path)) == "1.24.1"
    assert go_directive(parsed("module m\n\ngo 1.25\n", tmp_path)) == "1.25"
    with pytest.raises(SparkOperatorBuildError, match="no go line"):
        go_directive({"Module": {"Path": "m"}})


@pytest.mark.parametrize(
    ("required", "goversion", "enough"),
    [("1.24.1", "go1.26.8", True), ("1.24.1", "go1.24.1", True), ("1.24.1", "go1.24", False),
     ("1.27", "go1.26.8", False), ("1.26.9", "go1.26.8", False),
     ("1.24", "devel go1.27-abcdef", True)],
)  # fmt: skip
def test_the_machine_go_must_be_at_least_the_go_line(
    required: str, goversion: str, enough: bool
) -> None:
    assert go_is_new_enough(required, goversion) is enough


def test_the_binary_names_its_release_when_the_tag_commit_is_known() -> None:
    stamped = version_ldflags("2.4.0", "1199997006678a6d520c0755a0d543b3c1c47649")
    assert stamped.startswith("-s -w ")
    assert f"-X {MODULE}.version=v2.4.0" in stamped
    assert f"-X {MODULE}.gitTag=v2.4.0" in stamped
    assert f"-X {MODULE}.gitTreeState=clean" in stamped
    assert f"-X {MODULE}.gitCommit=1199997006678a6d520c0755a0d543b3c1c47649" in stamped
    assert version_ldflags("2.4.0", None) == f"-s -w -X {MODULE}.version=v2.4.0"


def test_the_cache_is_shared_by_clones_and_can_be_moved(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("KTO_SPARK_OPERATOR_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert build.install_dir("2.4.0") == (
        tmp_path / "xdg" / "kafka-topic-operator" / "spark-operator" / "spark-operator-v2.4.0"
    )
    monkeypatch.setenv("KTO_SPARK_OPERATOR_CACHE", str(tmp_path / "elsewhere"))
    assert build.install_dir("2.4.0") == tmp_path / "elsewhere" / "spark-operator-v2.4.0"


def test_an_unbuilt_operator_says_how_to_build_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KTO_SPARK_OPERATOR_CACHE", str(tmp_path))
    with pytest.raises(SparkOperatorBuildError, match="make spark-operator"):
        build.require_built()


def test_a_stamped_folder_is_built_without_go(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("KTO_SPARK_OPERATOR_CACHE", str(tmp_path))
    folder = build.install_dir()
    (folder / "crds").mkdir(parents=True)
    (folder / "crds" / "b.yaml").write_text("{}")
    (folder / "crds" / "a.yaml").write_text("{}")
    (folder / build.COMPLETE).write_text('{"spark_operator": "x"}\n')
    monkeypatch.setenv("PATH", "")  # no go anywhere: the stamp is enough
    monkeypatch.setattr(go_build, "GO_INSTALL", tmp_path / "no-go")
    built = build.build()
    assert built.binary == folder / "spark-operator"
    assert [c.name for c in built.crds] == ["a.yaml", "b.yaml"]
    assert build.build_record() == {"spark_operator": "x"}
