"""What a plan changes, summed up for status, the ConfigMap and the HTML report (pure).

A plan is the assignment after it (every partition) beside the assignment before; the moves are
the partitions whose replica list changed. Kafka's reassignment JSON lists exactly those, with
their new replica lists in the new order (the first replica is the new preferred leader).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.bounds import move_lower_bound, targets
from kafka_topic_operator.rebalance.algorithms.model import (
    Assignment,
    ClusterModel,
    leader_changes,
    moves,
)


@dataclass(frozen=True, slots=True, order=True)
class PartitionMove:
    partition: TopicPartition
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def replica_moves(self) -> int:
        return len(set(self.after) - set(self.before))

    @property
    def leader_changed(self) -> bool:
        return self.before[:1] != self.after[:1]


@dataclass(frozen=True, slots=True)
class BrokerLoad:
    broker: int
    rack: str | None
    replicas_before: int
    replicas_after: int
    leaders_before: int
    leaders_after: int
    bytes_before: int | None = None  # only when partition sizes are known
    bytes_after: int | None = None


@dataclass(frozen=True, slots=True)
class OptimizationResult:
    replica_moves: int
    leader_moves: int
    replica_lower_bound: int
    brokers: tuple[BrokerLoad, ...]
    balance_before: float  # percent; see `balance_score`
    balance_after: float
    data_to_move_bytes: int | None = None  # only when partition sizes are known
    generate_replica_moves: int | None = None  # what Kafka's --generate would move
    unbalanced: tuple[str, ...] = ()  # goals the plan could not fully meet, and why
    # Of replica_moves, those off brokers being removed (or gone): the rest even out counts.
    drain_moves: int = 0

    def to_status(self) -> dict[str, object]:
        """status.optimizationResult, in the CRD's camelCase."""
        out: dict[str, object] = {
            "replicaMoves": self.replica_moves,
            "leaderMoves": self.leader_moves,
            "replicaMovesLowerBound": self.replica_lower_bound,
            "balanceScoreBefore": self.balance_before,
            "balanceScoreAfter": self.balance_after,
            "brokers": [
                {
                    "broker": b.broker,
                    **({"rack": b.rack} if b.rack is not None else {}),
                    "replicasBefore": b.replicas_before,
                    "replicasAfter": b.replicas_after,
                    "leadersBefore": b.leaders_before,
                    "leadersAfter": b.leaders_after,
                    **(
                        {"bytesBefore": b.bytes_before, "bytesAfter": b.bytes_after}
                        if b.bytes_before is not None and b.bytes_after is not None
                        else {}
                    ),
                }
                for b in self.brokers
            ],
        }
        if self.data_to_move_bytes is not None:
            out["dataToMoveBytes"] = self.data_to_move_bytes
        if self.generate_replica_moves is not None:
            out["generateReplicaMoves"] = self.generate_replica_moves
        if self.drain_moves:
            out["drainReplicaMoves"] = self.drain_moves
        if self.unbalanced:
            out["unbalanced"] = list(self.unbalanced)
        return out


def partition_moves(before: Assignment, after: Assignment) -> list[PartitionMove]:
    """The partitions whose replica list (or its order) changes, sorted."""
    return sorted(
        PartitionMove(tp, tuple(before[tp]), tuple(replicas))
        for tp, replicas in after.items()
        if tuple(before[tp]) != tuple(replicas)
    )


def reassignment_json(changes: Iterable[PartitionMove]) -> str:
    """Kafka's reassignment JSON, as kafka-reassign-partitions.sh --execute reads it."""
    return json.dumps(
        {
            "version": 1,
            "partitions": [
                {
                    "topic": m.partition.topic,
                    "partition": m.partition.partition,
                    "replicas": list(m.after),
                }
                for m in changes
            ],
        },
        separators=(",", ":"),
    )


