"""The real node: Ready, pods that reach the API server through the `kubernetes` Service with
their ServiceAccount token and resolve names through cluster DNS, `kubectl logs` and `exec`
through the kubelet, and a stop that leaves nothing of the node on the machine."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
import yaml
from kto_testing import eventually
from node_session import NodeSession
from node_traces import NOTHING, node_traces

from kto_dev.node import cleanup, configs, network
from kto_dev.node.images import node_images
from kto_dev.node.launcher import KubernetesNode

from .helpers import operator_pod, phase

pytestmark = pytest.mark.node

# Run in a pod: the API server through the `kubernetes` Service's name (cluster DNS) with the
# pod's own ServiceAccount token, checked against the cluster's CA as any in-cluster client does.
IN_CLUSTER_CLIENT = """
import json, socket, ssl, urllib.request
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
token = open(sa + "/token").read()
context = ssl.create_default_context(cafile=sa + "/ca.crt")
# Who the server takes the caller for: any authenticated client may ask.
review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
request = urllib.request.Request(
    "https://kubernetes.default.svc/apis/authentication.k8s.io/v1/selfsubjectreviews",
    data=json.dumps(review).encode(), method="POST",
    headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
answer = json.load(urllib.request.urlopen(request, context=context, timeout=10))
print(json.dumps({"address": socket.gethostbyname("kubernetes.default.svc.cluster.local"),
                  "dns": socket.gethostbyname("kube-dns.kube-system.svc.cluster.local"),
                  "user": answer["status"]["userInfo"]["username"]}))
"""


def namespace(node: KubernetesNode) -> str:
    name = f"node-{uuid.uuid4().hex[:8]}"
    node.kubectl("create", "namespace", name)
    return name


def test_the_node_is_ready_with_cluster_dns(node_session: NodeSession) -> None:
    node = node_session.node
    nodes = json.loads(node.kubectl("get", "nodes", "-o", "json"))["items"]
    assert [n["metadata"]["name"] for n in nodes] == [configs.NODE_NAME]
    (ready,) = [c for c in nodes[0]["status"]["conditions"] if c["type"] == "Ready"]
    assert ready["status"] == "True"
    assert nodes[0]["status"]["nodeInfo"]["kubeletVersion"] == "v1.33.5"
    assert nodes[0]["status"]["nodeInfo"]["containerRuntimeVersion"].startswith("containerd://")
    dns = json.loads(node.kubectl("get", "deployment", "coredns", "-n", "kube-system", "-o",
                                  "json"))  # fmt: skip
    assert dns["status"]["availableReplicas"] == 1


def test_a_pod_calls_the_api_server_by_its_service_name_with_its_token(
    node_session: NodeSession,
) -> None:
    node = node_session.node
    ns = namespace(node)
    client = operator_pod("client", ns, ["python3", "-c", IN_CLUSTER_CLIENT])
    node.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(client))
    eventually(lambda: phase(node, "client", ns) in ("Succeeded", "Failed"), "the pod to end",
               timeout=60)  # fmt: skip
    logs = node.kubectl("logs", "client", "-n", ns)
    assert phase(node, "client", ns) == "Succeeded", logs
    answer = json.loads(logs.strip().splitlines()[-1])
    assert answer == {"address": "10.0.0.1", "dns": network.CLUSTER_DNS,
                      "user": f"system:serviceaccount:{ns}:default"}  # fmt: skip


def test_kubectl_exec_reaches_a_container_through_the_kubelet(node_session: NodeSession) -> None:
    node = node_session.node
    ns = namespace(node)
    node.kubectl(
        "apply", "-f", "-", stdin=yaml.safe_dump(operator_pod("sleeper", ns, ["sleep", "300"]))
    )
    eventually(lambda: phase(node, "sleeper", ns) == "Running", "the pod to run", timeout=60)
    who = node.kubectl("exec", "sleeper", "-n", ns, "--", "id", "-u")
    assert who.strip() == "10001"
    # The root filesystem is read-only, as the pod's securityContext asks.
    done = node.kubectl("exec", "sleeper", "-n", ns, "--", "sh", "-c",
                        "touch /x 2>&1 || echo refused", check=False)  # fmt: skip
    assert "Read-only file system" in done and "refused" in done
    node.kubectl("delete", "namespace", ns, "--wait=false")


def test_a_stopped_node_leaves_nothing_behind(tmp_path: Path, node_session: NodeSession) -> None:
    """A second node beside the run's, with a pod running, then stopped."""
    folder = tmp_path / "second"
    node = KubernetesNode(folder, node_images()).start()
    assert node.network is not None
    index = node.network.index
    try:
        ns = namespace(node)
        node.kubectl(
            "apply", "-f", "-", stdin=yaml.safe_dump(operator_pod("sleeper", ns, ["sleep", "300"]))
        )
        eventually(lambda: phase(node, "sleeper", ns) == "Running", "the pod to run", timeout=60)
        during = node_traces(index, folder.resolve())
        assert during["processes"] and during["namespace"] and during["mounts"]
        assert during["cgroups"] and during["links"]
        sockets = cleanup.shims(node.paths.containerd_socket)
        assert sockets
    finally:
        node.stop()
    assert node_traces(index, folder.resolve()) == NOTHING
    assert not any(s.exists() for s in sockets.values())
