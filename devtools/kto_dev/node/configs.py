"""What the node's processes read: containerd's config, the kubelet's and kube-proxy's
configurations, the CNI network, and CoreDNS's manifests. Pure: paths and addresses in, text and
objects out."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .network import CLUSTER_DNS, POD_SUBNET

NODE_NAME = "kto-node"
CLUSTER_DOMAIN = "cluster.local"
BRIDGE = "kto0"
# The cgroup the kubelet puts its pods under: each node its own, so several kubelets on one
# machine never share /kubepods.
CGROUP_PREFIX = "kto-node-"
# CoreDNS listens on an unprivileged port: it runs without NET_BIND_SERVICE, non-root; the
# kube-dns Service maps 53 to it.
DNS_PORT = 1053


@dataclass(frozen=True)
class NodePaths:
    """Where a node keeps its files: `directory` for its configuration, logs and images,
    `runtime` (a short path under /run, removed when the node stops) for sockets and the
    kubelet's root, where the kubelet makes sockets too: a unix socket's path must fit in 108
    bytes, which a test's temporary folder does not leave room for."""

    directory: Path
    runtime: Path

    @property
    def containerd_root(self) -> Path:
        return self.directory / "containerd"

    @property
    def containerd_state(self) -> Path:
        return self.runtime / "containerd"

    @property
    def containerd_socket(self) -> Path:
        # A unix socket's path must fit in 108 bytes: under /run, never under a test's tmp path.
        return self.runtime / "containerd.sock"

    @property
    def containerd_config(self) -> Path:
        return self.directory / "containerd.toml"

    @property
    def cni_config_dir(self) -> Path:
        return self.directory / "cni"

    @property
    def cni_ipam_dir(self) -> Path:
        return self.directory / "cni-ipam"

    @property
    def kubelet_root(self) -> Path:
        return self.runtime / "kubelet"

    @property
    def kubelet_config(self) -> Path:
        return self.directory / "kubelet.yaml"

    @property
    def pod_logs(self) -> Path:
        return self.directory / "pod-logs"

    @property
    def resolv_conf(self) -> Path:
        return self.directory / "resolv.conf"

    @property
    def kube_proxy_config(self) -> Path:
        return self.directory / "kube-proxy.yaml"

    @property
    def kubeconfig(self) -> Path:
        return self.directory / "kubeconfig"

    def log(self, process: str) -> Path:
        return self.directory / f"{process}.log"


def containerd_config(paths: NodePaths, pause_image: str) -> str:
    cri = '[plugins."io.containerd.grpc.v1.cri"]'
    return f"""version = 2
root = "{paths.containerd_root}"
state = "{paths.containerd_state}"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "{paths.containerd_socket}"

[plugins."io.containerd.internal.v1.opt"]
  path = "{paths.containerd_root / "opt"}"

{cri}
  sandbox_image = "{pause_image}"
  # Root here may not lower a process's oom_score_adj (no CAP_SYS_RESOURCE), and the kubelet
  # asks -998 for every sandbox: runc then fails. This keeps what is asked within what is allowed.
  restrict_oom_score_adj = true
  # The streaming server (exec, attach, port-forward) on the namespace's loopback.
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"

{cri[:-1]}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

{cri[:-1]}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

{cri[:-1]}.containerd.runtimes.runc.options]
  # cgroupfs, as the kubelet: this kernel offers cgroup v1 and no systemd runs.
  SystemdCgroup = false
  # runc's state with the node's, not in the machine's /run/containerd/runc.
  Root = "{paths.runtime / "runc"}"

{cri[:-1]}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = "{paths.cni_config_dir}"
"""


def cni_network(paths: NodePaths) -> dict[str, Any]:
    """A bridge with the pods' gateway on it, masquerading what leaves the pod subnet."""
    return {
        "cniVersion": "1.0.0",
        "name": "kto",
        "plugins": [
            {"type": "bridge", "bridge": BRIDGE, "isGateway": True, "ipMasq": True,
             "hairpinMode": True,
             "ipam": {"type": "host-local", "ranges": [[{"subnet": POD_SUBNET}]],
                      "routes": [{"dst": "0.0.0.0/0"}],
                      # Each node its own leases: the default folder is the machine's.
                      "dataDir": str(paths.cni_ipam_dir)}},
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }  # fmt: skip


def kubelet_config(
    paths: NodePaths, node_address: str, cgroup_root: str, ca_file: Path
) -> dict[str, Any]:
    socket = f"unix://{paths.containerd_socket}"
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": node_address,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        # kube-apiserver calls in with its client certificate (system:masters); nobody else
        # gets in.
        "authentication": {"anonymous": {"enabled": False}, "webhook": {"enabled": True},
                           "x509": {"clientCAFile": str(ca_file)}},
        "authorization": {"mode": "Webhook"},
        "containerRuntimeEndpoint": socket,
        "imageServiceEndpoint": socket,
        # cgroup v1 is what this kernel offers; 1.33 refuses it unless told.
        "cgroupDriver": "cgroupfs",
        "failCgroupV1": False,
        "cgroupRoot": cgroup_root,
        "clusterDNS": [CLUSTER_DNS],
        "clusterDomain": CLUSTER_DOMAIN,
        # Pods get no nameserver of the machine's: CoreDNS answers for the cluster and
        # forwards nothing.
        "resolvConf": str(paths.resolv_conf),
        "podLogsDir": str(paths.pod_logs),
        "volumePluginDir": str(paths.kubelet_root / "volume-plugins"),
        # Images are imported, never pulled: nothing may collect them, and a full disk must not
        # evict what runs.
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%",
                         "imagefs.available": "1%", "nodefs.inodesFree": "1%",
                         "imagefs.inodesFree": "1%"},
        "failSwapOn": False,
        "serializeImagePulls": False,
        "rotateCertificates": False,
        "nodeStatusReportFrequency": "10s",
    }  # fmt: skip


