"""The `kto` command line: the KafkaTopic operator (run), rebalance plans (plan), the dev cluster,
what a cluster holds (describe), and previews of Kafka's placement rules (assign, partition-for,
consumers).

Every error is one line on stderr, never a traceback: exit status 2 for bad input (flags, a
chroot or topic that does not exist, a cluster no plan can balance), 1 when something could not
be reached or started (ZooKeeper, a broker, the dev cluster).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence

from kafka_topic_operator import __version__
from kafka_topic_operator.argparsing import RaisingParser, UsageError, partition_count
from kafka_topic_operator.assignment_view import render_assignment
from kafka_topic_operator.kafka import assignment as placement
from kafka_topic_operator.kafka.assignors import assign as assign_consumers
from kafka_topic_operator.kafka.assignors import members_by_count
from kafka_topic_operator.kafka.errors import KafkaError
from kafka_topic_operator.kafka.partitioner import partition_for_key

EXIT_USAGE = 2
EXIT_FAILURE = 1
COMMANDS = (
    "assign",
    "partition-for",
    "consumers",
    "describe",
    "dev-broker",
    "controller",
    "run",
    "dev-cluster",
    "plan",
)


class _RecordingRandom:
    """Kafka's random source, remembering its draws so the preview can say how to repeat them."""

    def __init__(self, inner: placement.RandomSource) -> None:
        self._inner = inner
        self.draws: list[int] = []

    def next_int(self, bound: int) -> int:
        value = self._inner.next_int(bound)
        self.draws.append(value)
        return value


# ---- argument parsing helpers ---------------------------------------------------------------


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise UsageError(f"{what}: '{text}' is not an integer") from None


def _broker_ids(text: str) -> list[int]:
    ids = [_int(part, "--brokers") for part in text.split(",") if part.strip()]
    if not ids:
        raise UsageError("--brokers: give at least one broker id, e.g. --brokers 0,1,2")
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise UsageError(f"--brokers: broker ids listed twice: {', '.join(map(str, duplicates))}")
    if any(i < 0 for i in ids):
        raise UsageError("--brokers: broker ids must be non-negative")
    return ids


def _racks(text: str, broker_ids: Sequence[int]) -> dict[int, str]:
    racks: dict[int, str] = {}
    for entry in filter(None, (e.strip() for e in text.split(","))):
        broker_text, sep, rack = entry.partition(":")
        if not sep or not rack.strip():
            raise UsageError(f"--racks: '{entry}' is not BROKER:RACK (e.g. --racks 0:a,1:b)")
        broker = _int(broker_text, "--racks")
        if broker not in broker_ids:
            raise UsageError(f"--racks: broker {broker} is not in --brokers")
        if broker in racks:
            raise UsageError(f"--racks: broker {broker} is given twice")
        racks[broker] = rack.strip()
    return racks


