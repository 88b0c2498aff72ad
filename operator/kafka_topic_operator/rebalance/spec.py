"""A KafkaRebalance's spec, parsed with pydantic under the CRD's rules (crds/kafkarebalances.yaml).

The API server enforces the schema and its CEL rules, but the operator does not rely on it (the
installed CRD may be older than the operator, and objects stored before a rule existed are never
re-checked), so the model holds the same defaults, bounds and rules, and one the schema cannot
express: `excludedTopics` must compile as a regular expression. Errors read `spec.<field>: why`;
a cross-field rule is reported as the API server reports it, at the object holding the rule and
with its message (`spec: brokers is required ...`).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from kafka_topic_operator.topics.spec import validation_message

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
# Suffixes Spark and Kubernetes both read as powers of 1024 (Spark's 2g, Kubernetes' 2Gi).
MEMORY_PATTERN = r"^[1-9][0-9]*([kmgtp]|[KMGTP]i)$"
# A positive Kubernetes CPU quantity, as Spark passes it on to a pod's request: 250m, 0.5, 2.
CPU_PATTERN = r"^(0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?|[1-9][0-9]*m)$"
# A DNS-1123 subdomain: what ServiceAccount and PersistentVolumeClaim names must be.
NAME_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"

# What a ConfigMap's data keys may be.
KEY_PATTERN = r"^[-._a-zA-Z0-9]+$"
MASTER_PATTERN = r"^(local(\[([1-9][0-9]*|\*)\])?|spark://[^\s/]+(,[^\s/]+)*)$"

Count = Annotated[StrictInt, Field(ge=1, le=INT32_MAX)]
BrokerId = Annotated[StrictInt, Field(ge=0, le=INT32_MAX)]
Memory = Annotated[StrictStr, Field(pattern=MEMORY_PATTERN)]
Cpu = Annotated[StrictStr, Field(pattern=CPU_PATTERN)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=253, pattern=NAME_PATTERN)]
T = TypeVar("T", bound=Hashable)


class RebalanceMode(StrEnum):
    FULL = "full"
    ADD_BROKERS = "add-brokers"
    REMOVE_BROKERS = "remove-brokers"


class Goal(StrEnum):
    RACK_AWARE = "RackAware"
    REPLICA_CAPACITY = "ReplicaCapacity"
    REPLICA_DISTRIBUTION = "ReplicaDistribution"
    LEADER_DISTRIBUTION = "LeaderDistribution"
    TOPIC_REPLICA_DISTRIBUTION = "TopicReplicaDistribution"
    DISK_USAGE_DISTRIBUTION = "DiskUsageDistribution"


# Constraints every move respects, wherever they are listed; the other goals are optimized.
HARD_GOALS = frozenset({Goal.RACK_AWARE, Goal.REPLICA_CAPACITY})
DEFAULT_GOALS = (Goal.RACK_AWARE, Goal.REPLICA_DISTRIBUTION, Goal.LEADER_DISTRIBUTION)


class EngineType(StrEnum):
    LOCAL = "local"
    KUBERNETES = "kubernetes"
    SPARK_APPLICATION = "sparkApplication"


class InvalidRebalanceSpec(Exception):
    """The spec cannot be planned; the message says which field and why."""


def _listed(values: tuple[T, ...], what: str) -> tuple[T, ...]:
    """A non-empty list without repeats (checked here rather than with min_length, which would
    also report a list whose items were refused as empty)."""
    if not values:
        raise PydanticCustomError("too_short", f"at least one {what} is required")
    seen: set[T] = set()
    for value in values:
        if value in seen:
            raise PydanticCustomError("duplicate", f"{what} {value} is listed twice")
        seen.add(value)
    return values


def _check_rules(broken: list[str]) -> None:
    """Raise the CRD's messages of the cross-field rules that fail, as the API server reports
    them: at the object that holds the rule (`spec`, `spec.engine`), each naming its field."""
    if broken:
        # A custom error keeps the text as written (a ValueError would get "Value error, ").
        raise PydanticCustomError("rule", "; ".join(broken))


class EngineSpec(BaseModel):
    """`spec.engine`: where the plan is computed."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # only the CRD's names

    type: EngineType = EngineType.LOCAL
    # The local engine's Spark: local[N] or a standalone master (spark://host:port); absent,
    # none when the exact plan covers the request, else local[*].
    master: Annotated[StrictStr, Field(pattern=MASTER_PATTERN)] | None = None
    image: StrictStr | None = Field(default=None, min_length=1)
    executors: Count | None = None
    executor_cores: Count | None = Field(default=None, alias="executorCores")
    executor_memory: Memory | None = Field(default=None, alias="executorMemory")
    driver_memory: Memory | None = Field(default=None, alias="driverMemory")
    # What the pods ask the scheduler for, below the cores Spark runs tasks on: a small node
    # then holds the driver and executors that one core each would not fit.
    executor_cpu_request: Cpu | None = Field(default=None, alias="executorCpuRequest")
    driver_cpu_request: Cpu | None = Field(default=None, alias="driverCpuRequest")
    service_account_name: Name | None = Field(default=None, alias="serviceAccountName")
    work_dir: StrictStr | None = Field(default=None, alias="workDir", min_length=1)
    volume: Name | None = None

    @model_validator(mode="after")
    def _rules(self) -> EngineSpec:
        broken = []
        if self.master is not None and self.type != EngineType.LOCAL:
            broken.append("master is only used by the local engine")
        if self.volume is not None and self.type == EngineType.LOCAL:
            broken.append("volume is only mounted by the kubernetes and sparkApplication engines")
        if self.volume is not None and self.work_dir is not None and self.work_dir[:1] != "/":
            broken.append(
                "workDir must be an absolute path when volume is set: the volume is mounted there"
            )
        _check_rules(broken)
        return self