def balance_score(counts: Mapping[int, int], brokers: Iterable[int]) -> float:
    """The share (percent) of items already where balanced counts want them: 100 less the
    surplus above the targets over the total. 100 means balanced."""
    goal = targets(counts, brokers)
    total = sum(counts.values())
    if total == 0:
        return 100.0
    surplus = sum(max(0, counts.get(b, 0) - t) for b, t in goal.items())
    return round(100.0 * (1 - surplus / total), 2)


def summarize(
    model: ClusterModel,
    after: Assignment,
    brokers: Iterable[int],
    *,
    sizes: Mapping[TopicPartition, int] | None = None,
    generate_replica_moves: int | None = None,
    unbalanced: Iterable[str] = (),
) -> OptimizationResult:
    """The optimization result of moving `model` to `after`, balanced over `brokers`."""
    before = model.assignment
    data = None
    if sizes is not None:
        data = sum(sizes.get(tp, 0) * len(set(after[tp]) - set(before[tp])) for tp in after)
    return from_counts(
        Loads(
            model.replica_counts(),
            model.replica_counts(after),
            model.leader_counts(),
            model.leader_counts(after),
            None if sizes is None else broker_bytes(before, sizes),
            None if sizes is None else broker_bytes(after, sizes),
        ),
        model.racks,
        brokers,
        replica_moves=moves(before, after),
        leader_moves=leader_changes(before, after),
        data_to_move_bytes=data,
        generate_replica_moves=generate_replica_moves,
        unbalanced=unbalanced,
    )


@dataclass(frozen=True, slots=True)
class Loads:
    """Per-broker counts before and after a plan: all a result needs of the replica table."""

    replicas_before: Mapping[int, int]
    replicas_after: Mapping[int, int]
    leaders_before: Mapping[int, int]
    leaders_after: Mapping[int, int]
    bytes_before: Mapping[int, int] | None = None  # only when partition sizes are known
    bytes_after: Mapping[int, int] | None = None


def broker_bytes(assignment: Assignment, sizes: Mapping[TopicPartition, int]) -> dict[int, int]:
    """The bytes of the replicas each broker holds (a partition missing from `sizes`: 0)."""
    out: dict[int, int] = {}
    for tp, replicas in assignment.items():
        size = sizes.get(tp, 0)
        for b in replicas:
            out[b] = out.get(b, 0) + size
    return out


def from_counts(
    loads: Loads,
    racks: Mapping[int, str | None],
    brokers: Iterable[int],
    *,
    replica_moves: int,
    leader_moves: int,
    data_to_move_bytes: int | None = None,
    generate_replica_moves: int | None = None,
    unbalanced: Iterable[str] = (),
) -> OptimizationResult:
    """The result from per-broker counts (what the Spark planner brings to its driver)."""
    eligible = set(brokers)
    everyone = sorted(set(eligible) | set(loads.replicas_before) | set(loads.replicas_after))

    def score(replicas: Mapping[int, int], leaders: Mapping[int, int]) -> float:
        return round((balance_score(replicas, eligible) + balance_score(leaders, eligible)) / 2, 2)

    return OptimizationResult(
        replica_moves=replica_moves,
        leader_moves=leader_moves,
        replica_lower_bound=move_lower_bound(loads.replicas_before, eligible),
        brokers=tuple(
            BrokerLoad(
                b,
                racks.get(b),
                loads.replicas_before.get(b, 0),
                loads.replicas_after.get(b, 0),
                loads.leaders_before.get(b, 0),
                loads.leaders_after.get(b, 0),
                None if loads.bytes_before is None else loads.bytes_before.get(b, 0),
                None if loads.bytes_after is None else loads.bytes_after.get(b, 0),
            )
            for b in everyone
        ),
        balance_before=score(loads.replicas_before, loads.leaders_before),
        balance_after=score(loads.replicas_after, loads.leaders_after),
        data_to_move_bytes=data_to_move_bytes,
        generate_replica_moves=generate_replica_moves,
        unbalanced=tuple(unbalanced),
        # Every replica on a broker that may not hold any leaves it.
        drain_moves=sum(loads.replicas_before.get(b, 0) for b in everyone if b not in eligible),
    )
