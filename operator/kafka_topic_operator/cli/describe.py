"""`kto describe`: what `kafka-topics.sh --describe` shows, plus what the controller knows.

The report is pure (a ClusterSnapshot in, a JSON-ready report or kafka-topics-style text out);
`run` reads the snapshot from the cluster the flags name (`clusters.connect`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, PartitionStatus, TopicSnapshot
from kafka_topic_operator.process.argparsing import Subparsers, UsageError
from kafka_topic_operator.process.output import print_json
from kafka_topic_operator.zk.stuck_requests import stuck_requests


def _ids(ids: Sequence[int]) -> str:
    return ",".join(map(str, ids))


def topic_report(cluster: ClusterSnapshot, topic: TopicSnapshot) -> dict[str, Any]:
    live = cluster.live_brokers
    partitions = []
    for number in sorted(topic.partitions):
        p = topic.partitions[number]
        partitions.append(
            {
                "partition": number,
                "leader": p.leader,
                "replicas": list(p.replicas),
                "isr": list(p.isr),
                "adding_replicas": list(p.assignment.adding_replicas),
                "removing_replicas": list(p.assignment.removing_replicas),
                "leader_epoch": p.state.leader_and_isr.leader_epoch if p.state else None,
                "state": p.status(live).value,
                "under_replicated": p.under_replicated(),
                "offline_replicas": list(p.offline_replicas(live)),
            }
        )
    report: dict[str, Any] = {
        "topic": topic.name,
        "topic_id": topic.topic_id,
        "partition_count": len(topic.partitions),
        "replication_factor": topic.replication_factor,
        "configs": dict(sorted(topic.config.items())),
        "marked_for_deletion": topic.marked_for_deletion,
        "partitions": partitions,
    }
    if topic.marked_for_deletion:
        report["deletion_waiting_on"] = cluster.deletion_blockers(topic.name)
    if topic.name in cluster.unreadable:
        report["unreadable"] = list(cluster.unreadable[topic.name])
    return report


def cluster_report(cluster: ClusterSnapshot, topics: Sequence[str] | None = None) -> dict[str, Any]:
    names = sorted({*cluster.topics, *cluster.unreadable}) if not topics else list(topics)
    # A topic whose own znode cannot be read is not missing: it is named with why.
    unreadable = {t: list(cluster.unreadable[t]) for t in names
                  if t not in cluster.topics and t in cluster.unreadable}  # fmt: skip
    missing = [t for t in names if t not in cluster.topics and t not in unreadable]
    reports = [topic_report(cluster, cluster.topics[t]) for t in names if t in cluster.topics]
    leaders: dict[int, int] = dict.fromkeys(cluster.brokers, 0)
    replicas: dict[int, int] = dict.fromkeys(cluster.brokers, 0)
    for topic in cluster.topics.values():
        for p in topic.partitions.values():
            if p.leader in leaders:
                leaders[p.leader] += 1
            for r in p.replicas:
                replicas[r] = replicas.get(r, 0) + 1
    brokers = [
        {
            "id": b,
            "rack": cluster.brokers[b].rack if b in cluster.brokers else None,
            "alive": b in cluster.brokers,
            "leaders": leaders.get(b, 0),
            "replicas": replicas.get(b, 0),
        }
        for b in sorted(set(cluster.brokers) | set(replicas))
    ]
    return {
        "controller": {"broker_id": cluster.controller_id, "epoch": cluster.controller_epoch},
        "brokers": brokers,
        "topics": reports,
        "missing_topics": missing,
        "unreadable_topics": unreadable,
        "under_replicated_partitions": [
            f"{r['topic']}-{p['partition']}"
            for r in reports
            for p in r["partitions"]
            if p["under_replicated"]
        ],
        "offline_partitions": [
            f"{r['topic']}-{p['partition']}"
            for r in reports
            for p in r["partitions"]
            if p["state"] == PartitionStatus.OFFLINE.value
        ],
        "topics_queued_for_deletion": sorted(cluster.deletion_markers),
        "stuck_admin_requests": [s.to_json() for s in stuck_requests(cluster)],
        "problems": list(cluster.problems),
    }


def render_text(report: dict[str, Any]) -> str:
    lines: list[str] = []
    controller = report["controller"]
    lines.append(
        f"Controller: {controller['broker_id'] if controller['broker_id'] is not None else 'none'}"
        f"\tControllerEpoch: {controller['epoch'] if controller['epoch'] is not None else 'none'}"
    )
    for t in report["topics"]:
        configs = ",".join(f"{k}={v}" for k, v in t["configs"].items())
        head = (
            f"Topic: {t['topic']}\tTopicId: {t['topic_id'] or 'none'}\t"
            f"PartitionCount: {t['partition_count']}\tReplicationFactor: {t['replication_factor']}"
            f"\tConfigs: {configs}"
        )
        if t["marked_for_deletion"]:
            head += "\tMarkedForDeletion: true"
        lines.append(head)
        for p in t["partitions"]:
            line = (
                f"\tTopic: {t['topic']}\tPartition: {p['partition']}\t"
                f"Leader: {p['leader'] if p['leader'] >= 0 else 'none'}\t"
                f"Replicas: {_ids(p['replicas'])}\tIsr: {_ids(p['isr'])}\tState: {p['state']}"
            )
            if p["adding_replicas"]:
                line += f"\tAdding Replicas: {_ids(p['adding_replicas'])}"
            if p["removing_replicas"]:
                line += f"\tRemoving Replicas: {_ids(p['removing_replicas'])}"
            if p["offline_replicas"]:
                line += f"\tOffline: {_ids(p['offline_replicas'])}"
            lines.append(line)
        for reason in t.get("deletion_waiting_on", []):
            lines.append(f"\tDeletion waits: {reason}")
        for problem in t.get("unreadable", []):
            lines.append(f"\tUnreadable: {problem}")
    for name, problems in report.get("unreadable_topics", {}).items():
        lines.append(f"Topic: {name}\tunreadable: {'; '.join(problems)}")
    for name in report["missing_topics"]:
        lines.append(f"Topic: {name}\tdoes not exist")
    lines.append("")
    lines.append(
        f"Under-replicated partitions: {len(report['under_replicated_partitions'])}\t"
        f"Offline partitions: {len(report['offline_partitions'])}\t"
        f"Queued for deletion: {', '.join(report['topics_queued_for_deletion']) or 'none'}"
    )
    lines.append("Broker\tRack\tAlive\tLeaders\tReplicas")
    for b in report["brokers"]:
        lines.append(
            f"{b['id']}\t{b['rack'] or '-'}\t{'yes' if b['alive'] else 'no'}\t"
            f"{b['leaders']}\t{b['replicas']}"
        )
    for stuck in report["stuck_admin_requests"]:
        lines.append(f"Stuck: {stuck['path']}: {stuck['reason']}. To clear it: {stuck['clears']}")
    for problem in report["problems"]:
        lines.append(f"Problem: {problem}")
    return "\n".join(lines)


# ---- the command -------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> None:
    # Imported here so the offline previews never load the cluster clients.
    from kafka_topic_operator.clusters.connect import cluster_flags, connect

    cluster = connect(cluster_flags(args), timeout=args.timeout, request_timeout=args.timeout)
    try:
        cluster.check()
        report = cluster_report(cluster.snapshot(args.topics or None), args.topics or None)
    finally:
        cluster.close()
    if args.output == "json":
        print_json(report)
    else:
        print(render_text(report))
    if report["missing_topics"]:
        raise UsageError("topics not found: " + ", ".join(report["missing_topics"]))


def add_command(commands: Subparsers) -> None:
    from kafka_topic_operator.clusters.connect import add_cluster_arguments

    describe = commands.add_parser(
        "describe",
        help="topics, partitions, leaders, ISRs and deletions, read from ZooKeeper or, on "
        "KRaft, Kafka's Admin API",
        description="What kafka-topics --describe shows, plus partition states, offline and "
        "under-replicated partitions, why deletions wait, admin requests Kafka's controller will "
        "not process (and what clears them), and a per-broker summary. A "
        "ZooKeeper-mode cluster is read from its ZooKeeper (--zookeeper; credentials from the "
        "--zookeeper-*-file flags, $KTO_ZOOKEEPER_DIGEST or $KTO_ZOOKEEPER_SASL), a KRaft "
        "cluster through its brokers (--bootstrap-servers, with the security flags of kto run).",
    )
    add_cluster_arguments(describe, zookeeper_acl=False)
    describe.add_argument("topics", nargs="*", metavar="TOPIC")
    describe.add_argument("--output", choices=["table", "json"], default="table")
    describe.add_argument(
        "--timeout", type=float, default=15.0, help="connect and request timeout (s)"
    )
    describe.set_defaults(run=run)
