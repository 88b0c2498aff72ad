"""A proposal's plan in ConfigMaps, against the API emulator (which refuses a ConfigMap over
1 MiB, as kube-apiserver does): a large plan in parts, read back whole, and the parts of an
earlier proposal removed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafka_topic_operator.k8s.rebalance_resource import Resource
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.results.plan_parts import changes_json
from kafka_topic_operator.rebalance.results.summary import PartitionMove
from kube_api_emulator import ApiServer

from .conftest import install_crd

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkarebalances"


def proposal(directory: Path, moves: list[PartitionMove]) -> Path:
    directory.mkdir(parents=True)
    (directory / "changes.json").write_text(changes_json(moves))
    return directory


def moves(count: int) -> list[PartitionMove]:
    return [
        PartitionMove(TopicPartition(f"ledger-{i // 12:05}", i % 12), (i % 5,), (3,))
        for i in range(count)
    ]


def test_a_plan_larger_than_a_config_map_is_kept_in_parts(
    emulator: ApiServer, tmp_path: Path
) -> None:
    from kubernetes import client

    install_crd("kafkarebalances.yaml")
    with client.ApiClient() as c:
        body: Any = client.CustomObjectsApi(c).create_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL,
            {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaRebalance",
             "metadata": {"name": "even"}, "spec": {}},
        )  # fmt: skip
        core = client.CoreV1Api(c)

        large = moves(24_000)  # some 3 MB of JSON
        names = Resource(body, "default", "even").save_plan(
            "first", proposal(tmp_path / "first", large)
        )
        assert names == ["even-plan", "even-plan-1", "even-plan-2", "even-plan-3"]
        for index, name in enumerate(names):
            found = core.read_namespaced_config_map(name, "default")
            assert found.metadata.annotations["kto.dev/plan-part"] == str(index)
            assert found.metadata.owner_references[0].uid == body["metadata"]["uid"]
        shown = {**body, "status": {"proposalId": "first", "planConfigMap": names[0]}}
        assert Resource(shown, "default", "even").load_plan() == ("first", large)

        # A missing part, or a part of another proposal: nothing is carried out.
        saved = core.read_namespaced_config_map("even-plan-1", "default")
        core.delete_namespaced_config_map("even-plan-1", "default")
        assert Resource(shown, "default", "even").load_plan() is None
        saved.metadata.resource_version = None
        saved.metadata.annotations["kto.dev/proposal"] = "other"
        core.create_namespaced_config_map("default", saved)
        assert Resource(shown, "default", "even").load_plan() is None

        small = moves(10)
        names = Resource(body, "default", "even").save_plan(
            "second", proposal(tmp_path / "second", small)
        )
        assert names == ["even-plan"]
        left = core.list_namespaced_config_map("default", label_selector="kto.dev/rebalance=even")
        assert [cm.metadata.name for cm in left.items] == ["even-plan"]
        shown = {**body, "status": {"proposalId": "second", "planConfigMap": names[0]}}
        assert Resource(shown, "default", "even").load_plan() == ("second", small)
        stale = {**body, "status": {"proposalId": "first", "planConfigMap": names[0]}}
        assert Resource(stale, "default", "even").load_plan() is None
