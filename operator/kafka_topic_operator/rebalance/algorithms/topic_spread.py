"""TopicReplicaDistribution on the driver (pure): each topic's replicas per broker into its band
(`goals.topic_band`) by swaps, the same for every engine and fast enough for millions of
replicas.

A swap moves a replica of topic t from broker x to y and one of another topic u from y to x, so
no broker's replica count changes. It is taken only if no topic count leaves its band or goes
further out (x may give t and take u, y may take t and give u) and one of them comes nearer
(t above its band on x or below it on y). Both legs keep the hard goals: never a broker twice in
a partition, never a rack over its share, excluded topics never moved, and in add-brokers mode
only the brokers being added swap. When DiskUsageDistribution came first, neither broker's bytes
may leave the disk band or go further out.

Each count outside its band is brought in, one swap at a time, trying every broker to pair with,
every replica of the topic there and every topic that may go back, followers before leaders (a
swap keeps a replica's position), the topics that gain by going back first. The sweeps repeat
until a whole sweep swaps nothing: then no single legal swap brings any count nearer its band.
Counts live in a brokers x topics array, so finding what may go back is a few vector operations;
the replicas of each topic on each broker are indexed, so finding what may leave is a lookup.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import disk_load_ok
from kafka_topic_operator.rebalance.algorithms.model import max_per_rack
from kafka_topic_operator.rebalance.spark.planner import RoundReport

Assignment = Mapping[TopicPartition, Sequence[int]]
Counts = npt.NDArray[np.int32]


@dataclass(frozen=True)
class Spread:
    assignment: dict[TopicPartition, tuple[int, ...]]
    report: RoundReport  # surplus: replicas outside their bands before; moved: brought in
    unbalanced: str | None
    swaps: int


def spread_topics(
    assignment: Assignment,
    brokers: Sequence[int],
    *,
    racks: Mapping[int, str | None] | None = None,
    fixed: frozenset[TopicPartition] = frozenset(),
    receivers: Sequence[int] | None = None,
    sizes: Mapping[TopicPartition, int] | None = None,
) -> Spread:
    """Swaps until every topic is within its band or no legal swap brings a count nearer it.
    `sizes` guards DiskUsageDistribution, planned before."""
    began = time.perf_counter()
    board = _Board(assignment, brokers, racks or {}, fixed, receivers, sizes)
    outside = board.outside()
    swaps = 0
    swapped = True
    while swapped:
        swapped = False
        for t, b, above in board.off_cells():
            while board.off(t, b) and board.fix(t, b, above):
                swaps += 1
                swapped = True
    report = RoundReport(0, outside, outside - board.outside(), time.perf_counter() - began)
    return Spread(board.assignment(), report, board.unbalanced(), swaps)


class _Board:
    """The partitions' replica lists, each topic's count on each eligible broker (`counts`,
    brokers x topics) with the topics' bands, and which replicas each topic has on each
    broker."""

    def __init__(self, assignment: Assignment, brokers: Sequence[int],
                 racks: Mapping[int, str | None],
                 fixed: frozenset[TopicPartition], receivers: Sequence[int] | None,
                 sizes: Mapping[TopicPartition, int] | None) -> None:  # fmt: skip
        self.brokers = sorted(brokers)
        self.index = {b: i for i, b in enumerate(self.brokers)}
        self.names = sorted({tp.topic for tp in assignment})
        topic_index = {name: i for i, name in enumerate(self.names)}
        self.partitions = sorted(assignment)
        self.members = [list(assignment[tp]) for tp in self.partitions]
        self.topic = [topic_index[tp.topic] for tp in self.partitions]
        self.movable = [tp not in fixed for tp in self.partitions]
        n, topics = len(self.brokers), len(self.names)
        self.n = n
        # (topic * n + broker index) -> the partitions of the topic on the broker.
        self.cells: dict[int, list[int]] = {}
        held_by, held_of = [], []
        for p, replicas in enumerate(self.members):
            t = self.topic[p]
            for broker in replicas:
                i = self.index.get(broker)
                if i is not None:
                    self.cells.setdefault(t * n + i, []).append(p)
                    held_by.append(i)
                    held_of.append(t)
        self.counts: Counts = np.zeros((n, topics), dtype=np.int32)
        at = (np.array(held_by, dtype=np.intp), np.array(held_of, dtype=np.intp))
        np.add.at(self.counts, at, 1)
        totals = self.counts.sum(axis=0)
        self.low = (totals // n).astype(np.int32)
        self.high = (self.low + (totals % n > 0)).astype(np.int32)
        swapping = set(self.brokers) if receivers is None else set(receivers) & set(self.brokers)
        self.swapping = [self.index[b] for b in sorted(swapping)]
        self.swaps = set(self.swapping)
        self.racks = racks
        # Racks count only when every broker involved has one, as Kafka's assignment has it.
        involved = set(self.brokers).union(*self.members)
        racked = bool(racks) and all(racks.get(b) is not None for b in involved)
        self.rack_count = len({racks[b] for b in self.brokers}) if racked else 0
        self.sizes = None if sizes is None else [sizes[tp] for tp in self.partitions]
        self.loads: list[int] = [0] * n
        if self.sizes is not None:
            for p, replicas in enumerate(self.members):
                for broker in replicas:
                    if broker in self.index:
                        self.loads[self.index[broker]] += self.sizes[p]
        self.total = sum(self.loads)

    # What is outside the bands

    def _misses(self) -> Counts:
        over = np.maximum(self.counts - self.high, 0)
        under = np.maximum(self.low - self.counts, 0)
        return np.asarray(over + under, dtype=np.int32)

    def outside(self) -> int:
        return int(self._misses().sum())

    def off_cells(self) -> list[tuple[int, int, bool]]:
        """(topic, broker index, above the band) of every count outside its band, by topic."""
        above = self.counts > self.high
        below = self.counts < self.low
        cells = [(int(t), int(b), True) for b, t in zip(*np.nonzero(above), strict=True)]
        cells += [(int(t), int(b), False) for b, t in zip(*np.nonzero(below), strict=True)]
        return sorted(cells)

    def off(self, t: int, b: int) -> bool:
        count = self.counts[b, t]
        return bool(count > self.high[t] or count < self.low[t])

    def unbalanced(self) -> str | None:
        cells = self.off_cells()
        if not cells:
            return None
        shown = ", ".join(
            f"{self.names[t]} has {self.counts[b, t]} on broker {self.brokers[b]} "
            f"(band {_band_text(int(self.low[t]), int(self.high[t]))})"
            for t, b, _ in cells[:3]
        )
        more = " ..." if len(cells) > 3 else ""
        return (
            f"topic replica counts outside their bands in {len(cells)} places ({shown}{more}): "
            "no legal swap brings them in"
        )

    # Swaps

    def fix(self, t: int, b: int, above: bool) -> bool:
        """One swap bringing topic t's count on broker b nearer its band, if any is legal."""
        column = self.counts[:, t]
        if above:  # b gives t to a broker with room, those below the band first
            partners = [y for y in self.swapping if y != b and column[y] < self.high[t]]
            partners.sort(key=lambda y: (column[y] >= self.low[t], (y - b - t) % self.n))
            return any(self._swap(t, b, y) for y in partners)
        partners = [x for x in self.swapping if x != b and column[x] > self.low[t]]
        partners.sort(key=lambda x: (column[x] <= self.high[t], (x - b - t) % self.n))
        return any(self._swap(t, x, b) for x in partners)

    def _swap(self, t: int, x: int, y: int) -> bool:
        """A replica of t from x to y and one of another topic back, if some pair is legal."""
        if x not in self.swaps or y not in self.swaps:
            return False
        outgoing = self._leaving(t, x, y)
        if not outgoing:
            return False
        for u in self._returning(t, x, y):
            for b in self._leaving(u, y, x):
                for a in outgoing:
                    if self._disk_ok(a, b, x, y):
                        self._apply(a, t, x, y)
                        self._apply(b, u, y, x)
                        return True
        return False

    def _returning(self, t: int, x: int, y: int) -> Iterator[int]:
        """Topics other than t that y may give and x take, those that gain by it first, each
        group from t on (so that the same topics are not always the ones sent back)."""
        on_x, on_y = self.counts[x], self.counts[y]
        may = (on_y > self.low) & (on_x < self.high)
        may[t] = False
        gains = may & ((on_y > self.high) | (on_x < self.low))
        for group in (gains, may & ~gains):
            found = np.flatnonzero(group)
            start = int(np.searchsorted(found, t))
            for u in np.concatenate((found[start:], found[:start])):
                yield int(u)

    def _leaving(self, t: int, x: int, y: int) -> list[int]:
        """The movable partitions of t on x that may move to y, followers first."""
        donor, receiver = self.brokers[x], self.brokers[y]
        found = [
            p for p in self.cells.get(t * self.n + x, ())
            if self.movable[p] and self._legal(p, donor, receiver)
        ]  # fmt: skip
        found.sort(key=lambda p: (self.members[p][0] == donor, p))
        return found

    def _legal(self, p: int, donor: int, receiver: int) -> bool:
        replicas = self.members[p]
        if receiver in replicas:
            return False
        if self.rack_count:
            rack = self.racks.get(receiver)
            others = sum(1 for b in replicas if b != donor and self.racks.get(b) == rack)
            if others + 1 > max_per_rack(len(replicas), self.rack_count):
                return False
        return True

    def _disk_ok(self, a: int, b: int, x: int, y: int) -> bool:
        if self.sizes is None:
            return True
        delta = self.sizes[a] - self.sizes[b]
        return disk_load_ok(self.loads[x], -delta, self.total, self.n) and disk_load_ok(
            self.loads[y], delta, self.total, self.n
        )

    def _apply(self, p: int, t: int, x: int, y: int) -> None:
        donor, receiver = self.brokers[x], self.brokers[y]
        replicas = self.members[p]
        replicas[replicas.index(donor)] = receiver  # the receiver takes the donor's position
        self.cells[t * self.n + x].remove(p)
        self.cells.setdefault(t * self.n + y, []).append(p)
        self.counts[x, t] -= 1
        self.counts[y, t] += 1
        if self.sizes is not None:
            self.loads[x] -= self.sizes[p]
            self.loads[y] += self.sizes[p]

    def assignment(self) -> dict[TopicPartition, tuple[int, ...]]:
        return {tp: tuple(r) for tp, r in zip(self.partitions, self.members, strict=True)}


def _band_text(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"
