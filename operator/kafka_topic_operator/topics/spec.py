"""A KafkaTopic's spec, parsed with pydantic and checked with Kafka's own rules.

The CRD schema rejects what a schema can (types, ranges, enums, immutability); this module
catches the rest with Kafka's messages (topic names, config keys and values, placements), so a
bad manifest gets a precise `InvalidSpec` reason and nothing is written to ZooKeeper. It is pure:
brokers and existing topics, which need I/O, are checked by the reconciler's planning step.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from kafka_topic_operator.kafka.assignment import RackAwareMode
from kafka_topic_operator.kafka.configs import TOPIC_CONFIGS, normalize_topic_config
from kafka_topic_operator.kafka.errors import (
    InvalidConfigurationException,
    InvalidReplicaAssignmentException,
    InvalidTopicException,
)
from kafka_topic_operator.kafka.names import validate_topic_name

MAX_REPLICATION_FACTOR = 32767


class DeletionPolicy(Enum):
    DELETE = "Delete"
    RETAIN = "Retain"


class TopicSpec(BaseModel):
    """`spec` of a KafkaTopic (kto.dev/v1), field names as in Strimzi's v1beta2."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    topic_name: StrictStr | None = Field(default=None, alias="topicName")
    partitions: StrictInt | None = Field(default=None, ge=1, le=2**31 - 1)
    replicas: StrictInt | None = Field(default=None, ge=1, le=MAX_REPLICATION_FACTOR)
    config: dict[str, Any] = Field(default_factory=dict)  # checked by _config_values
    replica_assignment: list[list[StrictInt]] | None = Field(
        default=None, alias="replicaAssignment"
    )
    rack_aware_mode: RackAwareMode = Field(default=RackAwareMode.ENFORCED, alias="rackAwareMode")
    deletion_policy: DeletionPolicy = Field(default=DeletionPolicy.DELETE, alias="deletionPolicy")


@dataclass(frozen=True, slots=True)
class DesiredTopic:
    """What the resource asks for, in Kafka's terms."""

    name: str
    partitions: int
    replication_factor: int
    config: Mapping[str, str]  # as Kafka stores it: every value a string
    assignment: Mapping[int, tuple[int, ...]] | None  # explicit placement, else Kafka places
    rack_aware_mode: RackAwareMode
    deletion_policy: DeletionPolicy


# Set on a topic by whoever moves its replicas (kafka-reassign-partitions, a KafkaRebalance)
# for the time the data moves, and removed by it afterwards.
REASSIGNMENT_THROTTLES = (
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
)


def config_to_keep(desired: Mapping[str, str], actual: Mapping[str, str]) -> dict[str, str]:
    """The topic config a resource wants, given the one in ZooKeeper: its spec's, plus the
    reassignment throttles the spec does not set, which belong to the reassignment in flight
    (dropping them would lift its throttle; reporting them would call it drift)."""
    kept = {k: actual[k] for k in REASSIGNMENT_THROTTLES if k in actual and k not in desired}
    return {**desired, **kept}


class InvalidSpec(Exception):
    """The spec cannot be turned into a topic; the message says which field and why."""


def topic_of(resource_name: str, spec: Mapping[str, Any]) -> str:
    """The topic a resource names, valid spec or not: spec.topicName, else the resource's own
    name (claims, and the status of a spec that cannot be parsed, use it)."""
    return str(spec.get("topicName") or resource_name)


@dataclass(frozen=True, slots=True)
class RejectedSpec:
    """A spec no topic can be made from: the topic it names, and why (an InvalidSpec reason)."""

    name: str
    message: str


ParsedSpec = DesiredTopic | RejectedSpec
"""A KafkaTopic's spec as it travels from the handler to the plan: parsed once, where it enters."""


def parse_spec(resource_name: str, spec: Mapping[str, Any]) -> ParsedSpec:
    """`desired_topic`, with a rejection as a value rather than an exception."""
    try:
        return desired_topic(resource_name, spec)
    except InvalidSpec as e:
        return RejectedSpec(topic_of(resource_name, spec), str(e))


