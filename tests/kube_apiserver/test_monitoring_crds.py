"""What the chart renders for the Prometheus Operator (its ServiceMonitor and PrometheusRule)
accepted by a real kube-apiserver serving the Prometheus Operator's own CRDs, as a cluster
running it would; a value its schema forbids is refused."""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from chart_testing import CHART, of_kind, render

from kto_dev.kube_apiserver.build import Binaries
from kto_dev.kube_apiserver.launcher import KubeApiServer
from kto_dev.prometheus_operator_crds import crd_file

pytestmark = [pytest.mark.apiserver, pytest.mark.go]

MONITORING = ("--values", str(CHART / "ci" / "monitoring-values.yaml"),
              "--values", str(CHART / "ci" / "prometheusrule-values.yaml"))  # fmt: skip
KRAFT = ("--set", "zookeeper.connect=", "--set", "kafka.bootstrapServers=kafka-0.kafka:9092")


class Cluster:
    def __init__(self, kubectl: Path, kubeconfig: Path) -> None:
        self.kubectl, self.kubeconfig = kubectl, kubeconfig

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.kubectl), "--kubeconfig", str(self.kubeconfig), *args],
                              input=stdin, capture_output=True, text=True, timeout=120)  # fmt: skip

    def create(self, *objects: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """Server-side dry run: the API server validates each object, nothing is stored."""
        stdin = yaml.safe_dump_all(objects)
        return self.run("create", "--dry-run=server", "-f", "-", stdin=stdin)


@pytest.fixture(scope="module")
def cluster(
    kube_binaries: Binaries, k8s_binaries: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    folder = tmp_path_factory.mktemp("monitoring-crds")
    with KubeApiServer(folder / "kube", binaries=kube_binaries, audit=False) as api:
        found = Cluster(k8s_binaries / "kubectl", api.write_kubeconfig(folder / "kubeconfig"))
        for plural in ("servicemonitors", "prometheusrules"):
            applied = found.run("apply", "--server-side", "-f", str(crd_file(plural)))
            assert applied.returncode == 0, applied.stderr
            established = found.run("wait", "--for=condition=Established", "--timeout=60s",
                                    f"crd/{plural}.monitoring.coreos.com")  # fmt: skip
            assert established.returncode == 0, established.stderr
        for namespace in ("kto-system", "monitoring"):
            found.run("create", "namespace", namespace)
        yield found


@pytest.mark.parametrize("mode", [(), KRAFT], ids=["zookeeper", "kraft"])
def test_the_prometheus_operator_accepts_what_the_chart_renders_for_it(
    cluster: Cluster, mode: tuple[str, ...]
) -> None:
    docs = render(*MONITORING, *mode)
    objects = of_kind(docs, "ServiceMonitor") + of_kind(docs, "PrometheusRule")
    assert [o["kind"] for o in objects] == ["ServiceMonitor", "PrometheusRule"]
    created = cluster.create(*objects)
    assert created.returncode == 0, created.stderr
    assert "servicemonitor.monitoring.coreos.com/" in created.stdout, created.stdout
    assert "prometheusrule.monitoring.coreos.com/" in created.stdout, created.stdout


def test_a_rule_the_prometheus_operator_forbids_is_refused(cluster: Cluster) -> None:
    # The check above can fail: the CRD's schema is enforced (a `for` that is no duration).
    (rule,) = of_kind(render(*MONITORING), "PrometheusRule")
    broken = copy.deepcopy(rule)
    broken["spec"]["groups"][0]["rules"][0]["for"] = "five minutes"
    refused = cluster.create(broken)
    assert refused.returncode != 0
    assert "spec.groups[0].rules[0].for" in refused.stderr, refused.stderr
