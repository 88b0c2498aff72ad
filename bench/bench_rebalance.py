"""Plan quality on grown clusters: topics placed by Kafka's own assignment (rack-unaware) on the
old brokers, then new brokers added empty, planned over all of them (the shape of the
reference page's 40 instances: 5+1, 6+2, 9+3 and 12+4 brokers, 5-25 topics of 1-30 partitions,
replication factor 3). Figures: our replica moves over the exact lower bound, and what
`kafka-reassign-partitions --generate` would move over ours, on the same clusters.

Swap goals: on the same 40 clusters, partition sizes drawn log-normally (seeded), the bytes per
broker before and after DiskUsageDistribution beside Cruise Control's band (within 9% of the
mean), and what the swaps cost beyond the count balance: replica moves and bytes copied; the
topic replicas outside their bands before and after TopicReplicaDistribution.

Scale: the Spark count planner on `local[2]` over 2.8 million replicas on 215 brokers (the size
of the Cruise Control run its issue tracker quotes at about 95 minutes, 18 in its fast mode):
933,334 partitions of replication factor 3 placed round-robin, as Kafka's assignment does, with
a per-topic shift, on 180 brokers, then 35 empty brokers added. Target: under 5 minutes, memory
under 8 GB. Printed per round, with the moves beside the exact lower bound.

Scale with racks: the same cluster on 5 racks (broker id mod 5, 43 brokers each), the first
placement rack-aware (no partition twice in a rack), planned under RackAware; the plan's rack
violations are counted (none allowed).

Scale of DiskUsageDistribution: the same cluster, balanced by count, then swapped until every
broker is within 9% of the mean bytes, partition sizes log-normal and skewed by broker.
TopicReplicaDistribution's first rounds on the same cluster: how much of what is off each round
evens out, and in how long.
"""

from __future__ import annotations

import resource
import statistics
import time
from typing import Any

from kafka_topic_operator.kafka.assignment import default_random as seeded
from kafka_topic_operator.rebalance.algorithms.generate import generate
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, moves
from kto_dev.yardsticks.reference_planner import PlanRequest, plan
from kto_dev.yardsticks.samples import grown_cluster

SHAPES = ((5, 1), (6, 2), (9, 3), (12, 4))
INSTANCES = 40


def instance(seed: int) -> tuple[ClusterModel, tuple[int, ...]]:
    old, new = SHAPES[seed % len(SHAPES)]
    return grown_cluster(seed, old, new)


def main() -> None:
    over_bound, generate_over_ours, moved_share, seconds = [], [], [], []
    for seed in range(INSTANCES):
        model, brokers = instance(seed)
        began = time.perf_counter()
        ours = plan(PlanRequest(model, brokers))
        seconds.append(time.perf_counter() - began)
        proposal = generate(model, brokers, rack_aware=False, rng=seeded(10_000 + seed))
        over_bound.append(ours.replica_moves / ours.replica_lower_bound)
        generated = moves(model.assignment, proposal)
        generate_over_ours.append(generated / ours.replica_moves)
        replicas = sum(len(r) for r in model.assignment.values())
        moved_share.append(generated / replicas)
    print(
        f"rebalance plan quality, {INSTANCES} grown clusters (reference planner): our moves / "
        f"lower bound mean {statistics.mean(over_bound):.2f} (max {max(over_bound):.2f}); "
        f"--generate moves / ours mean {statistics.mean(generate_over_ours):.2f} (it moves "
        f"{statistics.mean(moved_share):.0%} of all replicas); planning "
        f"{statistics.median(seconds) * 1000:.0f} ms median per cluster"
    )


