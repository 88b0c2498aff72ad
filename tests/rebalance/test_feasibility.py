"""The hard goals' feasibility check: each blocker named in one line, feasible clusters passed,
and on small clusters the same verdict as trying every assignment."""

from __future__ import annotations

import itertools
import re
from collections import Counter

from brute_force import placements
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.feasibility import NOT_ALL_RACKS, HardGoals, blocker

Replicas = tuple[int, ...]


def tp(name: str) -> TopicPartition:
    topic, _, partition = name.rpartition("-")
    return TopicPartition(topic, int(partition))


def spread(topic: str, partitions: int, rf: int, brokers: int) -> dict[TopicPartition, Replicas]:
    return {TopicPartition(topic, p): tuple((p + i) % brokers for i in range(rf))
            for p in range(partitions)}  # fmt: skip


def test_a_rack_aware_cluster_passes_and_lopsided_racks_overfill_their_brokers() -> None:
    racks = {b: "abc"[b % 3] for b in range(6)}
    goals = HardGoals(spread("orders", 12, 3, 6), range(6), racks, max_replicas_per_broker=6)
    assert blocker(goals) is None
    # Racks b and c of one broker each: each partition needs a replica on both.
    lopsided = HardGoals(goals.assignment, brokers=range(4), racks={0: "a", 1: "b", 2: "c", 3: "a"},
                         max_replicas_per_broker=9)  # fmt: skip
    assert blocker(lopsided) == (
        "the replicas do not fit maxReplicasPerBroker 9: the 12 partitions of replication factor "
        "3 need 24 of their replicas on brokers 1, 2, which have room for 18; the other brokers "
        "take at most 1 of each (one per broker and their share of a rack)"
    )


def test_removing_too_many_brokers_to_keep_the_replication_factor() -> None:
    assignment = {**spread("orders", 4, 3, 4), **spread("logs", 2, 2, 4)}
    goals = HardGoals(assignment, brokers=(0, 3), removed=(1, 2))
    assert blocker(goals) == (
        "partition orders-0 cannot keep replication factor 3: only 2 brokers remain after "
        "removing 1, 2 (and 3 other partitions)"
    )
    # Without a removal (offline brokers) the message names who is left.
    assert blocker(HardGoals(spread("orders", 1, 3, 4), brokers=(0, 3))) == (
        "partition orders-0 cannot keep replication factor 3: only 2 brokers may hold "
        "replicas (0, 3)"
    )


def test_a_partition_that_cannot_keep_its_racks() -> None:
    # Replication factor 4 over two racks: at most 2 in each, but rack b has one broker left.
    racks = {0: "a", 1: "a", 2: "a", 3: "b", 4: "b"}
    goals = HardGoals({tp("orders-3"): (0, 1, 3, 4)}, brokers=(0, 1, 2, 3), racks=racks,
                      removed=(4,))  # fmt: skip
    assert blocker(goals) == (
        "partition orders-3 cannot keep its 4 replicas rack-aware, at most 2 in a rack: the "
        "remaining brokers are in racks a (3 brokers), b (1 broker)"
    )


def test_losing_a_rack_only_lowers_the_racks_a_partition_must_span() -> None:
    # Rack c drained: three replicas over racks a and b, two in one of them, is rack-aware.
    racks = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c"}
    goals = HardGoals({tp("orders-3"): (0, 2, 4)}, brokers=(0, 1, 2, 3), racks=racks,
                      removed=(4,))  # fmt: skip
    assert blocker(goals) is None


def test_racks_on_only_some_brokers() -> None:
    goals = HardGoals({tp("a-0"): (0, 1)}, brokers=(0, 1, 2), racks={0: "a", 1: "b"})
    assert blocker(goals) == NOT_ALL_RACKS


def test_too_many_replicas_for_the_capacity() -> None:
    goals = HardGoals(spread("orders", 300, 3, 5), brokers=(0, 1, 2, 3),
                      max_replicas_per_broker=200, removed=(4,))  # fmt: skip
    assert blocker(goals) == (
        "the 900 replicas do not fit 4 brokers of at most 200 replicas each (maxReplicasPerBroker)"
    )
    assert blocker(HardGoals(spread("orders", 300, 3, 5), brokers=(0, 1, 2, 3),
                             max_replicas_per_broker=225)) is None  # fmt: skip


def test_an_excluded_topic_on_a_broker_being_removed() -> None:
    assignment = {tp("audit-0"): (0, 2), tp("audit-1"): (1, 0), tp("orders-0"): (2, 1)}
    goals = HardGoals(assignment, brokers=(0, 1), excluded_topics="audit|metrics", removed=(2,))
    assert blocker(goals) == (
        "topic audit is excluded from moves but has replicas on broker 2, which is being removed"
    )
    gone = HardGoals(assignment, brokers=(0, 1), excluded_topics="aud.*")
    assert blocker(gone) == (
        "topic audit is excluded from moves but has replicas on broker 2, which is not registered"
    )
    # The expression matches whole names only.
    assert blocker(HardGoals(assignment, brokers=(0, 1), excluded_topics="aud")) is None


