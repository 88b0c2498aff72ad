"""Partition leader election: Kafka's four algorithms (PartitionLeaderElectionAlgorithms) and the
Election.scala wrappers that decide the new ISR, the leader epoch and who is told.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition

# ---- the algorithms -------------------------------------------------------------------------


def offline_partition_leader_election(
    assignment: Sequence[int], isr: Sequence[int], live: Collection[int], unclean_enabled: bool
) -> int | None:
    """First live ISR member in assignment order; else, if unclean, the first live replica."""
    leader = next((r for r in assignment if r in live and r in isr), None)
    if leader is None and unclean_enabled:
        leader = next((r for r in assignment if r in live), None)
    return leader


def is_unclean_election(
    assignment: Sequence[int], isr: Sequence[int], live: Collection[int], leader: int | None
) -> bool:
    """Whether offline election picked a replica outside the ISR (Kafka marks its meter then)."""
    return leader is not None and not any(r in live and r in isr for r in assignment)


def reassign_partition_leader_election(
    reassignment: Sequence[int], isr: Sequence[int], live: Collection[int]
) -> int | None:
    return next((r for r in reassignment if r in live and r in isr), None)


def preferred_replica_partition_leader_election(
    assignment: Sequence[int], isr: Sequence[int], live: Collection[int]
) -> int | None:
    """Only the first assigned replica, and only if it is live and in the ISR."""
    if assignment and assignment[0] in live and assignment[0] in isr:
        return assignment[0]
    return None


def controlled_shutdown_partition_leader_election(
    assignment: Sequence[int],
    isr: Sequence[int],
    live: Collection[int],
    shutting_down: Collection[int],
) -> int | None:
    return next((r for r in assignment if r in live and r in isr and r not in shutting_down), None)


# ---- strategies and the unclean decision ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class OfflineElection:
    allow_unclean: bool = False


@dataclass(frozen=True, slots=True)
class ReassignElection:
    pass


@dataclass(frozen=True, slots=True)
class PreferredReplicaElection:
    pass


@dataclass(frozen=True, slots=True)
class ControlledShutdownElection:
    pass


ElectionStrategy = (
    OfflineElection | ReassignElection | PreferredReplicaElection | ControlledShutdownElection
)


def strategy_name(strategy: ElectionStrategy) -> str:
    match strategy:
        case OfflineElection(allow_unclean=u):
            return f"OfflinePartitionLeaderElectionStrategy({str(u).lower()})"
        case ReassignElection():
            return "ReassignPartitionLeaderElectionStrategy"
        case PreferredReplicaElection():
            return "PreferredReplicaPartitionLeaderElectionStrategy"
        case ControlledShutdownElection():
            return "ControlledShutdownPartitionLeaderElectionStrategy"


def unclean_election_allowed(
    any_live_isr_member: bool,
    strategy_allows_unclean: bool,
    topic_config_value: str | None,
    default: bool = False,
) -> bool:
    """collectUncleanLeaderElectionState: a live ISR member means clean; else the strategy's
    flag; else the topic's `unclean.leader.election.enable` over the controller-wide default."""
    if any_live_isr_member:
        return False
    if strategy_allows_unclean:
        return True
    if topic_config_value is None:
        return default
    return topic_config_value.strip().lower() == "true"


# ---- the wrappers ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ElectionResult:
    """What to write (None: no leader could be elected) and who gets the LeaderAndIsr."""

    topic_partition: TopicPartition
    leader_and_isr: LeaderAndIsr | None
    live_replicas: tuple[int, ...]


def leader_for_offline(
    partition: TopicPartition,
    assignment: Sequence[int],
    current: LeaderAndIsr,
    live_brokers: Collection[int],
    unclean: bool,
    recovering_on_unclean: bool = True,
) -> ElectionResult:
    """`live_brokers` must not contain shutting-down brokers (isReplicaOnline excludes them).
    `recovering_on_unclean`: IBP >= 3.2 marks a leader from outside the ISR RECOVERING."""
    live = tuple(r for r in assignment if r in live_brokers)
    leader = offline_partition_leader_election(assignment, current.isr, live, unclean)
    if leader is None:
        return ElectionResult(partition, None, live)
    if leader in current.isr:
        new = current.new_leader_and_isr(leader, [r for r in current.isr if r in live_brokers])
    elif recovering_on_unclean:
        new = current.new_recovering_leader_and_isr(leader, [leader])
    else:
        new = current.new_leader_and_isr(leader, [leader])
    return ElectionResult(partition, new, live)


def leader_for_reassign(
    partition: TopicPartition,
    assignment: ReplicaAssignment,
    current: LeaderAndIsr,
    live_brokers: Collection[int],
) -> ElectionResult:
    target = assignment.target_replicas
    live = tuple(r for r in target if r in live_brokers)
    leader = reassign_partition_leader_election(target, current.isr, live)
    return ElectionResult(
        partition, current.new_leader(leader) if leader is not None else None, target
    )


def leader_for_preferred_replica(
    partition: TopicPartition,
    assignment: Sequence[int],
    current: LeaderAndIsr,
    live_brokers: Collection[int],
) -> ElectionResult:
    live = tuple(r for r in assignment if r in live_brokers)
    leader = preferred_replica_partition_leader_election(assignment, current.isr, live)
    return ElectionResult(
        partition, current.new_leader(leader) if leader is not None else None, tuple(assignment)
    )


def leader_for_controlled_shutdown(
    partition: TopicPartition,
    assignment: Sequence[int],
    current: LeaderAndIsr,
    live_or_shutting_down: Collection[int],
    shutting_down: Collection[int],
) -> ElectionResult:
    live = tuple(r for r in assignment if r in live_or_shutting_down)
    leader = controlled_shutdown_partition_leader_election(
        assignment, current.isr, live, shutting_down
    )
    if leader is None:
        return ElectionResult(partition, None, live)
    new_isr = [r for r in current.isr if r not in shutting_down]
    return ElectionResult(partition, current.new_leader_and_isr(leader, new_isr), live)
