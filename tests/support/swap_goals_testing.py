"""Shared by the swap goals' tests: the goals' figures computed independently of the planners,
and grown clusters with partition sizes."""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import TOPIC_REPLICA_DISTRIBUTION as TOPICS
from kafka_topic_operator.rebalance.algorithms.goals import (
    disk_balanced,
    disk_band,
    disk_load_ok,
    topic_band,
)
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, max_per_rack
from kto_dev.yardsticks.samples import grown_cluster

Assignment = Mapping[TopicPartition, tuple[int, ...]]
Sizes = Mapping[TopicPartition, int]


def loads(assignment: Assignment, sizes: Sizes, brokers: tuple[int, ...]) -> Counter[int]:
    held = Counter({b: 0 for b in brokers})
    for tp, replicas in assignment.items():
        held.update({b: sizes[tp] for b in replicas if b in held})
    return held


def topic_misses(assignment: Assignment, brokers: tuple[int, ...]) -> dict[tuple[str, int], int]:
    """How far each topic's count on each broker is outside the topic's band."""
    counts: dict[str, Counter[int]] = {}
    for tp, replicas in assignment.items():
        counts.setdefault(tp.topic, Counter()).update(b for b in replicas if b in brokers)
    out = {}
    for topic, held in counts.items():
        low, high = topic_band(held.total(), len(brokers))
        out.update({(topic, b): max(held[b] - high, low - held[b], 0) for b in brokers})
    return out


def rack_legal(model: ClusterModel, replicas: tuple[int, ...], brokers: tuple[int, ...]) -> bool:
    racks = len({model.rack_of(b) for b in brokers})
    per_rack = Counter(model.rack_of(b) for b in replicas)
    return max(per_rack.values()) <= max_per_rack(len(replicas), racks)


def met(goal: str, assignment: Assignment, sizes: Sizes, brokers: tuple[int, ...]) -> bool:
    if goal == TOPICS:
        return not any(topic_misses(assignment, brokers).values())
    return disk_balanced(loads(assignment, sizes, brokers), brokers)


def topic_counts(assignment: Assignment, brokers: tuple[int, ...]) -> dict[str, Counter[int]]:
    counts: dict[str, Counter[int]] = {}
    for tp, replicas in assignment.items():
        counts.setdefault(tp.topic, Counter()).update(b for b in replicas if b in brokers)
    return counts


def no_further(goal: str, found: Assignment, now: Assignment, sizes: Sizes,
               brokers: tuple[int, ...]) -> bool:  # fmt: skip
    """Whether nothing is further from the goal's band in `now` than in `found`: each topic's
    count on each broker between the band and where it was (never further out, never past the
    band's other edge); no broker's bytes out of the band unless nearer the mean than they
    were."""
    if goal == TOPICS:
        before, after = topic_counts(found, brokers), topic_counts(now, brokers)
        for topic, held in before.items():
            low, high = topic_band(held.total(), len(brokers))
            for b in brokers:
                if not min(held[b], low) <= after[topic][b] <= max(held[b], high):
                    return False
        return True
    old, new = loads(found, sizes, brokers), loads(now, sizes, brokers)
    total = sum(old.values())
    return all(disk_load_ok(old[b], new[b] - old[b], total, len(brokers)) for b in brokers)


def grown_with_sizes(seed: int) -> tuple[ClusterModel, tuple[int, ...], dict[TopicPartition, int]]:
    old, new = ((5, 1), (6, 2), (9, 3), (12, 4))[seed % 4]
    model, brokers = grown_cluster(seed, old, new, topics=(3, 10), partitions=(1, 20))
    rng = random.Random(seed)
    sizes = {tp: int(rng.lognormvariate(20, 0.7)) for tp in sorted(model.assignment)}
    return model, brokers, sizes


def to_frame(spark: Any, assignment: Assignment) -> Any:
    rows = [(tp.topic, tp.partition, i, b) for tp, replicas in sorted(assignment.items())
            for i, b in enumerate(replicas)]  # fmt: skip
    return spark.createDataFrame(rows, "topic string, partition int, position int, broker int")


def from_frame(frame: Any) -> dict[TopicPartition, tuple[int, ...]]:
    by_partition: dict[TopicPartition, dict[int, int]] = {}
    for row in frame.collect():
        tp = TopicPartition(row.topic, row.partition)
        by_partition.setdefault(tp, {})[row.position] = row.broker
    return {tp: tuple(p[i] for i in sorted(p)) for tp, p in by_partition.items()}


def one_swap_away(
    model: ClusterModel,
    after: Assignment,
    brokers: tuple[int, ...],
    excluded: str | None,
    swapping: tuple[int, ...] | None = None,
) -> Iterator[Assignment]:
    """Every assignment one legal swap away (brute force): replica a from x to y and b from y
    to x (both of `swapping`, else of `brokers`), of topics not excluded, each receiver new to
    its partition, racks within their share."""
    movable = [tp for tp in after if excluded is None or not re.fullmatch(excluded, tp.topic)]
    for x, y in itertools.permutations(brokers if swapping is None else swapping, 2):
        on_x = [tp for tp in movable if x in after[tp] and y not in after[tp]]
        on_y = [tp for tp in movable if y in after[tp] and x not in after[tp]]
        for a, b in itertools.product(on_x, on_y):
            new_a = tuple(y if r == x else r for r in after[a])
            new_b = tuple(x if r == y else r for r in after[b])
            if model.racks and not (
                rack_legal(model, new_a, brokers) and rack_legal(model, new_b, brokers)
            ):
                continue
            yield {**after, a: new_a, b: new_b}


def helps(goal: str, earlier: tuple[str, ...], after: Assignment, option: Assignment,
          sizes: Sizes, brokers: tuple[int, ...]) -> bool:  # fmt: skip
    """Whether `option` is a step the goal takes: it breaks no earlier goal's band and narrows
    its own shortfall (topics: fewer replicas outside the bands, none further out; bytes: both
    brokers nearer the mean, neither crossing it, one of them outside the band)."""
    if not all(no_further(g, after, option, sizes, brokers) for g in earlier):
        return False
    if goal == TOPICS:
        before, now = topic_misses(after, brokers), topic_misses(option, brokers)
        return no_further(goal, after, option, sizes, brokers) and sum(now.values()) < sum(
            before.values()
        )
    old, new = loads(after, sizes, brokers), loads(option, sizes, brokers)
    moved = [b for b in brokers if new[b] != old[b]]
    mean = sum(old.values()) / len(brokers)
    low, high = disk_band(sum(old.values()), len(brokers))
    return (
        bool(moved)
        and all(abs(new[b] - mean) < abs(old[b] - mean) for b in moved)
        and all((old[b] - mean) * (new[b] - mean) >= 0 for b in moved)
        and any(not low <= old[b] <= high for b in moved)
    )
