"""The moves a KRaft backend remembers so that a broker lagging the controller does not show a
finished move as a larger replication factor: no cluster needed (describe_topics() answers
shaped as kafka-python returns them)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin.recent_moves import RecentMoves
from kafka_topic_operator.kafka_admin.snapshot import cluster_snapshot, listed_targets

DRAINED = TopicPartition("payments", 3)


def described(
    *partitions: tuple[int, list[int]], name: str = "payments", isr: list[int] | None = None
) -> list[dict[str, Any]]:
    return [
        {"error_code": 0, "name": name, "topic_id": None, "is_internal": False,
         "partitions": [{"error_code": 0, "partition_index": p, "leader_id": r[0],
                         "leader_epoch": 0, "replica_nodes": r,
                         "isr_nodes": r if isr is None else isr,
                         "offline_replicas": []} for p, r in partitions]}
    ]  # fmt: skip


def test_a_finished_move_shown_with_its_old_replicas_is_still_in_progress() -> None:
    moves = RecentMoves(lag=10)
    moves.saw({DRAINED: [0, 1]}, now=100.0)  # from [2, 0] (broker 2 drained)
    # The broker saw the move begin, not end: every replica, old and new.
    union = moves.unfinished(described((3, [0, 2, 1]), (4, [1, 2])), listed=(), now=100.2)
    assert union == {
        DRAINED: {"replicas": [0, 1, 2], "adding_replicas": [], "removing_replicas": [2]}
    }
    # The broker saw nothing of it yet: the replicas before.
    before = moves.unfinished(described((3, [2, 0])), listed=(), now=100.3)
    assert before == {
        DRAINED: {"replicas": [0, 1, 2], "adding_replicas": [1], "removing_replicas": [2]}
    }
    # Read as Kafka's controller would list it: target [0, 1], broker 2 leaving.
    snapshot = cluster_snapshot(
        cluster={"brokers": []},
        topics=described((3, [0, 2, 1])),
        reassignments=union,
        configs={"payments": {"retention.ms": {"value": "1", "config_source": "DEFAULT_CONFIG"}}},
    )
    assert snapshot.pending_reassignments == {DRAINED: (0, 1)}
    assert snapshot.topics["payments"].being_reassigned == (3,)
    # Shown at its target: done, and forgotten.
    assert moves.unfinished(described((3, [0, 1])), listed=(), now=100.4) == {}
    assert len(moves) == 0
    assert moves.unfinished(described((3, [0, 2, 1])), listed=(), now=100.5) == {}


def test_a_move_shown_at_its_target_with_a_shorter_isr_is_still_in_progress() -> None:
    """Replication factor 1 -> 3: Kafka ends the move once the new replicas are in the ISR;
    a broker showing the target with the old ISR has not seen the end."""
    grown = TopicPartition("payments", 0)
    moves = RecentMoves(lag=10)
    moves.saw({grown: [2, 0, 1]}, now=1.0)
    lagging = moves.unfinished(described((0, [2, 0, 1]), isr=[2]), listed=(), now=1.1)
    assert lagging == {
        grown: {"replicas": [2, 0, 1], "adding_replicas": [0, 1], "removing_replicas": []}
    }
    assert moves.unfinished(described((0, [2, 0, 1]), isr=[2, 1, 0]), listed=(), now=1.2) == {}
    assert len(moves) == 0


def test_a_listed_move_is_left_to_the_listing_and_its_target_kept() -> None:
    moves = RecentMoves(lag=10)
    listing = {KafkaTopicPartition("payments", 3): {
        "replicas": [0, 1, 2], "adding_replicas": [1], "removing_replicas": [2]}}  # fmt: skip
    assert listed_targets(listing) == {DRAINED: (0, 1)}
    moves.saw(listed_targets(listing), now=5.0)
    assert moves.unfinished(described((3, [0, 1, 2])), listed=listing, now=5.1) == {}
    assert len(moves) == 1  # still moving: remembered for the read after it ends
    assert DRAINED in moves.unfinished(described((3, [0, 1, 2])), listed=(), now=5.2)


def test_a_move_is_forgotten_after_the_lag_and_other_partitions_are_left_alone() -> None:
    moves = RecentMoves(lag=10)
    moves.saw({DRAINED: [0, 1]}, now=0.0)
    moves.saw({DRAINED: [0, 1]}, now=5.0)  # seen again: counted from then
    others = described((0, [2, 0])) + described((3, [9]), name="orders")
    assert moves.unfinished(others, listed=(), now=14.9) == {}
    assert DRAINED in moves.unfinished(described((3, [2, 0])), listed=(), now=14.9)
    # Cancelled, or moved on by someone else unseen: no longer waited for.
    assert moves.unfinished(described((3, [2, 0])), listed=(), now=15.0) == {}
    assert len(moves) == 0
    # A topic Kafka answered with an error says nothing about its partitions.
    moves.saw({DRAINED: [0, 1]}, now=20.0)
    failed = [{**described((3, [2, 0]))[0], "error_code": 3}]
    assert moves.unfinished(failed, listed=(), now=20.1) == {}
    assert len(moves) == 1


def test_the_lag_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"^lag 0 is not positive$"):
        RecentMoves(lag=0)
