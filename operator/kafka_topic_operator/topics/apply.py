"""Carrying out a plan's actions through a backend (on ZooKeeper, the way AdminZkClient and
kafka-reassign-partitions write them)."""

from __future__ import annotations

from collections.abc import Iterable

from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.topics.backend import TopicBackend
from kafka_topic_operator.topics.plan import (
    Action,
    AddPartitions,
    ChangeConfig,
    CreateTopic,
    Reassign,
)


def apply_actions(backend: TopicBackend, topic: str, actions: Iterable[Action]) -> None:
    """In the plan's order. Raises what AdminZkClient raises (TopicExistsException when someone
    created the topic meanwhile, a version conflict when its znode changed since it was read):
    the reconciler then reads again and plans anew."""
    for action in actions:
        match action:
            case CreateTopic(assignment=assignment, config=config):
                # The config and topic znodes in one transaction: never one without the other.
                error = backend.create_topics([NewTopic(topic, assignment, config)])[topic]
                if error is not None:
                    raise error
            case ChangeConfig(config=config):
                backend.change_config(topic, config)
            case AddPartitions(new=new):
                backend.add_partitions(topic, new)
            case Reassign():
                targets, before = action.of_topic(topic)
                backend.reassign(targets, expected=before)
