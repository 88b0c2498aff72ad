"""Status built from a plan and a snapshot: the Ready condition's reasons, partition counts, the
bounded partition table with replica states, and transition times kept while nothing changes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionSnapshot, TopicSnapshot
from kafka_topic_operator.topics.plan import CreateTopic, Plan, Reason
from kafka_topic_operator.topics.status import (
    PARTITION_TABLE_LIMIT,
    Condition,
    followed_status,
    managed_topic,
    ready_condition,
    status_patch,
    stuck_status,
    topic_status,
    with_transition_times,
)
from kube_api_emulator.patch import merge_patch


def broker(b: int) -> BrokerInfo:
    return BrokerInfo(id=b, endpoints=(), rack=None, jmx_port=-1, timestamp=0)


def snapshot(*rows: tuple[tuple[int, ...], int | None], live: tuple[int, ...] = (0, 1, 2),
             deleting: bool = False, adding: tuple[int, ...] = ()) -> ClusterSnapshot:  # fmt: skip
    partitions = {}
    for p, (replicas, leader) in enumerate(rows):
        state = None
        if leader is not None:
            isr = tuple(r for r in replicas if r in live) or replicas[:1]
            state = LeaderIsrAndControllerEpoch(LeaderAndIsr(leader, isr), 1)
        assignment = ReplicaAssignment((*replicas, *adding), adding) if adding else (
            ReplicaAssignment(replicas))  # fmt: skip
        partitions[p] = PartitionSnapshot(p, assignment, state)
    topic = TopicSnapshot("t", "id-t", partitions, marked_for_deletion=deleting)
    return ClusterSnapshot(
        brokers={b: broker(b) for b in live},
        topics={"t": topic},
        controller_id=0,
        deletion_markers=frozenset({"t"}) if deleting else frozenset(),
    )


def test_ready_when_everything_is_online() -> None:
    cluster = snapshot(((0, 1), 0), ((1, 2), 1))
    condition = ready_condition(Plan(), cluster, "t")
    assert condition == Condition("True", "Created", "The topic is as declared")
    status = topic_status("t", 4, condition, cluster)
    assert status["observedGeneration"] == 4 and status["topicId"] == "id-t"
    assert status["partitionCounts"] == {"total": 2, "online": 2, "offline": 0,
                                         "underReplicated": 0}  # fmt: skip
    assert status["replicationFactor"] == 2  # kubectl get kt shows these two, not the spec's
    assert status["partitions"][0] == {
        "partition": 0,
        "state": "OnlinePartition",
        "leader": 0,
        "isr": [0, 1],
        "replicas": [{"broker": 0, "state": "OnlineReplica"},
                     {"broker": 1, "state": "OnlineReplica"}],
    }  # fmt: skip


def test_reasons_while_not_ready() -> None:
    blocked = Plan(blocked=(Reason.CONFLICT, "taken"))
    assert ready_condition(blocked, None, "t") == Condition("False", "Conflict", "taken")
    applied = Plan(actions=(CreateTopic({0: (0,)}, {}),))
    assert ready_condition(applied, None, "t") == Condition(
        "False", "Reconciling", "Applied CreateTopic; waiting for Kafka"
    )
    new = snapshot(((0,), None))
    assert ready_condition(Plan(), new, "t").message == (
        "Waiting for the controller to bring 1 partitions online"
    )
    dead = snapshot(((2,), 2), live=(0, 1))
    assert ready_condition(Plan(), dead, "t") == Condition(
        "False", "PartitionsOffline", "1 partitions have no live leader"
    )
    moving = snapshot(((0, 1), 0), adding=(2,))
    assert ready_condition(Plan(), moving, "t").message == "Reassigning partitions 0"


def test_replica_states_during_deletion_and_the_reasons_it_waits() -> None:
    cluster = snapshot(((0, 2), 0), live=(0, 1), deleting=True)
    status = topic_status("t", 1, Condition("False", "DeletionIneligible", "x"), cluster)
    assert [r["state"] for r in status["partitions"][0]["replicas"]] == [
        "ReplicaDeletionStarted",
        "ReplicaDeletionIneligible",
    ]
    assert status["deletion"] == {
        "waitingOn": ["replicas on offline brokers 2 (deletion resumes when they return)"]
    }


def test_an_admin_request_kafkas_controller_will_not_process_is_named_on_its_topics() -> None:
    from dataclasses import replace

    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    cluster = snapshot(((0, 1), 0), ((1,), None))  # t-1 never came online
    asked = replace(
        cluster,
        pending_preferred_elections=frozenset({TopicPartition("t", 1), TopicPartition("u", 0)}),
    )
    status = topic_status("t", 1, Condition("False", "Reconciling", "x"), asked)
    [stuck] = status["stuckAdminRequests"]
    assert stuck["path"] == "/admin/preferred_replica_election"
    assert stuck["partitions"] == ["t-1"]
    assert "never came online (t-1: NoSuchElementException)" in stuck["reason"]
    assert stuck["clears"].startswith("delete /admin/preferred_replica_election, then move")
    # What waits on it says why it will wait for ever.
    blocked = Plan(blocked=(Reason.REASSIGNMENT_IN_PROGRESS, "A partition reassignment is in "
                            "progress for the topic 't'."))  # fmt: skip
    message = ready_condition(blocked, asked, "t").message
    assert message.startswith(
        "A partition reassignment is in progress for the topic 't'. "
        "/admin/preferred_replica_election will not be processed: "
    )
    assert message.endswith("so that it watches the path again.")
    # A request Kafka's controller processes is not named.
    fine = replace(cluster, pending_preferred_elections=frozenset({TopicPartition("t", 0)}),
                   pending_reassignments={TopicPartition("t", 0): (1, 0)})  # fmt: skip
    assert "stuckAdminRequests" not in topic_status("t", 1, Condition("True", "Created", ""), fine)


def test_a_reassignment_kafka_will_not_finish_is_what_a_blocked_reconcile_says() -> None:
    from dataclasses import replace

    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    cluster = snapshot(((2,), 0))
    waiting = "A partition reassignment is in progress for the topic 't'."
    asked = replace(cluster, pending_reassignments={TopicPartition("t", 0): (2, 2)})
    status = stuck_status("t", 4, waiting, asked)
    assert status is not None
    [ready, *_] = status["conditions"]
    assert (ready["status"], ready["reason"], ready["observedGeneration"]) == (
        "False", "ReassignmentInProgress", 4)  # fmt: skip
    assert ready["message"].startswith(waiting + " /admin/reassign_partitions will not be "
                                       "processed: Kafka's controller takes a target it should "
                                       "refuse (t-0 to [2, 2]: the replica list has duplicate "
                                       "brokers)")  # fmt: skip
    assert [s["path"] for s in status["stuckAdminRequests"]] == ["/admin/reassign_partitions"]
    assert status["partitions"][0]["replicas"] == [{"broker": 2, "state": "OnlineReplica"}]
    # A request Kafka's controller will finish, or one naming other topics: the wait ends.
    fine = replace(cluster, pending_reassignments={TopicPartition("t", 0): (1, 2)})
    assert stuck_status("t", 4, waiting, fine) is None
    other = replace(cluster, pending_reassignments={TopicPartition("u", 0): (2, 2)})
    assert stuck_status("t", 4, waiting, other) is None


def test_large_topics_get_counts_but_no_table() -> None:
    rows = [((0,), 0)] * (PARTITION_TABLE_LIMIT + 1)
    status = topic_status("t", 1, Condition("True", "Created", ""), snapshot(*rows))
    assert "partitions" not in status
    assert status["partitionCounts"]["total"] == PARTITION_TABLE_LIMIT + 1


def test_transition_times_move_only_when_the_status_changes() -> None:
    ready = topic_status("t", 1, Condition("True", "Created", "ok"), None)
    first = with_transition_times(ready, None, "2026-01-01T00:00:00Z")
    again = with_transition_times(ready, first, "2026-01-02T00:00:00Z")
    assert again == first  # nothing to patch
    broken = topic_status("t", 2, Condition("False", "PartitionsOffline", "x"), None)
    later = with_transition_times(broken, first, "2026-01-03T00:00:00Z")
    assert later["conditions"][0]["lastTransitionTime"] == "2026-01-03T00:00:00Z"


def resource(
    reason: str = "Created", generation: int = 3, observed: int = 3, **meta: object
) -> dict[str, object]:
    condition = Condition("True" if reason == "Created" else "False", reason, "x")
    status = topic_status("t", observed, condition, snapshot(((0, 1), 0)))
    spec = {"topicName": "t", "partitions": 1, "replicas": 2}
    return {"metadata": {"name": "r", "generation": generation, **meta}, "spec": spec,
            "status": status}  # fmt: skip


def test_status_follows_the_controller_between_created_and_partitions_offline() -> None:
    moved = snapshot(((0, 1), 1))  # broker 0 died and came back: 1 leads now
    followed = followed_status("r", resource(), "t", moved)
    ready = Condition("True", "Created", "The topic is as declared")
    assert followed == topic_status("t", 3, ready, moved)
    assert followed is not None and followed["partitions"][0]["leader"] == 1
    offline = snapshot(((2, 1), 2), live=(0,))
    followed = followed_status("r", resource(), "t", offline)
    assert followed is not None
    assert followed["conditions"][0]["reason"] == "PartitionsOffline"
    assert followed["partitionCounts"]["offline"] == 1
    back = followed_status("r", resource("PartitionsOffline"), "t", snapshot(((2, 1), 2)))
    assert back is not None and back["conditions"][0]["reason"] == "Created"


def test_status_the_reconcile_must_decide_is_left_to_it() -> None:
    now = snapshot(((0, 1), 1))
    assert followed_status("r", resource(generation=4), "t", now) is None  # spec changed
    assert followed_status("r", resource("Conflict"), "t", now) is None
    assert followed_status("r", resource("DeletionIneligible"), "t", now) is None
    deleting = resource(deletionTimestamp="2026-01-01T00:00:00Z")
    assert followed_status("r", deleting, "t", now) is None
    assert followed_status("r", resource(), "other", now) is None  # not its topic
    grown = snapshot(((0, 1), 0), ((1, 2), 1))  # partitions added by hand: drift
    assert followed_status("r", resource(), "t", grown) is None
    moving = snapshot(((0, 1), 0), adding=(2,))  # someone reassigns it
    assert followed_status("r", resource(), "t", moving) is None


def test_a_topic_named_before_it_is_managed_is_not_followed() -> None:
    """status.topicName names the topic from the first reconcile on (kubectl get shows it);
    only a managed one is this resource's to follow and change."""
    named = resource()
    named["status"] = {**named["status"], "topicManaged": False}  # type: ignore[dict-item]
    assert managed_topic(named["status"]) is None  # type: ignore[arg-type]
    assert followed_status("r", named, "t", snapshot(((0, 1), 1))) is None
    assert managed_topic(resource()["status"]) == "t"  # type: ignore[arg-type]
    # Written before topicManaged existed: a topic was named only once it was managed.
    assert managed_topic({"topicName": "t"}) == "t"
    assert managed_topic({}) is None


JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.text(max_size=3)
FIELDS = st.sampled_from(["topicName", "deletion", "waitingOn", "requested", "partitionCounts"])
JSON = st.recursive(
    JSON_LEAVES.filter(lambda v: v is not None),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(FIELDS, inner, max_size=3),
    max_leaves=8,
)


@given(old=st.dictionaries(FIELDS, JSON, max_size=4), new=st.dictionaries(FIELDS, JSON, max_size=4))
def test_the_status_patch_is_written_only_on_change_and_turns_old_into_new(
    old: dict[str, Any], new: dict[str, Any]
) -> None:
    condition = {"type": "Ready", "status": "True", "reason": "Created", "message": ""}
    old = {**old, "kopf": {"progress": {}}, "conditions": [
        {**condition, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}  # fmt: skip
    new = {**new, "conditions": [condition]}
    patch = status_patch(old, new, "2026-01-02T00:00:00Z")
    stamped = with_transition_times(new, old, "2026-01-02T00:00:00Z")
    if patch is None:
        assert {k: v for k, v in old.items() if k != "kopf"} == stamped
    else:
        # Applied as the API server applies kopf's status patches.
        assert merge_patch(old, patch) == {**stamped, "kopf": {"progress": {}}}
    # Only the transition time differs: nothing to write.
    assert status_patch(old, {k: v for k, v in old.items() if k != "kopf"}, "later") is None


def test_a_nested_field_that_went_away_is_removed_not_left_behind() -> None:
    old = {"deletion": {"requested": True, "waitingOn": ["broker 2 offline"]}}
    patch = status_patch(old, {"deletion": {"requested": True}}, "now")
    assert patch == {"deletion": {"waitingOn": None}, "conditions": []}
