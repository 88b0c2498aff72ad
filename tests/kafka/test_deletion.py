"""TopicDeletionManager's rules against TopicDeletionManagerTest (reference §5)."""

from __future__ import annotations

from collections import Counter

from kafka_topic_operator.kafka import deletion as d
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition

R = ReplicaState
P = PartitionState


def cluster(*topics: str, live: tuple[int, ...] = (1, 2, 3)) -> d.DeletionContext:
    """Brokers 1,2,3; each topic 2 partitions x RF 3 (round robin); replicas and partitions
    Online, as the test's state machines leave them after startup."""
    assignments = {
        TopicPartition(t, p): tuple((p + i) % 3 + 1 for i in range(3))
        for t in topics
        for p in (0, 1)
    }
    replicas = {
        PartitionAndReplica(tp, r): R.ONLINE_REPLICA for tp, rs in assignments.items() for r in rs
    }
    return d.DeletionContext(
        assignments=assignments,
        replica_states=replicas,
        partition_states=dict.fromkeys(assignments, P.ONLINE_PARTITION),
        live_brokers=frozenset(live),
    )


def replicas_of(
    ctx: d.DeletionContext, topic: str, broker: int | None = None
) -> list[PartitionAndReplica]:
    return [r for r in ctx.replicas_for_topic(topic) if broker is None or r.replica == broker]


def states(ctx: d.DeletionContext, replicas: list[PartitionAndReplica]) -> set[ReplicaState | None]:
    return {ctx.replica_states.get(r) for r in replicas}


def sets(ctx: d.DeletionContext) -> tuple[set[str], set[str], set[str]]:
    return set(ctx.queued), set(ctx.started), set(ctx.ineligible)


def replica_calls(actions: tuple[d.Action, ...]) -> Counter[ReplicaState]:
    return Counter(a.target for a in actions if isinstance(a, d.ReplicaTransition))


def partition_calls(actions: tuple[d.Action, ...]) -> Counter[PartitionState]:
    return Counter(a.target for a in actions if isinstance(a, d.PartitionTransition))


def test_initialization() -> None:
    ctx, _ = d.init(cluster("foo", "bar", "baz"), {"foo", "bar"}, {"bar", "baz"})
    assert (set(ctx.queued), set(ctx.ineligible)) == ({"foo", "bar"}, {"bar"})


def test_basic_deletion() -> None:
    ctx, actions = d.enqueue_topics_for_deletion(cluster("foo", "bar"), {"foo", "bar"})
    assert set(ctx.partition_states.values()) == {P.NON_EXISTENT_PARTITION}
    assert set(ctx.replica_states.values()) == {R.REPLICA_DELETION_STARTED}
    assert sets(ctx) == ({"foo", "bar"}, {"foo", "bar"}, set())
    update = [a for a in actions if isinstance(a, d.SendMetadataUpdate)]
    assert len(update) == 1 and set(update[0].partitions) == set(cluster("foo", "bar").assignments)
    assert partition_calls(actions) == {P.OFFLINE_PARTITION: 1, P.NON_EXISTENT_PARTITION: 1}
    ineligible_calls = [
        a
        for a in actions
        if isinstance(a, d.ReplicaTransition) and a.target is R.REPLICA_DELETION_INELIGIBLE
    ]
    assert [a.replicas for a in ineligible_calls] == [()]  # Kafka makes the call with no replicas
    assert replica_calls(actions) == {
        R.REPLICA_DELETION_INELIGIBLE: 1,
        R.OFFLINE_REPLICA: 1,
        R.REPLICA_DELETION_STARTED: 1,
    }

    everything = [r for t in ("foo", "bar") for r in replicas_of(ctx, t)]
    ctx, actions = d.complete_replica_deletion(ctx, everything)
    assert ctx.assignments == {} and ctx.replica_states == {} and ctx.partition_states == {}
    assert sets(ctx) == (set(), set(), set())
    assert replica_calls(actions)[R.REPLICA_DELETION_SUCCESSFUL] == 1
    assert {a.topic for a in actions if isinstance(a, d.DeleteTopicZNodes)} == {"foo", "bar"}
    assert {a.topic for a in actions if isinstance(a, d.MutePartitionModifications)} == {
        "foo",
        "bar",
    }