class PartitionSizesSpec(BaseModel):
    """`spec.partitionSizes`: the ConfigMap (in the resource's namespace) holding partition
    sizes, as the metrics file or as `kafka-log-dirs.sh --describe` prints them."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # only the CRD's names

    config_map: Name = Field(alias="configMap")
    key: Annotated[StrictStr, Field(max_length=253, pattern=KEY_PATTERN)] | None = None


class RebalanceSpec(BaseModel):
    """`spec` of a KafkaRebalance (kto.dev/v1): field names as the CRD's, defaults as its."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # only the CRD's names

    mode: RebalanceMode = RebalanceMode.FULL
    brokers: tuple[BrokerId, ...] | None = None
    goals: tuple[Goal, ...] = DEFAULT_GOALS
    max_replicas_per_broker: Count | None = Field(default=None, alias="maxReplicasPerBroker")
    excluded_topics: StrictStr | None = Field(default=None, alias="excludedTopics", min_length=1)
    # Cruise Control's defaults: max.num.cluster.partition.movements,
    # num.concurrent.partition.movements.per.broker and num.concurrent.leader.movements.
    max_partition_movements: Count = Field(default=1250, alias="maxPartitionMovements")
    concurrent_partition_movements_per_broker: Count = Field(
        default=5, alias="concurrentPartitionMovementsPerBroker"
    )
    concurrent_leader_movements: Count = Field(default=1000, alias="concurrentLeaderMovements")
    replication_throttle: StrictInt | None = Field(
        default=None, alias="replicationThrottle", ge=0, le=INT64_MAX
    )  # bytes/s; 0 or None: no throttle
    engine: EngineSpec = Field(default_factory=EngineSpec)
    partition_sizes: PartitionSizesSpec | None = Field(default=None, alias="partitionSizes")

    @field_validator("brokers")
    @classmethod
    def _brokers_listed(cls, value: tuple[int, ...] | None) -> tuple[int, ...] | None:
        return value if value is None else _listed(value, "broker")

    @field_validator("goals")
    @classmethod
    def _goals_listed(cls, value: tuple[Goal, ...]) -> tuple[Goal, ...]:
        return _listed(value, "goal")

    @field_validator("excluded_topics")
    @classmethod
    def _excluded_topics_compile(cls, value: str | None) -> str | None:
        # The planners match it with Python's re (fullmatch); Java's syntax mostly agrees.
        if value is not None:
            try:
                re.compile(value)
            except re.error as e:
                raise PydanticCustomError(
                    "regex", "not a valid regular expression: {error}", {"error": str(e)}
                ) from None
        return value

    @model_validator(mode="after")
    def _rules(self) -> RebalanceSpec:
        broken = []
        if self.mode != RebalanceMode.FULL and self.brokers is None:
            broken.append("brokers is required when mode is add-brokers or remove-brokers")
        if self.mode == RebalanceMode.FULL and self.brokers is not None:
            broken.append(
                "brokers is only for add-brokers and remove-brokers: a full rebalance uses "
                "every broker"
            )
        capacity = Goal.REPLICA_CAPACITY in self.goals
        if capacity and self.max_replicas_per_broker is None:
            broken.append("maxReplicasPerBroker is required when goals include ReplicaCapacity")
        if not capacity and self.max_replicas_per_broker is not None:
            broken.append(
                "maxReplicasPerBroker is only used by the ReplicaCapacity goal: add it to goals"
            )
        _check_rules(broken)
        return self

    @property
    def hard_goals(self) -> tuple[Goal, ...]:
        """The listed goals that are constraints (RackAware, ReplicaCapacity), in order."""
        return tuple(g for g in self.goals if g in HARD_GOALS)

    @property
    def soft_goals(self) -> tuple[Goal, ...]:
        """The listed goals that are optimized as far as the hard goals allow, in order."""
        return tuple(g for g in self.goals if g not in HARD_GOALS)

    @property
    def balance_leaders(self) -> bool:
        return Goal.LEADER_DISTRIBUTION in self.goals

    @property
    def needs_sizes(self) -> bool:
        """DiskUsageDistribution balances bytes: it cannot plan without partition sizes."""
        return Goal.DISK_USAGE_DISTRIBUTION in self.goals

    @property
    def rack_aware(self) -> bool:
        return Goal.RACK_AWARE in self.goals


def rebalance_spec(spec: Mapping[str, Any]) -> RebalanceSpec:
    """The KafkaRebalance `spec`, parsed and checked, or InvalidRebalanceSpec."""
    try:
        return RebalanceSpec.model_validate(dict(spec))
    except ValidationError as e:
        raise InvalidRebalanceSpec(validation_message(e)) from None
