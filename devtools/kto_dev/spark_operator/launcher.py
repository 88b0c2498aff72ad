"""The Spark operator as host processes against a kube-apiserver: its CRDs installed, its
webhook (`spark-operator webhook start`) and its controller (`spark-operator controller start`)
run as the upstream Helm chart runs them in pods, with an administrator's kubeconfig in place of
the chart's RBAC.

The controller submits each SparkApplication by running `$SPARK_HOME/bin/spark-submit` itself
in cluster mode, at the master it reads from KUBERNETES_SERVICE_HOST and _PORT (a pod's
environment; here the API server's address), with the kubeconfig's credentials (Spark's
Kubernetes client reads KUBECONFIG). pyspark's package folder is such a SPARK_HOME.

Without the webhook the controller would still submit, but Spark applies only part of a
SparkApplication itself: its volumes, volume mounts and security contexts reach the pods through
the webhook (as the chart installs it, by default), unless the application gives pod templates.

`with SparkOperator(...) as operator:` starts both and waits until they serve; leaving stops
them, and removes the webhook configurations (they would refuse Spark's pods with no server
behind them) and the operator's namespace. The CRDs stay: removing them would delete every
SparkApplication.
"""

from __future__ import annotations

import json
import os
import ssl
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from kto_dev.cluster_api import kubectl as project_kubectl
from kto_dev.cluster_processes import start, stop_together, wait_for
from kto_dev.ports import free_port

from . import webhooks
from .build import SparkOperator as Built
from .build import require_built

NAME = "kto-spark-operator"


class SparkOperatorError(RuntimeError):
    """The Spark operator could not be installed or started; the message says why."""


def spark_home_of_pyspark() -> Path:
    """pyspark's package folder: a Spark distribution, bin/spark-submit and jars included."""
    import pyspark

    return Path(pyspark.__file__).parent


def api_server(kubeconfig: dict[str, Any]) -> tuple[str, str]:
    """The host and port of the kubeconfig's current cluster, as a pod's environment gives them
    (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT)."""
    context = next(c["context"] for c in kubeconfig["contexts"]
                   if c["name"] == kubeconfig["current-context"])  # fmt: skip
    cluster = next(c["cluster"] for c in kubeconfig["clusters"] if c["name"] == context["cluster"])
    url = urllib.parse.urlsplit(cluster["server"])
    if url.hostname is None:
        raise SparkOperatorError(f"the kubeconfig's server {cluster['server']} names no host")
    return url.hostname, str(url.port or 443)


def controller_args(binary: Path, kubeconfig: Path, namespaces: Sequence[str], probes: int
                    ) -> list[str]:  # fmt: skip
    # One replica: no leader election. No metrics endpoint (the chart's serves Prometheus).
    return [str(binary), "controller", "start", f"--kubeconfig={kubeconfig}",
            f"--namespaces={','.join(namespaces)}", "--leader-election=false",
            "--metrics-bind-address=0", f"--health-probe-bind-address=127.0.0.1:{probes}",
            "--zap-log-level=info"]  # fmt: skip


def webhook_args(binary: Path, kubeconfig: Path, namespaces: Sequence[str], *, name: str,
                 namespace: str, port: int, probes: int, cert_dir: Path) -> list[str]:  # fmt: skip
    # The certificate is generated into a Secret of `namespace` (made for `name`.`namespace`.svc
    # and localhost) and kept in the webhook configurations named `name`.
    return [str(binary), "webhook", "start", f"--kubeconfig={kubeconfig}",
            f"--namespaces={','.join(namespaces)}", "--leader-election=false",
            f"--webhook-port={port}", f"--webhook-cert-dir={cert_dir}",
            f"--mutating-webhook-name={name}", f"--validating-webhook-name={name}",
            f"--webhook-secret-name={name}-webhook-certs",
            f"--webhook-secret-namespace={namespace}", f"--webhook-svc-name={name}-webhook",
            f"--webhook-svc-namespace={namespace}", "--metrics-bind-address=0",
            f"--health-probe-bind-address=127.0.0.1:{probes}"]  # fmt: skip


