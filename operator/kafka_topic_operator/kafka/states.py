"""Replica and partition states with Kafka's valid previous states (ReplicaStateMachine.scala,
PartitionStateMachine.scala), and a planner that splits a requested transition into valid and
invalid parts. Invalid transitions are reported with Kafka's log message, never raised.

Replicas: NonExistent → New → Online ⇄ Offline → DeletionStarted → DeletionSuccessful →
NonExistent, with DeletionIneligible between Offline/Started and Offline/Online.
Partitions: NonExistent → New → Online ⇄ Offline → NonExistent.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Generic, NamedTuple, TypeVar

from kafka_topic_operator.kafka.leader_and_isr import NO_LEADER, LeaderAndIsr
from kafka_topic_operator.kafka.topic_partition import TopicPartition


class ReplicaState(Enum):
    """`value` is Kafka's state byte."""

    NEW_REPLICA = 1
    ONLINE_REPLICA = 2
    OFFLINE_REPLICA = 3
    REPLICA_DELETION_STARTED = 4
    REPLICA_DELETION_SUCCESSFUL = 5
    REPLICA_DELETION_INELIGIBLE = 6
    NON_EXISTENT_REPLICA = 7

    # Members are singletons: hashing them by identity (C) instead of Enum's hash of the name
    # (Python) matters when every replica of thousands of partitions is looked up.
    __hash__ = object.__hash__

    @property
    def kafka_name(self) -> str:
        return "".join(w.capitalize() for w in self.name.split("_"))

    @property
    def valid_previous_states(self) -> frozenset[ReplicaState]:
        return _REPLICA_PREVIOUS[self]

    def __str__(self) -> str:
        return self.kafka_name


_R = ReplicaState
_REPLICA_PREVIOUS: dict[ReplicaState, frozenset[ReplicaState]] = {
    _R.NEW_REPLICA: frozenset({_R.NON_EXISTENT_REPLICA}),
    _R.ONLINE_REPLICA: frozenset(
        {_R.NEW_REPLICA, _R.ONLINE_REPLICA, _R.OFFLINE_REPLICA, _R.REPLICA_DELETION_INELIGIBLE}
    ),
    _R.OFFLINE_REPLICA: frozenset(
        {_R.NEW_REPLICA, _R.ONLINE_REPLICA, _R.OFFLINE_REPLICA, _R.REPLICA_DELETION_INELIGIBLE}
    ),
    _R.REPLICA_DELETION_STARTED: frozenset({_R.OFFLINE_REPLICA}),
    _R.REPLICA_DELETION_SUCCESSFUL: frozenset({_R.REPLICA_DELETION_STARTED}),
    _R.REPLICA_DELETION_INELIGIBLE: frozenset({_R.OFFLINE_REPLICA, _R.REPLICA_DELETION_STARTED}),
    _R.NON_EXISTENT_REPLICA: frozenset({_R.REPLICA_DELETION_SUCCESSFUL}),
}

# Kafka lists valid previous states in declaration order (Scala Set literal order).
_REPLICA_PREVIOUS_ORDER: dict[ReplicaState, tuple[ReplicaState, ...]] = {
    _R.NEW_REPLICA: (_R.NON_EXISTENT_REPLICA,),
    _R.ONLINE_REPLICA: (
        _R.NEW_REPLICA, _R.ONLINE_REPLICA, _R.OFFLINE_REPLICA, _R.REPLICA_DELETION_INELIGIBLE,
    ),
    _R.OFFLINE_REPLICA: (
        _R.NEW_REPLICA, _R.ONLINE_REPLICA, _R.OFFLINE_REPLICA, _R.REPLICA_DELETION_INELIGIBLE,
    ),
    _R.REPLICA_DELETION_STARTED: (_R.OFFLINE_REPLICA,),
    _R.REPLICA_DELETION_SUCCESSFUL: (_R.REPLICA_DELETION_STARTED,),
    _R.REPLICA_DELETION_INELIGIBLE: (_R.OFFLINE_REPLICA, _R.REPLICA_DELETION_STARTED),
    _R.NON_EXISTENT_REPLICA: (_R.REPLICA_DELETION_SUCCESSFUL,),
}  # fmt: skip


class PartitionState(Enum):
    NEW_PARTITION = 0
    ONLINE_PARTITION = 1
    OFFLINE_PARTITION = 2
    NON_EXISTENT_PARTITION = 3

    __hash__ = object.__hash__  # as ReplicaState's

    @property
    def kafka_name(self) -> str:
        return "".join(w.capitalize() for w in self.name.split("_"))

    @property
    def valid_previous_states(self) -> frozenset[PartitionState]:
        return _PARTITION_PREVIOUS[self]

    def __str__(self) -> str:
        return self.kafka_name


