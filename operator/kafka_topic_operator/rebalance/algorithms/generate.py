"""What `kafka-reassign-partitions.sh --generate` would propose (pure): every topic's assignment
recomputed from scratch with AdminUtils.assignReplicasToBrokers over the given brokers, random
start index and shift drawn per topic, as ReassignPartitionsCommand.calculateAssignment does. It
never looks at the current placement: the anchor our plans are compared with."""

from __future__ import annotations

from collections import defaultdict

from kafka_topic_operator.kafka.assignment import (
    BrokerMetadata,
    RackAwareMode,
    RandomSource,
    assign_replicas_to_brokers,
    broker_metadatas,
    default_random,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel


def generate(
    model: ClusterModel,
    brokers: tuple[int, ...],
    *,
    rack_aware: bool = True,
    rng: RandomSource | None = None,
) -> dict[TopicPartition, tuple[int, ...]]:
    """The proposal of `--generate --broker-list <brokers>` (`--disable-rack-aware` when
    `rack_aware` is false) for every topic of `model`."""
    rng = rng or default_random()
    metadata = broker_metadatas(
        [BrokerMetadata(b, model.rack_of(b)) for b in brokers],
        RackAwareMode.ENFORCED if rack_aware else RackAwareMode.DISABLED,
    )
    by_topic: dict[str, list[TopicPartition]] = defaultdict(list)
    for tp in model.assignment:
        by_topic[tp.topic].append(tp)
    proposal: dict[TopicPartition, tuple[int, ...]] = {}
    for topic in sorted(by_topic):
        partitions = sorted(by_topic[topic])
        rf = len(model.assignment[partitions[0]])
        placed = assign_replicas_to_brokers(metadata, len(partitions), rf, rng=rng)
        # Kafka numbers a topic's partitions 0..n-1; a snapshot missing one (its znode
        # unreadable) gives the partitions it has the proposal's lists in order.
        for i, tp in enumerate(partitions):
            proposal[tp] = tuple(placed[i])
    return proposal