def goals() -> None:
    import random

    from kafka_topic_operator.rebalance.algorithms.goals import DISK_TOLERANCE, topic_band
    from kafka_topic_operator.rebalance.results.summary import summarize

    worst_before, worst_after, within, moves_extra, bytes_extra = [], [], 0, [], []
    topics_before, topics_after, topic_moves_extra = 0, 0, []
    for seed in range(INSTANCES):
        model, brokers = instance(seed)
        rng = random.Random(seed)
        sizes = {tp: int(rng.lognormvariate(20, 0.7)) for tp in sorted(model.assignment)}
        counts = plan(PlanRequest(model, brokers))
        disk = plan(PlanRequest(model, brokers, swap_goals=("DiskUsageDistribution",), sizes=sizes))
        topics = plan(PlanRequest(model, brokers, swap_goals=("TopicReplicaDistribution",)))
        before_dev, after_dev = (_worst_deviation(a, sizes, brokers)
                                 for a in (counts.assignment, disk.assignment))  # fmt: skip
        worst_before.append(before_dev)
        worst_after.append(after_dev)
        within += after_dev <= DISK_TOLERANCE
        moves_extra.append(disk.replica_moves / counts.replica_moves - 1)
        copied = [summarize(model, a, brokers, sizes=sizes).data_to_move_bytes or 0
                  for a in (counts.assignment, disk.assignment)]  # fmt: skip
        bytes_extra.append(copied[1] / copied[0] - 1)
        topics_before += _off_bands(counts.assignment, brokers, topic_band)
        topics_after += _off_bands(topics.assignment, brokers, topic_band)
        topic_moves_extra.append(topics.replica_moves / counts.replica_moves - 1)
    print(
        f"rebalance swap goals, the same {INSTANCES} clusters with log-normal partition sizes "
        f"(reference planner): DiskUsageDistribution takes the worst broker from "
        f"{statistics.mean(worst_before):.0%} off the mean bytes (mean over clusters) to "
        f"{statistics.mean(worst_after):.1%}, within {DISK_TOLERANCE:.0%} in {within}/{INSTANCES} "
        f"(Cruise Control's band), for {statistics.mean(moves_extra):+.0%} replica moves and "
        f"{statistics.mean(bytes_extra):+.0%} bytes copied beyond the count balance; "
        f"TopicReplicaDistribution: topic replicas off their bands {topics_before} -> "
        f"{topics_after}, for {statistics.mean(topic_moves_extra):+.0%} replica moves"
    )


def _worst_deviation(assignment: Any, sizes: Any, brokers: tuple[int, ...]) -> float:
    held = dict.fromkeys(brokers, 0)
    for tp, replicas in assignment.items():
        for b in replicas:
            held[b] += sizes[tp]
    mean = sum(held.values()) / len(brokers)
    return max(abs(v - mean) for v in held.values()) / mean


def _off_bands(assignment: Any, brokers: tuple[int, ...], band: Any) -> int:
    counts: dict[str, dict[int, int]] = {}
    for tp, replicas in assignment.items():
        for b in replicas:
            counts.setdefault(tp.topic, dict.fromkeys(brokers, 0))[b] += 1
    off = 0
    for held in counts.values():
        low, high = band(sum(held.values()), len(brokers))
        off += sum(max(c - high, low - c, 0) for c in held.values())
    return off


