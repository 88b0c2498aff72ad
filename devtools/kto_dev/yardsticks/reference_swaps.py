"""The reference planner's swap goals (pure): TopicReplicaDistribution and DiskUsageDistribution,
one swap at a time, the best first (the rules are in goals.py).

A swap moves replica a from broker x to y and replica b from y to x: every broker keeps its
replica count, so the count balance reached before stays as it was. Both legs respect the hard
goals (never a broker twice in a partition, never a rack over its share; the capacity cannot be
crossed by a swap) and excluded topics never move. Each swap lowers the goal's shortfall by at
least one unit (a topic count brought into its band; bytes brought toward the mean without
crossing it), so the loops end.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Mapping, Sequence

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import (
    DISK_USAGE_DISTRIBUTION,
    TOPIC_REPLICA_DISTRIBUTION,
    disk_balanced,
    disk_band,
    disk_load_ok,
    disk_unbalanced,
    topic_band,
    topic_count_ok,
)
from kafka_topic_operator.rebalance.algorithms.topic_spread import spread_topics
from kto_dev.yardsticks.reference_state import PlannerState


def swap_goals(
    state: PlannerState,
    movable: set[TopicPartition],
    goals: Sequence[str],
    sizes: Mapping[TopicPartition, int] | None,
) -> list[str]:
    """The swap goals in the order listed, each guarding the ones before it."""
    problems: list[str] = []
    for i, goal in enumerate(goals):
        earlier = goals[:i]
        topics = _Topics(state) if TOPIC_REPLICA_DISTRIBUTION in earlier else None
        disk = _Disk(state, sizes) if sizes is not None else None
        if goal == TOPIC_REPLICA_DISTRIBUTION:
            guard = sizes if DISK_USAGE_DISTRIBUTION in earlier else None
            problems += balance_topics(state, movable, guard)
        elif goal == DISK_USAGE_DISTRIBUTION:
            if disk is None:
                raise ValueError(f"{DISK_USAGE_DISTRIBUTION} needs partition sizes")
            problems += balance_disk(state, movable, disk, topics)
        else:
            raise ValueError(f"not a swap goal: {goal}")
    return problems


class _Topics:
    """Each topic's replica count per eligible broker, and its band."""

    def __init__(self, state: PlannerState) -> None:
        eligible = set(state.eligible)
        self.counts: dict[str, Counter[int]] = {}
        for tp, replicas in state.assignment.items():
            held = self.counts.setdefault(tp.topic, Counter())
            held.update(b for b in replicas if b in eligible)
        n = len(state.eligible)
        self.band = {t: topic_band(c.total(), n) for t, c in self.counts.items()}

    def ok(self, topic: str, broker: int, change: int) -> bool:
        return topic_count_ok(self.counts[topic][broker], change, self.band[topic])

    def swap_ok(self, t: str, u: str, x: int, y: int) -> bool:
        """Topic t moving from x to y, u from y to x."""
        if t == u:
            return True
        return self.ok(t, x, -1) and self.ok(t, y, 1) and self.ok(u, y, -1) and self.ok(u, x, 1)

    def swap(self, t: str, u: str, x: int, y: int) -> None:
        self.counts[t][x] -= 1
        self.counts[t][y] += 1
        self.counts[u][y] -= 1
        self.counts[u][x] += 1


class _Disk:
    """Bytes per eligible broker."""

    def __init__(self, state: PlannerState, sizes: Mapping[TopicPartition, int]) -> None:
        self.sizes = sizes
        self.eligible = state.eligible
        self.loads = Counter({b: 0 for b in state.eligible})
        for tp, replicas in state.assignment.items():
            for b in replicas:
                if b in self.loads:
                    self.loads[b] += sizes[tp]
        self.total = sum(self.loads.values())

    def swap_ok(self, x: int, y: int, delta: int) -> bool:
        """x gives `delta` bytes more than it takes, y the reverse."""
        n = len(self.eligible)
        return disk_load_ok(self.loads[x], -delta, self.total, n) and disk_load_ok(
            self.loads[y], delta, self.total, n
        )

    def swap(self, x: int, y: int, delta: int) -> None:
        self.loads[x] -= delta
        self.loads[y] += delta


