"""The startup listing of topic claims, against the API emulator through the kubernetes client."""

from __future__ import annotations

import pytest

from kafka_topic_operator.k8s import claims as claims_module
from kafka_topic_operator.k8s.claims import list_claims
from kube_api_emulator import ApiServer

from .conftest import install_crd

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"


def test_claims_are_listed_by_namespace_and_selector_across_pages(
    emulator: ApiServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    with client.ApiClient() as c:
        core, custom = client.CoreV1Api(c), client.CustomObjectsApi(c)
        for namespace in ("team-a", "team-b", "elsewhere"):
            core.create_namespace({"metadata": {"name": namespace}})
        for i in range(7):
            for namespace in ("team-a", "team-b", "elsewhere"):
                labels = {"kto.dev/cluster": "blue" if i % 2 == 0 else "red"}
                body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                        "metadata": {"name": f"r{i}", "labels": labels},
                        "spec": {"topicName": f"t{i % 3}", "partitions": 1,
                                 "replicas": 1}}  # fmt: skip
                custom.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)
    monkeypatch.setattr(claims_module, "PAGE", 2)  # several pages per namespace

    listed = list_claims(["team-a", "team-b"], {"kto.dev/cluster": "blue"})
    assert sorted((c.namespace, c.name, c.topic) for c in listed) == sorted(
        (ns, f"r{i}", f"t{i % 3}") for ns in ("team-a", "team-b") for i in (0, 2, 4, 6)
    )
    assert all(c.created.endswith("Z") for c in listed)
    everywhere = list_claims([], {})
    assert len(everywhere) == 21
