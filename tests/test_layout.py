"""The layout: the source root never becomes a package (it would shadow the standard library's
operator); no loose modules at the operator package's root; no module so long it should be
split, unless it says why it stays whole; no import cycle, and imports pointing down the layers
docs/architecture.md describes."""

from __future__ import annotations

import ast
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


PACKAGES = {
    "kafka_topic_operator": ROOT / "operator" / "kafka_topic_operator",
    "kto_dev": ROOT / "devtools" / "kto_dev",
    "kube_api_emulator": ROOT / "devtools" / "kube_api_emulator",
}
MAX_LINES = 700
KEPT_WHOLE = "Kept whole:"
# Lowest first: a package may import only those before it (and itself). The root package's
# __init__ holds the version alone.
LAYERS = [
    "kafka_topic_operator",
    "kafka_topic_operator.kafka",
    "kafka_topic_operator.process",
    "kafka_topic_operator.zk",
    "kafka_topic_operator.broker_channel",
    "kafka_topic_operator.controller",
    "kafka_topic_operator.topics",
    # Kafka's Admin API (KRaft clusters): a backend of topics' TopicBackend, beside ZooKeeper's.
    "kafka_topic_operator.kafka_admin",
    "kafka_topic_operator.rebalance",
    # One object per kind of cluster: the backends, followers and rebalance clusters above.
    "kafka_topic_operator.clusters",
    "kafka_topic_operator.k8s",
    "kafka_topic_operator.previews",
    "kafka_topic_operator.cli",
    "kube_api_emulator",
    "kto_dev",
]


def modules() -> dict[str, Path]:
    found = {}
    for base in PACKAGES.values():
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules `path` imports (`from a import b` counts as `a.b` when b is one)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in known}


def layer(module: str) -> str:
    parts = module.split(".")
    for depth in (2, 1):
        if ".".join(parts[:depth]) in LAYERS:
            return ".".join(parts[:depth])
    raise AssertionError(f"{module} is in no layer")


def test_the_operator_package_root_holds_no_loose_modules() -> None:
    root = PACKAGES["kafka_topic_operator"]
    assert sorted(p.name for p in root.glob("*.py")) == ["__init__.py"]


def test_no_module_is_over_the_limit_unless_it_says_why() -> None:
    long = []
    for module, path in modules().items():
        text = path.read_text()
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if text.count("\n") > MAX_LINES and KEPT_WHOLE not in docstring:
            long.append(module)
    assert long == []


def test_imports_point_down_the_layers() -> None:
    known = modules()
    upward = []
    for module, path in known.items():
        mine = LAYERS.index(layer(module))
        for target in imports(path, known):
            if LAYERS.index(layer(target)) > mine:
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_no_import_cycle() -> None:
    known = modules()
    graph = {m: imports(p, known) - {m} for m, p in known.items()}
    # A package's __init__ importing its own modules is how it names its public API, not a
    # cycle: those modules import the names from where they are defined.
    for m in graph:
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    done: set[str] = set()
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for target in sorted(graph[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    assert cycles == []


def test_the_architecture_page_lists_the_layers_as_they_are() -> None:
    """docs/architecture.md's table of layers names every package, in the order checked here."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    section = page.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip().strip("`") for line in section.splitlines()
            if line.startswith("| `")]  # fmt: skip
    named = [
        row.rstrip("/") if "_" in row and "/" not in row else f"kafka_topic_operator.{row[:-1]}"
        for row in rows
    ]
    packages = [p.parent.name for p in PACKAGES["kafka_topic_operator"].glob("*/__init__.py")]
    assert sorted(named[:-2]) == sorted(f"kafka_topic_operator.{p}" for p in packages)
    assert named == LAYERS[1:]
