"""`kto assign`: Kafka's replica placement (AdminUtils.assignReplicasToBrokers), for a new topic,
grown partitions or a manual placement, as a table per partition and per broker or as JSON."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from kafka_topic_operator.kafka import assignment as placement
from kafka_topic_operator.previews.assignment_view import render_assignment
from kafka_topic_operator.process.argparsing import Subparsers, UsageError
from kafka_topic_operator.process.output import print_json


class _RecordingRandom:
    """Kafka's random source, remembering its draws so the preview can say how to repeat them."""

    def __init__(self, inner: placement.RandomSource) -> None:
        self._inner = inner
        self.draws: list[int] = []

    def next_int(self, bound: int) -> int:
        value = self._inner.next_int(bound)
        self.draws.append(value)
        return value


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


def run(args: argparse.Namespace) -> None:
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
        print_json({str(p): result[p] for p in sorted(result)})
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


def add_command(commands: Subparsers) -> None:
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
    assign.set_defaults(run=run)
