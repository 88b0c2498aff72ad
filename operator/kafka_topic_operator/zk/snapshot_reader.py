"""Reads a ClusterSnapshot from ZooKeeper with pipelined reads (one round of requests per level).

Malformed znodes written by someone else are reported in `problems` with their path and skipped,
never raised: a reader must not crash on another tool's bad JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.snapshot import (
    ClusterSnapshot,
    Expected,
    PartitionSnapshot,
    TopicSnapshot,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Node, ZkClient
from kafka_topic_operator.zk.znodes import ZNodeDataError

_CLUSTER_ZNODES = (
    znodes.CONTROLLER_PATH,
    znodes.CONTROLLER_EPOCH_PATH,
    znodes.REASSIGN_PARTITIONS_PATH,
    znodes.PREFERRED_REPLICA_ELECTION_PATH,
)


def read_cluster(
    zk: ZkClient,
    topics: Iterable[str] | None = None,
    *,
    list_topics: bool = True,
    expected: Expected | None = None,
) -> ClusterSnapshot:
    """The cluster, with `topics` (all when None) read in full. `list_topics=False` skips
    listing every topic name (`topic_names` then holds only the topics read): one topic's
    reconcile must not cost a listing of thousands.

    Reads go in rounds of multiRead requests, each round asking for all it can know to ask:
    the lists, the cluster-wide znodes and the named topics first, then the brokers and the
    partition states (two rounds for named topics, one when `expected` guessed them right,
    three when every topic is read)."""
    problems: list[str] = []
    unreadable: dict[str, list[str]] = {}

    def note(topic: str, error: ZNodeDataError) -> None:
        problems.append(str(error))
        unreadable.setdefault(topic, []).append(str(error))

    listing = topics is None or list_topics
    named = None if topics is None else sorted(set(topics))
    guessed = _expected_paths(expected) if named is not None and expected else []

    lists = [znodes.BROKER_IDS_PATH, znodes.DELETE_TOPICS_PATH]
    first, listed = zk.read_many(
        data=[*_CLUSTER_ZNODES, *_topic_and_config_paths(named or []), *guessed],
        children=[*lists, znodes.TOPICS_PATH] if listing else lists,
    )
    known = dict(zip(guessed, first[len(first) - len(guessed) :], strict=True))
    broker_ids, delete_markers = listed[0] or [], listed[1] or []
    markers = frozenset(delete_markers)
    all_topics = (listed[2] or []) if listing else (named or [])
    wanted = sorted(set(all_topics) & set(named)) if named is not None else list(all_topics)

    broker_paths = [znodes.BROKER_IDS_PATH + "/" + b for b in broker_ids]
    if named is not None:
        read = first[len(_CLUSTER_ZNODES) : len(_CLUSTER_ZNODES) + 2 * len(named)]
        topic_nodes = dict(zip(named, read[::2], strict=True))
        config_nodes = dict(zip(named, read[1::2], strict=True))
        decoded = _decode_topics(wanted, topic_nodes, note)
        broker_nodes, state_nodes = _read_brokers_and_states(zk, broker_paths, decoded, known)
    else:
        second, _ = zk.read_many(data=[*broker_paths, *_topic_and_config_paths(wanted)])
        broker_nodes, rest = second[: len(broker_paths)], second[len(broker_paths) :]
        topic_nodes = dict(zip(wanted, rest[::2], strict=True))
        config_nodes = dict(zip(wanted, rest[1::2], strict=True))
        decoded = _decode_topics(wanted, topic_nodes, note)
        _, state_nodes = _read_brokers_and_states(zk, [], decoded)

    brokers: dict[int, BrokerInfo] = {}
    for node in broker_nodes:
        if node is None:
            continue  # deregistered between the two reads
        try:
            info = znodes.decode_broker(node.path, node.data)
        except ZNodeDataError as e:
            problems.append(str(e))
        else:
            brokers[info.id] = info

    states: dict[TopicPartition, PartitionSnapshot] = {}
    for tp, node in state_nodes.items():
        state = None
        if node is not None:
            try:
                state = znodes.decode_partition_state(node.path, node.data, node.version)
            except ZNodeDataError as e:
                note(tp.topic, e)
        states[tp] = PartitionSnapshot(
            tp.partition,
            decoded[tp.topic].partitions[tp.partition],
            state,
            node.version if node is not None else None,
        )

    snapshots: dict[str, TopicSnapshot] = {}
    for topic, data in decoded.items():
        config: dict[str, str] = {}
        config_node = config_nodes[topic]
        if config_node is not None:
            try:
                config = znodes.decode_config(config_node.path, config_node.data)
            except ZNodeDataError as e:
                note(topic, e)
        snapshots[topic] = TopicSnapshot(
            name=topic,
            topic_id=data.topic_id,
            partitions={p: states[TopicPartition(topic, p)] for p in data.partitions},
            config=config,
            marked_for_deletion=topic in markers,
        )

    controller_node, epoch_node, reassign_node, election_node = first[: len(_CLUSTER_ZNODES)]
    return ClusterSnapshot(
        brokers=brokers,
        topics=snapshots,
        controller_id=_decoded(controller_node, znodes.decode_controller, problems, "broker_id"),
        controller_epoch=_decoded(epoch_node, znodes.decode_controller_epoch, problems),
        pending_reassignments={
            tp: tuple(replicas)
            for tp, replicas in (
                _decoded(reassign_node, znodes.decode_reassignment, problems) or {}
            ).items()
        },
        pending_preferred_elections=(
            _decoded(election_node, znodes.decode_preferred_replica_election, problems)
            or frozenset()
        ),
        deletion_markers=markers,
        problems=tuple(problems),
        topic_names=frozenset(all_topics if listing else snapshots),
        unreadable={topic: tuple(found) for topic, found in unreadable.items()},
    )


def _topic_and_config_paths(topics: Iterable[str]) -> list[str]:
    """Each topic's znode followed by its config znode."""
    return [path for t in topics for path in (znodes.topic_path(t), znodes.topic_config_path(t))]


