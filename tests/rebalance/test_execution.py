"""The executor's decisions (pure): batches within the limits, the order of phases, progress
and throttles, on a cluster simulated as Kafka's controller would leave it after each request."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.results.summary import PartitionMove


def move(
    topic: str, partition: int, before: tuple[int, ...], after: tuple[int, ...]
) -> PartitionMove:
    return PartitionMove(TopicPartition(topic, partition), before, after)


def cluster_before(plan: list[PartitionMove]) -> ex.ClusterNow:
    return ex.ClusterNow(
        {m.partition: m.before for m in plan},
        {m.partition: m.before[0] for m in plan},
        frozenset(),
        election_pending=False,
    )


def carry_out(now: ex.ClusterNow, step: ex.Step) -> ex.ClusterNow:
    """Kafka's controller on each request: a reassignment keeps the leader if it stays a
    replica (else the first of the target), a preferred election makes the first replica lead."""
    assignment, leaders = dict(now.assignment), dict(now.leaders)
    for m in step.reassign:
        assignment[m.partition] = m.after
        if leaders[m.partition] not in m.after:
            leaders[m.partition] = m.after[0]
    for tp in step.elect:
        leaders[tp] = assignment[tp][0]
    return replace(now, assignment=assignment, leaders=leaders)


moves_strategy = st.lists(
    st.tuples(
        st.permutations(range(8)).map(lambda p: tuple(p[:3])),
        st.permutations(range(8)).map(lambda p: tuple(p[:3])),
    ),
    min_size=1,
    max_size=40,
).map(lambda pairs: [move("t", i, b, a) for i, (b, a) in enumerate(pairs) if b != a])


@settings(max_examples=200, deadline=None)
@given(moves_strategy, st.integers(1, 4), st.integers(1, 10))
def test_a_batch_honours_the_limits_and_the_plan_order(
    plan: list[PartitionMove], per_broker: int, cluster: int
) -> None:
    moving = [m for m in plan if not ex.is_reorder(m)]
    batch = ex.replica_batch(moving, ex.Limits(per_broker, cluster))
    if not moving:
        assert batch == []
        return
    assert batch and batch[0] == moving[0]
    assert len(batch) <= cluster
    assert batch == [m for m in moving if m in batch]  # a subsequence, in plan order
    if len(batch) > 1:
        incoming = Counter(b for m in batch for b in set(m.after) - set(m.before))
        outgoing = Counter(b for m in batch for b in set(m.before) - set(m.after))
        assert max(incoming.values(), default=0) <= per_broker
        assert max(outgoing.values(), default=0) <= per_broker


@settings(max_examples=200, deadline=None)
@given(moves_strategy, st.integers(1, 3), st.integers(1, 5), st.integers(1, 3))
def test_steps_reach_the_plan_with_its_preferred_leaders(
    plan: list[PartitionMove], per_broker: int, cluster: int, leaders: int
) -> None:
    limits = ex.Limits(per_broker, cluster, leaders)
    now = cluster_before(plan)
    phases = []
    for _ in range(10 * len(plan) + 2):
        step = ex.next_step(plan, now, limits)
        phases.append(step.phase)
        if step.phase is ex.Phase.DONE:
            break
        assert not step.wait
        assert len(step.reassign) <= max(cluster, leaders) and len(step.elect) <= leaders
        now = carry_out(now, step)
    assert phases[-1] is ex.Phase.DONE
    assert all(now.assignment[m.partition] == m.after for m in plan)
    assert all(now.leaders[m.partition] == m.after[0] for m in plan)
    # Phases never go back: moves, then reorders, then elections.
    order = [ex.Phase.REPLICAS, ex.Phase.REORDERS, ex.Phase.LEADERS, ex.Phase.DONE]
    assert [order.index(p) for p in phases] == sorted(order.index(p) for p in phases)
    done = ex.progress(plan, now)
    assert (done.partitions_done, done.partitions_remaining, done.leader_elections_remaining) == (
        len(plan), 0, 0,
    )  # fmt: skip


def test_anything_in_flight_is_waited_for_first() -> None:
    plan = [move("t", 0, (1, 2), (2, 3))]
    now = cluster_before(plan)
    other = TopicPartition("someone-else", 0)
    assert ex.next_step(plan, replace(now, reassigning=frozenset({other})), ex.Limits()) == (
        ex.Step(ex.Phase.REPLICAS, wait=True)
    )
    assert ex.next_step(plan, replace(now, election_pending=True), ex.Limits()) == (
        ex.Step(ex.Phase.LEADERS, wait=True)
    )


def test_a_partition_changed_by_someone_else_outdates_the_plan() -> None:
    plan = [move("t", p, (1, 2), (2, 3)) for p in range(7)]
    now = cluster_before(plan)
    changed = {**now.assignment, TopicPartition("t", 0): (1, 4)}
    for p in range(1, 7):
        changed[TopicPartition("t", p)] = (4, 5)
    with pytest.raises(ex.PlanOutdated) as info:
        ex.next_step(plan, replace(now, assignment=changed), ex.Limits())
    assert str(info.value) == (
        "partitions changed since the plan was made: t-0, t-1, t-2, t-3, t-4 and 2 more"
    )
    # Moving, or already moved, is not a change.
    moving = {**now.assignment, TopicPartition("t", 0): (2, 3)}
    ex.next_step(plan, replace(now, assignment=moving, reassigning=frozenset(moving)), ex.Limits())


def test_progress_counts_partitions_and_elections() -> None:
    plan = [
        move("t", 0, (1, 2), (2, 3)),  # leader 1 -> 2
        move("t", 1, (1, 2), (3, 2)),  # leader 1 -> 3
        move("t", 2, (2, 1), (1, 2)),  # a reorder
        move("t", 3, (2, 1), (2, 3)),  # leader stays
    ]
    now = cluster_before(plan)
    now = replace(
        now,
        assignment={
            **now.assignment,
            TopicPartition("t", 0): (2, 3),
            TopicPartition("t", 3): (2, 3),
        },
        leaders={**now.leaders, TopicPartition("t", 0): 2},
        reassigning=frozenset({TopicPartition("t", 1)}),
    )
    assert ex.progress(plan, now).to_status() == {
        "partitionsDone": 2,
        "partitionsInFlight": 1,
        "partitionsRemaining": 1,
        "leaderElectionsDone": 1,
        "leaderElectionsRemaining": 2,
    }


def test_throttles_as_kafka_reassign_partitions_computes_them() -> None:
    # calculateLeaderThrottles: every pre-move replica; calculateFollowerThrottles: the new ones.
    batch = [move("a", 1, (1, 2), (2, 3)), move("a", 0, (4, 5), (6, 4)), move("b", 0, (1,), (2,))]
    assert ex.throttled_replicas(batch) == {
        "a": ("0:4,0:5,1:1,1:2", "0:6,1:3"),
        "b": ("0:1", "0:2"),
    }
    assert ex.throttled_brokers(batch) == [1, 2, 3, 4, 5, 6]
    assert ex.merge_throttle(None, "0:1,0:2") == "0:1,0:2"
    assert ex.merge_throttle("0:2,3:9", "0:1,0:2") == "0:2,3:9,0:1"
    assert ex.merge_throttle(" * ", "0:1") == "*"


def test_limits_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="partitions_per_broker must be at least 1"):
        ex.Limits(partitions_per_broker=0)
