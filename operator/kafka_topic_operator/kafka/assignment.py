"""Replica placement exactly as Kafka's AdminUtils.assignReplicasToBrokers, vectorised with numpy,
plus the checks AdminZkClient, ZkAdminManager and TopicCommand make around it.

Kafka's two placements (reference §1.4 and §1.5):
- rack-unaware: partition p's leader is broker `(p + start) % n`; follower j sits at
  `(first + 1 + (shift + j) % (n - 1)) % n`, and the shift grows by one each time p crosses a
  multiple of n. Every term is closed-form, so all partitions are computed at once.
- rack-aware: brokers are alternated over racks; for each follower a shared candidate counter k
  walks the same formula (shift multiplied by the rack count) and a candidate is accepted only if
  its rack (and broker) is new, unless every rack (broker) already holds a replica. Here all
  partitions advance k together, each step one vectorised test over the partitions still short
  of replicas.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from kafka_topic_operator.kafka.errors import (
    AdminCommandFailedException,
    AdminOperationException,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    ReassignmentInProgressException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka.names import colliding_topics, has_collision_chars
from kafka_topic_operator.kafka.names import validate_topic_name as _validate_name
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment


class RackAwareMode(Enum):
    """kafka.admin.RackAwareMode: how getBrokerMetadatas treats racks."""

    ENFORCED = "Enforced"
    SAFE = "Safe"
    DISABLED = "Disabled"


@dataclass(frozen=True, slots=True)
class BrokerMetadata:
    id: int
    rack: str | None = None


class RandomSource(Protocol):
    """Kafka draws `rand.nextInt(n)` twice, independently: the start index and the shift."""

    def next_int(self, bound: int) -> int: ...


class _PythonRandom:
    def __init__(self, seed: int | None = None) -> None:
        self._random = random.Random(seed)

    def next_int(self, bound: int) -> int:
        return self._random.randrange(bound)


def default_random(seed: int | None = None) -> RandomSource:
    return _PythonRandom(seed)


# ---- the placement itself -------------------------------------------------------------------


def rack_alternated_broker_list(broker_racks: Mapping[int, str]) -> list[int]:
    """Racks sorted by name, brokers within a rack by id, taken round-robin over the racks."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in broker_racks.items():
        by_rack.setdefault(rack, []).append(broker)
    columns = [sorted(by_rack[rack]) for rack in sorted(by_rack)]
    result: list[int] = []
    for i in range(max((len(c) for c in columns), default=0)):
        result.extend(c[i] for c in columns if i < len(c))
    return result


def _validate(brokers: Sequence[BrokerMetadata], n_partitions: int, rf: int) -> None:
    if n_partitions <= 0:
        raise InvalidPartitionsException("Number of partitions must be larger than 0.")
    if rf <= 0:
        raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
    if rf > len(brokers):
        raise InvalidReplicationFactorException(
            f"Replication factor: {rf} larger than available brokers: {len(brokers)}."
        )


def _shifts(pids: NDArray[np.int64], start_pid: int, shift0: int, n: int) -> NDArray[np.int64]:
    # The loop bumps the shift whenever the current id is a positive multiple of n, counting from
    # the first id it assigns (not from 0), so count the multiples in [max(start, 1), p].
    first_counted = max(start_pid, 1)
    return shift0 + pids // n - (first_counted - 1) // n


