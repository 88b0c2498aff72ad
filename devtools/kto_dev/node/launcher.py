"""A one-node Kubernetes cluster on this machine, from real components: etcd, kube-apiserver,
kube-controller-manager and kube-scheduler on the host; containerd, the kubelet and kube-proxy in
the node's network namespace (network.py); CoreDNS as a Deployment. Images are imported into
containerd, never pulled.

`with KubernetesNode(folder, images) as node:` starts it and waits until the node is Ready and
cluster DNS answers; `KubernetesNode.stop_in(folder)` stops one another process started (the dev
cluster's `down`). Stopping leaves nothing behind: no process, mount, cgroup, namespace, link,
iptables chain or changed sysctl (cleanup.py, sysctls.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from kto_dev.cluster_processes import start, stop_together
from kto_dev.kube_apiserver import credentials
from kto_dev.kube_apiserver.build import require_binaries as require_kube_binaries
from kto_dev.kube_apiserver.launcher import KubeApiServer, KubeApiServerError
from kto_dev.ports import free_port

from . import cleanup, configs, network, sysctls
from .build import NodeBinaries, require_binaries

STARTUP_TIMEOUT = 120.0
RUNTIME_ROOT = Path("/run")


class KubernetesNodeError(RuntimeError):
    """The node could not be started or stopped; the message names the log to read."""


@dataclass(frozen=True)
class NodeImages:
    """What the node imports into containerd before the kubelet starts: the sandbox (pause)
    and CoreDNS images, by reference, and every archive (those two's included)."""

    pause: str
    coredns: str
    archives: tuple[Path, ...]


@dataclass
class KubernetesNode:
    directory: Path
    images: NodeImages
    binaries: NodeBinaries = field(default_factory=require_binaries)
    network: network.NodeNetwork | None = None
    api: KubeApiServer | None = None
    pids: dict[str, int] = field(default_factory=dict)
    # Seconds from nothing to Ready with cluster DNS answering, once started.
    started_in: float = 0.0
    _handles: list[subprocess.Popen[bytes]] = field(default_factory=list, repr=False)

    # -- addresses ------------------------------------------------------------------------

    @property
    def paths(self) -> configs.NodePaths:
        assert self.network is not None, "the node is not started"
        return _paths(self.directory, self.network)

    @property
    def host_address(self) -> str:
        """Where the host's servers listen for the pods (ZooKeeper, Kafka, the API server)."""
        assert self.network is not None, "the node is not started"
        return self.network.host_address

    @property
    def kubeconfig(self) -> Path:
        return self.paths.kubeconfig

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run([_kubectl(), f"--kubeconfig={self.kubeconfig}", *args],
                              input=stdin, capture_output=True, text=True)  # fmt: skip
        if check and done.returncode != 0:
            raise KubernetesNodeError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> KubernetesNode:
        self.directory = self.directory.resolve()
        self.directory.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with network.machine_lock():
            sysctls.save()
            self.network = network.allocate()
        self._save_state()
        try:
            self._start_control_plane()
            self._start_containerd()
            self._import_images()
            self._start_kubelet_and_proxy()
            self._wait(self._node_ready, "the node to be Ready", "kubelet")
            self._start_coredns()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - started
        return self

    def stop(self) -> None:
        if self.network is None:
            return
        _stop_node(self.directory, self.network, self.pids, self.api)
        for process in self._handles:
            process.wait()  # stopped: reaped here
        self.network, self.api, self.pids, self._handles = None, None, {}, []
        (self.directory / "state.json").unlink(missing_ok=True)

    @staticmethod
    def attach(directory: Path) -> KubernetesNode:
        """The node another process started in `directory` (to use, not to stop: its starter
        or `stop_in` does that)."""
        directory = directory.resolve()
        state_file = directory / "state.json"
        if not state_file.exists():
            raise KubernetesNodeError(f"no node runs from {directory}")
        state = json.loads(state_file.read_text())
        net = network.NodeNetwork(state["index"])
        api = KubeApiServer(directory / "kube-apiserver", binaries=require_kube_binaries(),
                            address=net.host_address)  # fmt: skip
        images = NodeImages(state["images"]["pause"], state["images"]["coredns"], ())
        return KubernetesNode(directory, images, network=net, api=api, pids=state["pids"])

    @staticmethod
    def stop_in(directory: Path) -> None:
        """Stops the node whose state `directory` holds (started by another process)."""
        state_file = directory.resolve() / "state.json"
        if not state_file.exists():
            return
        state = json.loads(state_file.read_text())
        _stop_node(directory.resolve(), network.NodeNetwork(state["index"]), state["pids"])
        state_file.unlink(missing_ok=True)

    def __enter__(self) -> KubernetesNode:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- the parts --------------------------------------------------------------------------

    def _save_state(self) -> None:
        assert self.network is not None
        images = {"pause": self.images.pause, "coredns": self.images.coredns}
        state = {"index": self.network.index, "pids": self.pids, "images": images}
        (self.directory / "state.json").write_text(json.dumps(state, indent=2) + "\n")

    def _spawn(self, name: str, args: Sequence[str], in_node: bool = False) -> None:
        assert self.network is not None
        prefix = self.network.exec_prefix() if in_node else []
        process = start([*prefix, *args], self.paths.log(name))
        self._handles.append(process)
        self.pids[name] = process.pid
        self._save_state()

    def _start_control_plane(self) -> None:
        paths = self.paths
        pki = credentials.Files.under(self.directory / "kube-apiserver" / "pki")
        self.api = KubeApiServer(
            self.directory / "kube-apiserver",
            binaries=require_kube_binaries(),
            address=self.host_address,
            extra_args=(
                f"--kubelet-client-certificate={pki.kubelet_client_cert}",
                f"--kubelet-client-key={pki.kubelet_client_key}",
                # The node's name resolves nowhere: the server calls the kubelet by address.
                "--kubelet-preferred-address-types=InternalIP,Hostname",
            ),
        )
        try:
            try:
                self.api.start()
            finally:
                for name, pid in zip(("etcd", "kube-apiserver"), self.api.pids, strict=False):
                    self.pids[name] = pid
                self._save_state()
        except KubeApiServerError as e:
            raise KubernetesNodeError(str(e)) from None
        self.api.write_kubeconfig(paths.kubeconfig)
        kubeconfig = f"--kubeconfig={paths.kubeconfig}"
        delegated = [f"--authentication-kubeconfig={paths.kubeconfig}",
                     f"--authorization-kubeconfig={paths.kubeconfig}"]  # fmt: skip
        self._spawn("kube-controller-manager", [
            str(self.binaries.kube_controller_manager), kubeconfig, *delegated,
            "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
            # Every pod's kube-root-ca.crt, and the legacy token controller's key.
            f"--root-ca-file={pki.ca_cert}",
            f"--service-account-private-key-file={pki.service_account_key}",
            f"--service-cluster-ip-range={network.SERVICE_RANGE}",
            "--use-service-account-credentials=false", "--cluster-name=kto",
        ])  # fmt: skip
        self._spawn("kube-scheduler", [
            str(self.binaries.kube_scheduler), kubeconfig, *delegated,
            "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
        ])  # fmt: skip

    def _start_containerd(self) -> None:
        paths = self.paths
        paths.containerd_state.parent.mkdir(parents=True, exist_ok=True)
        paths.cni_config_dir.mkdir(parents=True, exist_ok=True)
        (paths.cni_config_dir / "10-kto.conflist").write_text(
            configs.as_json(configs.cni_network(paths))
        )
        paths.containerd_config.write_text(configs.containerd_config(paths, self.images.pause))
        self._spawn("containerd", ["containerd", "--config", str(paths.containerd_config)],
                    in_node=True)  # fmt: skip
        self._wait(lambda: self._ctr("version").returncode == 0, "containerd", "containerd")

    def _ctr(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ctr", "--address", str(self.paths.containerd_socket), "-n",
                               "k8s.io", *args], capture_output=True, text=True)  # fmt: skip

    def _import_images(self) -> None:
        for archive in self.images.archives:
            done = self._ctr("images", "import", str(archive))
            if done.returncode != 0:
                raise KubernetesNodeError(f"ctr images import {archive}: {done.stderr.strip()}")

    def _start_kubelet_and_proxy(self) -> None:
        paths = self.paths
        assert self.network is not None and self.api is not None
        paths.resolv_conf.write_text("options ndots:5\n")
        config = configs.kubelet_config(paths, self.network.node_address, self.cgroup,
                                        self.api.files.ca_cert)  # fmt: skip
        paths.kubelet_config.write_text(yaml.safe_dump(config))
        cleanup.create_cgroups(self.cgroup)
        self._spawn("kubelet", [
            str(self.binaries.kubelet), f"--config={paths.kubelet_config}",
            f"--kubeconfig={paths.kubeconfig}", f"--root-dir={paths.kubelet_root}",
            f"--cert-dir={paths.kubelet_root / 'pki'}",
            f"--hostname-override={configs.NODE_NAME}", f"--node-ip={self.network.node_address}",
        ], in_node=True)  # fmt: skip
        paths.kube_proxy_config.write_text(yaml.safe_dump(configs.kube_proxy_config(paths)))
        proxy = [str(self.binaries.kube_proxy), f"--config={paths.kube_proxy_config}"]
        self._spawn("kube-proxy", proxy, in_node=True)

    @property
    def cgroup(self) -> str:
        assert self.network is not None
        return f"/{configs.CGROUP_PREFIX}{self.network.index}"

    def _start_coredns(self) -> None:
        manifests = configs.coredns_manifests(self.images.coredns)
        self.kubectl("apply", "-f", "-", stdin="\n---\n".join(yaml.safe_dump(m)
                                                               for m in manifests))  # fmt: skip
        self._wait(lambda: _available(self._get("/apis/apps/v1/namespaces/kube-system/"
                                                "deployments/coredns")),
                   "CoreDNS to be available", "kubelet")  # fmt: skip

    def _get(self, path: str) -> Any:
        assert self.api is not None
        return self.api.get(path)

    def _node_ready(self) -> bool:
        node = self._get(f"/api/v1/nodes/{configs.NODE_NAME}")
        return any(c["type"] == "Ready" and c["status"] == "True"
                   for c in node.get("status", {}).get("conditions", []))  # fmt: skip

    def _wait(self, ready: Callable[[], bool], what: str, log: str) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            for name, pid in self.pids.items():
                if not _alive(pid):
                    raise KubernetesNodeError(f"{name} exited; see {self.paths.log(name)}")
            try:
                if ready():
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise KubernetesNodeError(
            f"waited {STARTUP_TIMEOUT:.0f} s for {what}; see {self.paths.log(log)}"
        )


