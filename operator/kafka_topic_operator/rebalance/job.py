"""The planning job: a planning input (the cluster and what to balance) in, a plan out.

It runs wherever Spark runs: in a subprocess of the operator (the local engine), as the driver
of a Spark job on Kubernetes, or under the Spark operator, always as

    python -m kafka_topic_operator.rebalance.job --input IN.json --output DIR

The input's partitions (with their sizes, when known) become a Parquet table in DIR; the planner
works on it with DataFrame operations and brings only per-broker counts and bytes to the driver;
then only the changed partitions are collected, to write:

- DIR/plan.json      Kafka's reassignment JSON of the changed partitions
- DIR/changes.json   each changed partition's replicas before and after (for the report)
- DIR/result.json    status.optimizationResult, and the rounds the planner took

or DIR/error.json with why not. Exit status 0 when planned, 2 for an input that cannot be
planned (the message says why), 1 for anything else. Launched by spark-submit (the kubernetes and
sparkApplication engines), the job takes the master and the driver's address from spark-submit;
else it starts a local Spark (`--master`, local[*] by default).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import (
    DISK_USAGE_DISTRIBUTION,
    TOPIC_REPLICA_DISTRIBUTION,
)
from kafka_topic_operator.rebalance.planning_io import (
    PlanningError,
    PlanningInput,
    PlanningOutput,
    ProposalFailed,
    check_hard_goals,
    check_sizes,
    planning_output,
)
from kafka_topic_operator.rebalance.results.plan_parts import changes_json
from kafka_topic_operator.rebalance.results.summary import (
    Loads,
    PartitionMove,
    reassignment_json,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

FAILURE_FILE = "error.json"


def plan(spark: SparkSession, request: PlanningInput, workdir: Path,
         progress: Any = None) -> PlanningOutput:  # fmt: skip
    """The plan, on Spark. Replica and leader counts are planned exactly on the driver when the
    request is small enough (`in_process`: the same plan as without Spark), else in rounds of
    DataFrame operations; TopicReplicaDistribution is planned on the driver at any size,
    DiskUsageDistribution on Spark."""
    from pyspark.sql import functions as F

    from kafka_topic_operator.rebalance import in_process
    from kafka_topic_operator.rebalance.spark.planner import plan_counts, plan_leaders
    from kafka_topic_operator.rebalance.spark.swaps import bytes_per_broker

    check_hard_goals(request)  # before any planning: a plan that breaks one is never written
    check_sizes(request)
    before = _replica_table(spark, request.assignment, request.sizes, workdir)
    counted = in_process.replica_phase(request)
    if counted is None:
        counts = plan_counts(
            spark,
            before,
            request.brokers,
            racks=request.racks or None,
            excluded=request.excluded_topics,
            receivers=request.receivers,
            progress=progress,
        )
        after, why = counts.replicas, counts.unbalanced
        rounds = [{"phase": "replicas", **vars(r)} for r in counts.rounds]
    else:
        if progress is not None:
            progress(counted.report)
        after = _replica_table(spark, counted.assignment, request.sizes, workdir, "counted")
        why = counted.unbalanced
        rounds = [{"phase": "replicas", **vars(counted.report)}]
    check_drained(after, request, why)
    unbalanced = [why] if why else []
    placed = None if counted is None else counted.assignment  # the driver's copy, when known
    swapped = _swap_goals(spark, request, before, after, placed, workdir, progress)
    after, placed = swapped.replicas, swapped.placed
    rounds += swapped.rounds
    unbalanced += swapped.unbalanced
    if request.balance_leaders:
        led = None
        if counted is not None:
            led = in_process.leader_phase(
                request, placed if placed is not None else _assignment(after)
            )
        if led is not None:
            if progress is not None:
                progress(led.report)
            after = _replica_table(spark, led.assignment, request.sizes, workdir, "planned")
            rounds.append({"phase": "leaders", **vars(led.report)})
            unbalanced += [led.unbalanced] if led.unbalanced else []
        else:
            leaders = plan_leaders(
                spark, after, request.brokers, excluded=request.excluded_topics, progress=progress
            )
            after = leaders.replicas
            rounds += [{"phase": "leaders", **vars(r)} for r in leaders.rounds]
            if leaders.unbalanced:
                unbalanced.append(leaders.unbalanced)
    changes = _changes(before, after)
    sizes = _size_table(request, before)
    bytes_before = bytes_after = None
    if sizes is not None:
        bytes_before, bytes_after = bytes_per_broker(before, sizes), bytes_per_broker(after, sizes)
    loads = Loads(
        _counts(before), _counts(after),
        _counts(before.where(F.col("position") == 0)), _counts(after.where(F.col("position") == 0)),
        bytes_before, bytes_after,
    )  # fmt: skip
    return planning_output(request, changes, loads, rounds, unbalanced)


def check_drained(replicas: DataFrame, request: PlanningInput, why: str | None) -> None:
    """A broker being removed must end empty: a plan that would leave replicas on it is refused
    rather than shown (and carried out) as if the broker could then go. Some plan could empty
    it (`check_hard_goals` said so, unless only brokers not being added could take what it
    holds): the planner's rounds found none."""
    from pyspark.sql import functions as F

    stranded = replicas.where(~F.col("broker").isin(list(request.brokers)))
    left: dict[int, int] = {
        row["broker"]: row["count"] for row in stranded.groupBy("broker").count().collect()
    }
    if not left:
        return
    held = ", ".join(f"{count} on broker {broker}" for broker, count in sorted(left.items()))
    raise ProposalFailed(
        f"the brokers to remove cannot be emptied: {held} would stay" + (f" ({why})" if why else "")
    )


