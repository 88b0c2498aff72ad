"""The reference planner (pure Python, deterministic): the fewest replica moves that balance replica
counts, then leaders balanced by reordering replicas. It is the yardstick for the Spark planner
on clusters small enough to plan in one process.

Replicas: every replica on a broker that may not hold replicas moves first; then, while the
counts over the eligible brokers differ by more than one, one replica moves from the fullest
broker to the emptiest that can take it. Without rack constraints each move is one the lower
bound counts (`bounds.move_lower_bound`), and a legal one always exists (the fuller broker holds
some partition the emptier one does not). A moved replica keeps its position in the replica
list, so a moved preferred leader stays the preferred leader of its partition.

Then the swap goals, TopicReplicaDistribution and DiskUsageDistribution, in the order listed
(`reference_swaps`): replicas swapped between two brokers, so that no broker's count changes.

Leaders: while some broker leads two more partitions than another broker of the same partition,
that partition's preferred leader becomes the less loaded replica (no data moves).

Hard goals hold throughout: never two replicas of a partition on one broker, never more replicas
of a partition in a rack than `model.max_per_rack` allows, never more than
`max_replicas_per_broker` on a broker, never a change to an excluded topic or to a replication
factor.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.bounds import move_lower_bound
from kafka_topic_operator.rebalance.algorithms.model import (
    ClusterModel,
    leader_changes,
    moves,
)
from kto_dev.yardsticks.reference_state import PlannerState
from kto_dev.yardsticks.reference_swaps import swap_goals

# Single-replica partitions can pin leaders: evening them would take more than the fewest moves.
LEADERS_UNEVEN = "leader counts spread by more than one without moving more replicas"


@dataclass(frozen=True)
class PlanRequest:
    model: ClusterModel
    brokers: tuple[int, ...]  # the brokers that may hold replicas after the plan
    excluded_topics: str | None = None  # a regular expression, as Cruise Control's
    max_replicas_per_broker: int | None = None
    balance_leaders: bool = True
    swap_goals: tuple[str, ...] = ()  # TopicReplicaDistribution, DiskUsageDistribution, in order
    sizes: Mapping[TopicPartition, int] | None = None  # bytes per partition


@dataclass(frozen=True)
class Plan:
    assignment: dict[TopicPartition, tuple[int, ...]]  # every partition, after the plan
    replica_moves: int
    leader_changes: int
    replica_lower_bound: int
    unbalanced: tuple[str, ...] = field(default=())  # why a goal could not be fully met


def plan(request: PlanRequest) -> Plan:
    model = request.model
    eligible = tuple(sorted(set(request.brokers)))
    if not eligible:
        raise ValueError("no brokers may hold replicas")
    excluded = re.compile(request.excluded_topics) if request.excluded_topics else None
    movable = {
        tp for tp in model.assignment if excluded is None or not excluded.fullmatch(tp.topic)
    }
    current = {tp: list(replicas) for tp, replicas in sorted(model.assignment.items())}
    state = PlannerState(model, eligible, current, request.max_replicas_per_broker)
    problems = [*state.drain(movable), *state.fix_racks(movable), *state.balance(movable)]
    problems += swap_goals(state, movable, request.swap_goals, request.sizes)
    if request.balance_leaders:
        state.balance_leaders(movable)
        if max(state.leaders[b] for b in eligible) - min(state.leaders[b] for b in eligible) > 1:
            problems.append(LEADERS_UNEVEN)
    after = {tp: tuple(replicas) for tp, replicas in current.items()}
    return Plan(
        assignment=after,
        replica_moves=moves(model.assignment, after),
        leader_changes=leader_changes(model.assignment, after),
        replica_lower_bound=move_lower_bound(model.replica_counts(), eligible),
        unbalanced=tuple(problems),
    )
