"""DiskUsageDistribution as Spark DataFrame operations (its rules are in goals.py;
`reference_swaps` does the same one swap at a time; TopicReplicaDistribution is planned on the
driver by `topic_spread`, which this guards when it came first).

A swap (x, y, a, b) moves replica a from broker x to y and replica b from y to x, so no broker's
replica count changes. Each round proposes many swaps at once, then keeps those that are legal
(never a broker twice in a partition, never a rack over its share), leaves every partition at most
one swap, and keeps each topic's count per broker within what the round may spend of it (what
lies between the count and the band's far edge), so that swaps accepted together never take a
count out of its band. Only per-broker figures reach the driver: bytes per broker, never the
replica table.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kafka_topic_operator.rebalance.algorithms.goals import (
    DISK_TOLERANCE,
    disk_amounts,
    disk_balanced,
    disk_unbalanced,
)
from kafka_topic_operator.rebalance.spark.planner import (
    REPLICA_COLUMNS,
    RoundReport,
    SparkPlan,
    movable_replicas,
    quotas,
    rack_legal_pairs,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# A swap's identity: its two replicas.
IDENT = ("a_topic", "a_partition", "a_position", "b_topic", "b_partition", "b_position")
# Rounds that accept nothing, each pairing replicas differently, before a goal gives up.
IDLE_ROUNDS = 2
# Ranks either side a disk route pairs a replica with (four times as many after an idle round).
DISK_WIDTH = 8


def plan_disk_usage(
    spark: SparkSession,
    replicas: DataFrame,
    brokers: Sequence[int],
    sizes: DataFrame,
    *,
    racks: Mapping[int, str] | None = None,
    excluded: str | None = None,
    receivers: Sequence[int] | None = None,
    guard_topics: bool = False,
    max_rounds: int = 64,
    progress: Any = None,
) -> SparkPlan:
    """Bytes per broker into the band around the mean (`goals.DISK_TOLERANCE`) by swapping a
    heavier replica of a broker above the mean for a lighter one of a broker below it. What
    brokers must give and take (`goals.disk_amounts`) meet in routes (donor, receiver, quota),
    as replica surpluses do in `plan_counts`; a route's swaps together move at most its quota,
    so that no broker crosses the mean. With `guard_topics`, TopicReplicaDistribution came
    first."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    current = replicas.select(*REPLICA_COLUMNS).cache()
    plan = SparkPlan(current)
    swapping = set(receivers if receivers is not None else brokers) & set(brokers)
    idle = 0
    for round_number in range(max_rounds):
        began = time.perf_counter()
        loads = _loads(current, sizes, brokers)
        if disk_balanced(loads, brokers):
            break
        excess, deficit = disk_amounts(loads, brokers, swapping)
        routes = disk_routes(loads, brokers, excess, deficit, wide=idle > 0)
        width = DISK_WIDTH * 4**idle
        counts = _topic_counts(spark, current, brokers).cache() if guard_topics else None
        swaps = _disk_swaps(spark, current, sizes, routes, round_number, width, excluded, counts)
        swaps = _cut(_legal(spark, swaps, current, racks, brokers))
        if counts is not None:
            swaps = _cut(_within_topic_bands(swaps, counts))
            counts.unpersist()
        swaps = _one_each(swaps, [("p", "a_topic", "a_partition"), ("p", "b_topic", "b_partition")])
        # A route's swaps, the largest first, until they reach its quota, within its limit.
        by_route = (
            Window.partitionBy("x", "y")
            .orderBy(F.desc("delta"), *IDENT)
            .rowsBetween(Window.unboundedPreceding, Window.currentRow)
        )
        swaps = (
            swaps.withColumn("moved", F.sum("delta").over(by_route))
            .where((F.col("moved") - F.col("delta") < F.col("quota"))
                   & (F.col("moved") <= F.col("limit")))
            .cache()
        )  # fmt: skip
        summed = swaps.agg(F.count("*"), F.sum("delta")).first()
        swapped, shifted = (int(summed[0]), int(summed[1] or 0)) if summed is not None else (0, 0)
        if swapped:
            current = _apply(current, swaps)
        swaps.unpersist()
        report = RoundReport(round_number, sum(excess.values()), shifted,
                             time.perf_counter() - began, unit="bytes")  # fmt: skip
        plan.rounds.append(report)
        if progress is not None:
            progress(report)
        idle = 0 if swapped else idle + 1
        if idle >= IDLE_ROUNDS:
            plan.unbalanced = disk_unbalanced(loads, brokers)
            break
    else:
        plan.unbalanced = (
            f"bytes per broker still beyond {DISK_TOLERANCE:.0%} of the mean after "
            f"{max_rounds} rounds"
        )
    plan.replicas = current
    return plan


