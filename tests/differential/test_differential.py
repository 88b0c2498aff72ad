"""The differential test: one scenario on Kafka 3.9's controller with real brokers, and on our
controller with dev brokers; after every step the whole chroot is compared as parsed JSON. Every
difference is printed; the test fails on any that `docs/fidelity.md` does not document, and on any
documented one that no longer occurs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kto_testing import new_chroot

from kto_dev.zookeeper_server import ZooKeeperServer

from . import (
    scenario,
    scenario_hand_written,
    scenario_kafka_defects,
    scenario_racks_and_shutdowns,
    scenario_reassignments,
)
from .backends import Backend, KafkaBackend, TwinBackend
from .znode_tree import Difference, Tree, differences, judge, load_allow_list

pytestmark = [pytest.mark.kafka, pytest.mark.differential, pytest.mark.zookeeper]

FIDELITY = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"

Run = list[tuple[str, Tree]]

# The scenario of the main run, and the ones written since, each on fresh chroots. The steps
# of the others are named "<scenario>: <step>" in differences and in the allow list.
MAIN = "main"
SCENARIOS: dict[str, tuple[scenario.Step, ...]] = {
    MAIN: scenario.STEPS,
    "reassignments": scenario_reassignments.STEPS,
    "hand-written topics": scenario_hand_written.STEPS,
    "kafka defects": scenario_kafka_defects.STEPS,
    "racks and shutdowns": scenario_racks_and_shutdowns.STEPS,
}


def _run(backend: Backend, steps: tuple[scenario.Step, ...]) -> Run:
    try:
        return scenario.run(backend, steps)
    finally:
        backend.close()


@pytest.fixture(scope="module")
def all_runs(
    zookeeper_server: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, tuple[Run, Run]]]:
    connect = zookeeper_server.connect_string
    out: dict[str, tuple[Run, Run]] = {}
    for name, steps in SCENARIOS.items():
        directory = Path(tmp_path_factory.mktemp("differential"))
        label = name.replace(" ", "-")
        kafka_chroot, twin_chroot = (new_chroot(connect, f"{k}-{label}") for k in ("kafka", "twin"))
        kafka = _run(KafkaBackend(kafka_chroot, directory / "kafka"), steps)
        twin = _run(TwinBackend(twin_chroot, directory / "twin"), steps)
        out[name] = (kafka, twin)
    yield out


@pytest.fixture(scope="module")
def runs(all_runs: dict[str, tuple[Run, Run]]) -> tuple[Run, Run]:
    return all_runs[MAIN]


def _all_differences(name: str, kafka: Run, twin: Run) -> list[Difference]:
    found: list[Difference] = []
    for (step, left), (same_step, right) in zip(kafka, twin, strict=True):
        assert step == same_step
        found.extend(differences(step if name == MAIN else f"{name}: {step}", left, right))
    return found


def test_our_controller_leaves_the_znodes_kafkas_controller_leaves(
    all_runs: dict[str, tuple[Run, Run]],
) -> None:
    found = [d for name, (kafka, twin) in all_runs.items()
             for d in _all_differences(name, kafka, twin)]  # fmt: skip
    verdict = judge(found, load_allow_list(FIDELITY))
    steps = sum(len(kafka) for kafka, _ in all_runs.values())
    lines = [f"{len(found)} differences over {steps} steps of {len(all_runs)} scenarios"]
    for entry_id, explained in verdict.explained.items():
        lines.append(f"documented as {entry_id}: {len(explained)}")
        lines.extend(f"  {d}" for d in explained)
    lines.append(f"not documented: {len(verdict.unexplained)}")
    lines.extend(f"  {d}" for d in verdict.unexplained)
    lines.extend(f"documented but not seen: {a.id}" for a in verdict.unused)
    print("\n".join(lines))
    assert not verdict.unexplained, "\n".join(lines)
    assert not verdict.unused, "\n".join(lines)


def test_every_step_reached_the_state_kafka_reached(runs: tuple[Run, Run]) -> None:
    """The scenario means something only if it did what it says on Kafka: the topics, the
    reassignment and the deletions are there in Kafka's own znodes."""
    kafka, _ = runs
    trees = dict(kafka)
    created = trees["topics created"]
    for topic in (scenario.RACKED, scenario.PLAIN, scenario.MANUAL, scenario.CONFIGURED):
        assert f"/brokers/topics/{topic}/partitions/0/state" in created
    assert created["/brokers/topics/plain"]["topic_id"], "Kafka's controller gave plain an id"
    unclean = trees["unclean election enabled by a config change"]
    assert unclean["/brokers/topics/unclean/partitions/0/state"]["isr"] == [2]
    stuck = trees["deletion with a replica's broker down"]
    assert "/admin/delete_topics/racked" in stuck and "/brokers/topics/racked" in stuck
    finished = trees["deletion finished once the broker returned"]
    assert "/brokers/topics/racked" not in finished
    assert (
        trees["controller moved"]["/controller_epoch"]
        > trees["broker 0 restarted"]["/controller_epoch"]
    )


def test_the_reassignment_scenario_did_on_kafka_what_it_says(
    all_runs: dict[str, tuple[Run, Run]],
) -> None:
    """Kafka left the request written again alone until its failover, and a broker rejoining an
    ISR after the failover got the new controller's epoch."""
    kafka, _ = all_runs["reassignments"]
    trees = dict(kafka)
    request, ignored = scenario_reassignments.REQUEST, "/brokers/topics/ignored"
    waiting = trees["moving reassigned to [1, 2], waiting for broker 2"]
    assert waiting["/brokers/topics/moving"]["removing_replicas"] == {"0": [0]}
    for step in (
        "a request written again",
        "broker 2 restarted, the waiting reassignment finished",
    ):
        assert request in trees[step] and trees[step][ignored]["partitions"] == {"0": [0, 2]}
    moved = trees["controller moved"]
    assert request not in moved and moved[ignored]["partitions"] == {"0": [2, 0]}
    rejoined = trees["broker 1 restarted after the failover"]
    state = rejoined["/brokers/topics/rejoining/partitions/0/state"]
    assert sorted(state["isr"]) == [0, 1]
    assert state["controller_epoch"] == moved["/controller_epoch"] > 1
