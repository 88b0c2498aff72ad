"""Every write the controller makes to ZooKeeper: the KafkaZkClient of this controller, and the
one place its epoch fences them.

A fenced write is a multi-op that first checks `/controller_epoch`'s version, in the session the
epoch was won in (`ControllerContext.fence`): a controller that lost its epoch gets
ControllerMovedException instead of a write. The state machines, deletion and reassignment hand
their writes over as data (kazoo-free `Op`s, or the partition states they want); only the
writes Kafka makes without the fence are made here without it (persistent paths every broker
ensures, and `/feature`).

Kafka sends one asynchronous request per znode; here ops go many to a multi-op and the multi-ops
are pipelined. A multi-op fails as a whole, so a failed one is replayed one op at a time to find
out which failed and why, as Kafka would report them.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kafka_topic_operator.controller.context import ControllerContext
from kafka_topic_operator.controller.zk_reads import OPS_PER_MULTI, chunks
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    BadVersionError,
    Create,
    Delete,
    Fence,
    NodeExistsError,
    NoNodeError,
    Op,
    SetData,
    TransactionFailed,
    ZkClient,
)

log = logging.getLogger(__name__)

Update = tuple[TopicPartition, LeaderAndIsr]


def write_pipelined(
    zk: ZkClient, batches: Iterable[Sequence[Op]], fence: Fence
) -> list[list[object] | TransactionFailed]:
    """Batches as one pipeline of multi-ops under a fence taken earlier (the request sender
    writes, on its own thread, what the event thread made under the epoch of that time); each
    goes as soon as it is made."""
    return zk.multi_many(batches, fence)


@dataclass
class UpdateResults:
    """`updated` carry the znode's new version as their partition epoch."""

    updated: dict[TopicPartition, LeaderAndIsr] = field(default_factory=dict)
    bad_version: list[TopicPartition] = field(default_factory=list)
    failed: dict[TopicPartition, Exception] = field(default_factory=dict)

    def to_read_again(self, known: set[TopicPartition]) -> list[TopicPartition]:
        """What the next round reads and tries again: states whose version moved, and states
        written from the context's copy that are gone (read, they fail as Kafka fails a
        missing state)."""
        gone = sorted(tp for tp in known if isinstance(self.failed.get(tp), NoNodeError))
        for tp in gone:
            del self.failed[tp]
        return [*self.bad_version, *gone]