# Topic counts


def _topic_counts(spark: SparkSession, current: DataFrame, brokers: Sequence[int]) -> DataFrame:
    """(topic, broker, c, low, high): every topic's replica count on every eligible broker
    (zeros too) and the topic's band."""
    from pyspark.sql import functions as F

    eligible = spark.createDataFrame([(b,) for b in sorted(brokers)], "broker int")
    placed = current.join(F.broadcast(eligible), "broker")
    n = len(brokers)
    bands = (
        placed.groupBy("topic")
        .agg(F.count("*").alias("total"))
        .withColumn("low", F.floor(F.col("total") / n).cast("int"))
        .withColumn("high", F.ceil(F.col("total") / n).cast("int"))
        .drop("total")
    )
    held = placed.groupBy("topic", "broker").agg(F.count("*").cast("int").alias("c"))
    return (
        bands.crossJoin(F.broadcast(eligible))
        .join(held, ["topic", "broker"], "left")
        .fillna(0, ["c"])
    )


def _within_topic_bands(swaps: DataFrame, counts: DataFrame) -> DataFrame:
    """Swaps whose topic moves, together with the others accepted, keep every topic's count on
    every broker within its band (or no further out): a (topic, broker) gives at most c - low
    and takes at most high - c in a round. A swap within one topic changes no count."""
    from pyspark.sql import functions as F

    moving = swaps.where(F.col("a_topic") != F.col("b_topic"))
    legs = (
        moving.select(*IDENT, "priority", F.col("a_topic").alias("topic"),
                      F.col("x").alias("broker"), F.lit(-1).alias("d"))
        .unionByName(moving.select(*IDENT, "priority", F.col("a_topic").alias("topic"),
                                   F.col("y").alias("broker"), F.lit(1).alias("d")))
        .unionByName(moving.select(*IDENT, "priority", F.col("b_topic").alias("topic"),
                                   F.col("y").alias("broker"), F.lit(-1).alias("d")))
        .unionByName(moving.select(*IDENT, "priority", F.col("b_topic").alias("topic"),
                                   F.col("x").alias("broker"), F.lit(1).alias("d")))
        .join(counts, ["topic", "broker"])
        .withColumn("cap", F.when(F.col("d") < 0, F.col("c") - F.col("low"))
                    .otherwise(F.col("high") - F.col("c")))
        .withColumn("key", F.concat_ws("|", F.col("topic"), F.col("broker"), F.col("d")))
    )  # fmt: skip
    return _limited(swaps, legs)


# Disk


def bytes_per_broker(replicas: DataFrame, sizes: DataFrame) -> dict[int, int]:
    """The bytes each broker's replicas hold, `sizes` being (topic, partition, size): the only
    figures that reach the driver."""
    from pyspark.sql import functions as F

    held = replicas.select("topic", "partition", "broker").join(sizes, ["topic", "partition"])
    totals = held.groupBy("broker").agg(F.sum("size").alias("bytes")).collect()
    return {row["broker"]: int(row["bytes"]) for row in totals}


def _loads(current: DataFrame, sizes: DataFrame, brokers: Sequence[int]) -> dict[int, int]:
    """Bytes per eligible broker (a drained broker's do not count)."""
    held = bytes_per_broker(current, sizes)
    return {b: held.get(b, 0) for b in brokers}


