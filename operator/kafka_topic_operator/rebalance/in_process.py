"""The goals planned on the driver, and whole plans without Spark.

Replica counts (ReplicaDistribution) and leader counts (LeaderDistribution) need only the
assignment, which the driver holds anyway: below `exact.EXACT_LIMIT` both are planned exactly
here (`exact`), by the Spark job and by `plan_in_process` alike, so a plan is the same whichever
runs it. TopicReplicaDistribution is planned here at any size (`topic_spread`).
`plan_in_process` plans without starting Spark (about a second for thousands of replicas, where
starting Spark alone takes several): it takes a request without DiskUsageDistribution (which
runs on Spark) whose choices fit the limit, and answers None for any other.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms import exact
from kafka_topic_operator.rebalance.algorithms.bounds import off_targets
from kafka_topic_operator.rebalance.algorithms.goals import TOPIC_REPLICA_DISTRIBUTION
from kafka_topic_operator.rebalance.algorithms.model import Assignment
from kafka_topic_operator.rebalance.algorithms.topic_spread import spread_topics
from kafka_topic_operator.rebalance.planning_io import (
    PlanningInput,
    PlanningOutput,
    ProposalFailed,
    check_hard_goals,
    check_sizes,
    planning_output,
)
from kafka_topic_operator.rebalance.results.summary import Loads, PartitionMove, broker_bytes
from kafka_topic_operator.rebalance.spark.planner import RoundReport

Placement = dict[TopicPartition, tuple[int, ...]]


@dataclass(frozen=True)
class Phase:
    assignment: Placement
    report: RoundReport
    unbalanced: str | None


def fixed_partitions(request: PlanningInput) -> frozenset[TopicPartition]:
    """The partitions of excluded topics (the whole name matches, as Cruise Control's)."""
    if not request.excluded_topics:
        return frozenset()
    pattern = re.compile(request.excluded_topics)
    return frozenset(tp for tp in request.assignment if pattern.fullmatch(tp.topic))


def replica_phase(request: PlanningInput) -> Phase | None:
    """ReplicaDistribution, exactly; None when the request is too large for it."""
    began = time.perf_counter()
    try:
        planned = exact.balance_replicas(
            request.assignment,
            request.brokers,
            racks=request.racks,
            fixed=fixed_partitions(request),
            receivers=request.receivers,
            max_replicas_per_broker=request.max_replicas_per_broker,
            limit=exact.EXACT_LIMIT,
        )
    except exact.TooLarge:
        return None
    except exact.NoPlacement as e:  # the feasibility check passed: it is the mode's rule
        raise _refused(request, str(e)) from None
    counts = Counter(b for replicas in request.assignment.values() for b in replicas)
    moved = sum(len(set(planned.assignment[tp]) - set(r)) for tp, r in request.assignment.items())
    return _phase(request, planned, counts, moved, began, "replica", "the hard goals allow")


def _refused(request: PlanningInput, why: str) -> Exception:
    if request.receivers is not None:
        takers = ", ".join(map(str, request.receivers))
        why += f": only the brokers being added ({takers}) may take replicas"
    return ProposalFailed(why)


def leader_phase(request: PlanningInput, assignment: Assignment) -> Phase | None:
    """LeaderDistribution, exactly, on `assignment` (the replicas already placed); None when
    the request is too large for it."""
    began = time.perf_counter()
    try:
        planned = exact.balance_leaders(
            request.assignment,
            assignment,
            request.brokers,
            fixed=fixed_partitions(request),
            limit=exact.EXACT_LIMIT,
        )
    except exact.TooLarge:
        return None
    leaders = Counter(r[0] for r in assignment.values() if r)
    changed = sum(1 for tp, r in planned.assignment.items() if r[:1] != assignment[tp][:1])
    allow = "the partitions' replicas allow"
    return _phase(request, planned, leaders, changed, began, "leader", allow)


def _phase(request: PlanningInput, planned: exact.Balanced, counts: Counter[int], moved: int,
           began: float, what: str, allow: str) -> Phase:  # fmt: skip
    """The phase's report (what was off the targets before, what moved) and, when the counts
    end more than one apart, why."""
    off, _ = off_targets(counts, request.brokers)
    why = None
    if planned.high - planned.low > 1:
        why = f"{what} counts range from {planned.low} to {planned.high}: {allow} no closer balance"
    report = RoundReport(0, sum(off.values()), moved, time.perf_counter() - began)
    return Phase(planned.assignment, report, why)


def topic_phase(request: PlanningInput, assignment: Assignment, *, guard_disk: bool) -> Phase:
    """TopicReplicaDistribution on `assignment` (`topic_spread`, at any size); `guard_disk`
    when DiskUsageDistribution came first."""
    spread = spread_topics(
        assignment,
        request.brokers,
        racks=request.racks,
        fixed=fixed_partitions(request),
        receivers=request.receivers,
        sizes=request.sizes if guard_disk else None,
    )
    return Phase(spread.assignment, spread.report, spread.unbalanced)


def plan_in_process(request: PlanningInput, progress: Any = None) -> PlanningOutput | None:
    """The whole plan without Spark, or None when the request needs Spark: it has
    DiskUsageDistribution among its goals, or more choices than the exact plan takes."""
    if request.swap_goals not in ((), (TOPIC_REPLICA_DISTRIBUTION,)):
        return None
    check_hard_goals(request)
    check_sizes(request)
    counted = replica_phase(request)
    if counted is None:
        return None
    phases = [("replicas", counted)]
    if request.swap_goals:
        phases.append(("topics", topic_phase(request, counted.assignment, guard_disk=False)))
    if request.balance_leaders:
        led = leader_phase(request, phases[-1][1].assignment)
        if led is None:
            return None
        phases.append(("leaders", led))
    if progress is not None:
        for _, phase in phases:
            progress(phase.report)
    after = phases[-1][1].assignment
    changes = sorted(
        PartitionMove(tp, before, after[tp])
        for tp, before in request.assignment.items()
        if after[tp] != before
    )
    return planning_output(
        request,
        changes,
        loads(request.assignment, after, request.sizes),
        rounds=[{"phase": name, **vars(phase.report)} for name, phase in phases],
        unbalanced=[phase.unbalanced for _, phase in phases if phase.unbalanced],
    )


def loads(
    before: Assignment, after: Assignment, sizes: Mapping[TopicPartition, int] | None
) -> Loads:
    def replicas(a: Assignment) -> dict[int, int]:
        return dict(Counter(b for r in a.values() for b in r))

    def leaders(a: Assignment) -> dict[int, int]:
        return dict(Counter(r[0] for r in a.values() if r))

    return Loads(
        replicas(before), replicas(after), leaders(before), leaders(after),
        None if sizes is None else broker_bytes(before, sizes),
        None if sizes is None else broker_bytes(after, sizes),
    )  # fmt: skip
