"""Clusters as Kafka leaves them when it grows (pure): topics placed by Kafka's own assignment
(AdminUtils.assignReplicasToBrokers, rack-unaware, random start per topic) on the old brokers,
then new brokers added empty. The reference page's benchmark instances have this shape."""

from __future__ import annotations

import random

from kafka_topic_operator.kafka.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    default_random,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel


def grown_cluster(
    seed: int,
    old: int,
    new: int,
    *,
    topics: tuple[int, int] = (5, 25),
    partitions: tuple[int, int] = (1, 30),
    replication_factor: int = 3,
    racks: int = 0,
) -> tuple[ClusterModel, tuple[int, ...]]:
    """A seeded grown cluster and all of its brokers; with `racks`, broker b is in rack
    `r{b % racks}`."""
    chooser = random.Random(seed)
    rng = default_random(seed)
    metadata = [BrokerMetadata(b) for b in range(old)]
    assignment = {}
    for t in range(chooser.randint(*topics)):
        count = chooser.randint(*partitions)
        placed = assign_replicas_to_brokers(metadata, count, replication_factor, rng=rng)
        for p, replicas in placed.items():
            assignment[TopicPartition(f"t{t}", p)] = tuple(replicas)
    brokers = tuple(range(old + new))
    rack_of = {b: f"r{b % racks}" for b in brokers} if racks else {}
    return ClusterModel(assignment, rack_of), brokers
