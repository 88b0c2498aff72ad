"""Exact answers for tiny clusters by trying every assignment: the yardstick of the feasibility
check and of the exact planner."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Collection, Iterator, Mapping

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.model import Assignment, max_per_rack


def placements(
    rf: int, brokers: list[int], racks: Mapping[int, str], rack_count: int | None = None
) -> Iterator[tuple[int, ...]]:
    """Every set of `rf` of `brokers` no rack holds more of than its share (over `rack_count`
    racks, by default the racks of `brokers`)."""
    share = rf
    if racks:
        count = len({racks[b] for b in brokers}) if rack_count is None else rack_count
        share = max_per_rack(rf, count)
    for chosen in itertools.combinations(brokers, rf):
        if not racks or max(Counter(racks[b] for b in chosen).values()) <= share:
            yield chosen


def best_replicas(
    assignment: Assignment,
    brokers: Collection[int],
    racks: Mapping[int, str],
    fixed: Collection[TopicPartition] = (),
    receivers: Collection[int] | None = None,
    ceiling: int | None = None,
) -> tuple[int, int, int] | None:
    """(highest count, lowest count, moves) of the lexicographically best assignment: the
    lowest highest count, then the highest lowest, then the fewest moves; None when no
    assignment keeps the hard goals."""
    eligible = sorted(brokers)
    takers = set(eligible if receivers is None else receivers)
    rack_count = len({racks[b] for b in eligible}) if racks else 1
    pinned = Counter(b for tp in fixed for b in assignment[tp] if b in eligible)
    movable = sorted(tp for tp in assignment if tp not in set(fixed))
    options = []
    for tp in movable:
        now = assignment[tp]
        allowed = [b for b in eligible if b in takers or b in now]
        options.append([(c, len(set(c) - set(now)))
                        for c in placements(len(now), allowed, racks, rack_count)])  # fmt: skip
    best = None
    for choice in itertools.product(*options):
        counts = pinned + Counter(b for chosen, _ in choice for b in chosen)
        values = [counts[b] for b in eligible]
        if ceiling is not None and max(values) > ceiling:
            continue
        key = (max(values), -min(values), sum(m for _, m in choice))
        if best is None or key < best:
            best = key
    return None if best is None else (best[0], -best[1], best[2])


def best_leaders(
    before: Assignment,
    assignment: Assignment,
    brokers: Collection[int],
    fixed: Collection[TopicPartition] = (),
) -> tuple[int, int, int]:
    """(highest leader count, lowest, leadership changes against `before`) of the
    lexicographically best choice of leaders among each partition's replicas."""
    eligible = sorted(brokers)
    pinned = Counter(assignment[tp][0] for tp in fixed)
    movable = sorted(tp for tp in assignment if tp not in set(fixed))
    options = [[(b, int(b != before[tp][0])) for b in assignment[tp] if b in eligible]
               for tp in movable]  # fmt: skip
    best = None
    for choice in itertools.product(*options):
        counts = pinned + Counter(b for b, _ in choice)
        values = [counts[b] for b in eligible]
        key = (max(values), -min(values), sum(c for _, c in choice))
        if best is None or key < best:
            best = key
    assert best is not None
    return best[0], -best[1], best[2]