def scale(partitions: int = 933_334, old: int = 180, new: int = 35, racks: int = 0) -> None:
    from pathlib import Path

    from kafka_topic_operator.rebalance.algorithms.bounds import move_lower_bound
    from kafka_topic_operator.rebalance.spark.planner import plan_counts, plan_leaders
    from kafka_topic_operator.rebalance.spark.session import local_session

    spark = local_session("kto-bench-rebalance", master="local[2]", driver_memory="6g")
    try:
        replicas = _grown_table(spark, partitions, old, racks).cache()
        total = replicas.count()
        counts = {r["broker"]: r["count"] for r in replicas.groupBy("broker").count().collect()}
        brokers = tuple(range(old + new))
        rack_of = {b: f"rack-{b % racks}" for b in brokers} if racks else None
        bound = move_lower_bound(counts, brokers)
        began = time.perf_counter()
        rounds: list[str] = []
        result = plan_counts(
            spark, replicas, brokers, racks=rack_of,
            progress=lambda r: rounds.append(f"{r.moved:,} in {r.seconds:.1f} s"),
        )  # fmt: skip
        leader_rounds: list[str] = []
        leaders = plan_leaders(
            spark, result.replicas, brokers,
            progress=lambda r: leader_rounds.append(f"{r.moved:,} in {r.seconds:.1f} s"),
        )  # fmt: skip
        seconds = time.perf_counter() - began
        led = leaders.replicas.where("position = 0").groupBy("broker").count().collect()
        leader_counts = [r["count"] for r in led] + [0] * (len(brokers) - len(led))
        before = replicas.withColumnRenamed("broker", "before")
        moved = (
            result.replicas.join(before, ["topic", "partition", "position"])
            .where("broker != before")
            .count()
        )
        violations = (
            _rack_violations(spark, replicas, rack_of),
            _rack_violations(spark, leaders.replicas, rack_of),
        )
        jvm = spark.sparkContext._jvm  # the driver JVM: its peak resident memory
        assert jvm is not None
        pid = str(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getName())
        status = Path(f"/proc/{pid.split('@')[0]}/status").read_text()
        peak_kb = int(next(line.split()[1] for line in status.splitlines()
                           if line.startswith("VmHWM")))  # fmt: skip
    finally:
        spark.stop()
    on_racks = (
        f" on {racks} racks (partitions with two replicas in one rack: {violations[0]:,} before, "
        f"{violations[1]:,} after)"
        if racks
        else ""
    )
    print(
        f"rebalance scale, {total:,} replicas on {old + new} brokers ({new} added empty)"
        f"{on_racks}, Spark local[2]: planned in {seconds:.1f} s (move rounds: "
        f"{'; '.join(rounds)}; leader rounds: {'; '.join(leader_rounds)}), {moved:,} moves = "
        f"{moved / bound:.2f} x the lower bound {bound:,}, leaders per broker "
        f"{min(leader_counts)}-{max(leader_counts)}, driver JVM peak "
        f"{peak_kb / 1024 / 1024:.1f} GB; target < 300 s and < 8 GB; Cruise Control ~95 min "
        "(18 in its fast mode) quoted"
    )


def _rack_violations(spark: Any, replicas: Any, racks: dict[int, str] | None) -> int:
    if not racks:
        return 0
    table = spark.createDataFrame(sorted(racks.items()), "broker int, rack string")
    per_rack = replicas.join(table, "broker").groupBy("topic", "partition", "rack").count()
    return int(per_rack.where("count > 1").count())


