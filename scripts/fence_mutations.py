"""Mutation check of the controller's epoch fencing: each write site's fence is removed in turn
(None handed to the ZooKeeper client instead of the Fence) in a scratch copy of the tree, and
tests/controller/test_fencing.py must then fail. Prints a table site -> failing tests; exits
non-zero if a mutation of a reachable site survives or the unmutated tests fail.

    python scripts/fence_mutations.py [-k SUBSTRING]   # from the repository root
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONTROLLER = "operator/kafka_topic_operator/controller"
FENCING_TESTS = "tests/controller/test_fencing.py"
FENCE = "Fence(self.ctx.epoch_zk_version)"


@dataclass(frozen=True)
class Site:
    file: str
    text: str  # the fence expression at the site
    nth: int  # which occurrence of `text` in the file (0-based)
    reachable: bool = True
    # Where a mutation of an unreachable site is caught instead (reported, not required).
    elsewhere: str | None = None


SITES = [
    Site("replica_state_machine.py", FENCE, 0),
    Site("request_batch.py", FENCE, 0),
    Site("deletion_manager.py", FENCE, 0),
    Site("kafka_controller.py", FENCE, 0),  # _write_topic_ids
    Site("kafka_controller.py", FENCE, 1),  # _restore_partition_assignment
    Site("kafka_controller.py", FENCE, 2),  # _delete_tolerating_missing
    Site("kafka_controller.py", FENCE, 3),  # _purge_config_changes
    Site("kafka_controller.py", FENCE, 4),  # _process_zk_preferred_election
    Site("kafka_controller.py", FENCE, 5),  # _process_controlled_shutdowns
    Site("reassignments.py", "self._fence", 0),  # _update_leader_epoch
    Site("reassignments.py", "self._fence", 1),  # _write_topic_assignment
    Site("reassignments.py", "self._fence", 2),  # _remove_from_zk: delete
    Site("reassignments.py", "self._fence", 3),  # _remove_from_zk: rewrite
    Site("partition_state_machine.py", "self._fence", 0),  # create_partition_states
    Site("partition_state_machine.py", "self._fence", 1),  # update_leader_and_isr
    # ControllerEpoch.fence: no controller flow uses it (the controller fences with
    # Fence(ctx.epoch_zk_version)); only the election tests do.
    Site(
        "leadership.py",
        "Fence(self.zk_version)",
        0,
        reachable=False,
        elsewhere="tests/controller/test_leadership.py",
    ),
]


def mutate(source: str, site: Site) -> tuple[str, int, str]:
    """The source with the site's fence replaced by None, the line number and its function."""
    matches = [m.start() for m in re.finditer(re.escape(site.text), source)]
    if len(matches) <= site.nth:
        raise SystemExit(f"{site.file}: only {len(matches)} occurrences of {site.text}")
    at = matches[site.nth]
    line = source.count("\n", 0, at) + 1
    functions = re.findall(r"^\s*def (\w+)", source[:at], re.MULTILINE)
    mutated = source[:at] + "None" + source[at + len(site.text) :]
    return mutated, line, functions[-1] if functions else "?"


def copy_tree(into: Path) -> None:
    ignore = shutil.ignore_patterns(".git", ".venv", "*_cache", "__pycache__", ".kto", "build")
    shutil.copytree(ROOT, into, ignore=ignore, dirs_exist_ok=True)


def run_tests(tree: Path, tests: str) -> tuple[int, list[str], float]:
    env = {**os.environ, "PYTHONPATH": str(tree / "operator")}
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "pytest", tests, "-q", "-rf", "-p", "no:cacheprovider"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    failed = re.findall(r"^FAILED \S+::(\w+)", result.stdout, re.MULTILINE)
    return result.returncode, failed, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="only sites whose file contains this")
    args = parser.parse_args()
    survivors = 0
    with tempfile.TemporaryDirectory(prefix="fence-mutations-") as scratch:
        tree = Path(scratch)
        copy_tree(tree)
        code, failed, took = run_tests(tree, FENCING_TESTS)
        print(f"unmutated: exit {code}, {len(failed)} failed, {took:.1f} s")
        if code != 0:
            return 1
        for site in SITES:
            if args.k not in site.file:
                continue
            path = tree / CONTROLLER / site.file
            original = path.read_text()
            mutated, line, function = mutate(original, site)
            path.write_text(mutated)
            try:
                code, failed, took = run_tests(tree, FENCING_TESTS)
                caught = code != 0 and bool(failed)
                verdict = "killed" if caught else "SURVIVED"
                where = f"{site.file}:{line} ({function})"
                print(f"{where:58} {verdict:8} {took:5.1f} s  {', '.join(failed) or '-'}")
                if not caught and site.reachable:
                    survivors += 1
                if site.elsewhere is not None:
                    code, failed, _ = run_tests(tree, site.elsewhere)
                    print(f"{'':58} {'(unreachable)':8} in {site.elsewhere}: "
                          f"{', '.join(failed) or 'nothing fails'}")  # fmt: skip
            finally:
                path.write_text(original)
    print(f"{survivors} reachable site(s) survived")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
