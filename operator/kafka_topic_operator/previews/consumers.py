"""`kto consumers`: a consumer group's assignment of one topic's partitions, by Kafka's range,
round-robin, sticky and cooperative-sticky assignors."""

from __future__ import annotations

import argparse

from kafka_topic_operator.kafka.assignors import assign as assign_consumers
from kafka_topic_operator.kafka.assignors import members_by_count
from kafka_topic_operator.process.argparsing import Subparsers, UsageError, partition_count
from kafka_topic_operator.process.output import print_json


def run(args: argparse.Namespace) -> None:
    text = args.members.strip()
    if text.isdigit():
        if int(text) < 1:
            raise UsageError(f"--members: a count must be at least 1, not {text}")
        members = members_by_count(int(text))
    else:
        members = [m.strip() for m in text.split(",")]
    result = assign_consumers(args.strategy, args.partitions, members)
    if args.output == "json":
        print_json(result)
        return
    width = max(len("Member"), *(len(m) for m in result))
    print(f"{'Member'.ljust(width)}  Count  Partitions")
    for member, partitions in result.items():
        print(
            f"{member.ljust(width)}  {len(partitions):<5}  {','.join(map(str, partitions)) or '-'}"
        )


def add_command(commands: Subparsers) -> None:
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
    consumers.set_defaults(run=run)