def _swap(state: PlannerState, a: TopicPartition, x: int, b: TopicPartition, y: int) -> None:
    state.move(a, x, y)
    state.move(b, y, x)


def balance_topics(
    state: PlannerState, movable: set[TopicPartition], sizes: Mapping[TopicPartition, int] | None
) -> list[str]:
    """Each topic's count per broker into its band (`topic_spread`, as every engine plans it);
    `sizes` when DiskUsageDistribution came first and guards its band."""
    done = spread_topics(
        state.assignment,
        state.eligible,
        racks=state.model.racks,
        fixed=frozenset(tp for tp in state.assignment if tp not in movable),
        sizes=sizes,
    )
    for tp, replicas in done.assignment.items():
        if tuple(state.assignment[tp]) != replicas:
            state.adopt(tp, list(replicas))
    return [done.unbalanced] if done.unbalanced else []


def balance_disk(
    state: PlannerState, movable: set[TopicPartition], disk: _Disk, topics: _Topics | None
) -> list[str]:
    """Bytes per broker into the band around the mean: a heavier replica from a broker above the
    mean for a lighter one from a broker below it, the difference at most what brings either
    to the mean, so that neither crosses it."""
    while not disk_balanced(disk.loads, state.eligible):
        found = _disk_swap(state, movable, disk, topics)
        if found is None:
            return [disk_unbalanced(disk.loads, state.eligible)]
        a, x, b, y = found
        if topics is not None:
            topics.swap(a.topic, b.topic, x, y)
        disk.swap(x, y, disk.sizes[a] - disk.sizes[b])
        _swap(state, a, x, b, y)
    return []


def _disk_swap(
    state: PlannerState, movable: set[TopicPartition], disk: _Disk, topics: _Topics | None
) -> tuple[TopicPartition, int, TopicPartition, int] | None:
    """The swap moving the most bytes (up to what the pair may move) between the heaviest
    broker and the lightest one it can swap with, at least one of them outside the band."""
    n = len(state.eligible)
    mean = disk.total / n
    loads = disk.loads
    heavy = sorted((b for b in state.eligible if loads[b] > mean), key=lambda b: (-loads[b], b))
    light = sorted((b for b in state.eligible if loads[b] < mean), key=lambda b: (loads[b], b))
    for x in heavy:
        for y in light:
            if _in_band(loads[x], disk.total, n) and _in_band(loads[y], disk.total, n):
                continue  # both balanced: nothing to gain here
            most = math.floor(min(loads[x] - mean, mean - loads[y]))
            found = _best_pair(state, movable, disk, topics, x, y, most)
            if found is not None:
                return found[0], x, found[1], y
    return None


def _in_band(load: int, total: int, brokers: int) -> bool:
    low, high = disk_band(total, brokers)
    return low <= load <= high


def _best_pair(
    state: PlannerState,
    movable: set[TopicPartition],
    disk: _Disk,
    topics: _Topics | None,
    x: int,
    y: int,
    most: int,
) -> tuple[TopicPartition, TopicPartition] | None:
    """(a on x, b on y) with 0 < size(a) - size(b) <= most, the largest difference first."""
    if most <= 0:
        return None
    sizes = disk.sizes
    outgoing = sorted((tp for tp in state.on[x] if tp in movable), key=lambda tp: (-sizes[tp], tp))
    back = sorted((tp for tp in state.on[y] if tp in movable), key=lambda tp: (sizes[tp], tp))
    back_sizes = [sizes[tp] for tp in back]
    if not back_sizes:
        return None
    best: tuple[int, TopicPartition, TopicPartition] | None = None
    for a in outgoing:
        if best is not None and sizes[a] - back_sizes[0] <= best[0]:
            break  # lighter ones cannot beat it
        if not state.legal(a, x, y, capacity=False):
            continue
        # The lightest b that keeps the difference within `most` gives the largest difference.
        j = bisect.bisect_left(back_sizes, sizes[a] - most)
        while j < len(back) and back_sizes[j] < sizes[a]:
            b = back[j]
            j += 1
            if topics is not None and not topics.swap_ok(a.topic, b.topic, x, y):
                continue
            if state.legal(b, y, x, capacity=False):
                delta = sizes[a] - sizes[b]
                if best is None or delta > best[0]:
                    best = (delta, a, b)
                break
    return None if best is None else (best[1], best[2])