class ControllerZkWriter:
    def __init__(self, zk: ZkClient, ctx: ControllerContext) -> None:
        self._zk = zk
        self._ctx = ctx

    def fence(self) -> Fence:
        """What every fenced write checks: this controller's epoch, in its session."""
        return self._ctx.fence()

    # ---- fenced ----------------------------------------------------------------------------------

    def apply(self, ops: Sequence[Op]) -> None:
        """One transaction: TransactionFailed names the op that failed."""
        self._zk.multi(list(ops), self.fence())

    def apply_each(self, ops: Sequence[Op]) -> list[tuple[Op, TransactionFailed]]:
        """Each op on its own (OPS_PER_MULTI to a pipelined multi-op, a failed one replayed op by
        op); returns the ops that failed, with why."""
        fence = self.fence()
        batches = list(chunks(list(ops), OPS_PER_MULTI))
        failed: list[tuple[Op, TransactionFailed]] = []
        for batch, outcome in zip(batches, write_pipelined(self._zk, batches, fence), strict=True):
            if isinstance(outcome, TransactionFailed):
                for op in batch:
                    try:
                        self._zk.multi([op], fence)
                    except TransactionFailed as failure:
                        failed.append((op, failure))
        return failed

    def delete_tolerating_missing(self, paths: Sequence[str]) -> None:
        """Deletes; a znode already gone is fine, any other failure raises."""
        for _op, failure in self.apply_each([Delete(p) for p in paths]):
            first = failure.first_error()
            if not (first and isinstance(first[1], NoNodeError)):
                raise failure

    def create_partition_states(
        self, states: Mapping[TopicPartition, LeaderIsrAndControllerEpoch]
    ) -> dict[TopicPartition, Exception | None]:
        """createTopicPartitionStatesRaw: `/partitions`, `/partitions/<p>` (existing ones are
        fine) and `/partitions/<p>/state` (an existing one fails the partition with
        NodeExistsError). Returns None for a created state, else the error."""
        fence = self.fence()
        partitions = sorted(states)
        parents: list[Op] = []
        for topic in dict.fromkeys(tp.topic for tp in partitions):
            parents.append(
                Create(znodes.topic_partitions_path(topic), znodes.TOPIC_PARTITIONS_DATA)
            )
        parents += [
            Create(znodes.topic_partition_path(tp), znodes.TOPIC_PARTITIONS_DATA)
            for tp in partitions
        ]
        parent_batches = list(chunks(parents, OPS_PER_MULTI))
        batches = list(chunks(partitions, OPS_PER_MULTI))

        def create(tp: TopicPartition) -> Create:
            path = znodes.topic_partition_state_path(tp)
            return Create(path, znodes.encode_partition_state(states[tp]))

        # One pipeline: ZooKeeper applies a session's requests in order, so the state creates
        # find their parents. A parent batch that failed (some parents existed) is redone one by
        # one before the state batches that failed with it are.
        outcomes = write_pipelined(
            self._zk,
            itertools.chain(parent_batches, ([create(tp) for tp in batch] for batch in batches)),
            fence,
        )
        for parent_batch, outcome in zip(parent_batches, outcomes, strict=False):
            if isinstance(outcome, TransactionFailed):
                self._create_parents_one_by_one(fence, parent_batch)
        results: dict[TopicPartition, Exception | None] = {}
        for batch, outcome in zip(batches, outcomes[len(parent_batches) :], strict=True):
            if not isinstance(outcome, TransactionFailed):
                results.update(dict.fromkeys(batch, None))
                continue
            for tp in batch:  # find the culprits one by one
                try:
                    self._zk.multi([create(tp)], fence)
                    results[tp] = None
                except TransactionFailed as failure:
                    first = failure.first_error()
                    results[tp] = first[1] if first else failure
        return results

    def _create_parents_one_by_one(self, fence: Fence, creates: Sequence[Op]) -> None:
        for op in creates:
            try:
                self._zk.multi([op], fence)
            except TransactionFailed as failure:
                # As in Kafka, only the state create's outcome counts: a missing topic znode
                # fails its partitions there.
                first = failure.first_error()
                if not (first and isinstance(first[1], NodeExistsError)):
                    log.warning("Cannot create %s: %s", op.path, failure)

    def update_leader_and_isr(
        self,
        updates: Mapping[TopicPartition, LeaderAndIsr] | Iterable[Update],
        controller_epoch: int,
    ) -> UpdateResults:
        """One round of KafkaZkClient.updateLeaderAndIsr: each write names the version the new
        value was computed from (its `partition_epoch`); conflicts come back in `bad_version`.
        `updates` may be a stream of (partition, new value): each multi-op goes as soon as its
        partitions are computed, and ZooKeeper writes it while the caller computes the next."""
        out = UpdateResults()
        # In the caller's order: sorting 10,000 partitions would hold the first write 50 ms.
        pairs = iter(updates.items() if isinstance(updates, Mapping) else updates)
        first = list(itertools.islice(pairs, OPS_PER_MULTI))
        if not first:
            return out
        fence = self.fence()
        updated: dict[TopicPartition, LeaderAndIsr] = {}

        def op(tp: TopicPartition) -> SetData:
            lai = updated[tp]
            data = znodes.encode_partition_state(LeaderIsrAndControllerEpoch(lai, controller_epoch))
            return SetData(znodes.topic_partition_state_path(tp), data, lai.partition_epoch)

        batches: list[list[TopicPartition]] = []

        def ops() -> Iterator[list[Op]]:
            batch = first
            while batch:
                updated.update(batch)
                batches.append([tp for tp, _ in batch])
                yield [op(tp) for tp, _ in batch]
                batch = list(itertools.islice(pairs, OPS_PER_MULTI))

        outcomes = write_pipelined(self._zk, ops(), fence)
        for batch, outcome in zip(batches, outcomes, strict=True):
            if not isinstance(outcome, TransactionFailed):
                for tp in batch:
                    lai = updated[tp]
                    out.updated[tp] = lai.with_partition_epoch(lai.partition_epoch + 1)
                continue
            for tp in batch:
                try:
                    self._zk.multi([op(tp)], fence)
                except TransactionFailed as failure:
                    failed_op = failure.first_error()
                    error = failed_op[1] if failed_op else failure
                    if isinstance(error, BadVersionError):
                        out.bad_version.append(tp)
                    else:
                        out.failed[tp] = error
                else:
                    lai = updated[tp]
                    out.updated[tp] = lai.with_partition_epoch(lai.partition_epoch + 1)
        return out

    # ---- without the fence, as Kafka writes them -------------------------------------------------

    def ensure_path(self, path: str) -> None:
        """A persistent path every broker makes sure of (makeSurePersistentPathExists)."""
        self._zk.ensure_path(path)

    def write_feature(self, data: bytes, *, create: bool) -> None:
        """`/feature` (KafkaController.enableFeatureVersioning writes it unfenced); a create that
        finds it made by another controller meanwhile is fine."""
        if create:
            with contextlib.suppress(NodeExistsError):
                self._zk.create(znodes.FEATURE_PATH, data)
        else:
            self._zk.set(znodes.FEATURE_PATH, data)