@dataclass
class _Swapped:
    replicas: DataFrame
    placed: dict[TopicPartition, tuple[int, ...]] | None  # the driver's copy, when known
    rounds: list[dict[str, Any]]
    unbalanced: list[str]


def _swap_goals(spark: SparkSession, request: PlanningInput, before: DataFrame,
                replicas: DataFrame, placed: dict[TopicPartition, tuple[int, ...]] | None,
                workdir: Path, progress: Any) -> _Swapped:  # fmt: skip
    """The goals met by swapping replicas, in the order listed; each guards the ones before.
    TopicReplicaDistribution is planned on the driver (as without Spark), DiskUsageDistribution
    in rounds on Spark."""
    from kafka_topic_operator.rebalance import in_process
    from kafka_topic_operator.rebalance.spark.swaps import plan_disk_usage

    out = _Swapped(replicas, placed, [], [])
    sizes = _size_table(request, before)
    for i, goal in enumerate(request.swap_goals):
        earlier = request.swap_goals[:i]
        if goal == TOPIC_REPLICA_DISTRIBUTION:
            current = out.placed
            if current is None:  # planned on Spark: the request's lists with the changes
                current = dict(request.assignment)
                current.update((c.partition, c.after) for c in _changes(before, out.replicas))
            spread = in_process.topic_phase(
                request, current, guard_disk=DISK_USAGE_DISTRIBUTION in earlier
            )
            if progress is not None:
                progress(spread.report)
            out.placed = spread.assignment
            out.replicas = _replica_table(spark, out.placed, request.sizes, workdir, "topics")
            out.rounds.append({"phase": "topics", **vars(spread.report)})
            out.unbalanced += [spread.unbalanced] if spread.unbalanced else []
            continue
        assert sizes is not None  # check_sizes
        done = plan_disk_usage(
            spark, out.replicas, request.brokers, sizes,
            racks=request.racks or None, excluded=request.excluded_topics,
            receivers=request.receivers, guard_topics=TOPIC_REPLICA_DISTRIBUTION in earlier,
            progress=progress,
        )  # fmt: skip
        out.replicas, out.placed = done.replicas, None
        out.rounds += [{"phase": "disk", **vars(r)} for r in done.rounds]
        if done.unbalanced:
            out.unbalanced.append(done.unbalanced)
    return out


def _replica_table(
    spark: SparkSession,
    assignment: Mapping[TopicPartition, tuple[int, ...]],
    sizes: Mapping[TopicPartition, int] | None,
    workdir: Path,
    name: str = "snapshot",
) -> DataFrame:
    """The snapshot as a Parquet table, read back: the planner's input at any scale. Each
    replica carries its partition's size (null when sizes are unknown)."""
    rows = [(tp.topic, tp.partition, i, b, None if sizes is None else sizes[tp])
            for tp, replicas in assignment.items() for i, b in enumerate(replicas)]  # fmt: skip
    path = str(workdir / f"{name}.parquet")
    schema = "topic string, partition int, position int, broker int, size long"
    spark.createDataFrame(rows, schema).write.mode("overwrite").parquet(path)
    return spark.read.parquet(path)


def _assignment(frame: DataFrame) -> dict[TopicPartition, tuple[int, ...]]:
    """The replica table's lists on the driver (only below the exact plan's limit)."""
    from pyspark.sql import functions as F

    ordered = F.array_sort(F.collect_list(F.struct("position", "broker")))["broker"]
    rows = frame.groupBy("topic", "partition").agg(ordered.alias("replicas")).collect()
    return {TopicPartition(r["topic"], r["partition"]): tuple(r["replicas"]) for r in rows}


def _counts(frame: DataFrame) -> dict[int, int]:
    return {row["broker"]: row["count"] for row in frame.groupBy("broker").count().collect()}


def _size_table(request: PlanningInput, before: DataFrame) -> DataFrame | None:
    """(topic, partition, size) of every partition, when sizes are known."""
    from pyspark.sql import functions as F

    if request.sizes is None:
        return None
    return before.where(F.col("position") == 0).select("topic", "partition", "size")


def _changes(before: DataFrame, after: DataFrame) -> list[PartitionMove]:
    """Only the partitions whose replica list changed reach the driver."""
    from pyspark.sql import functions as F

    def lists(frame: DataFrame, name: str) -> DataFrame:
        ordered = F.array_sort(F.collect_list(F.struct("position", "broker")))
        return frame.groupBy("topic", "partition").agg(ordered["broker"].alias(name))

    joined = lists(before, "before").join(lists(after, "after"), ["topic", "partition"])
    changed = joined.where(F.col("before") != F.col("after")).collect()
    return sorted(
        PartitionMove(
            TopicPartition(row["topic"], row["partition"]),
            tuple(row["before"]),
            tuple(row["after"]),
        )
        for row in changed
    )


