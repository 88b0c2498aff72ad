"""The startup listing of topic claims, against the API emulator through the kubernetes client."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kafka_topic_operator.apiserver import ApiServer
from kafka_topic_operator.k8s import claims as claims_module
from kafka_topic_operator.k8s.claims import list_claims

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"


def test_claims_are_listed_by_namespace_and_selector_across_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kubernetes import client, config

    with ApiServer() as api:
        kubeconfig = api.write_kubeconfig(tmp_path / "kubeconfig")
        monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
        monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
        config.load_kube_config(str(kubeconfig))
        with client.ApiClient() as c:
            crd = yaml.safe_load((ROOT / "crds" / "kafkatopics.yaml").read_text())
            client.ApiextensionsV1Api(c).create_custom_resource_definition(crd)
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
