"""`kto run`'s rebalancing options, as parsed."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_topic_operator.k8s.cli import build_parser
from kafka_topic_operator.rebalance.engines.defaults import Claim
from kafka_topic_operator.rebalance.spec import EngineType


def parse(*args: str) -> argparse.Namespace:
    return build_parser().parse_args(["--zookeeper", "zk:2181", *args])


def test_every_engine_and_no_default_image_unless_told() -> None:
    args = parse()
    assert args.rebalance is True
    assert args.rebalance_engines == frozenset(EngineType)
    assert args.planner_image is args.planner_service_account is None


def test_the_engines_and_the_planner_image_as_the_chart_passes_them() -> None:
    args = parse("--rebalance-engines", "kubernetes, sparkApplication",
                 "--planner-image", "registry/kto-spark:1",
                 "--planner-service-account", "kto-planner")  # fmt: skip
    assert args.rebalance_engines == {
        EngineType.KUBERNETES,
        EngineType.SPARK_APPLICATION,
    }
    assert args.planner_image == "registry/kto-spark:1"
    assert args.planner_service_account == "kto-planner"
    assert parse("--no-rebalance").rebalance is False


def test_the_planners_defaults_as_the_chart_passes_them() -> None:
    args = parse("--planner-work-dir", "/var/lib/kto/rebalance",
                 "--planner-volume", "kafka/kto-plans",
                 "--planner-executor-cpu-request", "250m",
                 "--planner-driver-cpu-request", "0.5")  # fmt: skip
    assert args.planner_work_dir == "/var/lib/kto/rebalance"
    assert args.planner_volume == Claim("kafka", "kto-plans")
    assert (args.planner_executor_cpu_request, args.planner_driver_cpu_request) == ("250m", "0.5")


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--planner-volume", "kto-plans",
         "argument --planner-volume: expected NAMESPACE/CLAIM, got 'kto-plans'"),
        ("--planner-work-dir", "plans",
         "argument --planner-work-dir: expected an absolute path, got 'plans'"),
        ("--planner-driver-cpu-request", "1 core",
         "argument --planner-driver-cpu-request: expected a positive CPU quantity such as 250m, "
         "0.5 or 2, got '1 core'"),
    ],
)  # fmt: skip
def test_a_bad_planner_default_is_a_usage_error_naming_the_flag(
    flag: str, value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(flag, value)
    assert message in capsys.readouterr().err


def test_an_unknown_engine_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse("--rebalance-engines", "kubernetes,spark")
    assert exit_.value.code == 2
    assert ("engines are among local, kubernetes, sparkApplication: got 'kubernetes,spark'"
            in capsys.readouterr().err)  # fmt: skip


def test_no_kubernetes_credentials_fail_at_once_in_one_line(tmp_path: Path) -> None:
    # Outside a pod, with no kubeconfig: it used to retry listing KafkaTopics every 5 s forever.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")
    }
    env["HOME"] = str(tmp_path)  # no ~/.kube/config
    done = subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", "run",
                           "--zookeeper", "127.0.0.1:1/never-reached"],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        "kto run: no Kubernetes credentials: not in a pod with a service account, and no usable "
        "kubeconfig (KUBECONFIG or ~/.kube/config): "
    )
    assert done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            (),
            "kto run: give either --zookeeper (a ZooKeeper-mode cluster) or --bootstrap-servers "
            "(a KRaft cluster)\n",
        ),
        (
            ("--zookeeper", "zk:2181", "--bootstrap-servers", "k:9092"),
            "kto run: give either --zookeeper (a ZooKeeper-mode cluster) or --bootstrap-servers "
            "(a KRaft cluster)\n",
        ),
        (
            ("--bootstrap-servers", "k:9092", "--embedded-controller", "--zookeeper-set-acl"),
            "kto run: --embedded-controller, --zookeeper-set-acl: ZooKeeper only, not with "
            "--bootstrap-servers\n",
        ),
        (
            ("--bootstrap-servers", "k:9092", "--zookeeper-tls-cafile", "ca.pem"),
            "kto run: --zookeeper-tls-cafile: ZooKeeper only, not with --bootstrap-servers\n",
        ),
        (
            ("--zookeeper", "zk:2281", "--zookeeper-tls-certfile", "client.pem"),
            "kto run: --zookeeper-tls-certfile and --zookeeper-tls-keyfile go together\n",
        ),
        (
            ("--zookeeper", "zk:2281", "--zookeeper-tls-cafile", "/nonexistent/ca.pem"),
            "kto run: --zookeeper-tls-cafile /nonexistent/ca.pem: no such file\n",
        ),
    ],
)
def test_the_cluster_is_reached_one_way(
    flags: tuple[str, ...], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from kafka_topic_operator.k8s.cli import main

    assert main(list(flags)) == 2
    assert capsys.readouterr().err == message


def test_kafka_unreachable_fails_at_start_in_one_line(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"  # credentials that are never used: Kafka fails first
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {}}]\n"
    )
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    done = subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", "run",
                           "--bootstrap-servers", "127.0.0.1:1"],
                          capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("kto run: "), done.stderr
    assert "127.0.0.1:1" in done.stderr and done.stderr.count("\n") == 1, done.stderr
