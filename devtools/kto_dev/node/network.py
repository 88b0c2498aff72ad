"""The node's network: a network namespace of its own, linked to the host by a veth pair.

The kubelet, containerd (and so every pod), kube-proxy and the bridge live in the namespace, so
kube-proxy's iptables chains, the bridge, the pods' routes and the forwarding sysctl never touch
the host's, several nodes run side by side (one per test worker), and deleting the namespace
takes all of it away. The host keeps the link's first address: the control plane, ZooKeeper and
Kafka listen there, where both the host and the pods (through the bridge's masquerading) reach
them. Pods reach nothing beyond the host: the host does not forward.

Pure addresses, and the few `ip` commands that make and remove the link.
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# Each node's link is a /30 of this range: the host's address, then the node's.
LINK_RANGE = ipaddress.IPv4Network("10.213.0.0/16")
MAX_NODES = 64
# Inside every node namespace alike: its pods, and its Services (kube-apiserver's own default
# service range, so that 10.0.0.1 is the `kubernetes` Service and 10.0.0.10 cluster DNS).
POD_SUBNET = "10.244.0.0/24"
SERVICE_RANGE = "10.0.0.0/24"
CLUSTER_DNS = "10.0.0.10"
NETNS_DIR = Path("/run/netns")
PREFIX = "kto-node-"
LOCK = Path("/run/lock/kto-node.lock")


class NodeNetworkError(RuntimeError):
    """The namespace or its link could not be made; the message names the command."""


@dataclass(frozen=True)
class NodeNetwork:
    index: int

    @property
    def namespace(self) -> str:
        return f"{PREFIX}{self.index}"

    @property
    def namespace_path(self) -> Path:
        return NETNS_DIR / self.namespace

    @property
    def _subnet(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network((int(LINK_RANGE.network_address) + 4 * self.index, 30))

    @property
    def host_address(self) -> str:
        return str(self._subnet.network_address + 1)

    @property
    def node_address(self) -> str:
        return str(self._subnet.network_address + 2)

    @property
    def host_interface(self) -> str:
        return f"kto{self.index}h"

    @property
    def node_interface(self) -> str:
        return f"kto{self.index}n"

    def exec_prefix(self) -> list[str]:
        """Runs a command in the namespace and nothing else: the host's mounts stay shared, so
        what the kubelet mounts for a pod is what containerd gives the container (`ip netns
        exec` would give each command a mount namespace of its own)."""
        return ["nsenter", f"--net={self.namespace_path}", "--"]

    def create(self) -> None:
        ns, host, node = self.namespace, self.host_interface, self.node_interface
        _ip("netns", "add", ns)
        try:
            _ip("link", "add", host, "type", "veth", "peer", "name", node, "netns", ns)
            _ip("addr", "add", f"{self.host_address}/30", "dev", host)
            _ip("link", "set", host, "up")
            inside = ["-n", ns]
            _ip(*inside, "addr", "add", f"{self.node_address}/30", "dev", node)
            _ip(*inside, "link", "set", node, "up")
            _ip(*inside, "link", "set", "lo", "up")
            _ip(*inside, "route", "add", "default", "via", self.host_address)
        except NodeNetworkError:
            self.delete()
            raise

    def delete(self) -> None:
        """The namespace, and with it the veth pair, the bridge and kube-proxy's chains."""
        if self.namespace_path.exists():
            subprocess.run(["ip", "netns", "delete", self.namespace], capture_output=True)
        # A host end left by a half-made link.
        subprocess.run(["ip", "link", "delete", self.host_interface], capture_output=True)

    def exists(self) -> bool:
        return self.namespace_path.exists()


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise NodeNetworkError(f"ip {' '.join(args)}: {done.stderr.strip()}")


def in_use() -> set[int]:
    """The indexes of the node namespaces on this machine, whoever made them."""
    if not NETNS_DIR.is_dir():
        return set()
    return {int(p.name[len(PREFIX):]) for p in NETNS_DIR.iterdir()
            if p.name.startswith(PREFIX) and p.name[len(PREFIX):].isdigit()}  # fmt: skip


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    """One node at a time picks its index (and saves or restores the machine's sysctls)."""
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def allocate() -> NodeNetwork:
    """A free index, its namespace and link made; call under `machine_lock`."""
    taken = in_use()
    free = next((i for i in range(MAX_NODES) if i not in taken), None)
    if free is None:
        raise NodeNetworkError(f"{MAX_NODES} node namespaces exist already ({PREFIX}*)")
    network = NodeNetwork(free)
    network.delete()  # a host end left by a crash
    network.create()
    return network