def write_output(output: PlanningOutput, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    files = {
        "plan.json": reassignment_json(output.changes),
        "changes.json": changes_json(output.changes),
        "result.json": json.dumps(
            {"optimizationResult": output.result.to_status(), "rounds": output.rounds}
        ),
    }
    for name, text in files.items():
        tmp = directory / f".{name}.tmp"
        tmp.write_text(text)
        tmp.replace(directory / name)  # readers never see half a file


def read_changes(directory: Path) -> list[PartitionMove]:
    return parse_changes((directory / "changes.json").read_text())


def parse_changes(text: str) -> list[PartitionMove]:
    """changes.json, as `write_output` writes it (and the plan's ConfigMap holds it)."""
    return [
        PartitionMove(
            TopicPartition(c["topic"], c["partition"]), tuple(c["before"]), tuple(c["after"])
        )
        for c in json.loads(text)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafka_topic_operator.rebalance.job")
    parser.add_argument("--input", type=Path, required=True, metavar="IN.json")
    parser.add_argument("--output", type=Path, required=True, metavar="DIR")
    parser.add_argument(
        "--master",
        default=None,
        help="Spark master (default: spark-submit's when it launched the job; else none when "
        "the exact plan covers the request, local[*] when not)",
    )
    parser.add_argument("--driver-memory", default=None, metavar="SIZE")
    args = parser.parse_args(argv)
    (args.output / FAILURE_FILE).unlink(missing_ok=True)
    try:
        return _run(args)
    except Exception as e:
        # Under spark-submit in cluster mode nobody sees this process's exit status: the
        # operator reads why from the directory.
        write_failure(args.output, "PlanningFailed", f"{type(e).__name__}: {e}")
        raise


def launched_by_spark_submit(environ: Mapping[str, str]) -> bool:
    """Whether spark-submit started this Python process: its PythonRunner hands the running
    JVM's gateway over in PYSPARK_GATEWAY_PORT (which pyspark itself looks for)."""
    return "PYSPARK_GATEWAY_PORT" in environ


def _run(args: argparse.Namespace) -> int:
    try:
        request = PlanningInput.from_json(json.loads(args.input.read_text()))
        check_hard_goals(request)  # again in plan(), but refused before Spark starts
    except (OSError, json.JSONDecodeError) as e:
        return _cannot_plan(args.output, PlanningError(str(e)))
    except PlanningError as e:
        return _cannot_plan(args.output, e)
    from kafka_topic_operator.rebalance.in_process import plan_in_process
    from kafka_topic_operator.rebalance.spark.session import local_session, submitted_session

    submitted = launched_by_spark_submit(os.environ)
    if args.master is None and not submitted:  # no Spark asked for: none if none is needed
        began = time.perf_counter()
        try:
            done = plan_in_process(request, progress=_print_round)
        except PlanningError as e:
            return _cannot_plan(args.output, e)
        if done is not None:
            write_output(done, args.output)
            _print_planned(done, time.perf_counter() - began, "the driver, without Spark")
            return 0
    if args.master is None and submitted:
        spark = submitted_session("kto-rebalance")
    else:
        spark = local_session("kto-rebalance", master=args.master or "local[*]",
                              driver_memory=args.driver_memory)  # fmt: skip
    master = str(spark.sparkContext.master)
    began = time.perf_counter()
    try:
        output = plan(spark, request, args.output, progress=_print_round)
    except PlanningError as e:
        return _cannot_plan(args.output, e)
    finally:
        spark.stop()
    write_output(output, args.output)
    _print_planned(output, time.perf_counter() - began, master)
    return 0


def _print_planned(output: PlanningOutput, seconds: float, where: str) -> None:
    print(f"planned {output.result.replica_moves} replica moves and "
          f"{output.result.leader_moves} leader moves in {seconds:.1f} s on {where}",
          file=sys.stderr)  # fmt: skip


def _cannot_plan(directory: Path, error: PlanningError) -> int:
    print(f"planning job: {error}", file=sys.stderr)
    write_failure(directory, error.reason, str(error))
    return 2


def write_failure(directory: Path, reason: str, message: str) -> None:
    """DIR/error.json: why the job planned nothing (reason ProposalFailed when no plan can keep
    the hard goals, CannotPlan for another input that cannot be planned, PlanningFailed for
    anything else)."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / FAILURE_FILE).write_text(json.dumps({"reason": reason, "message": message}))
    except OSError as e:  # the directory itself is the problem: the log says so
        print(f"planning job: cannot write {directory / FAILURE_FILE}: {e}", file=sys.stderr)


def _print_round(report: Any) -> None:
    print(f"round {report.round}: {report.moved} moved of {report.surplus} off target "
          f"in {report.seconds:.1f} s", file=sys.stderr, flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
