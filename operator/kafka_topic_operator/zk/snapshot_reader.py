"""Reads a ClusterSnapshot from ZooKeeper with pipelined reads (one round of requests per level).

Malformed znodes written by someone else are reported in `problems` with their path and skipped,
never raised: a reader must not crash on another tool's bad JSON.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.snapshot import ClusterSnapshot, PartitionSnapshot, TopicSnapshot
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.znodes import BrokerInfo, ZNodeDataError


def read_cluster(
    zk: ZkClient, topics: Iterable[str] | None = None, *, list_topics: bool = True
) -> ClusterSnapshot:
    """The cluster, with `topics` (all when None) read in full. `list_topics=False` skips
    listing every topic name (`topic_names` then holds only the topics read): one topic's
    reconcile must not cost a listing of thousands."""
    problems: list[str] = []

    broker_ids = zk.children(znodes.BROKER_IDS_PATH) or []
    brokers: dict[int, BrokerInfo] = {}
    for node in zk.get_many(znodes.BROKER_IDS_PATH + "/" + b for b in broker_ids):
        if node is None:
            continue  # deregistered between the two reads
        try:
            info = znodes.decode_broker(node.path, node.data)
        except ZNodeDataError as e:
            problems.append(str(e))
        else:
            brokers[info.id] = info

    if topics is None or list_topics:
        all_topics = zk.children(znodes.TOPICS_PATH) or []
        wanted = sorted(all_topics if topics is None else set(topics) & set(all_topics))
    else:
        wanted = sorted(set(topics))  # missing ones read as None below and are left out
        all_topics = wanted
    markers = frozenset(zk.children(znodes.DELETE_TOPICS_PATH) or [])

    nodes = zk.get_many(
        [*(znodes.topic_path(t) for t in wanted), *(znodes.topic_config_path(t) for t in wanted)]
    )
    topic_nodes, config_nodes = nodes[: len(wanted)], nodes[len(wanted) :]
    decoded: dict[str, znodes.TopicZNodeData] = {}
    for topic, node in zip(wanted, topic_nodes, strict=True):
        if node is None:
            continue
        try:
            decoded[topic] = znodes.decode_topic(node.path, node.data)
        except ZNodeDataError as e:
            problems.append(str(e))

    state_keys = [TopicPartition(t, p) for t, d in decoded.items() for p in sorted(d.partitions)]
    state_nodes = zk.get_many(znodes.topic_partition_state_path(tp) for tp in state_keys)
    states: dict[TopicPartition, PartitionSnapshot] = {}
    for tp, node in zip(state_keys, state_nodes, strict=True):
        state = None
        if node is not None:
            try:
                state = znodes.decode_partition_state(node.path, node.data, node.version)
            except ZNodeDataError as e:
                problems.append(str(e))
        states[tp] = PartitionSnapshot(
            tp.partition,
            decoded[tp.topic].partitions[tp.partition],
            state,
            node.version if node is not None else None,
        )

    snapshots: dict[str, TopicSnapshot] = {}
    for topic, config_node in zip(wanted, config_nodes, strict=True):
        if topic not in decoded:
            continue
        config: dict[str, str] = {}
        if config_node is not None:
            try:
                config = znodes.decode_config(config_node.path, config_node.data)
            except ZNodeDataError as e:
                problems.append(str(e))
        snapshots[topic] = TopicSnapshot(
            name=topic,
            topic_id=decoded[topic].topic_id,
            partitions={p: states[TopicPartition(topic, p)] for p in decoded[topic].partitions},
            config=config,
            marked_for_deletion=topic in markers,
        )

    controller_id = None
    controller_node, epoch_node, reassign_node = zk.get_many(
        [znodes.CONTROLLER_PATH, znodes.CONTROLLER_EPOCH_PATH, znodes.REASSIGN_PARTITIONS_PATH]
    )
    controller_epoch = None
    reassignments: dict[TopicPartition, tuple[int, ...]] = {}
    try:
        if controller_node is not None:
            controller_id = znodes.decode_controller(
                controller_node.path, controller_node.data
            ).broker_id
        if epoch_node is not None:
            controller_epoch = znodes.decode_controller_epoch(epoch_node.path, epoch_node.data)
        if reassign_node is not None:
            reassignments = {
                tp: tuple(replicas)
                for tp, replicas in znodes.decode_reassignment(
                    reassign_node.path, reassign_node.data
                ).items()
            }
    except ZNodeDataError as e:
        problems.append(str(e))

    return ClusterSnapshot(
        brokers=brokers,
        topics=snapshots,
        controller_id=controller_id,
        controller_epoch=controller_epoch,
        pending_reassignments=reassignments,
        deletion_markers=markers,
        problems=tuple(problems),
        topic_names=frozenset(all_topics if list_topics else snapshots),
    )
