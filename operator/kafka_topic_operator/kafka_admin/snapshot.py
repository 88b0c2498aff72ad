"""A ClusterSnapshot from what Kafka's Admin API answers (pure: no I/O).

The inputs are kafka-python's answers as it returns them: `describe_cluster()` (the brokers,
fenced ones included), `describe_metadata_quorum()` (the active controller), `describe_topics()`
(each topic's partitions, leaders, ISR), `list_partition_reassignments()` and the topics' entries
of `describe_configs()`. What a ZooKeeper-mode reader finds in znodes maps as follows:

- the registered brokers (`/brokers/ids`) are the unfenced brokers: a fenced broker is
  registered but not alive, as a ZooKeeper-mode broker without its ephemeral znode;
- a topic's config znode holds its dynamic topic configs only (source DYNAMIC_TOPIC_CONFIG), not
  defaults, static broker settings or dynamic broker defaults, which describe_configs also lists;
- a partition's replicas, adding and removing replicas are the controller's during a
  reassignment (ListPartitionReassignments), else the metadata's replicas;
- a partition's state (leader, ISR, leader epoch) is the metadata's; a leader of -1 is a state
  without a live leader, so the partition reads Offline;
- `pending_reassignments` are the reassignments in progress with their targets: KRaft has no
  queue of requested ones, a request is taken up at once.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any, Final

from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.leader_and_isr import (
    NO_EPOCH,
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionSnapshot, TopicSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition

DYNAMIC_TOPIC_CONFIG: Final = "DYNAMIC_TOPIC_CONFIG"
UNKNOWN_TOPIC_OR_PARTITION: Final = 3
METADATA_TOPIC: Final = "__cluster_metadata"
ZERO_UUID: Final = uuid.UUID(int=0)

# KRaft's partition records carry no controller epoch: LeaderAndIsr requests and the state znode
# are gone, and brokers learn of every change from the metadata log. The quorum's leader epoch
# (ClusterSnapshot.controller_epoch) counts controller elections, not the writer of a partition's
# state, so a partition's state says "no epoch" rather than borrow it.
PARTITION_CONTROLLER_EPOCH: Final = NO_EPOCH

Reassignments = Mapping[Any, Mapping[str, Sequence[int]]]
"""list_partition_reassignments(): (topic, partition) -> replicas, adding_replicas,
removing_replicas (kafka-python keys it with its TopicPartition, a named tuple)."""


def kafka_topic_id(value: str | uuid.UUID | None) -> str | None:
    """A topic id as Kafka prints it (URL-safe base64), from kafka-python's UUID string; None
    for none (Kafka's all-zero id)."""
    if value is None:
        return None
    parsed = value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    if parsed == ZERO_UUID:
        return None
    return str(Uuid.from_bytes(parsed.bytes))


def live_brokers(
    cluster: Mapping[str, Any], protocol: SecurityProtocol = SecurityProtocol.PLAINTEXT
) -> dict[int, BrokerInfo]:
    """The unfenced brokers of describe_cluster(), with their racks. DescribeCluster gives one
    address per broker, the one of the listener the client came in on, without its name: the
    endpoint is named after the client's own security protocol."""
    brokers: dict[int, BrokerInfo] = {}
    for broker in cluster.get("brokers") or ():
        if broker.get("is_fenced"):
            continue
        broker_id = int(broker["broker_id"])
        endpoint = EndPoint(protocol.value, broker.get("host") or None, int(broker["port"]),
                            protocol)  # fmt: skip
        brokers[broker_id] = BrokerInfo(broker_id, (endpoint,), rack=broker.get("rack"))
    return brokers


def quorum_leader(quorum: Mapping[str, Any] | None) -> tuple[int | None, int | None]:
    """The active controller and its epoch, from describe_metadata_quorum(): the leader of
    `__cluster_metadata` and its leader epoch, which like ZooKeeper's /controller_epoch grows
    with every controller election. (DescribeCluster's controller id is no help: KRaft brokers
    answer with a random live broker.)"""
    for topic in (quorum or {}).get("topics") or ():
        if topic.get("topic_name") != METADATA_TOPIC:
            continue
        for partition in topic.get("partitions") or ():
            if partition.get("partition_index", 0) != 0 or partition.get("error"):
                continue
            leader = partition.get("leader_id", -1)
            epoch = partition.get("leader_epoch", -1)
            return (leader if leader >= 0 else None, epoch if epoch >= 0 else None)
    return None, None


def dynamic_topic_config(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The topic's own overrides among describe_configs()' entries (what its config znode would
    hold in ZooKeeper mode)."""
    return {
        key: str(entry["value"])
        for key, entry in sorted(entries.items())
        if entry.get("config_source") == DYNAMIC_TOPIC_CONFIG and entry.get("value") is not None
    }


def partition_snapshot(
    partition: Mapping[str, Any], reassignment: Mapping[str, Sequence[int]] | None = None
) -> PartitionSnapshot:
    """One partition of describe_topics(), with its reassignment if one is in progress."""
    if reassignment is not None:
        assignment = _assignment(reassignment)
    else:
        assignment = ReplicaAssignment.of(partition.get("replica_nodes") or ())
    leader_and_isr = LeaderAndIsr(
        leader=int(partition.get("leader_id", -1)),
        isr=tuple(partition.get("isr_nodes") or ()),
        leader_epoch=int(partition.get("leader_epoch", -1)),
    )
    return PartitionSnapshot(
        partition=int(partition["partition_index"]),
        assignment=assignment,
        state=LeaderIsrAndControllerEpoch(leader_and_isr, PARTITION_CONTROLLER_EPOCH),
    )


def _assignment(reassignment: Mapping[str, Sequence[int]]) -> ReplicaAssignment:
    """A reassignment in progress as the controller lists it: every replica, target first."""
    return ReplicaAssignment.of(
        reassignment.get("replicas") or (),
        reassignment.get("adding_replicas") or (),
        reassignment.get("removing_replicas") or (),
    )


def _reassignments_by_partition(
    reassignments: Reassignments,
) -> dict[TopicPartition, Mapping[str, Sequence[int]]]:
    by_partition: dict[TopicPartition, Mapping[str, Sequence[int]]] = {}
    for key, value in reassignments.items():
        topic, partition = key
        by_partition[TopicPartition(str(topic), int(partition))] = value
    return by_partition


def reassignments_around(before: Reassignments, after: Reassignments) -> dict[Any, Any]:
    """The reassignments to read topics with, from ListPartitionReassignments asked before and
    after DescribeTopics. The two are not one read: a reassignment ending between them leaves
    the described replicas the union of old and new with nothing listed, which reads as a
    larger replication factor (and one starting between them, the old replicas as if nothing
    moved). A partition either listing names is taken as being reassigned, as the later one
    has it where both do: the next read sees it ended."""
    return {**before, **after}


def listed_targets(reassignments: Reassignments) -> dict[TopicPartition, tuple[int, ...]]:
    """Each listed reassignment's target replicas."""
    return {
        tp: _assignment(r).target_replicas
        for tp, r in _reassignments_by_partition(reassignments).items()
    }


def replicas_changed(
    described: Iterable[Mapping[str, Any]], expected: Mapping[TopicPartition, Sequence[int]]
) -> list[TopicPartition]:
    """The partitions of `expected` whose replicas describe_topics() shows otherwise (gone
    ones included)."""
    now = {
        TopicPartition(str(t["name"]), int(p["partition_index"])): list(
            p.get("replica_nodes") or ()
        )
        for t in described
        if not t.get("error_code")
        for p in t.get("partitions") or ()
    }
    return sorted(tp for tp, replicas in expected.items() if now.get(tp) != list(replicas))


def cluster_snapshot(
    *,
    cluster: Mapping[str, Any],
    topics: Iterable[Mapping[str, Any]],
    reassignments: Reassignments,
    configs: Mapping[str, Mapping[str, Mapping[str, Any]]],
    own_configs: Mapping[str, Mapping[str, str]] | None = None,
    quorum: Mapping[str, Any] | None = None,
    requested: Collection[str] | None = None,
    listed: bool = False,
    protocol: SecurityProtocol = SecurityProtocol.PLAINTEXT,
    problems: Sequence[str] = (),
) -> ClusterSnapshot:
    """The snapshot of the named topics (`requested`; None: every topic in `topics`).

    `topics` are describe_topics()' entries, for every topic when `listed` (then `topic_names`
    holds every name); `configs` describe_configs()' entries per topic, or, in `own_configs`,
    a topic's own configs known already. A topic Kafka answers about with an error other than
    "unknown", or without its configs, is left out and reported in `unreadable` (with
    `problems`, the caller's own, in `problems`)."""
    wanted = None if requested is None else set(requested)
    pending = _reassignments_by_partition(reassignments)
    found: dict[str, TopicSnapshot] = {}
    names: set[str] = set()
    unreadable: dict[str, tuple[str, ...]] = {}
    for topic in topics:
        name = str(topic["name"])
        error = int(topic.get("error_code") or 0)
        if error == UNKNOWN_TOPIC_OR_PARTITION:
            continue
        if error == 0:
            names.add(name)
        if wanted is not None and name not in wanted:
            continue
        if error != 0:
            unreadable[name] = (f"Kafka answers error {error} about topic '{name}'",)
            continue
        own = (own_configs or {}).get(name)
        entries = configs.get(name)
        if own is None and not entries:
            # describe_configs lists every config of a topic it knows, defaults included.
            unreadable[name] = (f"Kafka gives no configs for topic '{name}' (deleted meanwhile?)",)
            continue
        partitions = {
            int(p["partition_index"]): partition_snapshot(
                p, pending.get(TopicPartition(name, int(p["partition_index"])))
            )
            for p in topic.get("partitions") or ()
        }
        found[name] = TopicSnapshot(
            name=name,
            topic_id=kafka_topic_id(topic.get("topic_id")),
            partitions=dict(sorted(partitions.items())),
            config=dict(own) if own is not None else dynamic_topic_config(entries or {}),
        )
    controller_id, controller_epoch = quorum_leader(quorum)
    targets = {tp: _assignment(r).target_replicas for tp, r in sorted(pending.items())}
    return ClusterSnapshot(
        brokers=live_brokers(cluster, protocol),
        topics=found,
        controller_id=controller_id,
        controller_epoch=controller_epoch,
        pending_reassignments=targets,
        problems=(*problems, *(p for said in unreadable.values() for p in said)),
        topic_names=frozenset(names if listed else found),
        unreadable=unreadable,
    )


def topic_fingerprint(snapshot: ClusterSnapshot, topic: str) -> Hashable:
    """What a topic's status is made of in `snapshot`, comparable between reads: its id,
    partitions, replicas (adding, removing, offline), leaders, leader epochs, ISR and config;
    None while it does not exist."""
    found = snapshot.topics.get(topic)
    problems = snapshot.unreadable.get(topic)
    if found is None:
        return ("unreadable", problems) if problems else None
    live = snapshot.live_brokers
    partitions = tuple(
        (p, s.assignment.replicas, s.assignment.adding_replicas, s.assignment.removing_replicas,
         s.leader, s.state.leader_and_isr.leader_epoch if s.state else None, s.isr,
         s.offline_replicas(live))
        for p, s in sorted(found.partitions.items())
    )  # fmt: skip
    return (found.topic_id, partitions, tuple(sorted(found.config.items())),
            found.marked_for_deletion)  # fmt: skip
