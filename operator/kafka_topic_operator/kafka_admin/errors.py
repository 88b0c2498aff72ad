"""Kafka's error codes and kafka-python's exceptions as the project's exceptions (`kafka.errors`),
with Kafka's own messages; what says the cluster did not answer becomes ClusterUnavailableError."""

from __future__ import annotations

import re
from typing import Final

import kafka.errors as kafka_python_errors

from kafka_topic_operator.kafka.errors import (
    BrokerNotAvailableException,
    ClusterUnavailableError,
    InvalidConfigurationException,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    InvalidRequestException,
    InvalidTopicException,
    KafkaError,
    ReassignmentInProgressException,
    TopicDeletionDisabledException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)

# Kafka's error codes (org.apache.kafka.common.protocol.Errors) the project has a class for.
_BY_CODE: Final[dict[int, type[KafkaError]]] = {
    3: UnknownTopicOrPartitionException,
    8: BrokerNotAvailableException,
    17: InvalidTopicException,
    36: TopicExistsException,
    37: InvalidPartitionsException,
    38: InvalidReplicationFactorException,
    39: InvalidReplicaAssignmentException,
    40: InvalidConfigurationException,
    42: InvalidRequestException,
    60: ReassignmentInProgressException,
    73: TopicDeletionDisabledException,
}

# Codes that say the cluster could not do it in time or the controller moved: retried.
UNAVAILABLE_CODES: Final = frozenset(
    {
        7,  # REQUEST_TIMED_OUT
        13,  # NETWORK_EXCEPTION
        41,  # NOT_CONTROLLER
    }
)

# Kafka's class names for codes the operator may meet without a class of its own.
_KAFKA_NAMES: Final = {
    -1: "UnknownServerException",
    29: "TopicAuthorizationException",
    31: "ClusterAuthorizationException",
    44: "PolicyViolationException",
    80: "PreferredLeaderNotAvailableException",
    83: "EligibleLeadersNotAvailableException",
    84: "ElectionNotNeededException",
    85: "NoReassignmentInProgressException",
    89: "ThrottlingQuotaExceededException",
}

# kafka-python's client-side exceptions that mean no answer (in time) from the cluster.
_UNAVAILABLE_TYPES: Final = (
    kafka_python_errors.KafkaTimeoutError,
    kafka_python_errors.KafkaConnectionError,
    kafka_python_errors.NodeNotReadyError,
    kafka_python_errors.MetadataEmptyBrokerList,
    kafka_python_errors.StaleMetadata,
    kafka_python_errors.Cancelled,
    kafka_python_errors.UnknownBrokerIdError,
    kafka_python_errors.RequestTimedOutError,
    kafka_python_errors.NotControllerError,
    kafka_python_errors.NetworkExceptionError,
    kafka_python_errors.SaslAuthenticationFailedError,
    kafka_python_errors.UnsupportedSaslMechanismError,
)
# ... and the RuntimeErrors it raises for the same reasons (the controller kept moving, or the
# client was closed while a call waited).
_UNAVAILABLE_RUNTIME = re.compile(r"Failed to find active controller id|NetworkSelector closed")

# str() of kafka-python's BrokerResponseError: "[Error 40] InvalidConfigurationError: message".
_RESPONSE_ERROR = re.compile(r"\[Error (?P<code>-?\d+)\] \w+(?:: (?P<message>.*))?", re.DOTALL)


class BrokerError(KafkaError):
    """An error Kafka answered with that the project has no class for; `kafka_name` is Kafka's
    class name where known, else the protocol's error name (POLICY_VIOLATION)."""

    def __init__(self, message: str, code: int, name: str) -> None:
        super().__init__(message)
        self.code = code
        self.name = name

    @property
    def kafka_name(self) -> str:
        return self.name


def _description(code: int) -> tuple[str, str]:
    """kafka-python's protocol name and description of a code."""
    error = kafka_python_errors.for_code(code)
    return str(error.message or f"error {code}"), str(error.description or "")


def description(code: int) -> str:
    """What a code means, as kafka-python describes it (where Kafka's message is lost)."""
    name, text = _description(code)
    return f"{text.rstrip('.')} ({name})" if text else name


def from_code(code: int, message: str | None, *, where: str) -> Exception | None:
    """The exception for an error code in a response (None for none), with Kafka's message, or
    kafka-python's description of the code where Kafka sent none."""
    if code == 0:
        return None
    name, meaning = _description(code)
    text = message if message and message != "None" else meaning or name
    if code in UNAVAILABLE_CODES:
        return ClusterUnavailableError(f"{where}: {text} ({name})")
    known = _BY_CODE.get(code)
    if known is not None:
        return known(text)
    return BrokerError(text, code, _KAFKA_NAMES.get(code, name))


def from_result_string(result: str, *, where: str) -> Exception | None:
    """alter_configs() gives each resource's outcome as a string: "OK", or the str() of the
    BrokerResponseError it built from the code and Kafka's message."""
    if result == "OK":
        return None
    match = _RESPONSE_ERROR.fullmatch(result)
    if match is None:
        return BrokerError(result, -1, "UnknownServerException")
    return from_code(int(match.group("code")), match.group("message"), where=where)


def is_unavailable(error: BaseException) -> bool:
    """Whether kafka-python raised because the cluster did not answer (in time)."""
    if isinstance(error, _UNAVAILABLE_TYPES):
        return True
    return isinstance(error, RuntimeError) and bool(_UNAVAILABLE_RUNTIME.search(str(error)))


def from_client_error(error: BaseException, *, where: str) -> Exception:
    """What a kafka-python exception raised by a call becomes."""
    if isinstance(error, kafka_python_errors.NodeNotReadyError):
        # kafka-python's words for "every broker is backed off from": "No node_id provided".
        return ClusterUnavailableError(f"{where} is out of reach: no broker answers")
    if is_unavailable(error):
        detail = str(error) or type(error).__name__
        return ClusterUnavailableError(f"{where} is out of reach: {detail}")
    if isinstance(error, kafka_python_errors.BrokerResponseError) and error.errno is not None:
        message = str(error.args[0]) if error.args else None
        if message is not None and message.startswith("Request '"):
            message = None  # kafka-python's dump of the request and response, not Kafka's words
        found = from_code(int(error.errno), message, where=where)
        if found is not None:
            return found
    return error if isinstance(error, Exception) else RuntimeError(str(error))