def _decode_topics(
    wanted: Iterable[str],
    nodes: Mapping[str, Node | None],
    note: Callable[[str, ZNodeDataError], None],
) -> dict[str, znodes.TopicZNodeData]:
    decoded: dict[str, znodes.TopicZNodeData] = {}
    for topic in wanted:
        node = nodes[topic]
        if node is None:
            continue
        try:
            decoded[topic] = znodes.decode_topic(node.path, node.data)
        except ZNodeDataError as e:
            note(topic, e)
    return decoded


def _expected_paths(expected: Expected) -> list[str]:
    return [
        *(znodes.broker_path(b) for b in sorted(expected.brokers)),
        *(
            znodes.topic_partition_state_path(TopicPartition(t, p))
            for t, partitions in sorted(expected.partitions.items())
            for p in sorted(partitions)
        ),
    ]


def _read_brokers_and_states(
    zk: ZkClient,
    broker_paths: Sequence[str],
    topics: Mapping[str, znodes.TopicZNodeData],
    known: Mapping[str, Node | None] | None = None,
) -> tuple[list[Node | None], dict[TopicPartition, Node | None]]:
    """The brokers' and the partition states' znodes; those in `known` (read already) are not
    read again."""
    keys = [TopicPartition(t, p) for t, d in topics.items() for p in sorted(d.partitions)]
    paths = [*broker_paths, *(znodes.topic_partition_state_path(tp) for tp in keys)]
    found = dict(known or {})
    missing = [p for p in paths if p not in found]
    if missing:
        nodes, _ = zk.read_many(data=missing)
        found.update(zip(missing, nodes, strict=True))
    answers = [found[p] for p in paths]
    return answers[: len(broker_paths)], dict(zip(keys, answers[len(broker_paths) :], strict=True))


def _decoded(node: Node | None, decode: Callable[[str, bytes], Any], problems: list[str],
             attribute: str | None = None) -> Any:  # fmt: skip
    """`decode` of a znode that may be missing (None) or malformed (None, with the problem)."""
    if node is None:
        return None
    try:
        value = decode(node.path, node.data)
    except ZNodeDataError as e:
        problems.append(str(e))
        return None
    return getattr(value, attribute) if attribute else value
