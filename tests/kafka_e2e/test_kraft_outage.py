"""The operator on KRaft while the brokers are away: resources waiting on Kafka say
KafkaUnavailable within the retry time, liveness stays healthy, readiness and kto_kafka_up say
the outage, and once the brokers answer again the resources become Ready without waiting for a
retry timer."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kafka_client import describe_topic
from kto_testing import eventually
from status_captures import capture

from kto_dev.apache_kafka.kraft import KRaftCluster
from kto_dev.ports import free_port

from .conftest import operating

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

RETRY = 2.0


def get(url: str) -> tuple[int, str]:
    """An HTTP GET answered within a second, as a Kubernetes probe with timeoutSeconds: 1."""
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_kafka_outage_is_reported_and_ends_at_once(
    kraft_cluster: KRaftCluster, tmp_path: Path
) -> None:
    liveness = f"http://127.0.0.1:{free_port()}/healthz"
    readiness = f"http://127.0.0.1:{free_port()}/readyz"
    metrics_port = free_port()
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    bootstrap = kraft_cluster.bootstrap
    with operating(kraft_cluster, tmp_path / "operator", "--liveness", liveness,
                   "--readiness", readiness, "--metrics-port", str(metrics_port),
                   "--zookeeper-retry-seconds", str(RETRY)) as operator:  # fmt: skip
        operator.apply("outage-before", partitions=1, replicas=3)
        operator.ready("outage-before")
        eventually(lambda: get(readiness) == (200, "ok\n"), "ready")
        kraft_cluster.stop()
        try:
            stopped = time.monotonic()
            operator.apply("outage-new", partitions=2, replicas=3)
            _, _, message = operator.reason("outage-new", "KafkaUnavailable", timeout=60)
            assert message.startswith(f"Kafka at {bootstrap} did not answer"), message
            capture(operator.get("outage-new"))
            # Within the retry time, a check's timeout and the reconcile's own Admin API call.
            assert time.monotonic() - stopped < 30
            status, body = get(liveness)
            assert status == 200
            assert json.loads(body)["cluster"] == "Kafka not answering"
            assert get(readiness) == (503, "Kafka is not answering\n")
            assert "\nkto_kafka_up 0.0\n" in get(metrics)[1]
        finally:
            kraft_cluster.start()
        back = time.monotonic()
        obj = operator.ready("outage-new", timeout=60)
        waited = time.monotonic() - back
        print(f"Ready {waited:.1f} s after the brokers answered again")
        assert waited < 15  # no retry timer that outlived the outage
        assert obj["status"]["topicId"] == describe_topic(kraft_cluster, "outage-new")[0]
        eventually(lambda: get(readiness) == (200, "ok\n"), "ready again")
        served = get(metrics)[1]
        assert "\nkto_kafka_up 1.0\n" in served
        assert "kto_zookeeper_up" not in served  # the other kind of cluster's gauge: never served
