"""Kafka's error codes and kafka-python's exceptions as the project's exceptions."""

from __future__ import annotations

import kafka.errors as kafka_python_errors
import pytest

from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    InvalidConfigurationException,
    KafkaError,
    ReassignmentInProgressException,
    TopicDeletionDisabledException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka_admin.errors import (
    BrokerError,
    description,
    from_client_error,
    from_code,
    from_result_string,
    is_unavailable,
)

WHERE = "Kafka at k:9092"


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (3, UnknownTopicOrPartitionException),
        (36, TopicExistsException),
        (40, InvalidConfigurationException),
        (60, ReassignmentInProgressException),
        (73, TopicDeletionDisabledException),
    ],
)
def test_codes_with_a_class_keep_kafkas_message(code: int, kind: type[KafkaError]) -> None:
    error = from_code(code, "Kafka's own words.", where=WHERE)
    assert type(error) is kind and str(error) == "Kafka's own words."


def test_no_error_and_no_message() -> None:
    assert from_code(0, None, where=WHERE) is None
    # Kafka sent no message (CreatePartitions for an unknown topic): kafka-python's description.
    unknown = from_code(3, None, where=WHERE)
    assert isinstance(unknown, UnknownTopicOrPartitionException)
    assert str(unknown) == (
        "This request is for a topic or partition that does not exist on this broker."
    )
    assert description(39) == "Replication assignment is invalid (INVALID_REPLICATION_ASSIGNMENT)"


def test_codes_without_a_class_keep_kafkas_exception_name() -> None:
    policy = from_code(44, "No topics named 'x' here.", where=WHERE)
    assert isinstance(policy, BrokerError) and policy.kafka_name == "PolicyViolationException"
    assert (policy.code, str(policy)) == (44, "No topics named 'x' here.")
    odd = from_code(10_000, "new", where=WHERE)
    assert isinstance(odd, BrokerError) and odd.kafka_name == "UNKNOWN"


def test_timeouts_and_a_moving_controller_are_unavailability() -> None:
    for code in (7, 13, 41):
        error = from_code(code, None, where=WHERE)
        assert isinstance(error, ClusterUnavailableError)
        assert str(error).startswith(f"{WHERE}: ")
    assert str(from_code(7, "took long", where=WHERE)) == f"{WHERE}: took long (REQUEST_TIMED_OUT)"


def test_alter_configs_result_strings() -> None:
    assert from_result_string("OK", where=WHERE) is None
    invalid = from_result_string(
        "[Error 40] InvalidConfigurationError: Unknown topic config name: foo", where=WHERE
    )
    assert isinstance(invalid, InvalidConfigurationException)
    assert str(invalid) == "Unknown topic config name: foo"
    gone = from_result_string(
        "[Error 3] UnknownTopicOrPartitionError: The topic 'x' does not exist.", where=WHERE
    )
    assert isinstance(gone, UnknownTopicOrPartitionException)
    bare = from_result_string("[Error 3] UnknownTopicOrPartitionError: None", where=WHERE)
    assert isinstance(bare, UnknownTopicOrPartitionException)
    assert "does not exist on this broker" in str(bare)
    strange = from_result_string("something else", where=WHERE)
    assert isinstance(strange, BrokerError) and str(strange) == "something else"


def test_client_errors() -> None:
    for error in (
        kafka_python_errors.KafkaTimeoutError("Unable to bootstrap"),
        kafka_python_errors.KafkaConnectionError("111 ECONNREFUSED"),
        kafka_python_errors.NodeNotReadyError("No node_id provided"),
        kafka_python_errors.UnknownBrokerIdError(2),
        kafka_python_errors.RequestTimedOutError("slow"),
        RuntimeError("Failed to find active controller id!"),
        RuntimeError("NetworkSelector closed!"),
    ):
        assert is_unavailable(error)
        mapped = from_client_error(error, where=WHERE)
        assert isinstance(mapped, ClusterUnavailableError)
        assert str(mapped).startswith(f"{WHERE} is out of reach: ")
    assert str(from_client_error(kafka_python_errors.NodeNotReadyError(), where=WHERE)) == (
        f"{WHERE} is out of reach: no broker answers"
    )
    other = RuntimeError("a bug")
    assert not is_unavailable(other) and from_client_error(other, where=WHERE) is other
    denied = from_client_error(
        kafka_python_errors.ClusterAuthorizationFailedError(
            "Request 'X' failed with response 'Y'."
        ),
        where=WHERE,
    )
    assert isinstance(denied, BrokerError)
    assert denied.kafka_name == "ClusterAuthorizationException"
    assert str(denied).startswith("Returned by the broker when the client is not authorized")
    already = kafka_python_errors.TopicAlreadyExistsError("Topic 't' already exists.")
    exists = from_client_error(already, where=WHERE)
    assert isinstance(exists, TopicExistsException) and str(exists) == "Topic 't' already exists."
