"""The controller's batched reads of partition state znodes (KafkaZkClient's
getTopicPartitionStates); its writes all go through `zk_writer`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar

from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    ZkClient,
)

log = logging.getLogger(__name__)

OPS_PER_MULTI: Final = 500
"""A state op is under 200 bytes: 500 stay far below ZooKeeper's 1 MiB request limit."""

T = TypeVar("T")


def chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# ---- reads ---------------------------------------------------------------------------------------


@dataclass
class StateReads:
    states: dict[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    missing: list[TopicPartition] = field(default_factory=list)
    malformed: dict[TopicPartition, znodes.ZNodeDataError] = field(default_factory=dict)


def read_partition_states(zk: ZkClient, partitions: Iterable[TopicPartition]) -> StateReads:
    """Pipelined reads; a state znode someone else wrote badly is reported, never raised."""
    partitions = list(partitions)
    out = StateReads()
    nodes = zk.get_many(znodes.topic_partition_state_path(tp) for tp in partitions)
    for tp, node in zip(partitions, nodes, strict=True):
        if node is None:
            out.missing.append(tp)
            continue
        try:
            out.states[tp] = znodes.decode_partition_state(node.path, node.data, node.version)
        except znodes.ZNodeDataError as e:
            out.malformed[tp] = e
    return out


def known_or_read(
    zk: ZkClient,
    known: Mapping[TopicPartition, LeaderIsrAndControllerEpoch],
    partitions: Iterable[TopicPartition],
    usable: Callable[[LeaderIsrAndControllerEpoch], bool] = lambda _state: True,
) -> tuple[StateReads, set[TopicPartition]]:
    """The states as this controller last read or wrote them (`known`, where `usable`), the
    others read from ZooKeeper; and which partitions the context answered for.

    Kafka reads every state before it writes one. A state from the context carries the version
    it was read or written at, and the write made from it is conditional on that version: if the
    state changed since, the write fails with BadVersion (or NoNode) and the caller reads it, as
    Kafka's retry does. The writes are Kafka's; only reads that would find what is known are
    saved (a broker failure's 30,000)."""
    out = StateReads()
    answered: set[TopicPartition] = set()
    unknown = []
    for tp in partitions:
        state = known.get(tp)
        if state is not None and usable(state):
            out.states[tp] = state
            answered.add(tp)
        else:
            unknown.append(tp)
    if unknown:
        read = read_partition_states(zk, unknown)
        out.states.update(read.states)
        out.missing, out.malformed = read.missing, read.malformed
    return out, answered


def read_topic_configs(zk: ZkClient, topics: Iterable[str]) -> dict[str, Mapping[str, str]]:
    """Each topic's config overrides (`/config/topics/<t>`); one that cannot be read is logged,
    and the topic keeps the defaults."""
    topics = sorted(set(topics))
    configs: dict[str, Mapping[str, str]] = {}
    for topic, node in zip(
        topics, zk.get_many(znodes.topic_config_path(t) for t in topics), strict=True
    ):
        if node is None:
            continue
        try:
            configs[topic] = znodes.decode_config(node.path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("Using defaults for a topic whose config cannot be read: %s", e)
    return configs