def test_deletion_with_broker_offline() -> None:
    ctx = cluster("foo")
    offline = replicas_of(ctx, "foo", 2)
    ctx = d.DeletionContext(
        **{**ctx.__dict__, "live_brokers": frozenset({1, 3}),
           "replica_states": {**ctx.replica_states, **dict.fromkeys(offline, R.OFFLINE_REPLICA)}}
    )  # fmt: skip
    online = [r for r in replicas_of(ctx, "foo") if r.replica != 2]

    ctx, actions = d.enqueue_topics_for_deletion(ctx, {"foo"})
    assert set(ctx.partition_states.values()) == {P.NON_EXISTENT_PARTITION}
    assert states(ctx, online) == {R.REPLICA_DELETION_STARTED}
    assert states(ctx, offline) == {R.REPLICA_DELETION_INELIGIBLE}
    assert sets(ctx) == ({"foo"}, {"foo"}, {"foo"})
    assert d.LogHalted(("foo",), "offline replicas") in actions

    ctx, _ = d.complete_replica_deletion(ctx, online)
    assert states(ctx, online) == {R.REPLICA_DELETION_SUCCESSFUL}
    assert states(ctx, offline) == {R.OFFLINE_REPLICA}  # retried, but the topic is ineligible
    assert sets(ctx) == ({"foo"}, {"foo"}, {"foo"})

    ctx = d.with_live_brokers(ctx, {1, 2, 3})
    ctx, _ = d.resume_deletion_for_topics(ctx, {"foo"})
    assert states(ctx, offline) == {R.REPLICA_DELETION_STARTED}
    assert states(ctx, online) == {R.REPLICA_DELETION_SUCCESSFUL}

    ctx, actions = d.complete_replica_deletion(ctx, offline)
    assert ctx.assignments == {} and ctx.replica_states == {}
    assert sets(ctx) == (set(), set(), set())
    assert d.DeleteTopicZNodes("foo") in actions


def test_broker_failure_after_deletion_started() -> None:
    ctx, _ = d.enqueue_topics_for_deletion(cluster("foo"), {"foo"})
    assert set(ctx.replica_states.values()) == {R.REPLICA_DELETION_STARTED}
    broker2 = replicas_of(ctx, "foo", 2)
    others = [r for r in replicas_of(ctx, "foo") if r.replica != 2]

    ctx = d.with_live_brokers(ctx, {1, 3})
    ctx, _ = d.fail_replica_deletion(ctx, broker2)
    assert states(ctx, broker2) == {R.REPLICA_DELETION_INELIGIBLE}
    assert states(ctx, others) == {R.REPLICA_DELETION_STARTED}
    assert sets(ctx) == ({"foo"}, {"foo"}, {"foo"})

    ctx = d.with_live_brokers(ctx, {1, 2, 3})
    ctx, _ = d.resume_deletion_for_topics(ctx, {"foo"})
    assert set(ctx.ineligible) == set()
    # Kafka's "TODO: probably not desired": still Ineligible while others are Started.
    assert states(ctx, broker2) == {R.REPLICA_DELETION_INELIGIBLE}

    ctx, _ = d.complete_replica_deletion(ctx, others)
    assert states(ctx, others) == {R.REPLICA_DELETION_SUCCESSFUL}
    assert states(ctx, broker2) == {R.REPLICA_DELETION_STARTED}


def test_disabled_deletion_is_a_no_op_that_removes_markers() -> None:
    ctx = d.DeletionContext(**{**cluster("foo").__dict__, "delete_topic_enable": False})
    new, actions = d.init(ctx, {"foo"}, set())
    assert new.queued == frozenset() and actions == (
        d.DeleteDeletionMarkers(("foo",), "delete topic is disabled"),
    )
    assert d.enqueue_topics_for_deletion(ctx, {"foo"}) == (ctx, ())
    assert not d.is_topic_queued_up_for_deletion(ctx, "foo")
    assert d.is_topic_ineligible_for_deletion(ctx, "foo")
    _, actions = d.process_topic_deletion(ctx, {"foo"}, {"foo"}, set())
    assert actions == (d.DeleteDeletionMarkers(("foo",), "delete topic is disabled"),)


def test_process_topic_deletion_rules() -> None:
    ctx, actions = d.process_topic_deletion(cluster("foo"), {"foo", "ghost"}, {"foo"}, set())
    assert actions[0] == d.DeleteDeletionMarkers(
        ("ghost",), "Ignoring request to delete non-existing topics"
    )
    assert "foo" in ctx.queued and "ghost" not in ctx.queued

    # Kafka checks reassignments before queueing, so a first request is not halted by it...
    fresh, actions = d.process_topic_deletion(cluster("foo"), {"foo"}, {"foo"}, {"foo"})
    assert not any(isinstance(a, d.LogHalted) for a in actions)
    assert "foo" not in fresh.ineligible
    # ...but a topic already queued is.
    again, actions = d.process_topic_deletion(fresh, {"foo"}, {"foo"}, {"foo"})
    assert d.LogHalted(("foo",), "topic reassignment in progress") in actions
    assert "foo" in again.ineligible


def test_topic_without_replicas_completes_at_once() -> None:
    ctx = d.DeletionContext(assignments={})
    ctx, actions = d.enqueue_topics_for_deletion(ctx, {"empty"})
    assert d.DeleteTopicZNodes("empty") in actions and ctx.queued == frozenset()


def test_eligibility_queries() -> None:
    ctx, _ = d.enqueue_topics_for_deletion(cluster("foo"), {"foo"})
    assert d.is_topic_deletion_in_progress(ctx, "foo")
    assert not d.is_topic_eligible_for_deletion(ctx, "foo")  # replicas are Started
    ctx, _ = d.mark_topic_ineligible_for_deletion(ctx, {"foo", "other"}, "test")
    assert ctx.ineligible == frozenset({"foo"})
