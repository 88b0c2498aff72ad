"""The KafkaTopic CRD (crds/kafkatopics.yaml) as the API emulator serves it: what it accepts,
defaults and rejects, with the messages users see from kubectl."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crd_invalid_specs import TOPIC_CRD_INVALID

from kube_api_emulator import Cluster
from kube_api_emulator.errors import ApiError
from kube_api_emulator.resources import ResourceInfo

from .conftest import cluster_with

CRD_FILE = Path(__file__).resolve().parents[2] / "crds" / "kafkatopics.yaml"


@pytest.fixture
def cluster() -> Cluster:
    return cluster_with("kafkatopics.yaml")


def topics(cluster: Cluster) -> ResourceInfo:
    return cluster.info("kto.dev", "v1", "kafkatopics")


def manifest(name: str = "orders", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaTopic",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def rejected(cluster: Cluster, body: dict[str, Any]) -> str:
    with pytest.raises(ApiError) as info:
        cluster.create(topics(cluster), "default", body)
    assert info.value.code == 422, info.value.status()
    return info.value.message


def test_the_crd_names_short_name_and_category(cluster: Cluster) -> None:
    crd = yaml.safe_load(CRD_FILE.read_text())
    assert crd["spec"]["names"]["shortNames"] == ["kt"]
    assert crd["spec"]["names"]["categories"] == ["kafka"]
    columns = {c["name"]: c["jsonPath"]
               for c in crd["spec"]["versions"][0]["additionalPrinterColumns"]}  # fmt: skip
    assert list(columns) == ["Topic", "Partitions", "Replicas", "Ready", "Reason", "Age"]
    # The topic as Kafka has it (a replicaAssignment topic has no spec.partitions), from
    # status fields the schema declares.
    assert columns["Partitions"] == ".status.partitionCounts.total"
    assert columns["Replicas"] == ".status.replicationFactor"
    status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    assert status["properties"]["replicationFactor"]["type"] == "integer"
    assert status["properties"]["partitionCounts"]["properties"]["total"]["type"] == "integer"


def test_a_strimzi_style_topic_is_accepted_with_defaults(cluster: Cluster) -> None:
    body = manifest(
        partitions=12, replicas=3, config={"retention.ms": 604800000, "cleanup.policy": "delete"}
    )
    obj = cluster.create(topics(cluster), "default", body).obj
    assert obj["spec"]["rackAwareMode"] == "Enforced"
    assert obj["spec"]["deletionPolicy"] == "Delete"
    assert obj["spec"]["config"]["retention.ms"] == 604800000


def test_an_explicit_assignment_needs_no_counts(cluster: Cluster) -> None:
    body = manifest(replicaAssignment=[[1, 2], [2, 3], [3, 1]])
    assert cluster.create(topics(cluster), "default", body).obj["spec"]["replicaAssignment"]


@pytest.mark.parametrize(("spec", "message"), TOPIC_CRD_INVALID)
def test_invalid_specs_are_rejected_with_a_precise_message(
    cluster: Cluster, spec: dict[str, Any], message: str
) -> None:
    assert message in rejected(cluster, manifest(**spec))


def test_partitions_never_shrink_and_the_topic_name_never_changes(cluster: Cluster) -> None:
    info = topics(cluster)
    created = cluster.create(info, "default", manifest(partitions=3, replicas=1, topicName="o"))
    obj = created.obj
    grown = {**obj, "spec": {**obj["spec"], "partitions": 6}}
    obj = cluster.update(info, "default", "orders", grown).obj
    for change, message in [
        ({"partitions": 2}, "partitions may grow, never shrink"),
        ({"topicName": "p"}, "topicName is immutable"),
    ]:
        with pytest.raises(ApiError) as error:
            cluster.update(info, "default", "orders", {**obj, "spec": {**obj["spec"], **change}})
        assert message in error.value.message
    without_name = {k: v for k, v in obj["spec"].items() if k != "topicName"}
    with pytest.raises(ApiError) as error:
        cluster.update(info, "default", "orders", {**obj, "spec": without_name})
    assert "topicName cannot be added or removed after creation" in error.value.message
