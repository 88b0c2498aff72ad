"""The planner's inputs taken from a cluster snapshot (pure)."""

from __future__ import annotations

from collections.abc import Collection

from kafka_topic_operator.kafka.assignment import BrokerMetadata
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.topics.plan import ActualTopic, Cluster


def actual_topic(snapshot: ClusterSnapshot, name: str) -> ActualTopic | None:
    topic = snapshot.topics.get(name)
    if topic is None:
        return None
    return ActualTopic(
        partitions={p: s.assignment for p, s in topic.partitions.items()},
        config=dict(topic.config),
        topic_id=topic.topic_id,
        marked_for_deletion=topic.marked_for_deletion or name in snapshot.deletion_markers,
    )


def cluster_for_planning(snapshot: ClusterSnapshot, all_topics: Collection[str]) -> Cluster:
    """Live brokers with their racks, every topic name, and those queued for deletion."""
    return Cluster(
        brokers=[BrokerMetadata(b, info.rack) for b, info in sorted(snapshot.brokers.items())],
        topics=sorted(all_topics),
        marked_for_deletion=sorted(snapshot.deletion_markers),
    )
