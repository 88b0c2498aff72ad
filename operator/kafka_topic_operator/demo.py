"""`make demo`: a tour of Kafka's placement rules through the `kto` previews."""

from __future__ import annotations

import shlex
import sys

from kafka_topic_operator.cli import main as kto

STEPS: list[tuple[str, list[str]]] = [
    (
        "Six brokers in three racks: where does a 6-partition, RF-3 topic land?",
        [
            "assign",
            "--brokers",
            "0,1,2,3,4,5",
            "--racks",
            "0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1",
            "--partitions",
            "6",
            "--replication-factor",
            "3",
            "--start-index",
            "0",
        ],
    ),
    (
        "Growing a topic: Kafka starts new partitions at the broker that leads partition 0.",
        ["assign", "--brokers", "0,1,2,3", "--existing", '{"0":[2,3,0,1]}', "--partitions", "7"],
    ),
    (
        "Bad input gets Kafka's own message:",
        ["assign", "--brokers", "0,1,2,3,4", "--partitions", "10", "--replication-factor", "6"],
    ),
    (
        "Which partition does the Java producer pick for these keys (12 partitions)?",
        ["partition-for", "--partitions", "12", "order-1", "order-2", "customer-42"],
    ),
    (
        "Three consumers, 8 partitions, sticky assignor:",
        ["consumers", "--partitions", "8", "--members", "3", "--strategy", "sticky"],
    ),
]


def main() -> int:
    for title, argv in STEPS:
        print(f"\n=== {title}\n$ kto {shlex.join(argv)}", flush=True)
        status = kto(argv)
        sys.stderr.flush()
        if status != 0:
            print(f"(exit status {status})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
