"""The replica-count planner as Spark DataFrame operations, so that it scales out with executors.

The replica table (`topic`, `partition`, `position`, `broker`; position 0 is the preferred
leader) never reaches the driver: only per-broker counts do. Each round:

1. counts per broker give each broker its target (q, or q + 1 for the r fullest: the slots the
   lower bound gives away; 0 for a broker being drained), hence its surplus or deficit;
2. surpluses meet deficits in routes (donor, receiver, quota), worked out on the driver from the
   counts alone;
3. each route takes up to its quota of the donor's replicas whose partition the receiver does
   not hold (and, with racks, whose rack would not hold too many), followers first, each route
   ranking them by its own hash so that routes from one donor pick different replicas;
4. a replica moves once and a partition one replica per round; what a route could not fill is
   worked out again in the next round; when no route can move anything while a broker being
   drained still holds replicas, one round lets those go to any broker that legally takes
   them, over its target if need be (removal is required, even counts only a goal);
5. accepted moves rewrite the replicas' brokers in place (a moved replica keeps its position).

Every accepted move goes from a surplus to a deficit, so a plan that ends balanced has moved
exactly the lower bound (`bounds.move_lower_bound`) when nothing is being drained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafka_topic_operator.rebalance.algorithms.bounds import off_targets

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REPLICA_COLUMNS = ("topic", "partition", "position", "broker")


@dataclass(frozen=True)
class RoundReport:
    round: int
    surplus: int  # replicas still above their brokers' targets before the round
    moved: int
    seconds: float
    unit: str = "replicas"  # what surplus and moved count ("bytes" for disk balance)


@dataclass
class SparkPlan:
    replicas: DataFrame  # the replica table after the plan
    rounds: list[RoundReport] = field(default_factory=list)
    unbalanced: str | None = None


def _off_targets(
    frame: DataFrame, brokers: Sequence[int]
) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """(counts, surplus, deficit) per broker of the rows of `frame`: only these reach the
    driver, never the rows."""
    counts = {row["broker"]: row["count"] for row in frame.groupBy("broker").count().collect()}
    for b in brokers:
        counts.setdefault(b, 0)
    surplus, deficit = off_targets(counts, brokers)
    return counts, surplus, deficit


def quotas(surplus: Mapping[int, int], deficit: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """How many replicas each donor sends each receiver (pure): the largest surpluses meet the
    largest deficits, north-west corner style, so that each donor talks to few receivers."""
    donors = sorted(surplus.items(), key=lambda kv: (-kv[1], kv[0]))
    receivers = sorted(deficit.items(), key=lambda kv: (-kv[1], kv[0]))
    out = []
    i = j = 0
    left_d = donors[0][1] if donors else 0
    left_r = receivers[0][1] if receivers else 0
    while i < len(donors) and j < len(receivers):
        amount = min(left_d, left_r)
        out.append((donors[i][0], receivers[j][0], amount))
        left_d -= amount
        left_r -= amount
        if left_d == 0:
            i += 1
            left_d = donors[i][1] if i < len(donors) else 0
        if left_r == 0:
            j += 1
            left_r = receivers[j][1] if j < len(receivers) else 0
    return out


def plan_counts(
    spark: SparkSession,
    replicas: DataFrame,
    brokers: Sequence[int],
    *,
    racks: Mapping[int, str] | None = None,
    excluded: str | None = None,
    receivers: Sequence[int] | None = None,
    max_rounds: int = 64,
    progress: Any = None,
) -> SparkPlan:
    """Moves replicas until every broker of `brokers` holds its target count. Replicas of
    topics whose whole name matches `excluded` stay; with `receivers`, only those brokers take
    replicas (adding brokers: the others are left as they are among themselves)."""
    import time

    from pyspark.sql import Window
    from pyspark.sql import functions as F

    current = replicas.select(*REPLICA_COLUMNS).cache()
    plan = SparkPlan(current)
    rack_table = None
    if racks:
        rack_table = spark.createDataFrame(sorted(racks.items()), "broker int, rack string")
    staying = set(brokers)
    drain_anywhere = False
    for round_number in range(max_rounds):
        began = time.perf_counter()
        counts, surplus, deficit = _off_targets(current, brokers)
        if receivers is not None:
            deficit = {b: d for b, d in deficit.items() if b in set(receivers)}
        if drain_anywhere:
            # Brokers being removed must end empty, even counts are only a goal: their replicas
            # may go to any broker that legally takes them, above its target if need be.
            surplus = {b: c for b, c in counts.items() if b not in staying and c}
            takers = staying if receivers is None else staying & set(receivers)
            deficit = dict.fromkeys(takers, sum(surplus.values()))
        if not surplus or not deficit:
            break
        total = sum(surplus.values())
        # When the narrow routes found nothing, every donor may send to every receiver.
        wide = drain_anywhere or (bool(plan.rounds) and plan.rounds[-1].moved == 0)
        routes = spark.createDataFrame(
            [(d, r, min(sd, dr)) for d, sd in surplus.items() for r, dr in deficit.items()]
            if wide
            else quotas(surplus, deficit),
            "broker int, receiver int, quota int",
        )
        held = current.select("topic", "partition", F.col("broker").alias("receiver"))
        candidates = (
            movable_replicas(current, excluded)
            .join(F.broadcast(routes), "broker")
            .join(held, ["topic", "partition", "receiver"], "left_anti")
        )
        if rack_table is not None and racks:
            # Racks a partition can spread over: a drained broker's rack counts only if some
            # broker staying is in it.
            eligible_racks = len({racks[b] for b in brokers if b in racks})
            candidates = rack_legal_pairs(candidates, current, rack_table, eligible_racks)
        # Each route ranks its donor's replicas its own way (a hash salted with the receiver
        # and the round), followers first, so that routes from one donor pick different ones.
        salt = F.xxhash64("topic", "partition", "receiver", F.lit(round_number))
        per_route = Window.partitionBy("broker", "receiver").orderBy(
            (F.col("position") == 0).asc(), salt, "topic", "partition"
        )
        picked = candidates.withColumn("rank", F.row_number().over(per_route)).where(
            F.col("rank") <= F.col("quota")
        )
        # A replica moves once, and a partition moves one replica per round: two of its
        # replicas moving at once could meet in one broker or crowd one rack.
        once = Window.partitionBy("topic", "partition").orderBy("rank", "position", "receiver")
        picked = picked.withColumn("n", F.row_number().over(once)).where(F.col("n") == 1)
        if wide:  # routes overlap: no receiver above its deficit, no donor below its target
            limits = spark.createDataFrame(
                [(b, surplus.get(b, 0), deficit.get(b, 0)) for b in counts],
                "broker int, surplus int, deficit int",
            )
            into = Window.partitionBy("receiver").orderBy("broker", "rank", "topic", "partition")
            out_of = Window.partitionBy("broker").orderBy("receiver", "rank", "topic", "partition")
            receiver_limits = limits.select(F.col("broker").alias("receiver"), "deficit")
            picked = (
                picked.join(F.broadcast(limits.select("broker", "surplus")), "broker")
                .join(F.broadcast(receiver_limits), "receiver")
                .withColumn("into", F.row_number().over(into))
                .where(F.col("into") <= F.col("deficit"))
                .withColumn("out_of", F.row_number().over(out_of))
                .where(F.col("out_of") <= F.col("surplus"))
            )
        accepted = picked.select(
            "topic", "partition", "position", F.col("receiver").alias("new_broker")
        )
        accepted = accepted.cache()
        moved = accepted.count()
        if moved:
            updated = (
                current.join(accepted, ["topic", "partition", "position"], "left")
                .select(
                    "topic",
                    "partition",
                    "position",
                    F.coalesce("new_broker", "broker").alias("broker"),
                )
                .localCheckpoint()
            )
            current.unpersist()
            current = updated.cache()
        accepted.unpersist()
        report = RoundReport(round_number, total, moved, time.perf_counter() - began)
        plan.rounds.append(report)
        if progress is not None:
            progress(report)
        if (
            wide
            and not moved
            and not drain_anywhere
            and any(c for b, c in counts.items() if b not in staying)
        ):
            drain_anywhere = True
            continue
        drain_anywhere = False
        if wide and not moved:
            plan.unbalanced = (
                f"replica counts still off their targets: no legal move left for {total} "
                "replicas (racks or the partitions' other replicas rule them out)"
            )
            break
    else:
        plan.unbalanced = f"replica counts still off their targets after {max_rounds} rounds"
    plan.replicas = current
    return plan


def movable_replicas(replicas: DataFrame, excluded: str | None) -> DataFrame:
    """The replicas a plan may move: not of a topic whose whole name matches `excluded` (Java's
    regular expressions, as Cruise Control's excluded_topics)."""
    from pyspark.sql import functions as F

    return replicas if not excluded else replicas.where(~F.col("topic").rlike(f"^(?:{excluded})$"))


def rack_legal_pairs(
    pairs: DataFrame, current: DataFrame, rack_table: DataFrame, racks: int
) -> DataFrame:
    """Pairs whose receiver's rack has room: at most ceil(RF / racks) replicas of a partition
    per rack, counting the partition's other replicas (the mover's own leaves)."""
    from pyspark.sql import functions as F

    with_rack = current.join(F.broadcast(rack_table), "broker")
    rf = current.groupBy("topic", "partition").agg(F.count("*").alias("rf"))
    per_rack = with_rack.groupBy("topic", "partition", "rack").agg(F.count("*").alias("held"))
    receiver_rack = rack_table.select(F.col("broker").alias("receiver"), F.col("rack"))
    donor_rack = rack_table.select(F.col("broker"), F.col("rack").alias("donor_rack"))
    return (
        pairs.join(F.broadcast(receiver_rack), "receiver")
        .join(F.broadcast(donor_rack), "broker", "left")  # a dead donor's rack is unknown
        .join(rf, ["topic", "partition"])
        .join(per_rack, ["topic", "partition", "rack"], "left")
        .withColumn(
            "after",
            F.coalesce("held", F.lit(0))
            + 1
            - F.coalesce((F.col("donor_rack") == F.col("rack")).cast("int"), F.lit(0)),
        )
        .where(F.col("after") <= F.greatest(F.lit(1), F.ceil(F.col("rf") / F.lit(racks))))
        .select(*pairs.columns)
    )


def plan_leaders(
    spark: SparkSession,
    replicas: DataFrame,
    brokers: Sequence[int],
    *,
    excluded: str | None = None,
    max_rounds: int = 32,
    progress: Any = None,
) -> SparkPlan:
    """Preferred leaders balanced by reordering replicas (no data moves), in rounds: the
    broker graph ("a leads a partition b follows", counted per pair: only these counts reach
    the driver) gives how many leaderships each pair hands over (`leader_flow`: directly from a
    broker above its target to one below, or along a chain through brokers at their target);
    each pair then makes the taker the first replica of that many partitions they share,
    ranked by a hash (deterministic and spread out), a partition for one pair per round."""
    import time

    from pyspark.sql import functions as F

    from kafka_topic_operator.rebalance.algorithms.leader_flow import leadership_flows

    current = replicas.select(*REPLICA_COLUMNS).cache()
    plan = SparkPlan(current)
    eligible = sorted(set(brokers))
    for round_number in range(max_rounds):
        began = time.perf_counter()
        leaders = current.where(F.col("position") == 0)
        _, excess, need = _off_targets(leaders, brokers)
        if not excess or not need:
            break
        led = movable_replicas(leaders, excluded).select(
            "topic", "partition", F.col("broker").alias("donor")
        )
        # Only staying brokers take a leadership: a drained one is on its way out.
        followers = current.where(F.col("position") > 0).where(F.col("broker").isin(eligible))
        pairs = led.join(followers, ["topic", "partition"]).cache()
        edges = {
            (row["donor"], row["broker"]): row["count"]
            for row in pairs.groupBy("donor", "broker").count().collect()
        }
        flows = leadership_flows(edges, excess, need)
        swapped = 0
        if flows:
            current, swapped = _hand_over(spark, current, pairs, flows, round_number)
        pairs.unpersist()
        report = RoundReport(
            round_number, sum(excess.values()), swapped, time.perf_counter() - began
        )
        plan.rounds.append(report)
        if progress is not None:
            progress(report)
        if not flows:
            plan.unbalanced = (
                "leader counts spread by more than one: no chain of partitions leads from a "
                "broker leading too many to one leading too few"
            )
            break
    plan.replicas = current
    return plan


def _hand_over(
    spark: SparkSession,
    current: DataFrame,
    pairs: DataFrame,
    flows: Mapping[tuple[int, int], int],
    round_number: int,
) -> tuple[DataFrame, int]:
    """The replica table with `flows` handed over ({(giver, taker): leaderships}), `pairs`
    being (topic, partition, donor: its leader, broker: a follower, position), and how many
    partitions changed leader (at least one: a pair with a flow shares that many partitions)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    routes = spark.createDataFrame(
        [(a, b, f) for (a, b), f in sorted(flows.items())],
        "donor int, broker int, flow int",
    )
    # Each pair ranks its partitions its own way (a hash salted with the taker and the round),
    # so that pairs from one giver mostly pick different partitions; a partition two pairs
    # picked goes to the one that ranked it higher, the other falls short this round.
    salt = F.xxhash64("topic", "partition", "broker", F.lit(round_number))
    per_pair = Window.partitionBy("donor", "broker").orderBy("salt", "topic", "partition")
    once = Window.partitionBy("topic", "partition").orderBy("rank", "broker")
    swaps = (
        pairs.join(F.broadcast(routes), ["donor", "broker"])
        .withColumn("salt", salt)
        .withColumn("rank", F.row_number().over(per_pair))
        .where(F.col("rank") <= F.col("flow"))
        .withColumn("n", F.row_number().over(once))
        .where("n = 1")
        .select(
            "topic",
            "partition",
            F.col("broker").alias("receiver"),
            F.col("position").alias("receiver_position"),
        )
        .cache()
    )
    swapped = swaps.count()
    updated = (
        current.join(swaps, ["topic", "partition"], "left")
        .select(
            "topic",
            "partition",
            F.when(F.col("receiver").isNull(), F.col("position"))
            .when(F.col("broker") == F.col("receiver"), F.lit(0))
            .when(F.col("position") == 0, F.col("receiver_position"))
            .otherwise(F.col("position"))
            .alias("position"),
            "broker",
        )
        .localCheckpoint()
    )
    current.unpersist()
    swaps.unpersist()
    return updated.cache(), swapped
