"""The KafkaRebalance CRD (crds/kafkarebalances.yaml) as the API emulator serves it, and the
operator's model of its spec (`rebalance.spec`) beside it: the same defaults, the same rules with
the same messages, so nothing the API server admits is read differently by the operator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_invalid_specs import REBALANCE_CRD_INVALID, REBALANCE_CRD_RULES

from kafka_topic_operator.rebalance.execution.workflow import State, conditions
from kafka_topic_operator.rebalance.results.summary import BrokerLoad, OptimizationResult
from kafka_topic_operator.rebalance.spec import InvalidRebalanceSpec, rebalance_spec
from kube_api_emulator import Cluster
from kube_api_emulator.errors import ApiError
from kube_api_emulator.resources import ResourceInfo
from kube_api_emulator.tables import cells, column_definitions

from .conftest import cluster_with

CRD_FILE = Path(__file__).resolve().parents[2] / "crds" / "kafkarebalances.yaml"

# What an empty spec becomes: a full rebalance with the default goals and Cruise Control's limits.
DEFAULTED = {
    "mode": "full",
    "goals": ["RackAware", "ReplicaDistribution", "LeaderDistribution"],
    "maxPartitionMovements": 1250,
    "concurrentPartitionMovementsPerBroker": 5,
    "concurrentLeaderMovements": 1000,
    "engine": {"type": "local"},
}


@pytest.fixture
def cluster() -> Cluster:
    return cluster_with("kafkarebalances.yaml")


def rebalances(cluster: Cluster) -> ResourceInfo:
    return cluster.info("kto.dev", "v1", "kafkarebalances")


def manifest(spec: dict[str, Any] | None, name: str = "rebalance") -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaRebalance",
        "metadata": {"name": name, "namespace": "default"},
    }
    if spec is not None:
        body["spec"] = spec
    return body


def admitted(cluster: Cluster, spec: dict[str, Any] | None) -> dict[str, Any]:
    return cluster.create(rebalances(cluster), "default", manifest(spec)).obj


def rejected(cluster: Cluster, spec: dict[str, Any]) -> ApiError:
    with pytest.raises(ApiError) as info:
        cluster.create(rebalances(cluster), "default", manifest(spec))
    assert info.value.code == 422, info.value.status()
    return info.value


def model_dump(spec: dict[str, Any]) -> dict[str, Any]:
    """The parsed spec as JSON in the CRD's field names, absent optional fields left out."""
    return rebalance_spec(spec).model_dump(mode="json", by_alias=True, exclude_none=True)


def test_names_short_name_category_and_printer_columns() -> None:
    crd = yaml.safe_load(CRD_FILE.read_text())
    names = crd["spec"]["names"]
    assert (names["kind"], names["plural"], names["singular"]) == (
        "KafkaRebalance", "kafkarebalances", "kafkarebalance"
    )  # fmt: skip
    assert names["shortNames"] == ["kr"]
    assert names["categories"] == ["kafka"]
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1", True, True)
    assert version["subresources"] == {"status": {}}
    columns = {c["name"]: c["jsonPath"] for c in version["additionalPrinterColumns"]}
    assert columns == {
        "Mode": ".spec.mode",
        "State": ".status.conditions[0].type",
        "Replica moves": ".status.optimizationResult.replicaMoves",
        "Leader moves": ".status.optimizationResult.leaderMoves",
        "Age": ".metadata.creationTimestamp",
    }


def test_the_printer_columns_show_mode_state_and_moves(cluster: Cluster) -> None:
    info = rebalances(cluster)
    obj = admitted(cluster, {"mode": "remove-brokers", "brokers": [3]})
    result = OptimizationResult(
        replica_moves=7, leader_moves=2, replica_lower_bound=7, brokers=(),
        balance_before=80.0, balance_after=100.0,
    )  # fmt: skip
    # Rebalancing is followed by kstatus' Reconciling, also True: the column shows the state.
    status = {
        "conditions": conditions(State.REBALANCING, "Rebalancing", "moving", "2026-01-01T00:00Z"),
        "optimizationResult": result.to_status(),
    }
    obj = cluster.update(info, "default", "rebalance", {**obj, "status": status},
                         subresource="status").obj  # fmt: skip
    assert [c["name"] for c in column_definitions(info)] == [
        "Name", "Mode", "State", "Replica moves", "Leader moves", "Age"
    ]  # fmt: skip
    assert cells(info, obj)[:5] == ["rebalance", "remove-brokers", "Rebalancing", 7, 2]


@pytest.mark.parametrize("spec", [None, {}], ids=["no spec", "empty spec"])
def test_an_empty_rebalance_is_a_full_one_with_every_default(
    cluster: Cluster, spec: dict[str, Any] | None
) -> None:
    obj = admitted(cluster, spec)
    assert obj["spec"] == DEFAULTED
    assert model_dump({}) == DEFAULTED