def desired_topic(resource_name: str, spec: Mapping[str, Any]) -> DesiredTopic:
    """The topic a KafkaTopic named `resource_name` with `spec` asks for, or InvalidSpec."""
    try:
        parsed = TopicSpec.model_validate(dict(spec))
    except ValidationError as e:
        raise InvalidSpec(validation_message(e)) from None
    # As topic_of, but an empty spec.topicName is refused with Kafka's message.
    name = parsed.topic_name if parsed.topic_name is not None else resource_name
    try:
        validate_topic_name(name)
    except InvalidTopicException as e:
        field = "spec.topicName" if parsed.topic_name is not None else "metadata.name"
        raise InvalidSpec(f"{field}: {e}") from None
    assignment = _assignment(parsed)
    if assignment is not None:
        partitions, replication_factor = len(assignment), len(assignment[0])
    elif parsed.partitions is not None and parsed.replicas is not None:
        partitions, replication_factor = parsed.partitions, parsed.replicas
    else:
        raise InvalidSpec(
            "spec: partitions and replicas are required unless replicaAssignment is given"
        )
    _check_config_values(parsed.config)
    try:
        config = normalize_topic_config(parsed.config)
    except InvalidConfigurationException as e:
        raise InvalidSpec(f"spec.config: {e}{_did_you_mean(parsed.config)}") from None
    return DesiredTopic(
        name=name,
        partitions=partitions,
        replication_factor=replication_factor,
        config=config,
        assignment=assignment,
        rack_aware_mode=parsed.rack_aware_mode,
        deletion_policy=parsed.deletion_policy,
    )


_JSON_TYPE_NAMES = {float: "a number with a fraction", list: "a list", dict: "an object"}


def _check_config_values(config: Mapping[str, Any]) -> None:
    for key, value in config.items():
        if not isinstance(value, str | int | bool):
            what = (
                "null" if value is None else _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
            )
            raise InvalidSpec(
                f"spec.config.{key}: a config value must be a string, an integer or a boolean, "
                f"not {what}"
            )


def _assignment(spec: TopicSpec) -> dict[int, tuple[int, ...]] | None:
    rows = spec.replica_assignment
    if rows is None:
        return None
    if not rows:
        raise InvalidSpec("spec.replicaAssignment: at least one partition is required")
    if spec.partitions is not None and spec.partitions != len(rows):
        raise InvalidSpec(
            f"spec.replicaAssignment: {len(rows)} partitions listed but spec.partitions is "
            f"{spec.partitions}"
        )
    assignment = {p: tuple(row) for p, row in enumerate(rows)}
    try:
        for partition, replicas in assignment.items():
            if not replicas:
                raise InvalidReplicaAssignmentException(
                    f"Cannot have replication factor of 0 for partition id {partition}."
                )
            if any(b < 0 for b in replicas):
                raise InvalidReplicaAssignmentException(
                    f"Broker ids must be non-negative, partition id {partition} has "
                    f"{', '.join(map(str, replicas))}."
                )
            if len(set(replicas)) != len(replicas):
                raise InvalidReplicaAssignmentException(
                    "Duplicate brokers not allowed in replica assignment: "
                    f"{', '.join(map(str, replicas))} for partition id {partition}."
                )
        expected = spec.replicas if spec.replicas is not None else len(assignment[0])
        bad = [(p, len(r)) for p, r in assignment.items() if len(r) != expected]
        if bad:
            raise InvalidReplicaAssignmentException(
                "Inconsistent replication factor between partitions, partition 0 has "
                f"{expected} while partitions [{', '.join(str(p) for p, _ in bad)}] have "
                f"replication factors [{', '.join(str(rf) for _, rf in bad)}], respectively."
            )
    except InvalidReplicaAssignmentException as e:
        raise InvalidSpec(f"spec.replicaAssignment: {e}") from None
    return assignment


def validation_message(error: ValidationError) -> str:
    """pydantic's errors as `spec.<field>: <message>` lines, with the CRD's field names."""
    lines = []
    for item in error.errors():
        path = ".".join(str(part) for part in ("spec", *item["loc"]))
        lines.append(f"{path}: {item['msg']}")
    return "; ".join(lines)


def _did_you_mean(config: Mapping[str, Any]) -> str:
    """A hint after Kafka's own message for a misspelt config name: the closest real one."""
    for name in config:
        if name not in TOPIC_CONFIGS:
            close = difflib.get_close_matches(name, TOPIC_CONFIGS, n=1, cutoff=0.8)
            return f" (did you mean {close[0]}?)" if close else ""
    return ""
