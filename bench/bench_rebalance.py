"""Plan quality on grown clusters: topics placed by Kafka's own assignment (rack-unaware) on the
old brokers, then new brokers added empty, planned over all of them (the shape of the
reference page's 40 instances: 5+1, 6+2, 9+3 and 12+4 brokers, 5-25 topics of 1-30 partitions,
replication factor 3). Figures: our replica moves over the exact lower bound, and what
`kafka-reassign-partitions --generate` would move over ours, on the same clusters.

Scale: the Spark count planner on `local[2]` over 2.8 million replicas on 215 brokers (the size
of the Cruise Control run its issue tracker quotes at about 95 minutes, 18 in its fast mode):
933,334 partitions of replication factor 3 placed round-robin, as Kafka's assignment does, with
a per-topic shift, on 180 brokers, then 35 empty brokers added. Target: under 5 minutes, memory
under 8 GB. Printed per round, with the moves beside the exact lower bound.
"""

from __future__ import annotations

import statistics
import time

from kafka_topic_operator.kafka.assignment import default_random as seeded
from kafka_topic_operator.rebalance.generate import generate
from kafka_topic_operator.rebalance.model import ClusterModel, moves
from kafka_topic_operator.rebalance.reference_planner import PlanRequest, plan
from kafka_topic_operator.rebalance.samples import grown_cluster

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


def scale(partitions: int = 933_334, old: int = 180, new: int = 35) -> None:
    from pathlib import Path

    from pyspark.sql import functions as F

    from kafka_topic_operator.rebalance.bounds import move_lower_bound
    from kafka_topic_operator.rebalance.spark_planner import (
        REPLICA_COLUMNS,
        plan_counts,
        plan_leaders,
    )
    from kafka_topic_operator.rebalance.spark_session import local_session

    spark = local_session("kto-bench-rebalance", master="local[2]", driver_memory="6g")
    try:
        topic = (F.col("id") / 50).cast("int")
        replicas = (
            spark.range(partitions)
            .withColumn("topic", F.concat(F.lit("t"), topic.cast("string")))
            .withColumn("partition", (F.col("id") % 50).cast("int"))
            .withColumn("position", F.explode(F.array(F.lit(0), F.lit(1), F.lit(2))))
            .withColumn(
                "broker",
                ((F.col("id") + F.col("position") * (1 + topic % (old - 1))) % old).cast("int"),
            )
            .select(*REPLICA_COLUMNS)
            .cache()
        )
        total = replicas.count()
        counts = {r["broker"]: r["count"] for r in replicas.groupBy("broker").count().collect()}
        brokers = tuple(range(old + new))
        bound = move_lower_bound(counts, brokers)
        began = time.perf_counter()
        rounds: list[str] = []
        result = plan_counts(
            spark, replicas, brokers,
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
        jvm = spark.sparkContext._jvm  # the driver JVM: its peak resident memory
        pid = str(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getName())
        status = Path(f"/proc/{pid.split('@')[0]}/status").read_text()
        peak_kb = int(next(line.split()[1] for line in status.splitlines()
                           if line.startswith("VmHWM")))  # fmt: skip
    finally:
        spark.stop()
    print(
        f"rebalance scale, {total:,} replicas on {old + new} brokers ({new} added empty), Spark "
        f"local[2]: planned in {seconds:.1f} s (move rounds: {'; '.join(rounds)}; leader rounds: "
        f"{'; '.join(leader_rounds)}), {moved:,} moves = {moved / bound:.2f} x the lower bound "
        f"{bound:,}, leaders per broker {min(leader_counts)}-{max(leader_counts)}, driver JVM peak "
        f"{peak_kb / 1024 / 1024:.1f} GB; target < 300 s and < 8 GB; Cruise Control ~95 min "
        "(18 in its fast mode) quoted"
    )


if __name__ == "__main__":
    main()
    scale()