# Valid specs, from the smallest to every field set.
VALID_SPECS: list[dict[str, Any]] = [
    {"engine": {"type": "sparkApplication", "workDir": "/plans", "volume": "kto-plans"}},
    {"mode": "add-brokers", "brokers": [3, 4]},
    {"mode": "remove-brokers", "brokers": [0], "replicationThrottle": 10_485_760},
    {"goals": ["RackAware", "ReplicaCapacity", "ReplicaDistribution"],
     "maxReplicasPerBroker": 1000},
    {"goals": ["TopicReplicaDistribution"], "excludedTopics": "__.*|_schemas"},
    {"maxPartitionMovements": 1, "concurrentPartitionMovementsPerBroker": 1,
     "concurrentLeaderMovements": 1, "replicationThrottle": 0},
    {"engine": {"type": "kubernetes", "workDir": "/plans", "volume": "rebalance-plans"}},
    # The operator's defaults (kto run --planner-work-dir, --planner-volume) fill these in.
    {"engine": {"type": "kubernetes", "executors": 2, "executorMemory": "1Gi"}},
    {"engine": {"type": "sparkApplication", "volume": "plans"}},
    {"partitionSizes": {"configMap": "kafka-sizes"}},
    {"goals": ["RackAware", "DiskUsageDistribution"],
     "partitionSizes": {"configMap": "sizes.v1", "key": "log-dirs_1.txt"}},
    {"engine": {"type": "sparkApplication", "workDir": "s3a://plans/kafka", "image": "spark:3.5",
                "executors": 4, "executorCores": 2, "executorMemory": "2g", "driverMemory": "1Gi",
                "serviceAccountName": "spark-driver"}},
    {"mode": "remove-brokers", "brokers": [5, 1, 2147483647], "goals": [
        "ReplicaCapacity", "LeaderDistribution", "DiskUsageDistribution", "RackAware",
        "ReplicaDistribution", "TopicReplicaDistribution"], "maxReplicasPerBroker": 2147483647,
     "excludedTopics": "(?i)audit-.*", "maxPartitionMovements": 2147483647,
     "concurrentPartitionMovementsPerBroker": 50, "concurrentLeaderMovements": 5000,
     "replicationThrottle": 9223372036854775807,
     "engine": {"type": "local", "executors": 1, "executorMemory": "512m"}},
    {"engine": {"master": "spark://10.0.0.7:7077"}},
    {"engine": {"master": "local[*]", "driverMemory": "2g"}},
    {"engine": {"master": "spark://spark-a:7077,spark-b:7077"}},
]  # fmt: skip


@pytest.mark.parametrize("spec", VALID_SPECS)
def test_valid_specs_are_defaulted_alike_by_the_crd_and_the_model(
    cluster: Cluster, spec: dict[str, Any]
) -> None:
    stored = admitted(cluster, spec)["spec"]
    engine = {**DEFAULTED["engine"], **spec.get("engine", {})}
    assert stored == {**DEFAULTED, **spec, "engine": engine}
    assert model_dump(spec) == stored
    # What the operator reads back from the API server parses to the same spec.
    assert rebalance_spec(stored) == rebalance_spec(spec)


@pytest.mark.parametrize(("spec", "field", "message"), REBALANCE_CRD_RULES)
def test_each_rule_rejects_its_case_in_the_crd_and_the_model(
    cluster: Cluster, spec: dict[str, Any], field: str, message: str
) -> None:
    error = rejected(cluster, spec)
    causes = [(c["field"], c["message"]) for c in error.details["causes"]]
    assert causes == [(field, f'Invalid value: "object": {message}')]
    assert f'{field}: Invalid value: "object": {message}' in error.message
    with pytest.raises(InvalidRebalanceSpec) as parsed:
        rebalance_spec(spec)
    assert str(parsed.value) == f"{field}: {message}"


@pytest.mark.parametrize(("spec", "message"), REBALANCE_CRD_INVALID)
def test_enums_and_bounds_are_enforced_by_the_crd_and_the_model(
    cluster: Cluster, spec: dict[str, Any], message: str
) -> None:
    assert message in rejected(cluster, spec).message
    with pytest.raises(InvalidRebalanceSpec) as parsed:
        rebalance_spec(spec)
    field = message.split(" ")[0].removesuffix(":").split("[")[0]
    assert str(parsed.value).startswith(field), parsed.value


def test_unknown_spec_fields_are_pruned_by_the_crd_and_refused_by_the_model(
    cluster: Cluster,
) -> None:
    result = cluster.create(rebalances(cluster), "default", manifest({"skipHardGoalCheck": True}))
    assert result.warnings == ['unknown field "spec.skipHardGoalCheck"']
    assert result.obj["spec"] == DEFAULTED
    with pytest.raises(InvalidRebalanceSpec, match=r"^spec\.skipHardGoalCheck: Extra inputs"):
        rebalance_spec({"skipHardGoalCheck": True})


def test_the_status_schema_keeps_what_the_operator_writes_and_only_that(
    cluster: Cluster,
) -> None:
    info = rebalances(cluster)
    obj = admitted(cluster, None)
    result = OptimizationResult(
        replica_moves=4,
        leader_moves=3,
        replica_lower_bound=4,
        brokers=(
            BrokerLoad(0, "a", 6, 4, 3, 2, 2**41, 2**40),
            BrokerLoad(3, None, 0, 2, 0, 1, 0, 9),
        ),
        balance_before=62.5,
        balance_after=100.0,
        data_to_move_bytes=2**40,
        generate_replica_moves=9,
        unbalanced=("leader counts spread by more than one",),
        drain_moves=2,
    )
    assert result.to_status()["drainReplicaMoves"] == 2
    status = {
        "observedGeneration": 1,
        "conditions": [{"type": "Rebalancing", "status": "True", "reason": "Executing",
                        "message": "batch 2", "lastTransitionTime": "2025-01-01T00:00:00Z"}],
        "sessionId": "s-1",
        "proposalId": "p-1",
        "planConfigMap": "rebalance-plan",
        "optimizationResult": result.to_status(),
        "progress": {"partitionsDone": 2, "partitionsInFlight": 1, "partitionsRemaining": 1,
                     "leaderElectionsDone": 0, "leaderElectionsRemaining": 3,
                     "estimatedSecondsLeft": 12.5, "startedAt": "2025-01-01T00:00:00Z",
                     "batch": 2},
    }  # fmt: skip
    stray = {**status, "optimizationResult": {**status["optimizationResult"], "cpu": 1}}
    obj = cluster.update(info, "default", "rebalance", {**obj, "status": stray},
                         subresource="status").obj  # fmt: skip
    assert obj["status"] == status
