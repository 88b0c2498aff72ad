"""Real kopf (`kopf run --standalone`, its own process) against the emulator: a create handler
that patches status and a finalizer-guarded delete handler, awaited through watch streams."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kube_api_emulator import ApiServer

from .helpers import CRD_PATH, TOPICS, Http, topic, topic_crd

pytestmark = pytest.mark.e2e

OPERATOR = textwrap.dedent(
    """
    import kopf

    @kopf.on.startup()
    def configure(settings: kopf.OperatorSettings, **_):
        settings.persistence.finalizer = "kto.dev/test-finalizer"

    @kopf.on.create("kto.dev", "v1", "kafkatopics")
    def create_topic(spec, name, body, patch, **_):
        kopf.info(body, reason="TopicCreated", message=f"{spec['partitions']} partitions")
        patch.status["conditions"] = [{"type": "Ready", "status": "True", "reason": "Created"}]
        patch.status["observedPartitions"] = spec["partitions"]

    @kopf.on.delete("kto.dev", "v1", "kafkatopics")
    def delete_topic(name, status, **_):
        print(f"deleting topic {name} with {status.get('observedPartitions')} partitions",
              flush=True)
    """
)


def ready(event: dict[str, object]) -> bool:
    obj = event["object"]
    assert isinstance(obj, dict)
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def test_kopf_operator_handles_create_and_finalized_delete(api: ApiServer, tmp_path: Path) -> None:
    http = Http(api.url)
    assert http.post(CRD_PATH, topic_crd())[0] == 201
    # Not "operator.py": that would shadow the standard library's operator module.
    module = tmp_path / "topic_operator.py"
    module.write_text(OPERATOR)
    env = {**os.environ, "KUBECONFIG": str(api.write_kubeconfig(tmp_path / "kubeconfig"))}
    log = (tmp_path / "kopf.log").open("w")
    kopf = subprocess.Popen(
        [sys.executable, "-m", "kopf", "run", "--standalone", "--all-namespaces", str(module)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
    )
    try:
        _exercise(http)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\nkopf output:\n{(tmp_path / 'kopf.log').read_text()}") from exc
    finally:
        kopf.terminate()
        kopf.wait(30)
        log.close()
    output = (tmp_path / "kopf.log").read_text()
    assert "deleting topic orders with 4 partitions" in output
    assert "Handler 'create_topic' succeeded" in output
    assert "Handler 'delete_topic' succeeded" in output
    assert "Traceback" not in output


def _exercise(http: Http) -> None:
    assert http.post(TOPICS, topic("orders", partitions=4))[0] == 201
    by_name = f"{TOPICS}?fieldSelector=metadata.name%3Dorders"
    handled = http.watch_until(by_name, ready)
    obj = handled["object"]
    assert obj["metadata"]["finalizers"] == ["kto.dev/test-finalizer"]
    assert obj["status"]["observedPartitions"] == 4
    assert obj["metadata"]["generation"] == 1

    code, pending = http.delete(f"{TOPICS}/orders")
    assert code == 200  # 202 only for a foreground deletion (kube-apiserver 1.33)
    # Resume from the delete's resourceVersion, so the removal cannot slip past the watch.
    since = pending["metadata"]["resourceVersion"]
    gone = http.watch_until(f"{by_name}&resourceVersion={since}", lambda e: e["type"] == "DELETED")
    assert gone["object"]["metadata"]["deletionTimestamp"]
    assert "finalizers" not in gone["object"]["metadata"]
    assert http.get(f"{TOPICS}/orders")[0] == 404
    # kopf posts events in the background: follow the events until its own one arrives.
    posted = http.watch_until(
        "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dorders",
        lambda e: e["object"].get("reason") == "TopicCreated",
    )
    assert posted["object"]["message"] == "4 partitions"
    assert posted["object"]["involvedObject"]["kind"] == "KafkaTopic"
    assert posted["object"]["metadata"]["name"].startswith("kopf-event-")