def assign_replicas_array(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: RandomSource | None = None,
) -> NDArray[np.int64]:
    """Row i holds partition `max(0, start_partition_id) + i`'s replicas, leader first."""
    _validate(brokers, n_partitions, replication_factor)
    racks = [b.rack for b in brokers]
    if all(r is None for r in racks):
        order = np.fromiter((b.id for b in brokers), dtype=np.int64, count=len(brokers))
        rack_index = None
    elif any(r is None for r in racks):
        raise AdminOperationException(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    else:
        broker_racks = {b.id: b.rack for b in brokers if b.rack is not None}
        order = np.asarray(rack_alternated_broker_list(broker_racks), dtype=np.int64)
        rack_names = sorted(set(broker_racks.values()))
        rack_of = {name: i for i, name in enumerate(rack_names)}
        rack_index = np.asarray([rack_of[broker_racks[int(b)]] for b in order], dtype=np.int64)

    n = len(order)
    source = rng or default_random()
    start_index = fixed_start_index if fixed_start_index >= 0 else source.next_int(n)
    shift0 = fixed_start_index if fixed_start_index >= 0 else source.next_int(n)
    start_pid = max(0, start_partition_id)
    pids = np.arange(start_pid, start_pid + n_partitions, dtype=np.int64)
    shifts = _shifts(pids, start_pid, shift0, n)
    first = (pids + start_index) % n

    out = np.empty((n_partitions, replication_factor), dtype=np.int64)
    out[:, 0] = order[first]
    if replication_factor == 1:
        return out
    if rack_index is None:
        for j in range(replication_factor - 1):
            out[:, j + 1] = order[(first + 1 + (shifts + j) % (n - 1)) % n]
        return out
    _fill_rack_aware(out, order, rack_index, first, shifts, int(rack_index.max()) + 1)
    return out


def _fill_rack_aware(
    out: NDArray[np.int64],
    order: NDArray[np.int64],
    rack_index: NDArray[np.int64],
    first: NDArray[np.int64],
    shifts: NDArray[np.int64],
    num_racks: int,
) -> None:
    n = len(order)
    rf = out.shape[1]
    # Positions (into `order`) of accepted replicas; -1 marks an empty slot, which never matches.
    taken = np.full(out.shape, -1, dtype=np.int64)
    taken[:, 0] = first
    taken_racks = np.full(out.shape, -1, dtype=np.int64)
    taken_racks[:, 0] = rack_index[first]
    count = np.ones(len(out), dtype=np.int64)
    rack_count = np.ones(len(out), dtype=np.int64)
    base = first + 1
    offset = (shifts * num_racks) % (n - 1)
    active = np.arange(len(out), dtype=np.int64)
    k = 0
    while active.size:
        position = (base[active] + (offset[active] + k) % (n - 1)) % n
        rack = rack_index[position]
        rack_seen = (taken_racks[active] == rack[:, None]).any(axis=1)
        broker_seen = (taken[active] == position[:, None]).any(axis=1)
        accept = (~rack_seen | (rack_count[active] == num_racks)) & (
            ~broker_seen | (count[active] == n)
        )
        rows = active[accept]
        slots = count[rows]
        taken[rows, slots] = position[accept]
        taken_racks[rows, slots] = rack[accept]
        rack_count[rows] += ~rack_seen[accept]
        count[rows] += 1
        active = active[count[active] < rf]
        k += 1
    out[:, 1:] = order[taken[:, 1:]]


def assign_replicas_to_brokers(
    brokers: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    rng: RandomSource | None = None,
) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers: partition id → replicas (leader first)."""
    rows = assign_replicas_array(
        brokers, n_partitions, replication_factor, fixed_start_index, start_partition_id, rng
    )
    start = max(0, start_partition_id)
    return {start + i: row for i, row in enumerate(rows.tolist())}


# ---- where brokers come from ----------------------------------------------------------------


def broker_metadatas(
    brokers: Sequence[BrokerMetadata],
    mode: RackAwareMode = RackAwareMode.ENFORCED,
    broker_list: Sequence[int] | None = None,
) -> list[BrokerMetadata]:
    """AdminZkClient.getBrokerMetadatas: filter, apply the rack mode, sort by id."""
    chosen = [b for b in brokers if broker_list is None or b.id in broker_list]
    with_rack = [b for b in chosen if b.rack is not None]
    if mode is RackAwareMode.ENFORCED and with_rack and len(with_rack) < len(chosen):
        raise AdminOperationException(
            "Not all brokers have rack information. Add --disable-rack-aware in command line to "
            "make replica assignment without rack information."
        )
    if mode is RackAwareMode.DISABLED or (
        mode is RackAwareMode.SAFE and len(with_rack) < len(chosen)
    ):
        chosen = [BrokerMetadata(b.id) for b in chosen]
    return sorted(chosen, key=lambda b: b.id)


# ---- adding partitions ----------------------------------------------------------------------


def new_partitions_start_index(
    existing_partition0: Sequence[int], brokers: Sequence[BrokerMetadata]
) -> int:
    """Index (in the id-sorted list) of the first broker whose id is at least partition 0's
    preferred leader; 0 when there is none (indexWhere's -1)."""
    leader = existing_partition0[0]
    return next((i for i, b in enumerate(brokers) if b.id >= leader), 0)


def _replicas(value: Sequence[int] | ReplicaAssignment) -> tuple[int, ...]:
    return value.replicas if isinstance(value, ReplicaAssignment) else tuple(value)


def _scala_map(assignment: Mapping[int, Sequence[int] | ReplicaAssignment]) -> str:
    def show(v: Sequence[int] | ReplicaAssignment) -> str:
        return str(v) if isinstance(v, ReplicaAssignment) else f"List({', '.join(map(str, v))})"

    return "Map(" + ", ".join(f"{p} -> {show(v)}" for p, v in assignment.items()) + ")"


def create_new_partitions_assignment(
    topic: str,
    existing: Mapping[int, Sequence[int] | ReplicaAssignment],
    brokers: Sequence[BrokerMetadata],
    num_partitions: int,
    replica_assignment: Mapping[int, Sequence[int]] | None = None,
    rng: RandomSource | None = None,
) -> dict[int, list[int]]:
    """AdminZkClient.createNewPartitionsAssignment: only the new partitions."""
    if 0 not in existing:
        raise AdminOperationException(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is "
            f"missing. Assignment: {_scala_map(existing)}"
        )
    partition0 = _replicas(existing[0])
    to_add = num_partitions - len(existing)
    if to_add <= 0:
        raise InvalidPartitionsException(
            f"The number of partitions for a topic can only be increased. Topic {topic} currently "
            f"has {len(existing)} partitions, {num_partitions} would not be an increase."
        )
    if replica_assignment is not None:
        validate_replica_assignment(replica_assignment, len(partition0), [b.id for b in brokers])
        return {p: list(r) for p, r in replica_assignment.items()}
    start = new_partitions_start_index(partition0, brokers)
    return assign_replicas_to_brokers(
        brokers, to_add, len(partition0), start, len(existing), rng=rng
    )


def validate_replica_assignment(
    assignment: Mapping[int, Sequence[int]],
    expected_rf: int,
    available_broker_ids: Collection[int],
) -> None:
    """AdminZkClient.validateReplicaAssignment, with Kafka's messages."""
    available = set(available_broker_ids)
    for partition in sorted(assignment):
        replicas = list(assignment[partition])
        if not replicas:
            raise InvalidReplicaAssignmentException(
                f"Cannot have replication factor of 0 for partition id {partition}."
            )
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentException(
                "Duplicate brokers not allowed in replica assignment: "
                f"{', '.join(map(str, replicas))} for partition id {partition}."
            )
        if not set(replicas) <= available:
            raise BrokerNotAvailableException(
                f"Some brokers specified for partition id {partition} are not available. "
                f"Specified brokers: {', '.join(map(str, replicas))}, "
                f"available brokers: {', '.join(map(str, sorted(available)))}."
            )
    bad = sorted((p, len(r)) for p, r in assignment.items() if len(r) != expected_rf)
    if bad:
        raise InvalidReplicaAssignmentException(
            "Inconsistent replication factor between partitions, partition 0 has "
            f"{expected_rf} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
            f"replication factors [{', '.join(str(rf) for _, rf in bad)}], respectively."
        )


def validate_create_partitions(
    topic: str,
    existing: Mapping[int, ReplicaAssignment],
    new_total: int,
    assignments: Sequence[Sequence[int]] | None,
    broker_ids: Collection[int],
) -> dict[int, list[int]] | None:
    """The CreatePartitions API's own checks (ZkAdminManager.createPartitions), in order.

    Returns the manual assignments keyed by their partition ids (None when Kafka assigns)."""
    if any(a.is_being_reassigned for a in existing.values()):
        raise ReassignmentInProgressException(
            f"A partition reassignment is in progress for the topic '{topic}'."
        )
    if not existing:
        raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
    old = len(existing)
    if new_total < old:
        raise InvalidPartitionsException(
            f"Topic currently has {old} partitions, which is higher than the requested {new_total}."
        )
    if new_total == old:
        raise InvalidPartitionsException(f"Topic already has {old} partitions.")
    if assignments is None:
        return None
    known = set(broker_ids)
    unknown = sorted({b for a in assignments for b in a if b not in known})
    if unknown:
        raise InvalidReplicaAssignmentException(
            f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}."
        )
    increment = new_total - old
    if len(assignments) != increment:
        raise InvalidReplicaAssignmentException(
            f"Increasing the number of partitions by {increment} but {len(assignments)} "
            "assignments provided."
        )
    return {old + i: list(a) for i, a in enumerate(assignments)}


# ---- topic creation -------------------------------------------------------------------------


def validate_topic_create(
    topic: str,
    assignment: Mapping[int, Sequence[int]],
    existing_topics: Collection[str],
    marked_for_deletion: Collection[str] = (),
) -> None:
    """AdminZkClient.validateTopicCreate (3.1+), up to but not including LogConfig.validate,
    which `configs.normalize_topic_config` does."""
    _validate_name(topic)
    if topic in marked_for_deletion:
        raise TopicExistsException(f"Topic '{topic}' is marked for deletion.")
    if topic in existing_topics:
        raise TopicExistsException(f"Topic '{topic}' already exists.")
    if has_collision_chars(topic):
        colliding = colliding_topics(topic, existing_topics)
        if colliding:
            raise InvalidTopicException(
                f"Topic '{topic}' collides with existing topics: {', '.join(colliding)}"
            )
    if len({len(r) for r in assignment.values()}) != 1:
        raise InvalidReplicaAssignmentException(
            "All partitions should have the same number of replicas"
        )
    for replicas in assignment.values():
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentException(
                f"Duplicate replica assignment found: {_scala_map(assignment)}"
            )
    n = len(assignment)
    if sum(p for p in assignment if p >= 0) != n * (n - 1) // 2:
        raise InvalidReplicaAssignmentException(
            "partitions should be a consecutive 0-based integer sequence"
        )


def validate_create_request(
    num_partitions: int | None,
    replication_factor: int | None,
    assignment: Mapping[int, Sequence[int]] | None,
) -> None:
    """ZkAdminManager.createTopics: counts and an explicit assignment are exclusive."""
    if assignment and (num_partitions is not None or replication_factor is not None):
        raise InvalidRequestException(
            "Both numPartitions or replicationFactor and replicasAssignments were set. Both "
            "cannot be used at the same time."
        )


# ---- kafka-topics' --replica-assignment -----------------------------------------------------


def parse_replica_assignment(text: str) -> dict[int, list[int]]:
    """TopicCommand.parseReplicaAssignment: `5:4,3:2,1:0` → {0: [5, 4], 1: [3, 2], 2: [1, 0]}."""
    result: dict[int, list[int]] = {}
    for partition, entry in enumerate(text.split(",")):
        brokers: list[int] = []
        for token in entry.split(":"):
            token = token.strip()
            try:
                brokers.append(int(token))
            except ValueError:
                raise AdminCommandFailedException(
                    f"Invalid broker id '{token}' in replica assignment '{text}' (partition "
                    f"{partition}): expected integers separated by ':' and ','"
                ) from None
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise AdminCommandFailedException(
                "Partition replica lists may not contain duplicate entries: "
                + ",".join(map(str, duplicates))
            )
        result[partition] = brokers
        if partition > 0 and len(brokers) != len(result[0]):
            raise AdminOperationException(
                f"Partition {partition} has different replication factor: "
                + ",".join(map(str, brokers))
            )
    return result


def new_partitions_from_command_line(
    existing: Mapping[int, Sequence[int]], full_assignment: Mapping[int, Sequence[int]]
) -> dict[int, list[int]]:
    """kafka-topics --alter --replica-assignment lists every partition; the existing ones are
    dropped (`.drop(existingAssignment.size)`) and the rest numbered after them."""
    rest = [full_assignment[p] for p in sorted(full_assignment)][len(existing) :]
    return {len(existing) + i: list(r) for i, r in enumerate(rest)}
