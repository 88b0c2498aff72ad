"""The node's pure parts: its addresses, the settings it saves and puts back, what it reads of
the machine to clean up."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kto_dev.node import cleanup, configs, network, sysctls


def test_each_node_has_a_link_of_its_own_and_the_same_cluster_addresses() -> None:
    first, second = network.NodeNetwork(0), network.NodeNetwork(1)
    assert (first.host_address, first.node_address) == ("10.213.0.1", "10.213.0.2")
    assert (second.host_address, second.node_address) == ("10.213.0.5", "10.213.0.6")
    assert network.NodeNetwork(network.MAX_NODES - 1).node_address == "10.213.0.254"
    assert first.namespace == "kto-node-0" and second.host_interface == "kto1h"
    # Only the network namespace is entered: the kubelet's mounts stay the host's.
    assert first.exec_prefix() == ["nsenter", "--net=/run/netns/kto-node-0", "--"]


def test_the_first_node_saves_the_kubelets_settings_and_the_last_puts_them_back(
    tmp_path: Path,
) -> None:
    proc_sys, saved = tmp_path / "sys", tmp_path / "saved.json"
    for name in sysctls.KUBELET_TUNABLES:
        (proc_sys / name).parent.mkdir(parents=True, exist_ok=True)
        (proc_sys / name).write_text("0\n")
    sysctls.save(saved, proc_sys)
    (proc_sys / "kernel/panic").write_text("10\n")  # the kubelet's change
    sysctls.save(saved, proc_sys)  # a second node: the first record stays
    assert json.loads(saved.read_text())["kernel/panic"] == "0"
    sysctls.restore(saved, proc_sys)
    assert (proc_sys / "kernel/panic").read_text() == "0\n"
    assert not saved.exists()
    sysctls.restore(saved, proc_sys)  # nothing recorded: nothing done


def test_a_damaged_record_never_names_a_file_to_write(tmp_path: Path) -> None:
    proc_sys, saved = tmp_path / "sys", tmp_path / "saved.json"
    saved.write_text(json.dumps({"../../outside": "1"}))
    sysctls.restore(saved, proc_sys)
    assert not (tmp_path / "outside").exists()


def test_mounts_under_the_nodes_folders_deepest_first(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    node = tmp_path / "node"
    mountinfo.write_text(
        f"22 1 0:1 / / rw - ext4 /dev/vda rw\n"
        f"30 22 0:2 / {node}/kubelet/pods/a/volumes rw - tmpfs tmpfs rw\n"
        f"31 30 0:3 / {node}/kubelet/pods/a/volumes/x\\040y rw - tmpfs tmpfs rw\n"
        f"32 22 0:4 / {tmp_path}/nodeling rw - tmpfs tmpfs rw\n"
    )
    assert cleanup.mounts_under([node], mountinfo) == [
        f"{node}/kubelet/pods/a/volumes/x y",
        f"{node}/kubelet/pods/a/volumes",
    ]


def test_a_shims_socket_is_named_as_containerd_names_it() -> None:
    socket = Path("/run/kto-node-0/containerd.sock")
    expected = hashlib.sha256(b"/run/kto-node-0/containerd.sock/k8s.io/abc").hexdigest()
    assert cleanup.shim_socket(socket, "k8s.io", "abc") == cleanup.SHIM_SOCKETS / expected


def test_the_kubelet_is_told_about_cgroup_v1_and_never_collects_imported_images(
    tmp_path: Path,
) -> None:
    paths = configs.NodePaths(tmp_path, Path("/run/kto-node-3"))
    config = configs.kubelet_config(paths, "10.213.0.14", "/kto-node-3", tmp_path / "ca.crt")
    assert config["cgroupDriver"] == "cgroupfs" and config["failCgroupV1"] is False
    assert config["cgroupRoot"] == "/kto-node-3"
    assert config["imageGCHighThresholdPercent"] == 100
    assert config["authentication"]["anonymous"]["enabled"] is False
    assert config["containerRuntimeEndpoint"] == "unix:///run/kto-node-3/containerd.sock"
    containerd = configs.containerd_config(paths, "registry.k8s.io/pause:3.10")
    assert "restrict_oom_score_adj = true" in containerd
    assert 'sandbox_image = "registry.k8s.io/pause:3.10"' in containerd
