"""What to do to make a topic in ZooKeeper match its KafkaTopic: a pure function from what is
wanted and what is there to the writes AdminZkClient would make, or the reason none can be made.

The writes are applied by the reconciler in this order: config (znode, then change
notification), topic creation (config znode first, as Kafka does), added partitions, and a
replication-factor or placement change as a reassignment that moves as few replicas as possible.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from kafka_topic_operator.kafka.assignment import (
    BrokerMetadata,
    RandomSource,
    assign_replicas_to_brokers,
    broker_metadatas,
    create_new_partitions_assignment,
    validate_replica_assignment,
    validate_topic_create,
)
from kafka_topic_operator.kafka.errors import (
    AdminOperationException,
    BrokerNotAvailableException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidTopicException,
    TopicExistsException,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.spec import DesiredTopic, config_to_keep

Moves = dict[TopicPartition, list[int]]  # replicas by partition, as a reassignment names them


class Reason(Enum):
    """Why nothing can be written (the Ready condition's reason)."""

    INVALID_SPEC = "InvalidSpec"
    CONFLICT = "Conflict"
    NOT_SUPPORTED = "NotSupported"
    BROKERS_UNAVAILABLE = "BrokersUnavailable"
    REASSIGNMENT_IN_PROGRESS = "ReassignmentInProgress"
    DELETION_IN_PROGRESS = "DeletionInProgress"
    UNREADABLE_ZNODE = "UnreadableZNode"


def unreadable_message(topic: str, problems: Sequence[str]) -> str:
    """Why a topic with malformed znodes (written by someone else) is left alone."""
    return (
        f"Topic '{topic}' cannot be read: {'; '.join(problems)}. Nothing is changed until the "
        "znode holds what Kafka writes (fix or delete it)"
    )


@dataclass(frozen=True, slots=True)
class ActualTopic:
    """The topic as ZooKeeper holds it."""

    partitions: Mapping[int, ReplicaAssignment]
    config: Mapping[str, str]
    topic_id: str | None = None
    marked_for_deletion: bool = False


@dataclass(frozen=True, slots=True)
class Cluster:
    """What the plan needs to know of the cluster besides the topic itself."""

    brokers: Sequence[BrokerMetadata]  # live brokers
    topics: Collection[str] = ()  # every existing topic name, for collisions
    marked_for_deletion: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class CreateTopic:
    assignment: Mapping[int, tuple[int, ...]]
    config: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class ChangeConfig:
    config: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class AddPartitions:
    new: Mapping[int, tuple[int, ...]]  # only the added partitions


@dataclass(frozen=True, slots=True)
class Reassign:
    """Target replicas for the partitions that move; `moves` counts replicas placed anew;
    `before` holds their replicas as the plan read them."""

    targets: Mapping[int, tuple[int, ...]]
    moves: int
    before: Mapping[int, tuple[int, ...]]

    def of_topic(self, topic: str) -> tuple[Moves, Moves]:
        """The targets and the replicas before, as a backend's `reassign` takes them."""
        return (
            {TopicPartition(topic, p): list(r) for p, r in self.targets.items()},
            {TopicPartition(topic, p): list(r) for p, r in self.before.items()},
        )


Action = CreateTopic | ChangeConfig | AddPartitions | Reassign


def announcement(topic: str, action: Action) -> tuple[str, str]:
    """(reason, message) of the Kubernetes event saying what an action did."""
    if isinstance(action, CreateTopic):
        rf = len(action.assignment[min(action.assignment)]) if action.assignment else 0
        shape = f"{len(action.assignment)} partitions, replication factor {rf}"
        return "Created", f"Topic '{topic}' created: {shape}"
    if isinstance(action, AddPartitions):
        return "PartitionsAdded", f"Topic '{topic}': {len(action.new)} partitions added"
    if isinstance(action, Reassign):
        moving = f"replicas of {len(action.targets)} partitions changing"
        return "ReplicasChanged", f"Topic '{topic}': {moving}, {action.moves} placed anew"
    changed = ", ".join(f"{k}={v}" for k, v in sorted(action.config.items())) or "defaults"
    return "ConfigChanged", f"Topic '{topic}': config now {changed}"


@dataclass(frozen=True, slots=True)
class Plan:
    actions: tuple[Action, ...] = ()
    blocked: tuple[Reason, str] | None = None  # nothing may be written, and why
    notes: tuple[str, ...] = field(default=())  # facts worth showing (for example adoption)


def plan(
    desired: DesiredTopic,
    actual: ActualTopic | None,
    cluster: Cluster,
    rng: RandomSource | None = None,
    adopting: bool = False,
) -> Plan:
    """The writes that bring `actual` (None: no such topic) to `desired`. `adopting`: the
    topic exists but this resource never managed it; it is taken over only if it already is as
    declared, otherwise nothing is written and the differences are explained."""
    if actual is None:
        return _plan_create(desired, cluster, rng)
    if adopting:
        differences = adoption_differences(desired, actual)
        if differences:
            return Plan(
                blocked=(
                    Reason.CONFLICT,
                    f"Topic '{desired.name}' already exists and differs from this spec: "
                    f"{'; '.join(differences)}. Change the spec to match to adopt it.",
                )
            )
    if actual.marked_for_deletion:
        return Plan(
            blocked=(
                Reason.DELETION_IN_PROGRESS,
                f"Topic '{desired.name}' is marked for deletion; it can be created again once "
                "the deletion completes.",
            )
        )
    return _plan_update(desired, actual, cluster, rng)


def adoption_differences(desired: DesiredTopic, actual: ActualTopic) -> list[str]:
    """How an existing topic differs from a spec, in the spec's terms."""
    differences = []
    rows = {p: a.replicas for p, a in actual.partitions.items()}
    if len(rows) != desired.partitions:
        differences.append(f"partitions {len(rows)} (spec: {desired.partitions})")
    rf = {len(r) for r in rows.values()}
    if rf != {desired.replication_factor}:
        shown = ", ".join(map(str, sorted(rf)))
        differences.append(f"replicas {shown} (spec: {desired.replication_factor})")
    if desired.assignment is not None and dict(desired.assignment) != rows:
        differences.append("replica placement differs from replicaAssignment")
    wanted = config_to_keep(desired.config, actual.config)
    for key in sorted(set(actual.config) | set(wanted)):
        have, want = actual.config.get(key), wanted.get(key)
        if have != want:
            differences.append(f"config {key}={have if have is not None else '(default)'} "
                               f"(spec: {want if want is not None else '(default)'})")  # fmt: skip
    return differences


def _plan_create(desired: DesiredTopic, cluster: Cluster, rng: RandomSource | None) -> Plan:
    brokers = [b.id for b in cluster.brokers]
    try:
        if desired.assignment is not None:
            assignment = {p: tuple(r) for p, r in desired.assignment.items()}
            validate_replica_assignment(assignment, desired.replication_factor, brokers)
        else:
            metadata = broker_metadatas(cluster.brokers, desired.rack_aware_mode)
            placed = assign_replicas_to_brokers(
                metadata, desired.partitions, desired.replication_factor, rng=rng
            )
            assignment = {p: tuple(r) for p, r in placed.items()}
        validate_topic_create(desired.name, assignment, cluster.topics, cluster.marked_for_deletion)
    except TopicExistsException as e:
        marked = desired.name in cluster.marked_for_deletion
        return Plan(blocked=(Reason.DELETION_IN_PROGRESS if marked else Reason.CONFLICT, str(e)))
    except InvalidTopicException as e:
        return Plan(blocked=(Reason.CONFLICT, str(e)))
    except (BrokerNotAvailableException, InvalidReplicationFactorException) as e:
        return Plan(blocked=(Reason.BROKERS_UNAVAILABLE, str(e)))
    except (AdminOperationException, InvalidReplicaAssignmentException) as e:
        return Plan(blocked=(Reason.INVALID_SPEC, str(e)))
    return Plan(actions=(CreateTopic(assignment, dict(desired.config)),))


# What a blocked plan also holds back, as status says it.
HELD_BACK: dict[type, str] = {
    ChangeConfig: "the config change",
    Reassign: "the replica changes",
    AddPartitions: "the new partitions",
    CreateTopic: "the topic",
}


def _plan_update(
    desired: DesiredTopic, actual: ActualTopic, cluster: Cluster, rng: RandomSource | None
) -> Plan:
    current = {p: a.replicas for p, a in sorted(actual.partitions.items())}
    if len(current) > desired.partitions:
        return Plan(
            blocked=(
                Reason.NOT_SUPPORTED,
                f"Topic '{desired.name}' has {len(current)} partitions; Kafka cannot decrease "
                f"the partition count to {desired.partitions}.",
            )
        )
    actions: list[Action] = []
    config = config_to_keep(desired.config, actual.config)
    if dict(actual.config) != config:
        actions.append(ChangeConfig(config))
    reassigning = any(a.is_being_reassigned for a in actual.partitions.values())
    targets = _targets(desired, current, cluster)
    if isinstance(targets, Plan):
        return targets
    if targets:
        if reassigning:
            return _reassignment_in_progress(desired, actions)
        moves = sum(len(set(t) - set(current[p])) for p, t in targets.items())
        actions.append(Reassign(targets, moves, {p: current[p] for p in targets}))
    if desired.partitions > len(current):
        added = _added_partitions(desired, current, cluster, rng)
        if isinstance(added, Plan):
            return Plan(
                actions=tuple(actions), blocked=_held_back(added, desired, current, actions)
            )
        if reassigning:
            return _reassignment_in_progress(desired, actions)
        actions.append(AddPartitions(added))
    return Plan(actions=tuple(actions))


def _held_back(
    refused: Plan,
    desired: DesiredTopic,
    current: Mapping[int, tuple[int, ...]],
    actions: Sequence[Action],
) -> tuple[Reason, str]:
    """Why partitions cannot be added, in the user's terms: new partitions take partition 0's
    current replication factor (Kafka's rule), not the one the spec asks for; and what else
    waits with them, since a blocked plan applies nothing."""
    assert refused.blocked is not None
    reason, message = refused.blocked
    now = len(current[min(current)])
    unavailable = reason is Reason.BROKERS_UNAVAILABLE and desired.assignment is None
    if unavailable and now != desired.replication_factor:
        message = (
            f"New partitions take partition 0's replication factor ({now}) until the change "
            f"to {desired.replication_factor} is done: {message}"
        )
    if actions:
        held = ", ".join(HELD_BACK[type(a)] for a in actions)
        message += (
            f" Held back with the new partitions: {held}. All are tried again at the next "
            "drift pass or change of the resource."
        )
    return reason, message


def _reassignment_in_progress(desired: DesiredTopic, actions: Sequence[Action]) -> Plan:
    return Plan(
        actions=tuple(actions),
        blocked=(
            Reason.REASSIGNMENT_IN_PROGRESS,
            f"A partition reassignment is in progress for the topic '{desired.name}'.",
        ),
    )


def _targets(
    desired: DesiredTopic, current: Mapping[int, tuple[int, ...]], cluster: Cluster
) -> dict[int, tuple[int, ...]] | Plan:
    """Existing partitions whose replicas must change: an explicit placement that differs, or a
    replication factor that differs (as few replicas moved as possible)."""
    if desired.assignment is not None:
        wanted = {p: desired.assignment[p] for p in current if p in desired.assignment}
        changed = {p: r for p, r in wanted.items() if tuple(r) != current[p]}
        unavailable = sorted({b for r in changed.values() for b in r} - _ids(cluster))
        if unavailable:
            return Plan(
                blocked=(
                    Reason.BROKERS_UNAVAILABLE,
                    f"Brokers {', '.join(map(str, unavailable))} named in replicaAssignment are "
                    "not available.",
                )
            )
        return changed
    rf = desired.replication_factor
    if all(len(r) == rf for r in current.values()):
        return {}
    return _change_replication_factor(current, rf, cluster)


def _change_replication_factor(
    current: Mapping[int, tuple[int, ...]], rf: int, cluster: Cluster
) -> dict[int, tuple[int, ...]] | Plan:
    """Each partition keeps as many of its replicas as it can, the preferred leader first;
    added replicas go to the least loaded live brokers, on racks the partition does not use yet
    where it can; removed ones leave the most loaded brokers."""
    live = {b.id: b.rack for b in cluster.brokers}
    if rf > len(live):
        return Plan(
            blocked=(
                Reason.BROKERS_UNAVAILABLE,
                f"Replication factor: {rf} larger than available brokers: {len(live)}.",
            )
        )
    load: Counter[int] = Counter({b: 0 for b in live})
    for replicas in current.values():
        load.update(r for r in replicas if r in live)
    targets: dict[int, tuple[int, ...]] = {}
    for partition, replicas in sorted(current.items()):
        kept = list(replicas)
        while len(kept) > rf:
            # Never the preferred leader; of the rest, the most loaded (dead brokers first).
            victim = max(kept[1:], key=lambda b: (b not in live, load[b], b))
            kept.remove(victim)
            load[victim] -= 1
        while len(kept) < rf:
            racks = {live.get(b) for b in kept}
            candidates = [b for b in live if b not in kept]
            choice = min(candidates, key=lambda b: (live[b] in racks and live[b] is not None,
                                                     load[b], b))  # fmt: skip
            kept.append(choice)
            load[choice] += 1
        if tuple(kept) != replicas:
            targets[partition] = tuple(kept)
    return targets


def _added_partitions(
    desired: DesiredTopic,
    current: Mapping[int, tuple[int, ...]],
    cluster: Cluster,
    rng: RandomSource | None,
) -> dict[int, tuple[int, ...]] | Plan:
    explicit = None
    if desired.assignment is not None:
        explicit = {p: list(r) for p, r in desired.assignment.items() if p not in current}
    try:
        metadata = broker_metadatas(cluster.brokers, desired.rack_aware_mode)
        added = create_new_partitions_assignment(
            desired.name, current, metadata, desired.partitions, explicit, rng=rng
        )
    except (BrokerNotAvailableException, InvalidReplicationFactorException) as e:
        return Plan(blocked=(Reason.BROKERS_UNAVAILABLE, str(e)))
    except (
        AdminOperationException,
        InvalidPartitionsException,
        InvalidReplicaAssignmentException,
    ) as e:
        return Plan(blocked=(Reason.INVALID_SPEC, str(e)))
    return {p: tuple(r) for p, r in added.items()}


def _ids(cluster: Cluster) -> set[int]:
    return {b.id for b in cluster.brokers}
