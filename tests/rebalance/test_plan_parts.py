"""A plan cut into ConfigMap-sized parts: every part within the limit, valid alone, in order."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.job import parse_changes
from kafka_topic_operator.rebalance.results.plan_parts import split_plan
from kafka_topic_operator.rebalance.results.summary import PartitionMove

moves = st.lists(
    st.builds(
        lambda t, p, before, after: PartitionMove(TopicPartition(t, p), before, after),
        st.text("abcdefghij._-", min_size=1, max_size=60),
        st.integers(0, 10_000),
        st.lists(st.integers(0, 300), min_size=1, max_size=5).map(tuple),
        st.lists(st.integers(0, 300), min_size=1, max_size=5).map(tuple),
    ),
    max_size=40,
)


@given(moves, st.integers(600, 5_000))
def test_parts_fit_the_limit_and_together_are_the_plan(
    plan: list[PartitionMove], limit: int
) -> None:
    parts = split_plan(plan, limit)
    assert parts, "an empty plan is one empty part"
    assert all(part.size <= limit for part in parts)
    assert [m for part in parts for m in parse_changes(part.changes_json)] == plan
    for part in parts:
        # Each part alone is a reassignment JSON kafka-reassign-partitions accepts.
        document = json.loads(part.plan_json)
        assert document["version"] == 1
        changes = parse_changes(part.changes_json)
        assert [
            (e["topic"], e["partition"], tuple(e["replicas"])) for e in document["partitions"]
        ] == [(m.partition.topic, m.partition.partition, m.after) for m in changes]
    # Greedy: a part is only cut when the next move would not fit in it.
    for part, following in itertools.pairwise(parts):
        grown = [*parse_changes(part.changes_json), parse_changes(following.changes_json)[0]]
        assert len(split_plan(grown, limit)) == 2


def test_a_large_plan_takes_several_config_maps() -> None:
    plan = [
        PartitionMove(
            TopicPartition(f"payments-ledger-events-{i // 12:03}", i % 12), (0, 1, 2), (3, 4, 5)
        )
        for i in range(12_000)
    ]
    parts = split_plan(plan)
    assert len(parts) == 3
    assert all(part.size <= 1_000_000 for part in parts)


def test_a_partition_too_large_for_any_part_is_refused() -> None:
    move = PartitionMove(TopicPartition("t" * 200, 0), (1,), (2,))
    with pytest.raises(ValueError, match="alone exceeds 300 bytes"):
        split_plan([move], 300)
