"""The status follower's reconcile of drift and the delete handler, racing on one topic: a
managed topic deleted by hand is created again by the follower, and a resource deleted while
that reconcile is in flight must not leave the topic behind it (the follower read the resource
before its deletion, the delete handler looked before the follower wrote)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import kopf
import pytest
from kopf._core.engines import posting

from kafka_topic_operator.k8s import handlers
from kafka_topic_operator.k8s.finalizer import FINALIZER
from kafka_topic_operator.topics.batcher import Request
from kafka_topic_operator.topics.ownership import Claim
from kafka_topic_operator.topics.zookeeper_backend import ZooKeeperBackend
from kafka_topic_operator.zk.client import ZkClient
from kube_api_emulator import ApiServer

from .conftest import install_crd

pytestmark = [pytest.mark.zookeeper]

GROUP, VERSION, PLURAL = handlers.GROUP, handlers.VERSION, handlers.PLURAL
WAIT = 30.0  # for what happens at once; a bound, not a pause


@pytest.fixture
def rt(zk: ZkClient, dev_brokers: None) -> Iterator[handlers.Runtime]:
    runtime = handlers.Runtime(backend=ZooKeeperBackend(zk))
    runtime.batcher.start()  # the follower is not started: the test calls it
    yield runtime
    runtime.batcher.stop()


def settled_resource(api: Any) -> dict[str, Any]:
    """A KafkaTopic as its reconcile left it: finalized, Ready, its topic created."""
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
            "metadata": {"name": "orders", "finalizers": [FINALIZER]},
            "spec": {"partitions": 1, "replicas": 1}}  # fmt: skip
    made = api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    ready = {"type": "Ready", "status": "True", "reason": "Created", "message": "",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip
    generation = made["metadata"]["generation"]
    status = {"topicName": "orders", "observedGeneration": generation, "conditions": [ready]}
    return dict(api.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", PLURAL, "orders", {"status": status}))  # fmt: skip


def test_a_deletion_waits_for_the_reconcile_of_drift_in_flight(
    emulator: ApiServer, rt: handlers.Runtime, request: pytest.FixtureRequest
) -> None:
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    api = client.CustomObjectsApi()
    resource = settled_resource(api)
    meta = resource["metadata"]
    rt.claims.claim(Claim(meta["creationTimestamp"], "default", "orders", "orders"))
    backend = rt.backend
    assert not backend.topic_exists("orders")  # deleted by hand: drift the follower reverts

    # The follower's reconcile holds at the batcher, after its read of the resource.
    submitted, go = threading.Event(), threading.Event()
    submit = rt.batcher.submit

    def held_submit(reconcile: Request) -> Any:
        submitted.set()
        go.wait(WAIT)
        return submit(reconcile)

    rt.batcher.submit = held_submit  # type: ignore[method-assign]
    snapshot = backend.read(["orders"], list_topics=False)
    follower = threading.Thread(target=handlers.refresh_statuses, args=(rt, snapshot, ["orders"]))
    follower.start()

    def release() -> None:  # a failed test leaves no thread held
        go.set()
        follower.join(WAIT)

    request.addfinalizer(release)
    assert submitted.wait(WAIT), "the follower did not reconcile the drift"

    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    deleting = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    assert deleting["metadata"]["deletionTimestamp"]
    outcome: list[BaseException | None] = []

    def delete_handler() -> None:
        settings = kopf.OperatorSettings()
        settings.posting.enabled = False
        settings.posting.level = 100  # no events: no kopf loop to post them
        posting.settings_var.set(settings)  # as kopf sets it for its handlers
        try:
            asyncio.run(handlers.delete(
                name="orders", namespace="default", spec=deleting["spec"],
                meta=deleting["metadata"], status=deleting["status"], patch=kopf.Patch(),
                body=kopf.Body(deleting), memo=kopf.Memo(runtime=rt)))  # fmt: skip
        except BaseException as e:  # the handler's "waiting" is its answer, kept to check
            outcome.append(e)
        else:
            outcome.append(None)

    deletion = threading.Thread(target=delete_handler)
    deletion.start()
    # Without the lock, the handler finds no topic within milliseconds and lets the resource go.
    deletion.join(1.0)
    assert deletion.is_alive(), f"the deletion did not wait for the write in flight: {outcome}"
    go.set()
    follower.join(WAIT)
    deletion.join(WAIT)
    assert not follower.is_alive() and not deletion.is_alive()

    # The follower wrote the topic first; the deletion then asked Kafka to delete it.
    assert backend.topic_exists("orders")
    assert backend.deletion_requested("orders")
    [answer] = outcome
    # It waits on the deletion (with no controller here: "no active controller").
    assert isinstance(answer, kopf.TemporaryError)
    assert "Deletion of topic 'orders' waits" in str(answer)
