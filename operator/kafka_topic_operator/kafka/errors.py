"""Kafka's exceptions, named as Kafka names them, so a message reads the same as Kafka's own.

Every error carries Kafka's message verbatim; `kafka_name` is the Java/Scala class name, which the
CLI and the operator's status print beside the message.
"""

from __future__ import annotations


class KafkaError(Exception):
    """Base of every Kafka rule violation raised by the pure core."""

    @property
    def kafka_name(self) -> str:
        return type(self).__name__

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""


class InvalidTopicException(KafkaError):
    """A topic name breaks Topic.validate, or collides with an existing topic."""


class TopicExistsException(KafkaError):
    """The topic (or a deletion marker for it) already exists."""


class InvalidPartitionsException(KafkaError):
    """A partition count is not positive, or would not be an increase."""


class InvalidReplicationFactorException(KafkaError):
    """A replication factor is not positive or exceeds the available brokers."""


class InvalidReplicaAssignmentException(KafkaError):
    """A manual replica assignment breaks one of AdminZkClient's rules."""


class BrokerNotAvailableException(KafkaError):
    """A manual assignment names brokers that are not registered."""


class AdminOperationException(KafkaError):
    """AdminUtils/AdminZkClient refused the operation (mixed racks, missing partition 0, ...)."""


class AdminCommandFailedException(KafkaError):
    """kafka-topics' own argument checks (for example duplicate entries in --replica-assignment)."""


class InvalidConfigurationException(KafkaError):
    """A topic config key is unknown or its value is out of range (LogConfig.validate)."""


class InvalidRequestException(KafkaError):
    """A request mixes options that cannot be used together."""


class ReassignmentInProgressException(KafkaError):
    """The topic has a partition reassignment in progress."""


class UnknownTopicOrPartitionException(KafkaError):
    """The topic or partition does not exist."""


class TopicAlreadyMarkedForDeletionException(KafkaError):
    """The topic already has a delete marker."""


class StateChangeFailedException(KafkaError):
    """A state-machine transition could not be carried out (logged by the controller, not fatal)."""


class ControllerMovedException(KafkaError):
    """The controller epoch moved on: this controller has been deposed and must stop writing."""


class IllegalArgumentException(KafkaError):
    """Kafka's IllegalArgumentException (for example changing an internal topic's partitions)."""


class IllegalStateException(KafkaError):
    """Kafka's IllegalStateException: the controller's own bookkeeping went wrong."""


class TopicDeletionDisabledException(KafkaError):
    """The cluster runs with delete.topic.enable=false (a KRaft broker says so at once)."""


class ClusterUnavailableError(RuntimeError):
    """The cluster's metadata (ZooKeeper, or Kafka's brokers through the Admin API) could not be
    reached within the allowed time: retried, never a verdict on the request."""