def _grown_table(spark: Any, partitions: int, old: int, racks: int) -> Any:
    """The scale cluster's replica table: 50 partitions a topic, each topic round-robin from
    its first partition's broker with its own shift, on brokers 0 to old - 1."""
    from pyspark.sql import functions as F

    from kafka_topic_operator.rebalance.spark.planner import REPLICA_COLUMNS

    topic = (F.col("id") / 50).cast("int")
    # With racks (broker id mod racks, old a multiple of racks), a shift that is no multiple
    # of the (prime) rack count puts a partition's three replicas in three racks.
    shift = (
        1 + racks * (topic % ((old - 2) // racks)) + topic % (racks - 1)
        if racks
        else 1 + topic % (old - 1)
    )
    return (
        spark.range(partitions)
        .withColumn("topic", F.concat(F.lit("t"), topic.cast("string")))
        .withColumn("partition", (F.col("id") % 50).cast("int"))
        .withColumn("position", F.explode(F.array(F.lit(0), F.lit(1), F.lit(2))))
        .withColumn("broker", ((F.col("id") + F.col("position") * shift) % old).cast("int"))
        .select(*REPLICA_COLUMNS)
    )


def scale_swaps(partitions: int = 933_334, old: int = 180, new: int = 35) -> None:
    """The swap goals after one count balance of the scale cluster, each to the end:
    DiskUsageDistribution on Spark, TopicReplicaDistribution on the driver (the replica lists
    collected there first, as the job holds them)."""
    from pyspark.sql import functions as F

    from kafka_topic_operator.rebalance.algorithms.goals import DISK_TOLERANCE
    from kafka_topic_operator.rebalance.algorithms.topic_spread import spread_topics
    from kafka_topic_operator.rebalance.spark.planner import plan_counts
    from kafka_topic_operator.rebalance.spark.session import local_session
    from kafka_topic_operator.rebalance.spark.swaps import bytes_per_broker, plan_disk_usage

    spark = local_session("kto-bench-rebalance", master="local[2]", driver_memory="6g")
    try:
        replicas = _grown_table(spark, partitions, old, 0).cache()
        # Log-normal sizes, three times larger for the partitions led by the first third of
        # the old brokers: bytes per broker far apart even where replica counts are even.
        size = F.exp(F.lit(20) + F.lit(0.7) * F.randn(7)) * F.when(
            F.col("broker") < old // 3, 3
        ).otherwise(1)
        sizes = (
            replicas.where("position = 0")
            .select("topic", "partition", size.cast("long").alias("size"))
            .cache()
        )
        sizes.count()
        brokers = tuple(range(old + new))
        counted = plan_counts(spark, replicas, brokers).replicas
        counted.count()
        began = time.perf_counter()
        disk_rounds: list[str] = []
        tib = 2**40
        disk = plan_disk_usage(
            spark, counted, brokers, sizes,
            progress=lambda r: disk_rounds.append(f"{r.moved / tib:.1f} TiB in {r.seconds:.1f} s"),
        )  # fmt: skip
        seconds = time.perf_counter() - began
        worst = [
            _worst_bytes(bytes_per_broker(t, sizes), brokers) for t in (counted, disk.replicas)
        ]
        placed = _lists(counted)
    finally:
        spark.stop()
    began = time.perf_counter()
    topics = spread_topics(placed, brokers)
    topic_seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB to GiB
    print(
        f"rebalance scale, DiskUsageDistribution after the count balance on the same "
        f"{partitions * 3:,} replicas with skewed log-normal sizes: {seconds:.1f} s (rounds: "
        f"{'; '.join(disk_rounds) or 'none'}), the worst broker {worst[0]:.0%} off the mean bytes "
        f"before, {worst[1]:.1%} after (band {DISK_TOLERANCE:.0%}); {disk.unbalanced or 'balanced'}"
    )
    print(
        f"rebalance scale, TopicReplicaDistribution after the same count balance, on the "
        f"driver: topic replicas off their bands {topics.report.surplus:,} -> "
        f"{_off_topics(topics.assignment, brokers):,} by {topics.swaps:,} swaps in "
        f"{topic_seconds:.1f} s, the bench process at most {peak:.1f} GiB "
        f"(target: under 5 minutes, under 8 GB); {topics.unbalanced or 'every topic in its band'}"
    )


def _lists(frame: Any) -> dict[Any, tuple[int, ...]]:
    """The replica table's lists on the driver."""
    from pyspark.sql import functions as F

    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    ordered = F.array_sort(F.collect_list(F.struct("position", "broker")))["broker"]
    rows = frame.groupBy("topic", "partition").agg(ordered.alias("r")).toLocalIterator()
    return {TopicPartition(row[0], row[1]): tuple(row[2]) for row in rows}


def _off_topics(assignment: dict[Any, tuple[int, ...]], brokers: tuple[int, ...]) -> int:
    from kafka_topic_operator.rebalance.algorithms.goals import topic_band

    return _off_bands(assignment, brokers, topic_band)


def _worst_bytes(held: dict[int, int], brokers: tuple[int, ...]) -> float:
    loads = [held.get(b, 0) for b in brokers]
    mean = sum(loads) / len(brokers)
    return max(abs(v - mean) for v in loads) / mean


if __name__ == "__main__":
    main()
    goals()
    scale()
    scale(racks=5)
    scale_swaps()
