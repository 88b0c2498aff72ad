"""The dev cluster's Kubernetes API: the API emulator, or a real kube-apiserver with etcd, with
the project's CRDs installed; and the kubectl to use on it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from kto_dev.cluster_processes import DevClusterError, spawn, wait_for
from kto_dev.ports import free_port

CRDS = Path(__file__).resolve().parents[2] / "crds"


def http(url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"null")


def start_emulator(directory: Path, kubeconfig: Path, pids: list[int]) -> str:
    api_port = free_port()
    api_log = directory / "apiserver.log"
    pids.append(spawn([sys.executable, "-m", "kube_api_emulator", "--port",
                       str(api_port), "--state-file", str(directory / "apiserver.json"),
                       "--kubeconfig", str(kubeconfig)], api_log))  # fmt: skip
    api = f"http://127.0.0.1:{api_port}"
    wait_for(lambda: http(api + "/version"), "the Kubernetes API emulator", api_log)
    for crd_file in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(crd_file.read_text())
        try:
            http(api + "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
        except urllib.error.HTTPError as e:
            if e.code != 409:  # already there from a saved state
                raise
    return api


def start_kube_apiserver(directory: Path, kubeconfig: Path, pids: list[int]) -> str:
    """etcd and kube-apiserver, kept in `kube-apiserver/` (data, keys and ports) across `up`s;
    the CRDs applied as kubectl would, waiting until they are served."""
    from kto_dev.kube_apiserver.launcher import KubeApiServer, KubeApiServerError

    try:
        server = KubeApiServer(directory / "kube-apiserver")
        try:
            server.start()
        finally:
            pids.extend(server.pids)
    except KubeApiServerError as e:
        raise DevClusterError(str(e)) from None
    server.write_kubeconfig(kubeconfig)
    log = directory / "kubectl.log"
    with log.open("ab") as out:
        applied = subprocess.run([kubectl(), f"--kubeconfig={kubeconfig}", "apply", "-f",
                                  str(CRDS)], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
        established = subprocess.run([kubectl(), f"--kubeconfig={kubeconfig}", "wait",
                                      "--for=condition=Established", "--timeout=60s", "-f",
                                      str(CRDS)], stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    if applied.returncode or established.returncode:
        raise DevClusterError(f"the CRDs were not installed; see {log}")
    return server.url


def kubectl() -> str:
    """The project's kubectl (`make setup` fetches it), else whichever is on the PATH."""
    fetched = Path(__file__).resolve().parents[2] / ".kto" / "bin" / "kubectl"
    return str(fetched) if fetched.exists() else "kubectl"
