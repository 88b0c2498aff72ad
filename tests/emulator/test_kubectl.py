"""Real kubectl v1.33 against the emulator: apply, get, explain, delete with a finalizer, wait."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kube_api_emulator import ApiServer

from .helpers import TOPICS, Http, Kubectl, eventually, topic, topic_crd

pytestmark = pytest.mark.e2e


@pytest.fixture
def manifests(tmp_path: Path) -> tuple[Path, Path]:
    crd = tmp_path / "crd.yaml"
    crd.write_text(yaml.safe_dump(topic_crd()))
    cr = tmp_path / "topic.yaml"
    body = topic("orders", config={"retention.ms": "604800000", "cleanup.policy": "delete"})
    cr.write_text(yaml.safe_dump(body))
    return crd, cr


@pytest.fixture
def applied(kubectl: Kubectl, manifests: tuple[Path, Path]) -> Kubectl:
    crd, cr = manifests
    kubectl.run("apply", "-f", str(crd))
    kubectl.run("wait", "--for=condition=Established", "crd/kafkatopics.kto.dev", "--timeout=30s")
    kubectl.run("apply", "-f", str(cr))
    return kubectl


def test_apply_twice_is_unchanged(kubectl: Kubectl, manifests: tuple[Path, Path]) -> None:
    crd, cr = manifests
    assert kubectl.run("apply", "-f", str(crd)).stdout.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/kafkatopics.kto.dev created"
    )
    assert kubectl.run("apply", "-f", str(crd)).stdout.strip() == (
        "customresourcedefinition.apiextensions.k8s.io/kafkatopics.kto.dev unchanged"
    )
    condition = kubectl.run(
        "wait", "--for=condition=Established", "crd/kafkatopics.kto.dev", "--timeout=30s"
    )
    assert "condition met" in condition.stdout
    assert kubectl.run("apply", "-f", str(cr)).stdout.strip() == "kafkatopic.kto.dev/orders created"
    assert kubectl.run("apply", "-f", str(cr)).stdout.strip() == (
        "kafkatopic.kto.dev/orders unchanged"
    )
    changed = yaml.safe_load(cr.read_text())
    changed["spec"]["partitions"] = 6
    cr.write_text(yaml.safe_dump(changed))
    assert kubectl.run("apply", "-f", str(cr)).stdout.strip() == (
        "kafkatopic.kto.dev/orders configured"
    )
    got = json.loads(kubectl.run("get", "kt", "orders", "-o", "json").stdout)
    assert got["spec"]["partitions"] == 6
    assert got["metadata"]["generation"] == 2


def test_get_table_json_short_name_and_category(applied: Kubectl) -> None:
    by_short = applied.run("get", "kt").stdout.splitlines()
    assert by_short[0].split() == ["NAME", "PARTITIONS", "READY", "AGE"]
    assert by_short[1].split()[:2] == ["orders", "3"]
    by_category = applied.run("get", "kto").stdout.splitlines()
    assert by_category[0].split() == ["NAME", "PARTITIONS", "READY", "AGE"]
    assert by_category[1].split()[0] == "orders"
    # Category "all" spans several kinds, so kubectl prefixes names with their kind.
    applied.run(
        "create",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "svc"},
                "spec": {"ports": [{"port": 80}]},
            }
        ),
    )
    every = applied.run("get", "all").stdout
    assert "service/svc" in every
    assert "ClusterIP" in every
    listed = json.loads(applied.run("get", "kafkatopics", "-o", "json").stdout)
    assert listed["kind"] == "List"
    (item,) = listed["items"]
    assert item["kind"] == "KafkaTopic"
    assert item["spec"]["replicas"] == 1
    assert item["spec"]["config"] == {"retention.ms": "604800000", "cleanup.policy": "delete"}
    wide = applied.run("get", "kt", "orders", "-o", "wide", "-n", "default").stdout
    assert "orders" in wide
    crds = applied.run("get", "crd").stdout.splitlines()
    assert crds[0].split() == ["NAME", "CREATED", "AT"]
    namespaces = applied.run("get", "ns").stdout
    assert "kube-system" in namespaces and "Active" in namespaces


def test_explain_uses_the_crd_schema(applied: Kubectl) -> None:
    out = applied.run("explain", "kt.spec.partitions").stdout
    assert "KIND:       KafkaTopic" in out
    assert "Number of partitions." in out
    spec = applied.run("explain", "kafkatopics.spec").stdout
    assert "partitions\t<integer> -required-" in spec


def test_validation_errors_read_like_the_apiserver(applied: Kubectl, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(topic("bad", partitions=0)))
    result = applied.run("apply", "-f", str(bad), check=False)
    assert result.returncode == 1
    assert (
        'The KafkaTopic "bad" is invalid: spec.partitions: Invalid value: 0: spec.partitions in '
        "body should be greater than or equal to 1"
    ) in result.stderr
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(yaml.safe_dump(topic("unknown", bogus=True)))
    result = applied.run("apply", "-f", str(unknown), check=False)
    assert 'strict decoding error: unknown field "spec.bogus"' in result.stderr
    shrink = applied.run(
        "patch", "kt", "orders", "--type=merge", "-p", '{"spec":{"partitions":1}}', check=False
    )
    assert 'spec.partitions: Invalid value: "integer": partitions cannot be decreased' in (
        shrink.stderr
    )


def test_delete_waits_for_the_finalizer(applied: Kubectl, api: ApiServer) -> None:
    applied.run(
        "patch",
        "kt",
        "orders",
        "--type=json",
        "-p",
        '[{"op":"add","path":"/metadata/finalizers","value":["kto.dev/topic"]}]',
    )
    http = Http(api.url)
    deleting = applied.popen("delete", "kt", "orders", "--timeout=60s")
    try:
        http.watch_until(
            f"{TOPICS}?fieldSelector=metadata.name%3Dorders",
            lambda e: bool(e["object"]["metadata"].get("deletionTimestamp")),
        )
        hub = api.call(api.cluster.store.hub, "kto.dev/kafkatopics")
        # kubectl now watches the object until it is really gone.
        eventually(lambda: api.call(hub.watcher_count) > 0, what="kubectl watching")
        assert deleting.poll() is None
        http.patch(
            f"{TOPICS}/orders",
            [{"op": "remove", "path": "/metadata/finalizers"}],
            "application/json-patch+json",
        )
        out, err = deleting.communicate(timeout=60)
    finally:
        if deleting.poll() is None:
            deleting.kill()
            deleting.communicate()
    assert deleting.returncode == 0, err
    assert out.strip() == 'kafkatopic.kto.dev "orders" deleted'
    assert http.get(f"{TOPICS}/orders")[0] == 404


def test_wait_for_a_status_condition(applied: Kubectl, api: ApiServer) -> None:
    waiting = applied.popen("wait", "--for=condition=Ready", "kt/orders", "--timeout=60s")
    try:
        hub = api.call(api.cluster.store.hub, "kto.dev/kafkatopics")
        eventually(lambda: api.call(hub.watcher_count) > 0, what="kubectl watching")
        assert waiting.poll() is None
        Http(api.url).patch(
            f"{TOPICS}/orders/status",
            {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
            "application/merge-patch+json",
        )
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()
    assert waiting.returncode == 0, err
    assert out.strip() == "kafkatopic.kto.dev/orders condition met"
    table = applied.run("get", "kt", "orders").stdout.splitlines()
    assert table[1].split()[:3] == ["orders", "3", "True"]


def test_apply_built_in_resources(kubectl: Kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "app.yaml"
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kto"}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "kto"},
            "data": {"a": "1"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "op", "namespace": "kto", "labels": {"app": "op"}},
            "spec": {
                "selector": {"matchLabels": {"app": "op"}},
                "template": {
                    "metadata": {"labels": {"app": "op"}},
                    "spec": {
                        "containers": [
                            {"name": "op", "image": "op:1", "env": [{"name": "A", "value": "1"}]}
                        ]
                    },
                },
            },
        },
    ]
    manifest.write_text(yaml.safe_dump_all(docs))
    first = kubectl.run("apply", "-f", str(manifest)).stdout.splitlines()
    assert first == ["namespace/kto created", "configmap/c created", "deployment.apps/op created"]
    second = kubectl.run("apply", "-f", str(manifest)).stdout.splitlines()
    assert second == [
        "namespace/kto unchanged",
        "configmap/c unchanged",
        "deployment.apps/op unchanged",
    ]
    docs[2]["spec"]["template"]["spec"]["containers"][0]["image"] = "op:2"
    manifest.write_text(yaml.safe_dump_all(docs))
    third = kubectl.run("apply", "-f", str(manifest)).stdout.splitlines()
    assert third[2] == "deployment.apps/op configured"
    deploy = json.loads(kubectl.run("get", "deploy", "op", "-n", "kto", "-o", "json").stdout)
    (container,) = deploy["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "op:2"
    assert container["env"] == [{"name": "A", "value": "1"}]
    assert kubectl.run("delete", "ns", "kto").stdout.strip() == 'namespace "kto" deleted'
    assert "kto" not in kubectl.run("get", "ns", "-o", "name").stdout.split()


def test_typed_create_commands_send_protobuf(kubectl: Kubectl) -> None:
    kubectl.run("create", "namespace", "team")
    kubectl.run("create", "configmap", "c", "-n", "team", "--from-literal=a=1")
    kubectl.run("create", "secret", "generic", "s", "-n", "team", "--from-literal=pw=hunter2")
    kubectl.run("create", "serviceaccount", "bot", "-n", "team")
    cm = json.loads(kubectl.run("get", "cm", "c", "-n", "team", "-o", "json").stdout)
    assert cm["data"] == {"a": "1"}
    assert "generateName" not in cm["metadata"]
    secret = json.loads(kubectl.run("get", "secret", "s", "-n", "team", "-o", "json").stdout)
    assert (secret["type"], secret["data"]) == ("Opaque", {"pw": "aHVudGVyMg=="})
    ns = json.loads(kubectl.run("get", "ns", "team", "-o", "json").stdout)
    assert ns["status"]["phase"] == "Active"
    described = kubectl.run("describe", "configmap", "c", "-n", "team").stdout
    assert "Namespace:    team" in described