_P = PartitionState
_PARTITION_PREVIOUS_ORDER: dict[PartitionState, tuple[PartitionState, ...]] = {
    _P.NEW_PARTITION: (_P.NON_EXISTENT_PARTITION,),
    _P.ONLINE_PARTITION: (_P.NEW_PARTITION, _P.ONLINE_PARTITION, _P.OFFLINE_PARTITION),
    _P.OFFLINE_PARTITION: (_P.NEW_PARTITION, _P.ONLINE_PARTITION, _P.OFFLINE_PARTITION),
    _P.NON_EXISTENT_PARTITION: (_P.OFFLINE_PARTITION,),
}
_PARTITION_PREVIOUS = {s: frozenset(order) for s, order in _PARTITION_PREVIOUS_ORDER.items()}


class PartitionAndReplica(NamedTuple):
    topic_partition: TopicPartition
    replica: int

    def __str__(self) -> str:
        tp = self.topic_partition
        return f"[Topic={tp.topic},Partition={tp.partition},Replica={self.replica}]"


K = TypeVar("K")
S = TypeVar("S", ReplicaState, PartitionState)


@dataclass(frozen=True, slots=True)
class InvalidTransition(Generic[K, S]):
    key: K
    current: S
    target: S
    message: str


@dataclass(frozen=True, slots=True)
class TransitionPlan(Generic[K, S]):
    valid: tuple[K, ...]
    invalid: tuple[InvalidTransition[K, S], ...]


def _names(states: Sequence[ReplicaState] | Sequence[PartitionState]) -> str:
    return ",".join(s.kafka_name for s in states)


def plan_replica_transitions(
    states: Mapping[PartitionAndReplica, ReplicaState],
    replicas: Iterable[PartitionAndReplica],
    target: ReplicaState,
) -> TransitionPlan[PartitionAndReplica, ReplicaState]:
    """Unknown replicas count as NonExistentReplica (putReplicaStateIfNotExists)."""
    valid: list[PartitionAndReplica] = []
    invalid: list[InvalidTransition[PartitionAndReplica, ReplicaState]] = []
    previous = target.valid_previous_states
    for replica in replicas:
        current = states.get(replica, ReplicaState.NON_EXISTENT_REPLICA)
        if current in previous:
            valid.append(replica)
        else:
            invalid.append(
                InvalidTransition(
                    replica,
                    current,
                    target,
                    f"Replica {replica} should be in the "
                    f"{_names(_REPLICA_PREVIOUS_ORDER[target])} states before moving to "
                    f"{target.kafka_name} state. Instead it is in {current.kafka_name} state",
                )
            )
    return TransitionPlan(tuple(valid), tuple(invalid))


def plan_partition_transitions(
    states: Mapping[TopicPartition, PartitionState],
    partitions: Iterable[TopicPartition],
    target: PartitionState,
) -> TransitionPlan[TopicPartition, PartitionState]:
    """Unknown partitions count as NonExistentPartition."""
    valid: list[TopicPartition] = []
    invalid: list[InvalidTransition[TopicPartition, PartitionState]] = []
    previous = target.valid_previous_states
    for partition in partitions:
        current = states.get(partition, PartitionState.NON_EXISTENT_PARTITION)
        if current in previous:
            valid.append(partition)
        else:
            invalid.append(
                InvalidTransition(
                    partition,
                    current,
                    target,
                    f"Partition {partition} should be in one of "
                    f"{_names(_PARTITION_PREVIOUS_ORDER[target])} states before moving to "
                    f"{target.kafka_name} state. Instead it is in {current.kafka_name} state",
                )
            )
    return TransitionPlan(tuple(valid), tuple(invalid))


# ---- pure effects of transitions ------------------------------------------------------------


def initial_leader_and_isr(
    assignment: Sequence[int], live_brokers: Iterable[int]
) -> LeaderAndIsr | None:
    """New → Online: leader = first live replica in assignment order, ISR = the live replicas."""
    live = set(live_brokers)
    live_replicas = [r for r in assignment if r in live]
    if not live_replicas:
        return None
    return LeaderAndIsr.initial(live_replicas[0], live_replicas)


def remove_replica_from_isr(current: LeaderAndIsr, replica: int) -> LeaderAndIsr | None:
    """→ OfflineReplica's ISR shrink; None when the ISR does not hold the replica. The last ISR
    member is never removed, and the leader becomes -1 when it is the replica going away."""
    if replica not in current.isr:
        return None
    leader = NO_LEADER if replica == current.leader else current.leader
    isr = current.isr if len(current.isr) == 1 else tuple(r for r in current.isr if r != replica)
    return current.new_leader_and_isr(leader, isr)