def disk_routes(
    loads: Mapping[int, int],
    brokers: Sequence[int],
    give: Mapping[int, int],
    take: Mapping[int, int],
    *,
    wide: bool = False,
) -> list[tuple[int, int, int, int]]:
    """(x, y, quota, limit) of each route (pure). One partner per broker, the largest amounts
    together: a broker's bytes through one route take fewer, larger swaps than spread over
    several; `wide` (after a round that found nothing), the amounts meet as replica surpluses
    do in `quotas`, each broker with several partners. A route may go past its quota, up to
    its limit, by its share of what lies between its brokers' amounts and the mean, so that a
    swap a little larger than the quota still fits while no broker crosses the mean."""
    mean = sum(loads[b] for b in brokers) / len(brokers)
    if wide:
        routes = quotas(give, take)
    else:
        donors = sorted(give, key=lambda b: (-give[b], b))
        takers = sorted(take, key=lambda b: (-take[b], b))
        routes = [(x, y, min(give[x], take[y])) for x, y in zip(donors, takers, strict=False)]
    out_of = {x: sum(1 for r in routes if r[0] == x) for x in give}
    into = {y: sum(1 for r in routes if r[1] == y) for y in take}
    out = []
    for x, y, quota in routes:
        x_slack = (math.floor(loads[x] - mean) - give[x]) // out_of[x]
        y_slack = (math.floor(mean - loads[y]) - take[y]) // into[y]
        out.append((x, y, quota, quota + max(0, min(x_slack, y_slack))))
    return out


