"""The reconciler's pure planning step: Kafka's placement for new topics and partitions, config
changes, minimal-move replication-factor changes, and the reasons nothing can be written."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.assignment import BrokerMetadata, RackAwareMode
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.topics.plan import (
    ActualTopic,
    AddPartitions,
    ChangeConfig,
    Cluster,
    CreateTopic,
    Plan,
    Reason,
    Reassign,
    adoption_differences,
    announcement,
    plan,
)
from kafka_topic_operator.topics.spec import DeletionPolicy, DesiredTopic


class Fixed:
    """Kafka's two random draws (start index, shift) fixed, as Kafka's tests fix them."""

    def __init__(self, *values: int) -> None:
        self.values = list(values)

    def next_int(self, bound: int) -> int:
        return self.values.pop(0) % bound


def desired(partitions: int = 3, rf: int = 2, **changes: object) -> DesiredTopic:
    topic = DesiredTopic(
        name="orders",
        partitions=partitions,
        replication_factor=rf,
        config={},
        assignment=None,
        rack_aware_mode=RackAwareMode.ENFORCED,
        deletion_policy=DeletionPolicy.DELETE,
    )
    return replace(topic, **changes)  # type: ignore[arg-type]


def brokers(*ids: int, racks: str | None = None) -> Cluster:
    return Cluster([BrokerMetadata(b, None if racks is None else racks[i]) for i, b in
                    enumerate(ids)])  # fmt: skip


def actual(*rows: tuple[int, ...], config: dict[str, str] | None = None) -> ActualTopic:
    return ActualTopic({p: ReplicaAssignment(r) for p, r in enumerate(rows)}, config or {})


def blocked(result: Plan) -> tuple[Reason, str]:
    assert result.blocked is not None, result
    return result.blocked


def test_creation_places_replicas_as_kafka_does() -> None:
    result = plan(desired(partitions=4, rf=2), None, brokers(0, 1, 2), Fixed(0, 0))
    # AdminUtils with start index 0 and shift 0: leaders round-robin, followers shifted by 1.
    assert result.actions == (CreateTopic({0: (0, 1), 1: (1, 2), 2: (2, 0), 3: (0, 2)}, {}),)


def test_creation_with_racks_spreads_each_partition_over_racks() -> None:
    cluster = brokers(0, 1, 2, 3, racks="abab")
    result = plan(desired(partitions=8, rf=2), None, cluster)
    (create,) = result.actions
    assert isinstance(create, CreateTopic)
    rack = {b.id: b.rack for b in cluster.brokers}
    assert all(len({rack[r] for r in replicas}) == 2 for replicas in create.assignment.values())


def test_creation_refusals_name_their_reason_with_kafkas_message() -> None:
    assert blocked(plan(desired(rf=3), None, brokers(0, 1))) == (
        Reason.BROKERS_UNAVAILABLE,
        "Replication factor: 3 larger than available brokers: 2.",
    )
    half_racked = Cluster([BrokerMetadata(0, "a"), BrokerMetadata(1)])
    reason, message = blocked(plan(desired(), None, half_racked))
    assert reason is Reason.INVALID_SPEC and message.startswith("Not all brokers have rack")
    explicit = desired(assignment={0: (0, 7)}, partitions=1)
    assert blocked(plan(explicit, None, brokers(0, 1))) == (
        Reason.BROKERS_UNAVAILABLE,
        "Some brokers specified for partition id 0 are not available. Specified brokers: 0, 7, "
        "available brokers: 0, 1.",
    )
    colliding = Cluster(brokers(0, 1).brokers, topics=["orders_v1"])
    assert blocked(plan(desired(name="orders.v1"), None, colliding)) == (
        Reason.CONFLICT,
        "Topic 'orders.v1' collides with existing topics: orders_v1",
    )
    deleting = Cluster(brokers(0, 1).brokers, marked_for_deletion=["orders"])
    assert blocked(plan(desired(), None, deleting)) == (
        Reason.DELETION_IN_PROGRESS,
        "Topic 'orders' is marked for deletion.",
    )


def test_an_unchanged_topic_needs_nothing() -> None:
    assert plan(desired(), actual((0, 1), (1, 2), (2, 0)), brokers(0, 1, 2)) == Plan()


def test_config_changes_write_the_whole_desired_config() -> None:
    wanted = desired(config={"retention.ms": "1000"})
    current = actual((0, 1), (1, 2), (2, 0), config={"cleanup.policy": "compact"})
    assert plan(wanted, current, brokers(0, 1, 2)).actions == (
        ChangeConfig({"retention.ms": "1000"}),
    )


def test_reassignment_throttles_the_spec_does_not_set_are_kept_and_are_not_drift() -> None:
    # Set by a reassignment in flight (a KafkaRebalance, kafka-reassign-partitions), which
    # removes them itself when it is done: a config change must not lift the throttle.
    throttles = {"leader.replication.throttled.replicas": "0:0,0:1",
                 "follower.replication.throttled.replicas": "0:2"}  # fmt: skip
    current = actual((0, 1), (1, 2), (2, 0), config={"retention.ms": "5", **throttles})
    assert plan(desired(config={"retention.ms": "5"}), current, brokers(0, 1, 2)) == Plan()
    assert plan(desired(config={"retention.ms": "9"}), current, brokers(0, 1, 2)).actions == (
        ChangeConfig({"retention.ms": "9", **throttles}),
    )
    # A spec that sets one manages it like any other config.
    wanted = desired(config={"follower.replication.throttled.replicas": "*"})
    assert plan(wanted, current, brokers(0, 1, 2)).actions == (
        ChangeConfig({"follower.replication.throttled.replicas": "*",
                      "leader.replication.throttled.replicas": "0:0,0:1"}),
    )  # fmt: skip
    assert adoption_differences(desired(config={"retention.ms": "5"}), current) == []


def test_growth_adds_partitions_as_kafka_topics_alter_does() -> None:
    current = actual((0, 1), (1, 2), (2, 0))
    result = plan(desired(partitions=5), current, brokers(0, 1, 2), Fixed(0))
    # The start index continues from partition 0's leader (AdminZkClient.addPartitions).
    assert result.actions == (AddPartitions({3: (0, 2), 4: (1, 0)}),)


def test_shrinking_is_not_supported() -> None:
    assert blocked(plan(desired(partitions=2), actual((0,), (1,), (2,)), brokers(0, 1, 2))) == (
        Reason.NOT_SUPPORTED,
        "Topic 'orders' has 3 partitions; Kafka cannot decrease the partition count to 2.",
    )


def test_a_marked_topic_is_left_alone() -> None:
    marked = replace(actual((0,)), marked_for_deletion=True)
    assert blocked(plan(desired(partitions=1, rf=1), marked, brokers(0)))[0] is (
        Reason.DELETION_IN_PROGRESS
    )


def test_raising_the_replication_factor_moves_one_replica_per_partition_and_balances() -> None:
    current = actual(*[(p % 4,) for p in range(8)])
    result = plan(desired(partitions=8, rf=2), current, brokers(0, 1, 2, 3))
    (reassign,) = result.actions
    assert isinstance(reassign, Reassign)
    assert reassign.moves == 8  # the lower bound: one new replica per partition
    assert all(t[0] == p % 4 for p, t in reassign.targets.items())  # leaders stay
    load = Counter(b for t in reassign.targets.values() for b in t)
    assert set(load.values()) == {4}


def test_lowering_the_replication_factor_keeps_the_preferred_leader_and_moves_nothing() -> None:
    current = actual((0, 1, 2), (1, 2, 0), (2, 0, 1))
    (reassign,) = plan(desired(rf=2), current, brokers(0, 1, 2)).actions
    assert isinstance(reassign, Reassign)
    assert reassign.moves == 0
    assert [t[0] for _, t in sorted(reassign.targets.items())] == [0, 1, 2]
    assert all(len(t) == 2 for t in reassign.targets.values())


def test_growth_blocked_by_a_dead_broker_says_why_in_the_users_terms_and_what_waits() -> None:
    # Replication factor 3 -> 2, 3 -> 4 partitions and a config change, broker 2 dead: new
    # partitions take partition 0's replication factor (3) as Kafka's rule has it, which two
    # live brokers cannot hold; the plan applies nothing, and says so.
    current = actual((0, 1, 2), (1, 2, 0), (2, 0, 1))
    asked = desired(partitions=4, rf=2, config={"retention.ms": "1000"})
    result = plan(asked, current, brokers(0, 1))
    assert blocked(result) == (
        Reason.BROKERS_UNAVAILABLE,
        "New partitions take partition 0's replication factor (3) until the change to 2 is "
        "done: Replication factor: 3 larger than available brokers: 2. Held back with the new "
        "partitions: the config change, the replica changes. All are tried again at the next "
        "drift pass or change of the resource.",
    )
    # Alone, the growth keeps Kafka's own message.
    assert blocked(plan(desired(partitions=4, rf=3), current, brokers(0, 1))) == (
        Reason.BROKERS_UNAVAILABLE,
        "Replication factor: 3 larger than available brokers: 2.",
    )


def test_raising_prefers_a_rack_the_partition_does_not_use() -> None:
    current = actual((0,), (1,))
    cluster = brokers(0, 1, 2, 3, racks="aabb")
    (reassign,) = plan(desired(partitions=2, rf=2), current, cluster).actions
    assert isinstance(reassign, Reassign)
    assert {t[1] for t in reassign.targets.values()} <= {2, 3}


def test_an_explicit_placement_change_is_a_reassignment_of_the_changed_partitions() -> None:
    wanted = desired(partitions=2, assignment={0: (0, 1), 1: (2, 0)})
    (reassign,) = plan(wanted, actual((0, 1), (1, 2)), brokers(0, 1, 2)).actions
    assert reassign == Reassign({1: (2, 0)}, moves=1, before={1: (1, 2)})
    assert blocked(plan(replace(wanted, assignment={0: (0, 1), 1: (5, 0)}),
                        actual((0, 1), (1, 2)), brokers(0, 1, 2)))[0] is (
        Reason.BROKERS_UNAVAILABLE)  # fmt: skip


def test_nothing_moves_while_a_reassignment_runs() -> None:
    moving = ActualTopic({0: ReplicaAssignment((0, 1), adding_replicas=(1,))}, {})
    reason, message = blocked(plan(desired(partitions=1, rf=3), moving, brokers(0, 1, 2)))
    assert reason is Reason.REASSIGNMENT_IN_PROGRESS
    assert message == "A partition reassignment is in progress for the topic 'orders'."


@given(
    st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=4, unique=True), min_size=1,
             max_size=20),
    st.integers(1, 6),
)  # fmt: skip
def test_a_replication_factor_change_is_minimal_and_valid(rows: list[list[int]], rf: int) -> None:
    current = actual(*[tuple(r) for r in rows])
    result = plan(desired(partitions=len(rows), rf=rf), current, brokers(0, 1, 2, 3, 4, 5))
    targets = {p: tuple(r) for p, r in enumerate(rows)}
    for action in result.actions:
        assert isinstance(action, Reassign)
        targets.update(action.targets)
        # Exactly the replicas a partition lacks are placed anew: the lower bound.
        assert action.moves == sum(max(0, rf - len(rows[p])) for p in action.targets)
    for p, replicas in targets.items():
        assert len(replicas) == rf and len(set(replicas)) == rf
        kept = min(rf, len(rows[p]))
        assert replicas[0] == rows[p][0]  # the preferred leader stays
        assert len(set(replicas) & set(rows[p])) == kept


def test_each_action_is_announced_as_an_event_says_it() -> None:
    assert announcement("orders", CreateTopic({0: (0, 1), 1: (1, 2)}, {})) == (
        "Created", "Topic 'orders' created: 2 partitions, replication factor 2",
    )  # fmt: skip
    assert announcement("orders", AddPartitions({2: (0, 1), 3: (1, 2)})) == (
        "PartitionsAdded", "Topic 'orders': 2 partitions added",
    )  # fmt: skip
    assert announcement("orders", Reassign({0: (0, 1, 2)}, 1, {0: (0, 1)})) == (
        "ReplicasChanged", "Topic 'orders': replicas of 1 partitions changing, 1 placed anew",
    )  # fmt: skip
    assert announcement("orders", ChangeConfig({"retention.ms": "1000"})) == (
        "ConfigChanged", "Topic 'orders': config now retention.ms=1000",
    )  # fmt: skip
