"""What a rebalance plans over, from a cluster snapshot and a KafkaRebalance spec (pure)."""

from __future__ import annotations

from collections.abc import Mapping

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.feasibility import NOT_ALL_RACKS
from kafka_topic_operator.rebalance.algorithms.goals import SWAP_GOALS
from kafka_topic_operator.rebalance.planning_io import (
    PlanningError,
    PlanningInput,
    check_hard_goals,
    check_sizes,
)
from kafka_topic_operator.rebalance.spec import Goal, RebalanceMode, RebalanceSpec


def planning_input(
    snapshot: ClusterSnapshot,
    spec: RebalanceSpec,
    sizes: Mapping[TopicPartition, int] | None = None,
) -> PlanningInput:
    """PlanningError when the cluster cannot be planned as asked: a named broker that is not
    registered, a reassignment already running, racks on only some brokers, or a partition
    without a size while sizes are given (or none given for DiskUsageDistribution);
    ProposalFailed, a PlanningError, when no plan can keep the hard goals. `sizes` (bytes
    per partition) may name more partitions than the plan covers: only its are kept."""
    live = sorted(snapshot.brokers)
    named = sorted(spec.brokers or ())
    unknown = [b for b in named if b not in live]
    if spec.mode is RebalanceMode.ADD_BROKERS and unknown:
        raise PlanningError(
            f"brokers {_ids(unknown)} to add are not registered (the cluster's brokers: "
            f"{_ids(live) or 'none'})"
        )
    moving = sorted(
        {TopicPartition(t.name, p) for t in snapshot.topics.values() for p in t.being_reassigned}
        | set(snapshot.pending_reassignments)
    )
    if moving:
        shown = ", ".join(map(str, moving[:5])) + (" ..." if len(moving) > 5 else "")
        raise PlanningError(
            f"a partition reassignment is in progress ({shown}): plan once it completes"
        )
    if spec.mode is RebalanceMode.REMOVE_BROKERS:
        eligible = [b for b in live if b not in named]
    else:
        eligible = live
    if not eligible:
        raise PlanningError("no brokers would be left to hold replicas")
    racks: dict[int, str] = {}
    if Goal.RACK_AWARE in spec.goals:
        known = {b: snapshot.brokers[b].rack for b in eligible}
        if any(r is not None for r in known.values()):
            if any(r is None for r in known.values()):
                raise PlanningError(NOT_ALL_RACKS)
            # Every registered broker's rack, those being drained too: a replica leaving a
            # rack frees a place in it.
            racks = {b: i.rack for b, i in snapshot.brokers.items() if i.rack is not None}
    assignment = {
        TopicPartition(name, p): partition.replicas
        for name, topic in sorted(snapshot.topics.items())
        if not topic.marked_for_deletion and name not in snapshot.deletion_markers
        for p, partition in sorted(topic.partitions.items())
    }
    request = PlanningInput(
        assignment=assignment,
        brokers=tuple(eligible),
        racks=racks,
        receivers=tuple(named) if spec.mode is RebalanceMode.ADD_BROKERS else None,
        excluded_topics=spec.excluded_topics,
        max_replicas_per_broker=spec.max_replicas_per_broker,
        balance_leaders=spec.balance_leaders,
        swap_goals=tuple(str(g) for g in spec.goals if g in SWAP_GOALS),
        sizes=None if sizes is None else {tp: sizes[tp] for tp in assignment if tp in sizes},
        removed=tuple(named) if spec.mode is RebalanceMode.REMOVE_BROKERS else (),
    )
    check_sizes(request)
    check_hard_goals(request)
    return request


def leaders(snapshot: ClusterSnapshot) -> dict[TopicPartition, int]:
    """Each partition's current leader (-1: none), whose replica's size is the partition's."""
    return {
        TopicPartition(name, p): partition.leader
        for name, topic in snapshot.topics.items()
        for p, partition in topic.partitions.items()
    }


def _ids(brokers: list[int]) -> str:
    return ", ".join(map(str, brokers))