def test_excluded_replicas_above_the_capacity() -> None:
    assignment = {**spread("audit", 5, 1, 1), **spread("orders", 2, 1, 2)}
    goals = HardGoals(assignment, brokers=(0, 1, 2), excluded_topics="audit",
                      max_replicas_per_broker=4)  # fmt: skip
    assert blocker(goals) == (
        "broker 0 holds 5 replicas of excluded topics, which never move, more than "
        "maxReplicasPerBroker 4"
    )


def test_capacity_that_only_the_distinct_brokers_rule_breaks() -> None:
    # 5 replicas, room for 6: but broker 0 is full of excluded replicas and orders-0 needs
    # three distinct brokers.
    assignment = {tp("audit-0"): (0,), tp("audit-1"): (0,), tp("orders-0"): (1, 2, 0),
                  tp("orders-1"): (1,)}  # fmt: skip
    goals = HardGoals(assignment, brokers=(0, 1, 2), excluded_topics="audit",
                      max_replicas_per_broker=2)  # fmt: skip
    assert blocker(goals) == (
        "the replicas do not fit maxReplicasPerBroker 2: partition orders-0 needs 1 of its "
        "replicas on broker 0, which has room for 0 (2 places hold excluded topics); the other "
        "brokers take at most 2 of each (one per broker)"
    )


def test_capacity_that_only_the_racks_break() -> None:
    # Each partition needs a replica in rack b, which has one broker: 30 partitions, room 20.
    racks = {0: "a", 1: "a", 2: "b"}
    goals = HardGoals({TopicPartition("orders", p): (0, 1) for p in range(30)},
                      brokers=(0, 1, 2), racks=racks, max_replicas_per_broker=20)  # fmt: skip
    assert blocker(goals) == (
        "the replicas do not fit maxReplicasPerBroker 20: the 30 partitions of replication "
        "factor 2 need 30 of their replicas on broker 2, which has room for 20; the other "
        "brokers take at most 1 of each (one per broker and their share of a rack)"
    )
    assert blocker(HardGoals(goals.assignment, brokers=(0, 1, 2), racks=racks,
                             max_replicas_per_broker=30)) is None  # fmt: skip


def test_no_brokers_left() -> None:
    assert blocker(HardGoals({tp("a-0"): (1,)}, brokers=())) == "no brokers may hold replicas"


# -- against every assignment, on small clusters -------------------------------------------------


def feasible(goals: HardGoals) -> bool:
    eligible = sorted(goals.brokers)
    excluded = re.compile(goals.excluded_topics) if goals.excluded_topics else None
    pinned: Counter[int] = Counter()
    movable = []
    for partition, replicas in sorted(goals.assignment.items()):
        if excluded is not None and excluded.fullmatch(partition.topic):
            if any(b not in eligible for b in replicas):
                return False
            pinned.update(replicas)
        else:
            movable.append(list(placements(len(replicas), eligible, goals.racks)))
    cap = goals.max_replicas_per_broker
    for choice in itertools.product(*movable):
        counts = pinned + Counter(b for chosen in choice for b in chosen)
        if cap is None or all(c <= cap for c in counts.values()):
            return True
    return False


@st.composite
def small_clusters(draw: st.DrawFn) -> HardGoals:
    registered = list(range(draw(st.integers(2, 6))))
    removed = draw(st.lists(st.sampled_from(registered), unique=True, max_size=3))
    eligible = [b for b in registered if b not in removed]
    racks = {}
    if draw(st.booleans()):
        racks = {b: draw(st.sampled_from("abc")) for b in registered}
    assignment = {}
    for p in range(draw(st.integers(1, 4))):
        rf = draw(st.integers(1, len(registered)))
        replicas = tuple(draw(st.permutations(registered))[:rf])
        assignment[TopicPartition(draw(st.sampled_from(["audit", "orders", "logs"])), p)] = replicas
    cap = draw(st.none() | st.integers(1, 4))
    excluded = draw(st.sampled_from([None, "audit", "audit|logs"]))
    return HardGoals(assignment, tuple(eligible), racks, excluded, cap, tuple(removed))


@settings(max_examples=400, deadline=None)
@given(small_clusters())
def test_the_check_agrees_with_trying_every_assignment(goals: HardGoals) -> None:
    found = blocker(goals)
    assert (found is None) == feasible(goals), found
    if found is not None:
        assert "\n" not in found