def kube_proxy_config(paths: NodePaths) -> dict[str, Any]:
    return {
        "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
        "kind": "KubeProxyConfiguration",
        "mode": "iptables",
        "clientConnection": {"kubeconfig": str(paths.kubeconfig)},
        "hostnameOverride": NODE_NAME,
        "clusterCIDR": POD_SUBNET,
        "healthzBindAddress": "127.0.0.1:10256",
        "metricsBindAddress": "127.0.0.1:10249",
        # The machine-wide conntrack table size is left alone (0: not set).
        "conntrack": {"maxPerCore": 0, "min": 0},
        # NodePorts on loopback would need route_localnet; nothing here uses them.
        "iptables": {"localhostNodePorts": False},
    }


COREFILE = f""".:{DNS_PORT} {{
    errors
    health :8080
    ready :8181
    kubernetes {CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {{
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }}
    cache 30
    reload
    loadbalance
}}
"""


def coredns_manifests(image: str) -> list[dict[str, Any]]:
    """CoreDNS as a cluster's DNS: its account and read rights, the Corefile, a Deployment and
    the kube-dns Service at the address the kubelet gives pods."""
    labels = {"k8s-app": "kube-dns"}
    meta = {"namespace": "kube-system"}
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "coredns", **meta}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
         "metadata": {"name": "system:coredns"},
         "rules": [{"apiGroups": [""], "resources": ["endpoints", "services", "pods",
                                                      "namespaces"], "verbs": ["list", "watch"]},
                   {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"],
                    "verbs": ["list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "system:coredns"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "system:coredns"},
         "subjects": [{"kind": "ServiceAccount", "name": "coredns", **meta}]},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "coredns", **meta},
         "data": {"Corefile": COREFILE}},
        {"apiVersion": "apps/v1", "kind": "Deployment",
         "metadata": {"name": "coredns", **meta, "labels": labels},
         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                  "template": {"metadata": {"labels": labels}, "spec": {
                      "serviceAccountName": "coredns",
                      "dnsPolicy": "Default",
                      "securityContext": {"runAsNonRoot": True, "runAsUser": 65532,
                                          "seccompProfile": {"type": "RuntimeDefault"}},
                      "containers": [{
                          "name": "coredns", "image": image, "imagePullPolicy": "Never",
                          "args": ["-conf", "/etc/coredns/Corefile"],
                          "ports": [{"name": "dns", "containerPort": DNS_PORT, "protocol": "UDP"},
                                    {"name": "dns-tcp", "containerPort": DNS_PORT,
                                     "protocol": "TCP"}],
                          "securityContext": {"allowPrivilegeEscalation": False,
                                              "readOnlyRootFilesystem": True,
                                              "capabilities": {"drop": ["ALL"]}},
                          "resources": {"requests": {"cpu": "50m", "memory": "32Mi"},
                                        "limits": {"memory": "128Mi"}},
                          "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181},
                                             "periodSeconds": 2},
                          "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
                          "volumeMounts": [{"name": "config", "mountPath": "/etc/coredns"}]}],
                      "volumes": [{"name": "config", "configMap": {"name": "coredns"}}]}}}},
        {"apiVersion": "v1", "kind": "Service",
         "metadata": {"name": "kube-dns", **meta, "labels": labels},
         "spec": {"selector": labels, "clusterIP": CLUSTER_DNS,
                  "ports": [{"name": "dns", "port": 53, "targetPort": DNS_PORT,
                             "protocol": "UDP"},
                            {"name": "dns-tcp", "port": 53, "targetPort": DNS_PORT,
                             "protocol": "TCP"}]}},
    ]  # fmt: skip


def as_json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"
