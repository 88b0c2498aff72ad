"""The controller's batched reads and writes of partition state znodes (KafkaZkClient's
getTopicPartitionStates, createTopicPartitionStatesRaw and updateLeaderAndIsr).

Kafka sends one asynchronous request per partition; here partitions go many to a fenced multi-op,
and the multi-ops are pipelined. A multi-op fails as a whole, so a failed one is replayed one
partition at a time to find out which partitions failed and why, as Kafka would report them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    BadVersionError,
    Create,
    Fence,
    NodeExistsError,
    Op,
    SetData,
    TransactionFailed,
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


# ---- creating partition states -------------------------------------------------------------------


def create_partition_states(
    zk: ZkClient, fence: Fence, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
) -> dict[TopicPartition, Exception | None]:
    """createTopicPartitionStatesRaw: `/partitions`, `/partitions/<p>` (existing ones are fine)
    and `/partitions/<p>/state` (an existing one fails the partition with NodeExistsError).
    Returns None for a created state, else the error."""
    partitions = sorted(states)
    parents: list[Op] = []
    for topic in dict.fromkeys(tp.topic for tp in partitions):
        parents.append(Create(znodes.topic_partitions_path(topic), znodes.TOPIC_PARTITIONS_DATA))
    parents += [
        Create(znodes.topic_partition_path(tp), znodes.TOPIC_PARTITIONS_DATA) for tp in partitions
    ]
    parent_batches = list(chunks(parents, OPS_PER_MULTI))
    batches = list(chunks(partitions, OPS_PER_MULTI))

    def create(tp: TopicPartition) -> Create:
        path = znodes.topic_partition_state_path(tp)
        return Create(path, znodes.encode_partition_state(states[tp]))

    # One pipeline: ZooKeeper applies a session's requests in order, so the state creates find
    # their parents. A parent batch that failed (some parents existed) is redone one by one
    # before the state batches that failed with it are.
    outcomes = zk.multi_many(
        [*parent_batches, *([create(tp) for tp in batch] for batch in batches)], fence
    )
    for parent_batch, outcome in zip(parent_batches, outcomes, strict=False):
        if isinstance(outcome, TransactionFailed):
            _create_one_by_one(zk, fence, parent_batch)
    results: dict[TopicPartition, Exception | None] = {}
    for batch, outcome in zip(batches, outcomes[len(parent_batches) :], strict=True):
        if not isinstance(outcome, TransactionFailed):
            results.update(dict.fromkeys(batch, None))
            continue
        for tp in batch:  # find the culprits one by one
            try:
                zk.multi([create(tp)], fence)
                results[tp] = None
            except TransactionFailed as failure:
                first = failure.first_error()
                results[tp] = first[1] if first else failure
    return results


def _create_one_by_one(zk: ZkClient, fence: Fence, creates: Sequence[Op]) -> None:
    for op in creates:
        try:
            zk.multi([op], fence)
        except TransactionFailed as failure:
            # As in Kafka, only the state create's outcome counts: a missing topic znode fails
            # its partitions there.
            first = failure.first_error()
            if not (first and isinstance(first[1], NodeExistsError)):
                log.warning("Cannot create %s: %s", op.path, failure)


# ---- conditional updates -------------------------------------------------------------------------


@dataclass
class UpdateResults:
    """`updated` carry the znode's new version as their partition epoch."""

    updated: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    bad_version: list[TopicPartition] = field(default_factory=list)
    failed: dict[TopicPartition, Exception] = field(default_factory=dict)


def update_leader_and_isr(
    zk: ZkClient,
    fence: Fence,
    updates: Mapping[TopicPartition, LeaderAndIsr],
    controller_epoch: int,
) -> UpdateResults:
    """One round of KafkaZkClient.updateLeaderAndIsr: each write names the version the new
    value was computed from (its `partition_epoch`); conflicts come back in `bad_version`."""
    out = UpdateResults()
    partitions = sorted(updates)

    def op(tp: TopicPartition) -> SetData:
        lai = updates[tp]
        data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(lai, controller_epoch))
        return SetData(znodes.topic_partition_state_path(tp), data, lai.partition_epoch)

    batches = list(chunks(partitions, OPS_PER_MULTI))
    outcomes = zk.multi_many([[op(tp) for tp in batch] for batch in batches], fence)
    for batch, outcome in zip(batches, outcomes, strict=True):
        if not isinstance(outcome, TransactionFailed):
            for tp in batch:
                lai = updates[tp]
                out.updated[tp] = lai.with_partition_epoch(lai.partition_epoch + 1)
            continue
        for tp in batch:
            try:
                zk.multi([op(tp)], fence)
            except TransactionFailed as failure:
                first = failure.first_error()
                error = first[1] if first else failure
                if isinstance(error, BadVersionError):
                    out.bad_version.append(tp)
                else:
                    out.failed[tp] = error
            else:
                lai = updates[tp]
                out.updated[tp] = lai.with_partition_epoch(lai.partition_epoch + 1)
    return out
