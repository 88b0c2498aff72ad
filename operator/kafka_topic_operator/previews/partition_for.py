"""`kto partition-for`: the partition the Java producer's default partitioner picks for each key
(murmur2)."""

from __future__ import annotations

import argparse

from kafka_topic_operator.kafka.partitioner import partition_for_key
from kafka_topic_operator.process.argparsing import Subparsers, partition_count
from kafka_topic_operator.process.output import print_json


def run(args: argparse.Namespace) -> None:
    result = {key: partition_for_key(key, args.partitions) for key in args.keys}
    if args.output == "json":
        print_json(result)
        return
    width = max(len("Key"), *(len(k) for k in result))
    print(f"{'Key'.ljust(width)}  Partition")
    for key, partition in result.items():
        print(f"{key.ljust(width)}  {partition}")


def add_command(commands: Subparsers) -> None:
    partition_for = commands.add_parser(
        "partition-for",
        help="the partition the Java producer picks for each key",
        description="murmur2 key partitioning, as the Java producer's default partitioner.",
    )
    partition_for.add_argument("--partitions", type=partition_count, required=True)
    partition_for.add_argument("keys", nargs="+", metavar="KEY")
    partition_for.add_argument("--output", choices=["table", "json"], default="table")
    partition_for.set_defaults(run=run)
