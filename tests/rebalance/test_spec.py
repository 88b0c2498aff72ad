"""A KafkaRebalance's spec as the operator reads it: defaults, the exact message for each bad
input, and what the goals mean for the planners."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafka_topic_operator.rebalance.spec import (
    EngineSpec,
    EngineType,
    Goal,
    InvalidRebalanceSpec,
    RebalanceMode,
    RebalanceSpec,
    rebalance_spec,
)

GOALS = ("'RackAware', 'ReplicaCapacity', 'ReplicaDistribution', 'LeaderDistribution', "
         "'TopicReplicaDistribution' or 'DiskUsageDistribution'")  # fmt: skip


def test_the_defaults_are_a_full_rebalance_within_cruise_controls_limits() -> None:
    spec = rebalance_spec({})
    assert spec == RebalanceSpec()
    assert spec.mode is RebalanceMode.FULL
    assert spec.brokers is None
    assert spec.goals == (Goal.RACK_AWARE, Goal.REPLICA_DISTRIBUTION, Goal.LEADER_DISTRIBUTION)
    assert spec.max_replicas_per_broker is None
    assert spec.excluded_topics is None
    assert spec.max_partition_movements == 1250
    assert spec.concurrent_partition_movements_per_broker == 5
    assert spec.concurrent_leader_movements == 1000
    assert spec.replication_throttle is None
    assert spec.engine == EngineSpec(type=EngineType.LOCAL)


def test_fields_are_read_by_their_crd_names() -> None:
    spec = rebalance_spec({
        "mode": "remove-brokers", "brokers": [4, 2],
        "goals": ["ReplicaCapacity", "ReplicaDistribution"], "maxReplicasPerBroker": 3000,
        "excludedTopics": "__.*", "maxPartitionMovements": 200,
        "concurrentPartitionMovementsPerBroker": 2, "concurrentLeaderMovements": 100,
        "replicationThrottle": 5_000_000,
        "engine": {"type": "sparkApplication", "image": "spark:3.5", "executors": 8,
                   "executorCores": 4, "executorMemory": "8g", "driverMemory": "2Gi",
                   "serviceAccountName": "spark", "workDir": "s3a://plans/kafka"},
    })  # fmt: skip
    assert spec.mode is RebalanceMode.REMOVE_BROKERS
    assert spec.brokers == (4, 2)
    assert spec.max_replicas_per_broker == 3000
    assert spec.excluded_topics == "__.*"
    assert (spec.max_partition_movements, spec.concurrent_partition_movements_per_broker,
            spec.concurrent_leader_movements) == (200, 2, 100)  # fmt: skip
    assert spec.replication_throttle == 5_000_000
    engine = spec.engine
    assert engine.type is EngineType.SPARK_APPLICATION
    assert (engine.image, engine.executors, engine.executor_cores) == ("spark:3.5", 8, 4)
    assert (engine.executor_memory, engine.driver_memory) == ("8g", "2Gi")
    assert (engine.service_account_name, engine.work_dir, engine.volume) == (
        "spark", "s3a://plans/kafka", None
    )  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        # The CRD's cross-field rules, with its messages, at the object that holds each rule.
        ({"mode": "add-brokers"},
         "spec: brokers is required when mode is add-brokers or remove-brokers"),
        ({"mode": "full", "brokers": [1]},
         "spec: brokers is only for add-brokers and remove-brokers: a full rebalance uses every "
         "broker"),
        ({"goals": ["ReplicaCapacity"]},
         "spec: maxReplicasPerBroker is required when goals include ReplicaCapacity"),
        ({"maxReplicasPerBroker": 10},
         "spec: maxReplicasPerBroker is only used by the ReplicaCapacity goal: add it to goals"),
        ({"mode": "remove-brokers", "goals": ["ReplicaCapacity"]},
         "spec: brokers is required when mode is add-brokers or remove-brokers; "
         "maxReplicasPerBroker is required when goals include ReplicaCapacity"),
        ({"engine": {"type": "local", "volume": "plans"}},
         "spec.engine: volume is only mounted by the kubernetes and sparkApplication engines"),
        ({"engine": {"type": "kubernetes", "workDir": "plans", "volume": "plans"}},
         "spec.engine: workDir must be an absolute path when volume is set: the volume is "
         "mounted there"),
        # What only the operator can check: the regular expression compiles.
        ({"excludedTopics": "orders-(eu|us"},
         "spec.excludedTopics: not a valid regular expression: missing ), unterminated "
         "subpattern at position 7"),
        ({"excludedTopics": "*-audit"},
         "spec.excludedTopics: not a valid regular expression: nothing to repeat at position 0"),
        # Lists, enums, bounds and types.
        ({"mode": "add-brokers", "brokers": [1, 2, 1]}, "spec.brokers: broker 1 is listed twice"),
        ({"mode": "add-brokers", "brokers": []},
         "spec.brokers: at least one broker is required"),
        ({"mode": "add-brokers", "brokers": [-1]},
         "spec.brokers.0: Input should be greater than or equal to 0"),
        ({"mode": "add-brokers", "brokers": ["1"]},
         "spec.brokers.0: Input should be a valid integer"),
        ({"goals": ["LeaderDistribution", "LeaderDistribution"]},
         "spec.goals: goal LeaderDistribution is listed twice"),
        ({"goals": []}, "spec.goals: at least one goal is required"),
        ({"goals": ["NetworkInboundCapacity"]}, f"spec.goals.0: Input should be {GOALS}"),
        ({"mode": "rebalance"},
         "spec.mode: Input should be 'full', 'add-brokers' or 'remove-brokers'"),
        ({"goals": ["ReplicaCapacity"], "maxReplicasPerBroker": 0},
         "spec.maxReplicasPerBroker: Input should be greater than or equal to 1"),
        ({"excludedTopics": ""}, "spec.excludedTopics: String should have at least 1 character"),
        ({"maxPartitionMovements": 0},
         "spec.maxPartitionMovements: Input should be greater than or equal to 1"),
        ({"concurrentPartitionMovementsPerBroker": 0},
         "spec.concurrentPartitionMovementsPerBroker: Input should be greater than or equal to 1"),
        ({"concurrentLeaderMovements": 2**31},
         "spec.concurrentLeaderMovements: Input should be less than or equal to 2147483647"),
        ({"concurrentLeaderMovements": True},
         "spec.concurrentLeaderMovements: Input should be a valid integer"),
        ({"replicationThrottle": -1},
         "spec.replicationThrottle: Input should be greater than or equal to 0"),
        ({"replicationThrottle": 1.5}, "spec.replicationThrottle: Input should be a valid integer"),
        ({"replicationThrottle": 9223372036854775808},
         "spec.replicationThrottle: Input should be less than or equal to 9223372036854775807"),
        ({"engine": {"type": "yarn"}},
         "spec.engine.type: Input should be 'local', 'kubernetes' or 'sparkApplication'"),
        ({"engine": {"executors": 0}},
         "spec.engine.executors: Input should be greater than or equal to 1"),
        ({"engine": {"executorMemory": "2G"}},
         "spec.engine.executorMemory: String should match pattern "
         "'^[1-9][0-9]*([kmgtp]|[KMGTP]i)$'"),
        ({"engine": {"serviceAccountName": "Spark"}},
         "spec.engine.serviceAccountName: String should match pattern "
         r"'^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"),
        # Fields the CRD does not have (it prunes them; the model refuses them).
        ({"skipHardGoalCheck": True}, "spec.skipHardGoalCheck: Extra inputs are not permitted"),
        ({"engine": {"workdir": "/w"}}, "spec.engine.workdir: Extra inputs are not permitted"),
        ({"max_partition_movements": 10},
         "spec.max_partition_movements: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_each_bad_input_is_named_with_its_field(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidRebalanceSpec) as error:
        rebalance_spec(spec)
    assert str(error.value) == message


@pytest.mark.parametrize(
    "memory", ["512m", "2g", "1t", "1p", "64k", "512Mi", "2Gi", "1Ti", "1Pi", "64Ki"]
)
def test_memory_takes_sparks_and_kubernetes_binary_units(memory: str) -> None:
    engine = rebalance_spec({"engine": {"executorMemory": memory, "driverMemory": memory}}).engine
    assert engine.executor_memory == engine.driver_memory == memory


@pytest.mark.parametrize("memory", ["2G", "2M", "2048", "0g", "1.5g", "2gb", "2GiB", "2mi", ""])
def test_memory_that_spark_and_kubernetes_would_read_differently_is_refused(memory: str) -> None:
    with pytest.raises(InvalidRebalanceSpec, match=r"^spec\.engine\.executorMemory: String should"):
        rebalance_spec({"engine": {"executorMemory": memory}})


def test_a_regular_expression_python_compiles_is_kept_as_written() -> None:
    spec = rebalance_spec({"excludedTopics": r"(?i)audit-\d+|__consumer_offsets"})
    assert spec.excluded_topics == r"(?i)audit-\d+|__consumer_offsets"


def test_the_engines_that_exchange_files_take_a_work_dir_and_only_kubernetes_a_volume() -> None:
    kubernetes = rebalance_spec(
        {"engine": {"type": "kubernetes", "workDir": "/plans", "volume": "plans"}}
    ).engine
    assert (kubernetes.work_dir, kubernetes.volume) == ("/plans", "plans")
    spark = rebalance_spec({"engine": {"type": "sparkApplication", "workDir": "s3a://b/p"}})
    assert spark.engine.work_dir == "s3a://b/p"
    local = rebalance_spec({"engine": {"type": "local", "workDir": "/tmp/plans"}})
    assert local.engine.work_dir == "/tmp/plans"  # allowed, and unused


def test_hard_and_soft_goals_keep_the_listed_order() -> None:
    spec = rebalance_spec({
        "goals": ["LeaderDistribution", "ReplicaCapacity", "TopicReplicaDistribution",
                  "RackAware", "ReplicaDistribution"],
        "maxReplicasPerBroker": 100,
    })  # fmt: skip
    assert spec.hard_goals == (Goal.REPLICA_CAPACITY, Goal.RACK_AWARE)
    assert spec.soft_goals == (
        Goal.LEADER_DISTRIBUTION, Goal.TOPIC_REPLICA_DISTRIBUTION, Goal.REPLICA_DISTRIBUTION
    )  # fmt: skip
    assert spec.rack_aware
    assert spec.balance_leaders


def test_the_default_goals_balance_leaders_and_respect_racks() -> None:
    spec = rebalance_spec({})
    assert spec.hard_goals == (Goal.RACK_AWARE,)
    assert spec.soft_goals == (Goal.REPLICA_DISTRIBUTION, Goal.LEADER_DISTRIBUTION)
    assert spec.rack_aware and spec.balance_leaders


def test_without_their_goals_racks_and_leaders_are_left_alone() -> None:
    spec = rebalance_spec({"goals": ["ReplicaDistribution", "DiskUsageDistribution"]})
    assert spec.hard_goals == ()
    assert spec.soft_goals == (Goal.REPLICA_DISTRIBUTION, Goal.DISK_USAGE_DISTRIBUTION)
    assert not spec.rack_aware
    assert not spec.balance_leaders


def test_the_parsed_spec_is_frozen() -> None:
    spec = rebalance_spec({"mode": "add-brokers", "brokers": [7]})
    with pytest.raises(ValueError, match="frozen"):
        spec.mode = RebalanceMode.FULL  # type: ignore[misc]
    assert hash(spec) == hash(rebalance_spec({"mode": "add-brokers", "brokers": [7]}))


def test_the_rebalance_examples_are_valid_specs() -> None:
    import yaml

    examples = sorted(
        (Path(__file__).resolve().parents[2] / "examples" / "rebalance").glob("*.yaml")
    )
    assert len(examples) == 4
    for example in examples:
        manifest = yaml.safe_load(example.read_text())
        assert manifest["kind"] == "KafkaRebalance"
        rebalance_spec(manifest["spec"])