def _paths(directory: Path, net: network.NodeNetwork) -> configs.NodePaths:
    return configs.NodePaths(directory, RUNTIME_ROOT / net.namespace)


def _available(deployment: dict[str, Any]) -> bool:
    return int(deployment.get("status", {}).get("availableReplicas") or 0) >= 1


def _alive(pid: int) -> bool:
    from kto_dev.apache_kafka.broker import alive

    return alive(pid)


def _kubectl() -> str:
    from kto_dev.cluster_api import kubectl

    return kubectl()


# Stopped in this order: nothing recreates pods once the controllers are gone, and nothing
# restarts containers once the kubelet is.
STOP_ORDER = ("kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy")


def _stop_node(
    directory: Path,
    net: network.NodeNetwork,
    pids: dict[str, int],
    api: KubeApiServer | None = None,
) -> None:
    """Stops what runs and removes what it left; `api`: the API server this process started
    (waited for through its handles), else it is stopped by pid."""
    paths = _paths(directory, net)
    cgroup = f"/{configs.CGROUP_PREFIX}{net.index}"
    sandboxes = _sandboxes(paths) if pids.get("containerd") else {}
    stop_together([pids[n] for n in STOP_ORDER if n in pids])
    cleanup.kill_cgroup_processes(cgroup)
    if "containerd" in pids:
        stop_together([pids["containerd"]])
    shims = cleanup.shims(paths.containerd_socket)
    cleanup.kill(shims)
    for socket in shims.values():
        socket.unlink(missing_ok=True)
    cleanup.remove_netns_files(sandboxes.values())
    cleanup.unmount(cleanup.mounts_under([paths.directory, paths.runtime]))
    left = cleanup.remove_cgroups(cgroup)
    cleanup.remove_cni_results(sandboxes)
    cleanup.remove_log_links(paths.pod_logs)
    if api is not None:
        api.stop()
    for name in ("kube-apiserver", "etcd"):  # together, the server waits 20 s for etcd gone
        if name in pids:
            stop_together([pids[name]])
    shutil.rmtree(paths.runtime, ignore_errors=True)
    with network.machine_lock():
        net.delete()
        if not network.in_use():
            sysctls.restore()
            cleanup.remove_machine_leftovers()
    if left:
        raise KubernetesNodeError(f"cgroups left behind: {', '.join(map(str, left))}")


def _sandboxes(paths: configs.NodePaths) -> dict[str, str]:
    """Each pod sandbox's container id and network namespace file, read from containerd while
    it runs: what must be unmounted once it is gone."""
    address = ["ctr", "--address", str(paths.containerd_socket), "-n", "k8s.io"]
    listed = subprocess.run([*address, "containers", "list", "--quiet"], capture_output=True,
                            text=True)  # fmt: skip
    found = {}
    for cid in listed.stdout.split():
        info = subprocess.run([*address, "containers", "info", cid], capture_output=True,
                              text=True)  # fmt: skip
        try:
            spec = json.loads(info.stdout)["Spec"]
        except (ValueError, KeyError, TypeError):
            continue
        for ns in spec.get("linux", {}).get("namespaces", []):
            path = ns.get("path", "")
            if ns.get("type") == "network" and path.startswith("/var/run/netns/"):
                found[cid] = path
    return found
