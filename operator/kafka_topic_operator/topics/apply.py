"""Carrying out a plan's actions the way AdminZkClient and kafka-reassign-partitions write them."""

from __future__ import annotations

from collections.abc import Iterable

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.topics.plan import (
    Action,
    AddPartitions,
    ChangeConfig,
    CreateTopic,
    Reassign,
)
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient


def apply_actions(zk: ZkClient, topic: str, actions: Iterable[Action]) -> None:
    """In the plan's order. Raises what AdminZkClient raises (TopicExistsException when someone
    created the topic meanwhile, a version conflict when its znode changed since it was read):
    the reconciler then reads again and plans anew."""
    for action in actions:
        match action:
            case CreateTopic(assignment=assignment, config=config):
                # The config and topic znodes in one transaction: never one without the other.
                error = admin.create_topics(zk, [admin.NewTopic(topic, assignment, config)])[topic]
                if error is not None:
                    raise error
            case ChangeConfig(config=config):
                admin.change_topic_config(zk, topic, config)
            case AddPartitions(new=new):
                admin.add_partitions(zk, topic, new)
            case Reassign(targets=targets):
                admin.reassign_partitions(
                    zk, {TopicPartition(topic, p): list(r) for p, r in targets.items()}
                )
