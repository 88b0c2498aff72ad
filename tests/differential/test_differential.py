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

from . import scenario
from .backends import Backend, KafkaBackend, TwinBackend
from .znode_tree import Difference, Tree, differences, judge, load_allow_list

pytestmark = [pytest.mark.kafka, pytest.mark.differential, pytest.mark.zookeeper]

FIDELITY = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"

Run = list[tuple[str, Tree]]


def _run(backend: Backend) -> Run:
    try:
        return scenario.run(backend)
    finally:
        backend.close()


@pytest.fixture(scope="module")
def runs(
    zookeeper_server: ZooKeeperServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Run, Run]]:
    directory = Path(tmp_path_factory.mktemp("differential"))
    connect = zookeeper_server.connect_string
    kafka = _run(KafkaBackend(new_chroot(connect, "kafka"), directory / "kafka"))
    twin = _run(TwinBackend(new_chroot(connect, "twin"), directory / "twin"))
    yield kafka, twin


def _all_differences(kafka: Run, twin: Run) -> list[Difference]:
    found: list[Difference] = []
    for (step, left), (same_step, right) in zip(kafka, twin, strict=True):
        assert step == same_step
        found.extend(differences(step, left, right))
    return found


def test_our_controller_leaves_the_znodes_kafkas_controller_leaves(
    runs: tuple[Run, Run],
) -> None:
    kafka, twin = runs
    found = _all_differences(kafka, twin)
    verdict = judge(found, load_allow_list(FIDELITY))
    lines = [f"{len(found)} differences over {len(kafka)} steps"]
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