def _disk_swaps(spark: SparkSession, current: DataFrame, sizes: DataFrame,
                routes: list[tuple[int, int, int, int]], round_number: int, width: int,
                excluded: str | None, counts: DataFrame | None) -> DataFrame:  # fmt: skip
    """Candidate swaps along each route (x, y, quota, limit): x's replicas that y does not
    hold, the heaviest first, meet y's that x does not hold, the lightest first, rank against
    rank (and up to `width` ranks either side); the differences so run from the largest down,
    through about every size a quota may want. Only swaps within the limit, and with `counts`
    (TopicReplicaDistribution came first) only those each of whose topic moves its band allows
    alone (what swaps together allow is `_within_topic_bands`'s)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    table = spark.createDataFrame(routes, "x int, y int, quota long, limit long")
    movable = movable_replicas(current, excluded).join(sizes, ["topic", "partition"])
    held = current.select("topic", "partition", F.col("broker").alias("holder"))
    salt = F.xxhash64("topic", "partition", F.lit(round_number))

    def side(broker: str, other: str, heaviest: bool) -> DataFrame:
        order = F.desc("size") if heaviest else F.asc("size")
        rank = Window.partitionBy("x", "y").orderBy(order, salt, "topic", "partition")
        out = (
            movable.withColumnRenamed("broker", broker)
            .join(F.broadcast(table), broker)
            .join(held.withColumnRenamed("holder", other), ["topic", "partition", other],
                  "left_anti")
            .withColumn("i", F.row_number().over(rank))
        )  # fmt: skip
        if counts is None:
            return out.withColumn("bands", F.lit(True))
        # The topic may leave `broker` (count above the band's floor) and join `other`.
        leaves = counts.select(
            "topic", F.col("broker").alias(broker), (F.col("c") > F.col("low")).alias("leaves")
        )
        joins = counts.select(
            "topic", F.col("broker").alias(other), (F.col("c") < F.col("high")).alias("joins")
        )
        return (
            out.join(leaves, ["topic", broker]).join(joins, ["topic", other])
            .withColumn("bands", F.col("leaves") & F.col("joins")).drop("leaves", "joins")
        )  # fmt: skip

    a_side = side("x", "y", heaviest=True).select(
        F.col("topic").alias("a_topic"), F.col("partition").alias("a_partition"),
        F.col("position").alias("a_position"), F.col("size").alias("a_size"), "x", "y", "quota",
        "limit", F.col("bands").alias("a_bands"),
        F.explode(F.sequence(F.col("i") - width, F.col("i") + width)).alias("i"),
    )  # fmt: skip
    b_side = side("y", "x", heaviest=False).select(
        F.col("topic").alias("b_topic"), F.col("partition").alias("b_partition"),
        F.col("position").alias("b_position"), F.col("size").alias("b_size"), "x", "y", "i",
        F.col("bands").alias("b_bands"),
    )  # fmt: skip
    # Each replica of x keeps its partner moving the most bytes, then each replica of y its
    # suitor moving the most: a greedy matching, so that overlapping pairs do not all lose.
    best_b = Window.partitionBy("x", "y", "a_topic", "a_partition").orderBy(
        F.desc("delta"), "b_topic", "b_partition"
    )
    best_a = Window.partitionBy("x", "y", "b_topic", "b_partition").orderBy(
        F.desc("delta"), "a_topic", "a_partition"
    )
    return (
        a_side.join(b_side, ["x", "y", "i"])
        .withColumn("delta", F.col("a_size") - F.col("b_size"))
        .where((F.col("delta") > 0) & (F.col("delta") <= F.col("limit")))
        .where((F.col("a_topic") == F.col("b_topic")) | (F.col("a_bands") & F.col("b_bands")))
        .withColumn("n", F.row_number().over(best_b)).where(F.col("n") == 1)
        .withColumn("n", F.row_number().over(best_a)).where(F.col("n") == 1)
        .withColumn("priority", -F.col("delta"))
        .drop("i", "n", "a_size", "b_size", "a_bands", "b_bands")
    )  # fmt: skip


# Shared


def _cut(frame: DataFrame) -> DataFrame:
    """The candidates computed once: each step below reads them several times, and without a
    cut their plan would be copied into every read, multiplying at each step."""
    return frame.localCheckpoint()


def _legal(spark: SparkSession, swaps: DataFrame, current: DataFrame,
           racks: Mapping[int, str] | None, brokers: Sequence[int]) -> DataFrame:  # fmt: skip
    """Swaps both of whose legs are legal: the receiver does not hold the partition, and its
    rack may take one more replica of it (the leaving replica's place freed)."""
    from pyspark.sql import functions as F

    held = current.select("topic", "partition", F.col("broker").alias("holder"))
    legs = (("a_topic", "a_partition", "x", "y"), ("b_topic", "b_partition", "y", "x"))
    for topic, partition, _donor, receiver in legs:
        swaps = swaps.join(
            held.withColumnRenamed("topic", topic).withColumnRenamed("partition", partition)
            .withColumnRenamed("holder", receiver),
            [topic, partition, receiver], "left_anti",
        )  # fmt: skip
    if racks:
        rack_table = spark.createDataFrame(sorted(racks.items()), "broker int, rack string")
        eligible_racks = len({racks[b] for b in brokers if b in racks})
        for topic, partition, donor, receiver in legs:
            leg = swaps.select(
                *IDENT, F.col(topic).alias("topic"), F.col(partition).alias("partition"),
                F.col(donor).alias("broker"), F.col(receiver).alias("receiver"),
            )  # fmt: skip
            ok = rack_legal_pairs(leg, current, rack_table, eligible_racks).select(*IDENT)
            swaps = swaps.join(ok, list(IDENT), "left_semi")
    return swaps


def _one_each(swaps: DataFrame, keys: Sequence[tuple[str, ...]]) -> DataFrame:
    """At most one swap per key (a tag and columns, e.g. a partition): of the swaps sharing
    one, the first by priority stays."""
    from pyspark.sql import functions as F

    legs = None
    for tag, *columns in keys:
        leg = swaps.select(*IDENT, "priority", F.lit(1).alias("cap"),
                           F.concat_ws("|", F.lit(tag), *columns).alias("key"))  # fmt: skip
        legs = leg if legs is None else legs.unionByName(leg)
    return swaps if legs is None else _limited(swaps, legs)


def _limited(swaps: DataFrame, legs: DataFrame) -> DataFrame:
    """Drops every swap holding a key beyond the key's `cap` (by priority): what is dropped now
    may be proposed again next round."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    order = Window.partitionBy("key").orderBy("priority", *IDENT)
    over = (
        legs.withColumn("rank", F.row_number().over(order))
        .where(F.col("rank") > F.col("cap"))
        .select(*IDENT)
        .distinct()
    )
    return swaps.join(over, list(IDENT), "left_anti")


def _apply(current: DataFrame, swaps: DataFrame) -> DataFrame:
    """The replica table with both legs of every swap done (each replica keeps its position)."""
    from pyspark.sql import functions as F

    moves = swaps.select(
        F.col("a_topic").alias("topic"), F.col("a_partition").alias("partition"),
        F.col("a_position").alias("position"), F.col("y").alias("new_broker"),
    ).unionByName(swaps.select(
        F.col("b_topic").alias("topic"), F.col("b_partition").alias("partition"),
        F.col("b_position").alias("position"), F.col("x").alias("new_broker"),
    ))  # fmt: skip
    updated = (
        current.join(moves, ["topic", "partition", "position"], "left")
        .select("topic", "partition", "position",
                F.coalesce("new_broker", "broker").alias("broker"))
        .localCheckpoint()
    )  # fmt: skip
    current.unpersist()
    return updated.cache()
