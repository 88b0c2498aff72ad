"""How the Spark operator's processes are started on the host: the API server they submit to,
and the flags that replace what its chart sets in pods."""

from __future__ import annotations

from pathlib import Path

import yaml

from kto_dev.spark_operator import launcher

BINARY = Path("/opt/spark-operator")
KUBECONFIG = Path("/k/config")


def test_the_controller_submits_to_the_kubeconfig_server() -> None:
    kubeconfig = yaml.safe_load("""
current-context: kto
contexts: [{name: other, context: {cluster: other}}, {name: kto, context: {cluster: kto}}]
clusters:
- {name: other, cluster: {server: "https://other:1"}}
- {name: kto, cluster: {server: "https://10.1.2.3:6443"}}
""")
    assert launcher.api_server(kubeconfig) == ("10.1.2.3", "6443")


def test_the_controller_watches_the_namespaces_alone_without_leader_election() -> None:
    args = launcher.controller_args(BINARY, KUBECONFIG, ["a", "b"], 8081)
    assert args[:3] == [str(BINARY), "controller", "start"]
    assert {"--kubeconfig=/k/config", "--namespaces=a,b", "--leader-election=false",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=127.0.0.1:8081"} <= set(args)  # fmt: skip


def test_the_webhook_keeps_its_certificate_and_configurations_under_one_name() -> None:
    args = launcher.webhook_args(BINARY, KUBECONFIG, ["a"], name="so", namespace="so-system",
                                 port=9443, probes=8082, cert_dir=Path("/c"))  # fmt: skip
    assert args[:3] == [str(BINARY), "webhook", "start"]
    assert {"--webhook-port=9443", "--webhook-cert-dir=/c", "--mutating-webhook-name=so",
            "--validating-webhook-name=so", "--webhook-secret-namespace=so-system",
            "--webhook-svc-namespace=so-system", "--namespaces=a",
            "--health-probe-bind-address=127.0.0.1:8082"} <= set(args)  # fmt: skip
