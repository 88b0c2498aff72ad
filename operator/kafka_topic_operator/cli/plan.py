"""`kto plan`: a rebalance plan from the command line, with the KafkaRebalance spec's options.

Reads the cluster from its ZooKeeper (`--zookeeper`) or, on KRaft, through its brokers
(`--bootstrap-servers`, with the security flags of `kto run`), plans (exactly on its own for
replica and leader counts on a cluster of moderate size, else with Spark), and writes Kafka's
reassignment JSON (ready for `kafka-reassign-partitions --execute`) and, when asked, the HTML
report. Nothing is written to the cluster. Partition sizes (for the bytes to move and
DiskUsageDistribution) come from a file (`--sizes`: the metrics file, or what
`kafka-log-dirs.sh --describe` prints), brokers' log directories (`--log-dirs`), or both: the
file's size wins for a partition both give.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafka_topic_operator.clusters.connect import add_cluster_arguments, cluster_flags
from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.rebalance.planning_io import PlanningError
from kafka_topic_operator.rebalance.results.report import human_bytes
from kafka_topic_operator.rebalance.sizes import SizesError

if TYPE_CHECKING:
    from kafka_topic_operator.rebalance.results.summary import OptimizationResult

EXIT_USAGE = 2
EXIT_FAILURE = 1
BAR = 30


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kto plan", description=__doc__)
    parser.add_argument("--mode", default="full",
                        choices=["full", "add-brokers", "remove-brokers"])  # fmt: skip
    parser.add_argument("--brokers", default=None, metavar="ID,ID",
                        help="the brokers to add or remove")  # fmt: skip
    parser.add_argument(
        "--goals",
        default=None,
        metavar="GOAL,GOAL",
        help="in order (default RackAware,ReplicaDistribution,LeaderDistribution)",
    )
    parser.add_argument("--excluded-topics", default=None, metavar="REGEX")
    parser.add_argument("--max-replicas-per-broker", type=int, default=None, metavar="N")
    parser.add_argument(
        "--sizes",
        type=Path,
        default=None,
        metavar="FILE",
        help='partition sizes: {"partitions": [{"topic": T, "partition": P, "sizeBytes": N}]}, '
        "or what kafka-log-dirs.sh --describe prints",
    )
    parser.add_argument(
        "--log-dirs",
        type=Path,
        nargs="+",
        default=None,
        metavar="DIR",
        help="brokers' log directories: a partition's size is its leader's replica's",
    )
    parser.add_argument("--output", type=Path, required=True, metavar="plan.json")
    parser.add_argument("--report", type=Path, default=None, metavar="plan.html")
    parser.add_argument(
        "--master",
        default=None,
        help="Spark master (default: none when replica and leader counts are all the goals and "
        "the cluster is small enough to plan them exactly, else local[*])",
    )
    parser.add_argument("--driver-memory", default=None, metavar="SIZE")
    parser.add_argument("--timeout", type=float, default=15.0, help="connect timeout (s)")
    add_cluster_arguments(parser, zookeeper_acl=False)
    return parser


def spec_of(args: argparse.Namespace) -> dict[str, Any]:
    """The flags as a KafkaRebalance spec, so that they are checked by the same rules."""
    spec: dict[str, Any] = {"mode": args.mode}
    try:
        if args.brokers is not None:
            spec["brokers"] = [int(b) for b in args.brokers.split(",") if b.strip()]
    except ValueError as e:
        raise UsageError(f"--brokers must be comma-separated broker ids: {args.brokers}") from e
    if args.goals is not None:
        spec["goals"] = [g.strip() for g in args.goals.split(",") if g.strip()]
    if args.excluded_topics is not None:
        spec["excludedTopics"] = args.excluded_topics
    if args.max_replicas_per_broker is not None:
        spec["maxReplicasPerBroker"] = args.max_replicas_per_broker
    return spec


def main(argv: Sequence[str] | None = None) -> int:
    from kafka_topic_operator.rebalance.spec import InvalidRebalanceSpec, rebalance_spec

    try:
        args = build_parser().parse_args(argv)
        spec = rebalance_spec(spec_of(args))
        flags = cluster_flags(args)
    except (UsageError, InvalidRebalanceSpec) as e:
        print(f"kto plan: {e}", file=sys.stderr)
        return EXIT_USAGE
    from kafka_topic_operator.clusters.connect import connect
    from kafka_topic_operator.rebalance.inputs import leaders, planning_input

    try:
        cluster = connect(flags, timeout=args.timeout, request_timeout=args.timeout)
    except ClusterUnavailableError as e:
        print(f"kto plan: {e}", file=sys.stderr)
        return EXIT_FAILURE
    try:
        cluster.check()
        snapshot = cluster.snapshot()
    except UsageError as e:  # no cluster where the flags say
        print(f"kto plan: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ClusterUnavailableError as e:
        print(f"kto plan: {e}", file=sys.stderr)
        return EXIT_FAILURE
    finally:
        cluster.close()
    try:
        sizes = read_sizes(args.sizes, args.log_dirs, leaders(snapshot))
        return _plan(args, planning_input(snapshot, spec, sizes), cluster.where)
    except (PlanningError, SizesError) as e:
        print(f"kto plan: {e}", file=sys.stderr)
        return EXIT_USAGE


def read_sizes(
    metrics: Path | None, log_dirs: Sequence[Path] | None, leaders: Mapping[TopicPartition, int]
) -> dict[TopicPartition, int] | None:
    """The sizes `--sizes` and `--log-dirs` give (the file wins), or None without either."""
    from kafka_topic_operator.rebalance.sizes import read_partition_sizes, read_sizes_document

    if metrics is None and log_dirs is None:
        return None
    sizes = read_partition_sizes(log_dirs, leaders) if log_dirs else {}
    if metrics is not None:
        try:
            text = metrics.read_text()
        except OSError as e:
            raise SizesError(f"{metrics}: {e.strerror}") from None
        sizes.update(read_sizes_document(text, str(metrics), leaders))
    return sizes


def _plan(args: argparse.Namespace, request: Any, where: str) -> int:
    from kafka_topic_operator.rebalance import job
    from kafka_topic_operator.rebalance.in_process import plan_in_process
    from kafka_topic_operator.rebalance.results.report import render_html
    from kafka_topic_operator.rebalance.results.summary import reassignment_json
    from kafka_topic_operator.rebalance.spark.session import local_session

    replicas = sum(len(r) for r in request.assignment.values())
    print(f"planning {len(request.assignment)} partitions ({replicas} replicas) over "
          f"{len(request.brokers)} brokers", file=sys.stderr)  # fmt: skip
    output = None
    if args.master is None:
        output = plan_in_process(request, progress=_Bar())
    if output is None:
        spark = local_session("kto-plan", master=args.master or "local[*]",
                              driver_memory=args.driver_memory)  # fmt: skip
        try:
            with tempfile.TemporaryDirectory(prefix="kto-plan-") as workdir:
                output = job.plan(spark, request, Path(workdir), progress=_Bar())
        finally:
            spark.stop()
    args.output.write_text(reassignment_json(output.changes) + "\n")
    result = output.result
    data = ""
    if result.data_to_move_bytes is not None:
        data = f", {human_bytes(result.data_to_move_bytes)} to move"
    print(f"{result.replica_moves} replica moves{drain_text(result)} (lower bound "
          f"{result.replica_lower_bound}), "
          f"{result.leader_moves} leader moves{data}, balance {result.balance_before:g}% -> "
          f"{result.balance_after:g}%; plan written to {args.output}")  # fmt: skip
    if result.generate_replica_moves is not None:
        print(f"kafka-reassign-partitions --generate would move {result.generate_replica_moves}")
    for reason in result.unbalanced:
        print(f"warning: {reason}", file=sys.stderr)
    if args.report is not None:
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%SZ")
        args.report.write_text(
            render_html(
                result,
                output.changes,
                title=f"Rebalance plan for {where}",
                generated_at=now,
            )
        )
        print(f"report written to {args.report}")
    return 0


class _Bar:
    """One line per planning round: how far the replicas (or bytes) off their targets have
    come; each phase starts a new bar."""

    def __init__(self) -> None:
        self.first: int | None = None

    def __call__(self, report: Any) -> None:
        if self.first is None or report.round == 0:
            self.first = max(report.surplus, 1)
        left = max(report.surplus - report.moved, 0)
        done = 1 - left / self.first
        filled = round(done * BAR)
        bar = "#" * filled + "." * (BAR - filled)
        moved = human_bytes(report.moved) if report.unit == "bytes" else report.moved
        print(f"round {report.round:>2} [{bar}] {done:4.0%} {moved} placed in "
              f"{report.seconds:.1f} s", file=sys.stderr, flush=True)  # fmt: skip


def drain_text(result: OptimizationResult) -> str:
    """How many of the moves empty the brokers being removed, and how many balance."""
    if not result.drain_moves:
        return ""
    rest = result.replica_moves - result.drain_moves
    return f" ({result.drain_moves} off the brokers being removed, {rest} to balance)"
