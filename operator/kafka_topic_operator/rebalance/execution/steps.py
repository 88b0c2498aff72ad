"""How an approved plan is carried out, decided from what the cluster shows now (pure).

Nothing about progress is remembered anywhere but in the cluster itself: a partition whose
replica list already equals the plan's is done, one in `/admin/reassign_partitions` (or with
adding or removing replicas in its topic znode) is in flight, the others remain. A restarted
executor therefore resumes where the last one stopped, whatever killed it.

Order, as Cruise Control's executor: replica movements first, in batches that honour the
per-broker and cluster-wide limits (the ZooKeeper reassignment znode takes one batch at a time),
then reorders that change only the preferred leader, then preferred leader elections for every
partition whose leader is not its new first replica, in batches of the leader limit.

Throttles (KIP-73, as kafka-reassign-partitions computes them): the pre-move replicas of each
moving partition are throttled as leaders, its new replicas as followers, and the brokers
involved get the rate.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.results.summary import PartitionMove

LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"
LEADER_THROTTLED_RATE = "leader.replication.throttled.rate"
FOLLOWER_THROTTLED_RATE = "follower.replication.throttled.rate"


@dataclass(frozen=True, slots=True)
class Limits:
    """Cruise Control's defaults, which Strimzi's KafkaRebalance keeps."""

    partitions_per_broker: int = 5  # moves into, and out of, each broker at once
    cluster_partitions: int = 1250  # moves in one reassignment batch
    leaders: int = 1000  # partitions in one preferred leader election

    def __post_init__(self) -> None:
        for name in ("partitions_per_broker", "cluster_partitions", "leaders"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")


class Phase(StrEnum):
    REPLICAS = "replica movement"
    REORDERS = "leader reordering"
    LEADERS = "leader election"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class ClusterNow:
    """What the executor reads before each step."""

    assignment: Mapping[TopicPartition, tuple[int, ...]]  # the topic znodes' replica lists
    leaders: Mapping[TopicPartition, int]  # from the partition state znodes; -1 when none
    reassigning: frozenset[TopicPartition]  # in the znode, or adding/removing in a topic znode
    election_pending: bool  # /admin/preferred_replica_election exists
    # (On a KRaft cluster: the metadata's replicas and leaders, the partitions
    # ListPartitionReassignments names, and partitions not elected, to be asked for again.)


class PlanOutdated(Exception):
    """The cluster changed since the plan was made: a partition holds neither the replicas the
    plan started from nor those it ends with. The plan must be computed again."""


@dataclass(frozen=True, slots=True)
class Step:
    phase: Phase
    reassign: tuple[PartitionMove, ...] = ()  # write these to /admin/reassign_partitions
    elect: tuple[TopicPartition, ...] = ()  # write these to /admin/preferred_replica_election
    wait: bool = False  # something is in flight: read again later


@dataclass(frozen=True, slots=True)
class Progress:
    partitions_done: int
    partitions_in_flight: int
    partitions_remaining: int
    leader_elections_done: int
    leader_elections_remaining: int

    def to_status(self) -> dict[str, int]:
        return {
            "partitionsDone": self.partitions_done,
            "partitionsInFlight": self.partitions_in_flight,
            "partitionsRemaining": self.partitions_remaining,
            "leaderElectionsDone": self.leader_elections_done,
            "leaderElectionsRemaining": self.leader_elections_remaining,
        }


def is_reorder(move: PartitionMove) -> bool:
    """Same replicas, new order: no data moves, only the preferred leader changes."""
    return set(move.before) == set(move.after)


def check_current(plan: Iterable[PartitionMove], now: ClusterNow) -> None:
    """PlanOutdated unless every partition of the plan is where it started, where it ends, or
    on its way (in flight)."""
    changed = off_plan(plan, now)
    if changed:
        shown = ", ".join(str(tp) for tp in changed[:5])
        more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        raise PlanOutdated(f"partitions changed since the plan was made: {shown}{more}")


def off_plan(plan: Iterable[PartitionMove], now: ClusterNow) -> list[TopicPartition]:
    """The plan's partitions that are neither where they start, nor where they end, nor on
    their way."""
    return [
        m.partition
        for m in plan
        if m.partition not in now.reassigning
        and now.assignment.get(m.partition) not in (m.before, m.after)
    ]


def needs_election(move: PartitionMove, now: ClusterNow) -> bool:
    """Done moving, and led by a live replica that is not the new preferred leader."""
    leader = now.leaders.get(move.partition, -1)
    return now.assignment.get(move.partition) == move.after and leader not in (-1, move.after[0])


def progress(plan: Sequence[PartitionMove], now: ClusterNow) -> Progress:
    done = sum(1 for m in plan if now.assignment.get(m.partition) == m.after)
    in_flight = sum(1 for m in plan if m.partition in now.reassigning)
    new_leaders = [m for m in plan if m.leader_changed]
    led = sum(1 for m in new_leaders
              if now.assignment.get(m.partition) == m.after
              and now.leaders.get(m.partition) == m.after[0])  # fmt: skip
    return Progress(done, in_flight, len(plan) - done - in_flight, led, len(new_leaders) - led)


def next_step(plan: Sequence[PartitionMove], now: ClusterNow, limits: Limits) -> Step:
    """What to do next; PlanOutdated when the plan no longer fits the cluster. Whatever is in
    flight (ours or anyone's: both znodes take one request at a time) is waited for first."""
    check_current(plan, now)
    if now.election_pending:
        return Step(Phase.LEADERS, wait=True)
    if now.reassigning:
        return Step(Phase.REPLICAS, wait=True)
    todo = [m for m in plan if now.assignment.get(m.partition) != m.after]
    moving = [m for m in todo if not is_reorder(m)]
    if moving:
        return Step(Phase.REPLICAS, reassign=tuple(replica_batch(moving, limits)))
    if todo:
        return Step(Phase.REORDERS, reassign=tuple(todo[: limits.leaders]))
    electing = [m.partition for m in plan if needs_election(m, now)]
    if electing:
        return Step(Phase.LEADERS, elect=tuple(electing[: limits.leaders]))
    return Step(Phase.DONE)


def replica_batch(moves: Iterable[PartitionMove], limits: Limits) -> list[PartitionMove]:
    """The next moves in plan order such that no broker receives, nor gives, more than the
    per-broker limit, and the batch holds no more than the cluster limit. The first move is
    always taken, so a limit smaller than one partition's fan-in never stalls the plan."""
    incoming: Counter[int] = Counter()
    outgoing: Counter[int] = Counter()
    batch: list[PartitionMove] = []
    for move in moves:
        if len(batch) >= limits.cluster_partitions:
            break
        gains = set(move.after) - set(move.before)
        losses = set(move.before) - set(move.after)
        fits = all(incoming[b] < limits.partitions_per_broker for b in gains) and all(
            outgoing[b] < limits.partitions_per_broker for b in losses
        )
        if fits or not batch:
            batch.append(move)
            incoming.update(gains)
            outgoing.update(losses)
    return batch


def throttled_replicas(batch: Iterable[PartitionMove]) -> dict[str, tuple[str, str]]:
    """Per topic, the (leader, follower) throttled-replica lists for a batch, in Kafka's
    `partition:broker` form: every pre-move replica may be leading, the new ones follow."""
    leaders: dict[str, list[str]] = defaultdict(list)
    followers: dict[str, list[str]] = defaultdict(list)
    for move in sorted(batch):
        tp = move.partition
        leaders[tp.topic].extend(f"{tp.partition}:{b}" for b in move.before)
        followers[tp.topic].extend(
            f"{tp.partition}:{b}" for b in move.after if b not in move.before
        )
    return {t: (",".join(leaders[t]), ",".join(followers[t])) for t in sorted(leaders)}


def merge_throttle(existing: str | None, added: str) -> str:
    """A throttled-replicas value with `added` merged in; `*` (all replicas) stays `*`."""
    if existing is not None and existing.strip() == "*":
        return "*"
    entries = [e for e in (existing or "").split(",") if e.strip()]
    for entry in added.split(","):
        if entry and entry not in entries:
            entries.append(entry)
    return ",".join(entries)


def throttled_brokers(batch: Iterable[PartitionMove]) -> list[int]:
    """Every broker sending or receiving in the batch."""
    return sorted({b for move in batch for b in (*move.before, *move.after)})
