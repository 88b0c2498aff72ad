"""What every planner takes and gives, whoever runs it (the Spark job, the operator's process,
`kto plan`): the planning input (and its JSON), the output, the errors that say why a request
cannot be planned, the checks every planner runs first, and the output's summary for status.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_topic_operator.kafka.assignment import default_random
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.feasibility import HardGoals, blocker
from kafka_topic_operator.rebalance.algorithms.generate import generate
from kafka_topic_operator.rebalance.algorithms.goals import DISK_USAGE_DISTRIBUTION, SWAP_GOALS
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, moves
from kafka_topic_operator.rebalance.results.summary import (
    Loads,
    OptimizationResult,
    PartitionMove,
    from_counts,
)

INPUT_VERSION = 1
# Kafka's --generate is replayed on the driver in pure Python for the comparison in status;
# beyond this many partitions the comparison is left out (make bench reports it at scale).
GENERATE_LIMIT = 200_000


class PlanningError(Exception):
    """The input cannot be planned; the message says why."""

    reason = "CannotPlan"  # error.json's, and a KafkaRebalance's NotReady condition's


class ProposalFailed(PlanningError):
    """No plan keeping every hard goal: none can (`feasibility`), or the planner found none
    (`check_drained`). Nothing is written."""

    reason = "ProposalFailed"


@dataclass(frozen=True)
class PlanningInput:
    assignment: Mapping[TopicPartition, tuple[int, ...]]
    brokers: tuple[int, ...]  # the brokers that may hold replicas after the plan
    racks: Mapping[int, str] = field(default_factory=dict)  # only when rack-aware
    receivers: tuple[int, ...] | None = None  # add-brokers: only these take replicas
    excluded_topics: str | None = None
    max_replicas_per_broker: int | None = None
    balance_leaders: bool = True
    # TopicReplicaDistribution and DiskUsageDistribution, in the order listed (see goals.py).
    swap_goals: tuple[str, ...] = ()
    sizes: Mapping[TopicPartition, int] | None = None  # bytes per partition, when known
    removed: tuple[int, ...] = ()  # remove-brokers: the brokers named (for what errors say)

    def to_json(self) -> dict[str, Any]:
        sizes = self.sizes
        return {
            "version": INPUT_VERSION,
            "brokers": list(self.brokers),
            "racks": {str(b): r for b, r in sorted(self.racks.items())},
            "receivers": None if self.receivers is None else list(self.receivers),
            "excludedTopics": self.excluded_topics,
            "maxReplicasPerBroker": self.max_replicas_per_broker,
            "balanceLeaders": self.balance_leaders,
            "swapGoals": list(self.swap_goals),
            "sizesKnown": sizes is not None,
            "removed": list(self.removed),
            "partitions": [
                {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                | ({} if sizes is None else {"sizeBytes": sizes[tp]})
                for tp, replicas in sorted(self.assignment.items())
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PlanningInput:
        if data.get("version") != INPUT_VERSION:
            raise PlanningError(f"unsupported planning input version {data.get('version')!r}")
        try:
            receivers = data.get("receivers")
            partitions = data["partitions"]
            swap_goals = tuple(str(g) for g in data.get("swapGoals") or ())
            unknown = [g for g in swap_goals if g not in SWAP_GOALS]
            if unknown:
                raise ValueError(f"unknown swap goal {unknown[0]}")
            sizes = None
            if data.get("sizesKnown"):
                sizes = {
                    TopicPartition(str(p["topic"]), int(p["partition"])): int(p["sizeBytes"])
                    for p in partitions
                }
            return cls(
                assignment={
                    TopicPartition(str(p["topic"]), int(p["partition"])): tuple(
                        int(b) for b in p["replicas"]
                    )
                    for p in partitions
                },
                brokers=tuple(int(b) for b in data["brokers"]),
                racks={int(b): str(r) for b, r in (data.get("racks") or {}).items()},
                receivers=None if receivers is None else tuple(int(b) for b in receivers),
                excluded_topics=data.get("excludedTopics"),
                max_replicas_per_broker=data.get("maxReplicasPerBroker"),
                balance_leaders=bool(data.get("balanceLeaders", True)),
                swap_goals=swap_goals,
                sizes=sizes,
                removed=tuple(int(b) for b in data.get("removed") or ()),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise PlanningError(f"malformed planning input: {e!r}") from e


@dataclass(frozen=True)
class PlanningOutput:
    changes: list[PartitionMove]
    result: OptimizationResult
    rounds: list[dict[str, Any]]


def check_hard_goals(request: PlanningInput) -> None:
    """ProposalFailed, naming the first blocker, when no plan can keep every hard goal."""
    why = blocker(
        HardGoals(
            request.assignment,
            request.brokers,
            racks=request.racks,
            excluded_topics=request.excluded_topics,
            max_replicas_per_broker=request.max_replicas_per_broker,
            removed=request.removed,
        )
    )
    if why is not None:
        raise ProposalFailed(why)


def check_sizes(request: PlanningInput) -> None:
    """DiskUsageDistribution balances bytes: it needs every partition's size."""
    if request.sizes is None:
        if DISK_USAGE_DISTRIBUTION in request.swap_goals:
            raise PlanningError(
                f"the {DISK_USAGE_DISTRIBUTION} goal needs partition sizes, and none are known "
                "(a KafkaRebalance reads them from the ConfigMap spec.partitionSizes names; kto "
                "plan with --sizes FILE or --log-dirs DIR)"
            )
        return
    missing = sorted(tp for tp in request.assignment if tp not in request.sizes)
    if missing:
        shown = ", ".join(map(str, missing[:5])) + (" ..." if len(missing) > 5 else "")
        count = f"{len(missing)} partition{'s' if len(missing) > 1 else ''}"
        raise PlanningError(f"partition sizes are missing for {count} ({shown})")


def planning_output(
    request: PlanningInput,
    changes: list[PartitionMove],
    loads: Loads,
    rounds: list[dict[str, Any]],
    unbalanced: list[str],
) -> PlanningOutput:
    """The output from the changes and the per-broker loads, whoever planned them."""
    result = from_counts(
        loads,
        request.racks,
        request.brokers,
        replica_moves=sum(c.replica_moves for c in changes),
        leader_moves=sum(1 for c in changes if c.leader_changed),
        data_to_move_bytes=data_to_move(request.sizes, changes),
        generate_replica_moves=generate_moves(request),
        unbalanced=unbalanced,
    )
    return PlanningOutput(changes, result, rounds)


def data_to_move(
    sizes: Mapping[TopicPartition, int] | None, changes: Sequence[PartitionMove]
) -> int | None:
    """Bytes copied: each replica a partition gains copies the partition (None: sizes unknown)."""
    if sizes is None:
        return None
    return sum(sizes[c.partition] * c.replica_moves for c in changes)


def generate_moves(request: PlanningInput) -> int | None:
    """What `kafka-reassign-partitions --generate` over the same brokers and movable topics
    would move (seeded, so the same input says the same); None above GENERATE_LIMIT."""
    if len(request.assignment) > GENERATE_LIMIT:
        return None
    excluded = re.compile(request.excluded_topics) if request.excluded_topics else None
    movable = {tp: r for tp, r in request.assignment.items()
               if excluded is None or not excluded.fullmatch(tp.topic)}  # fmt: skip
    if not movable:
        return 0
    model = ClusterModel(movable, dict(request.racks))
    proposal = generate(model, request.brokers, rack_aware=bool(request.racks),
                        rng=default_random(0))  # fmt: skip
    return moves(movable, proposal)