def _existing(text: str) -> dict[int, list[int]]:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise UsageError(f"--existing: not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(raw, dict) or not raw:
        raise UsageError('--existing: expected a JSON object such as {"0":[2,3,0,1]}')
    existing: dict[int, list[int]] = {}
    for key, replicas in raw.items():
        partition = _int(key, "--existing partition")
        if not isinstance(replicas, list) or not all(
            isinstance(b, int) and not isinstance(b, bool) for b in replicas
        ):
            raise UsageError(f"--existing: partition {key} must map to a list of broker ids")
        existing[partition] = replicas
    return existing


def _print_json(value: object) -> None:
    print(json.dumps(value, indent=None, separators=(",", ":")))


# ---- kto assign -----------------------------------------------------------------------------


def _assign(args: argparse.Namespace) -> None:
    broker_ids = _broker_ids(args.brokers)
    racks = _racks(args.racks, broker_ids) if args.racks else {}
    brokers = [placement.BrokerMetadata(b, racks.get(b)) for b in broker_ids]
    mode = placement.RackAwareMode[args.rack_aware_mode.upper()]
    brokers = placement.broker_metadatas(brokers, mode)
    existing = _existing(args.existing) if args.existing else None
    rng = _RecordingRandom(placement.default_random())

    if args.replica_assignment is not None:
        if args.start_index is not None or args.start_partition is not None:
            raise UsageError(
                "--start-index and --start-partition do not apply to a manual placement"
            )
        manual = placement.parse_replica_assignment(args.replica_assignment)
        if existing is None:
            if args.partitions is not None and args.partitions != len(manual):
                raise UsageError(
                    f"--partitions {args.partitions} does not match the {len(manual)} partitions "
                    "of --replica-assignment"
                )
            placement.validate_topic_create(args.topic, manual, existing_topics=())
            placement.validate_replica_assignment(manual, len(manual[0]), [b.id for b in brokers])
            result, new = manual, list(manual)
        else:
            total = args.partitions if args.partitions is not None else len(manual)
            added = placement.new_partitions_from_command_line(existing, manual)
            new_assignment = placement.create_new_partitions_assignment(
                args.topic, existing, brokers, total, added
            )
            result, new = {**existing, **new_assignment}, list(new_assignment)
    elif existing is not None:
        if args.start_index is not None or args.start_partition is not None:
            raise UsageError(
                "--start-index and --start-partition cannot be combined with --existing: "
                "Kafka derives both from the existing assignment"
            )
        if args.partitions is None:
            raise UsageError("--partitions (the new total) is required with --existing")
        if 0 in existing and args.replication_factor not in (None, len(existing[0])):
            raise UsageError(
                f"--replication-factor {args.replication_factor} does not match partition 0's "
                f"replication factor {len(existing[0])}"
            )
        new_assignment = placement.create_new_partitions_assignment(
            args.topic, existing, brokers, args.partitions
        )
        result, new = {**existing, **new_assignment}, list(new_assignment)
    else:
        if args.partitions is None or args.replication_factor is None:
            raise UsageError("--partitions and --replication-factor are required")
        result = placement.assign_replicas_to_brokers(
            brokers,
            args.partitions,
            args.replication_factor,
            fixed_start_index=-1 if args.start_index is None else args.start_index,
            start_partition_id=-1 if args.start_partition is None else args.start_partition,
            rng=rng,
        )
        new = list(result)

    if args.output == "json":
        _print_json({str(p): result[p] for p in sorted(result)})
        return
    rack_of = {b.id: b.rack for b in brokers}
    replication = len(next(iter(result.values())))
    print(
        f"{len(result)} partitions, replication factor {replication}, "
        f"over {len(brokers)} brokers ({_rack_summary(rack_of)})"
    )
    if len(rng.draws) == 2:
        print(
            f"random start index {rng.draws[0]} and replica shift {rng.draws[1]} "
            "(drawn independently, as Kafka does)"
        )
    print()
    print(render_assignment(result, [b.id for b in brokers], rack_of, new if existing else None))


def _rack_summary(rack_of: dict[int, str | None]) -> str:
    racks = {r for r in rack_of.values() if r}
    return f"rack-aware over {len(racks)} racks" if racks else "rack-unaware"


# ---- kto partition-for ----------------------------------------------------------------------


def _partition_for(args: argparse.Namespace) -> None:
    result = {key: partition_for_key(key, args.partitions) for key in args.keys}
    if args.output == "json":
        _print_json(result)
        return
    width = max(len("Key"), *(len(k) for k in result))
    print(f"{'Key'.ljust(width)}  Partition")
    for key, partition in result.items():
        print(f"{key.ljust(width)}  {partition}")


# ---- kto consumers --------------------------------------------------------------------------


def _consumers(args: argparse.Namespace) -> None:
    text = args.members.strip()
    if text.isdigit():
        if int(text) < 1:
            raise UsageError(f"--members: a count must be at least 1, not {text}")
        members = members_by_count(int(text))
    else:
        members = [m.strip() for m in text.split(",")]
    result = assign_consumers(args.strategy, args.partitions, members)
    if args.output == "json":
        _print_json(result)
        return
    width = max(len("Member"), *(len(m) for m in result))
    print(f"{'Member'.ljust(width)}  Count  Partitions")
    for member, partitions in result.items():
        print(
            f"{member.ljust(width)}  {len(partitions):<5}  {','.join(map(str, partitions)) or '-'}"
        )


# ---- kto describe ---------------------------------------------------------------------------


def _describe(args: argparse.Namespace) -> None:
    # Imported here so the offline previews never load the ZooKeeper client.
    from kafka_topic_operator.describe import cluster_report, render_text
    from kafka_topic_operator.zk.client import ZkClient, load_credentials
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    zk = ZkClient(args.zookeeper, credentials=load_credentials(None, None))
    zk.start(timeout=args.timeout)
    try:
        if not zk.exists("/"):
            raise UsageError(
                f"{args.zookeeper}: the chroot does not exist in ZooKeeper, so no Kafka cluster "
                "keeps its data there (--zookeeper takes what the brokers' zookeeper.connect says)"
            )
        report = cluster_report(read_cluster(zk, args.topics or None), args.topics or None)
    finally:
        zk.stop()
    if args.output == "json":
        _print_json(report)
    else:
        print(render_text(report))
    if report["missing_topics"]:
        raise UsageError("topics not found: " + ", ".join(report["missing_topics"]))


# ---- wiring ---------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = RaisingParser(prog="kto", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=RaisingParser)

    assign = commands.add_parser(
        "assign",
        help="preview where Kafka places a topic's replicas",
        description="Preview Kafka's replica placement (AdminUtils.assignReplicasToBrokers).",
    )
    assign.add_argument("--brokers", required=True, help="broker ids, e.g. 0,1,2,3,4")
    assign.add_argument(
        "--partitions", type=int, help="partition count (with --existing: new total)"
    )
    assign.add_argument("--replication-factor", type=int, help="replicas per partition")
    assign.add_argument("--racks", help="broker racks, e.g. 0:a,1:b,2:c (unlisted: no rack)")
    assign.add_argument(
        "--rack-aware-mode",
        choices=["enforced", "safe", "disabled"],
        default="enforced",
        help="as kafka-topics: enforced (default), safe, disabled",
    )
    assign.add_argument("--start-index", type=int, help="fixed start index (default: random)")
    assign.add_argument("--start-partition", type=int, help="first partition id (default: 0)")
    assign.add_argument("--existing", help="existing assignment to grow, e.g. '{\"0\":[2,3,0,1]}'")
    assign.add_argument("--replica-assignment", help="manual placement, e.g. 5:4,3:2,1:0")
    assign.add_argument("--topic", default="topic", help="topic name used in messages")
    assign.add_argument("--output", choices=["table", "json"], default="table")
    assign.set_defaults(run=_assign)

    partition_for = commands.add_parser(
        "partition-for",
        help="the partition the Java producer picks for each key",
        description="murmur2 key partitioning, as the Java producer's default partitioner.",
    )
    partition_for.add_argument("--partitions", type=partition_count, required=True)
    partition_for.add_argument("keys", nargs="+", metavar="KEY")
    partition_for.add_argument("--output", choices=["table", "json"], default="table")
    partition_for.set_defaults(run=_partition_for)

    consumers = commands.add_parser(
        "consumers",
        help="who consumes which partitions of one topic",
        description="Preview a consumer group's assignment for one topic.",
    )
    consumers.add_argument("--partitions", type=partition_count, required=True)
    consumers.add_argument(
        "--members", required=True, help="a count (consumer-0, ...) or member ids a,b,c"
    )
    consumers.add_argument(
        "--strategy",
        choices=["range", "roundrobin", "sticky", "cooperative-sticky"],
        default="range",
    )
    consumers.add_argument("--output", choices=["table", "json"], default="table")
    consumers.set_defaults(run=_consumers)

    describe = commands.add_parser(
        "describe",
        help="topics, partitions, leaders, ISRs and deletions, read from ZooKeeper",
        description="What kafka-topics --describe shows, plus partition states, offline and "
        "under-replicated partitions, why deletions wait, and a per-broker summary. "
        "Credentials (user:password) come from $KTO_ZOOKEEPER_DIGEST, or $KTO_ZOOKEEPER_SASL "
        "for SASL.",
    )
    describe.add_argument("--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]")
    describe.add_argument("topics", nargs="*", metavar="TOPIC")
    describe.add_argument("--output", choices=["table", "json"], default="table")
    describe.add_argument("--timeout", type=float, default=15.0, help="connect timeout (s)")
    describe.set_defaults(run=_describe)

    commands.add_parser(
        "controller",
        help="run the Kafka-compatible controller; see kto controller --help",
        add_help=False,
    )
    commands.add_parser(
        "dev-cluster",
        help="start, stop or inspect the standalone dev cluster; see kto dev-cluster --help",
        add_help=False,
    )
    commands.add_parser(
        "plan",
        help="a rebalance plan (reassignment JSON and HTML report); see kto plan --help",
        add_help=False,
    )
    commands.add_parser(
        "run",
        help="run the KafkaTopic operator; see kto run --help",
        add_help=False,
    )
    commands.add_parser(
        "dev-broker",
        help="run a dev broker (a stand-in Kafka broker); see kto dev-broker --help",
        add_help=False,
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # The ZooKeeper client's connection chatter never reaches the terminal of a short command;
    # the long-running ones (run, controller, dev-broker) log its warnings in their own format.
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:
        parser.print_help()
        return 0
    command = f"kto {words[0]}" if words and words[0] in COMMANDS else "kto"
    if words and words[0] == "dev-broker":
        from kafka_topic_operator.devbroker.cli import main as dev_broker

        return dev_broker(words[1:])
    if words and words[0] == "dev-cluster":
        from kafka_topic_operator.devcluster import main as dev_cluster

        return dev_cluster(words[1:])
    if words and words[0] == "run":
        from kafka_topic_operator.k8s.cli import main as run_operator

        return run_operator(words[1:])
    if words and words[0] == "plan":
        from kafka_topic_operator.rebalance.plan_cli import main as plan

        return plan(words[1:])
    if words and words[0] == "controller":
        from kafka_topic_operator.controller.cli import main as controller

        return controller(words[1:])
    try:
        args = parser.parse_args(words)
        run: Callable[[argparse.Namespace], None] = args.run
        run(args)
    except UsageError as e:
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KafkaError as e:
        print(f"{command}: {e.kafka_name}: {e.message}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except RuntimeError as e:  # ZooKeeper unreachable and the like
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    return 0


if __name__ == "__main__":
    sys.exit(main())