class SparkOperator:
    """The Spark operator watching `namespaces`, its files under `directory`."""

    def __init__(
        self,
        directory: Path,
        kubeconfig: Path,
        namespaces: Sequence[str],
        *,
        spark_home: Path | None = None,
        name: str = NAME,
        built: Built | None = None,
    ) -> None:
        self.directory = directory
        self.kubeconfig = kubeconfig
        self.namespaces = list(namespaces)
        self.spark_home = spark_home or spark_home_of_pyspark()
        self.name = name
        self.namespace = name  # the webhook's certificate Secret lives there
        self.built = built or require_built()
        self._processes: list[subprocess.Popen[bytes]] = []

    @property
    def controller_log(self) -> Path:
        return self.directory / "controller.log"

    @property
    def webhook_log(self) -> Path:
        return self.directory / "webhook.log"

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        done = subprocess.run([project_kubectl(), f"--kubeconfig={self.kubeconfig}", *args],
                              input=stdin, capture_output=True, text=True)  # fmt: skip
        if check and done.returncode != 0:
            raise SparkOperatorError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> SparkOperator:
        if not (self.spark_home / "bin" / "spark-submit").exists():
            raise SparkOperatorError(f"no bin/spark-submit in SPARK_HOME {self.spark_home}")
        self.directory.mkdir(parents=True, exist_ok=True)
        try:
            self.install_crds()
            self._start_webhook()
            self._start_controller()
        except BaseException:
            self.stop()
            raise
        return self

    def install_crds(self) -> None:
        # Server-side: the CRDs are larger than client-side apply's last-applied annotation.
        for crd in self.built.crds:
            self.kubectl("apply", "--server-side", "--force-conflicts", "-f", str(crd))
        names = [yaml.safe_load(crd.read_text())["metadata"]["name"] for crd in self.built.crds]
        self.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                     *(f"crd/{n}" for n in names))  # fmt: skip

    def _start_webhook(self) -> None:
        port, probes = free_port(), free_port()
        self.kubectl("create", "namespace", self.namespace, check=False)  # there if restarted
        configurations = webhooks.configurations(self.name, port, self.namespaces)
        self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(configurations))
        args = webhook_args(self.built.binary, self.kubeconfig, self.namespaces, name=self.name,
                            namespace=self.namespace, port=port, probes=probes,
                            cert_dir=self.directory / "webhook-certs")  # fmt: skip
        self._spawn(args, self.webhook_log, os.environ.copy())
        wait_for(lambda: _ready(probes), "the Spark operator's webhook", self.webhook_log)
        # The API server calls it only once the webhook has put its authority in both.
        wait_for(self._ca_bundles_set, "the webhook configurations' caBundle", self.webhook_log)

    def _ca_bundles_set(self) -> bool:
        kinds = "mutatingwebhookconfiguration,validatingwebhookconfiguration"
        listed = json.loads(self.kubectl("get", kinds, "-o", "json", "--field-selector",
                                         f"metadata.name={self.name}"))  # fmt: skip
        items = listed["items"]
        return len(items) == 2 and all(webhooks.ca_bundles_set(c) for c in items)

    def _start_controller(self) -> None:
        host, port = api_server(yaml.safe_load(self.kubeconfig.read_text()))
        env = {**os.environ, "SPARK_HOME": str(self.spark_home), "KUBECONFIG": str(self.kubeconfig),
               "KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}  # fmt: skip
        probes = free_port()
        args = controller_args(self.built.binary, self.kubeconfig, self.namespaces, probes)
        self._spawn(args, self.controller_log, env)
        wait_for(lambda: _ready(probes), "the Spark operator's controller", self.controller_log)

    def _spawn(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        # In a session of its own: stopping its group stops the spark-submit it may be running.
        self._processes.append(start(args, log, env))

    def stop(self) -> None:
        """The controller (and any spark-submit of it), then the webhook; then what the webhook
        needed in the cluster."""
        processes, self._processes = self._processes, []
        stop_together([p.pid for p in reversed(processes)])
        for process in processes:
            process.wait()
        for kind in ("mutatingwebhookconfiguration", "validatingwebhookconfiguration"):
            self.kubectl("delete", kind, self.name, "--ignore-not-found", check=False)
        self.kubectl("delete", "namespace", self.namespace, "--ignore-not-found",
                     "--wait=false", check=False)  # fmt: skip

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self._processes]

    def __enter__(self) -> SparkOperator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _ready(port: int) -> bool:
    """controller-runtime's readiness endpoint answers 200 once the manager serves."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as answer:
            return int(answer.status) == 200
    except (OSError, ssl.SSLError):
        return False
