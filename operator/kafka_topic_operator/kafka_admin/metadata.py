"""The status follower's cheap reads of a KRaft cluster, through librdkafka (confluent-kafka).

librdkafka decodes a Metadata response in C, several times cheaper than kafka-python's pure-Python
decoding, and far cheaper than the full read the reconciler makes (`KafkaAdminBackend.read`:
metadata, reassignments, every config; the operator's CPU at rest is in `make bench`).
So the follower notices changes here, and reads in full only the topics that changed.

- `views`: one Metadata request for every topic: per topic a fingerprint of what its status
  shows of its partitions (leaders, replicas, ISR, errors).
- `live_brokers`: DescribeCluster, the unfenced brokers: a stopped broker shows at once.
- `configs`: DescribeConfigs, each topic's own configs (source DYNAMIC_TOPIC_CONFIG), as
  `TopicSnapshot.config` holds them.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Final

from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.kafka_admin.connection import KafkaConnection

log = logging.getLogger(__name__)

CONFIG_BATCH: Final = 500  # topics per DescribeConfigs request
DYNAMIC_TOPIC_CONFIG: Final = 1  # librdkafka's ConfigSource


# What one Metadata request showed: a fingerprint of each topic's partitions, comparable only
# with another of the same source. (The live brokers come from `live_brokers`.)
Views = Mapping[str, Hashable]


class MetadataClient:
    """A librdkafka admin client of the follower's own."""

    def __init__(self, connection: KafkaConnection, *, timeout: float) -> None:
        from confluent_kafka.admin import AdminClient

        self.where = f"Kafka at {connection.bootstrap}"
        self._timeout = timeout
        # librdkafka's own log only for what is worse than an error: a broker out of reach
        # is the follower's to say, once (`follow.PollingStatusFollower._failed`).
        config: dict[str, Any] = {**connection.librdkafka_config(), "logger": log, "log_level": 2}
        self._admin: Any = AdminClient(config)

    def views(self) -> Views:
        metadata = self._ask(lambda: self._admin.list_topics(timeout=self._timeout))
        # In partition order: brokers need not list them alike.
        topics = {
            name: str(
                [(p.id, p.leader, p.replicas, p.isrs, p.error)
                 for _, p in sorted(topic.partitions.items())]
            ) + str(topic.error)
            for name, topic in metadata.topics.items()
        }  # fmt: skip
        return topics

    def live_brokers(self) -> frozenset[int]:
        future = self._admin.describe_cluster(request_timeout=self._timeout)
        described = self._ask(lambda: future.result(self._timeout))
        return frozenset(node.id for node in described.nodes)

    def configs(self, topics: Sequence[str]) -> dict[str, Mapping[str, str] | None]:
        """Each topic's own configs; None for one Kafka answered about with an error (an
        unknown topic: deleted meanwhile, or not yet known to the broker asked)."""
        from confluent_kafka.admin import ConfigResource  # type: ignore[attr-defined]

        found: dict[str, Mapping[str, str] | None] = {}
        for start in range(0, len(topics), CONFIG_BATCH):
            resources = [ConfigResource("topic", t) for t in topics[start : start + CONFIG_BATCH]]
            futures = self._admin.describe_configs(resources, request_timeout=self._timeout)
            for resource, future in futures.items():
                found[resource.name] = self._config(future)
        return found

    def _config(self, future: Any) -> Mapping[str, str] | None:
        from confluent_kafka import KafkaException

        try:
            entries = future.result(self._timeout)
        except KafkaException as e:
            if _unavailable(e):
                raise ClusterUnavailableError(f"{self.where} did not answer: {e}") from None
            return None
        return {
            key: str(entry.value)
            for key, entry in sorted(entries.items())
            if int(entry.source) == DYNAMIC_TOPIC_CONFIG and entry.value is not None
        }

    def _ask(self, request: Any) -> Any:
        from confluent_kafka import KafkaException

        try:
            return request()
        except KafkaException as e:
            if _unavailable(e):
                raise ClusterUnavailableError(f"{self.where} did not answer: {e}") from None
            raise

    def close(self) -> None:
        self._admin = None


def _unavailable(error: Any) -> bool:
    """Whether librdkafka's error says the brokers were out of reach or too slow."""
    from confluent_kafka import KafkaError

    code = error.args[0].code() if error.args else None
    return code in {
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._WAIT_COORD,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.BROKER_NOT_AVAILABLE,
        KafkaError.NETWORK_EXCEPTION,
        # Refused credentials or certificates, as the reconciler's client reports them too.
        KafkaError._AUTHENTICATION,
        KafkaError._SSL,
        KafkaError.SASL_AUTHENTICATION_FAILED,
    }
