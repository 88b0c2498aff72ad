"""A reconcile of drift and the delete handler, racing on one topic: a managed topic deleted by
hand is created again (by the status follower, or by the drift timer for an unsettled
resource), and a resource deleted while that reconcile is in flight must not leave the topic
behind it (the reconcile read the resource before its deletion, the delete handler looked
before the reconcile wrote)."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import kopf
import pytest
from kopf._core.engines import posting

from kafka_topic_operator.clusters.zookeeper_mode import ZooKeeperModeCluster
from kafka_topic_operator.k8s import handlers, topic_deletion
from kafka_topic_operator.k8s.finalizer import FINALIZER
from kafka_topic_operator.topics.batcher import Request
from kafka_topic_operator.topics.ownership import Claim
from kafka_topic_operator.zk.client import ZkClient
from kube_api_emulator import ApiServer

from .conftest import install_crd

pytestmark = [pytest.mark.zookeeper]

GROUP, VERSION, PLURAL = handlers.GROUP, handlers.VERSION, handlers.PLURAL
WAIT = 30.0  # for what happens at once; a bound, not a pause


def with_kopf_settings() -> None:
    """As kopf sets them for its handlers; no events posted (no kopf loop to post them)."""
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False
    settings.posting.level = 100
    posting.settings_var.set(settings)


def follower_pass(rt: handlers.Runtime, resource: dict[str, Any]) -> None:
    """The status follower, told that the topic changed (it reads the resource itself)."""
    snapshot = rt.backend.read(["orders"], list_topics=False)
    handlers.refresh_statuses(rt, snapshot, ["orders"])


def drift_timer(rt: handlers.Runtime, resource: dict[str, Any]) -> None:
    """The drift timer fired, kopf handing it the resource's body."""
    with_kopf_settings()
    body = kopf.Body(resource)
    with contextlib.suppress(kopf.TemporaryError):  # its topic written, partitions to come
        asyncio.run(handlers.drift(name="orders", namespace="default", spec=body.spec,
                                   meta=body.meta, status=body.status, patch=kopf.Patch(),
                                   body=body, memo=kopf.Memo(runtime=rt)))  # fmt: skip


WRITERS = [follower_pass, drift_timer]


@pytest.fixture
def rt(zk: ZkClient, dev_brokers: None) -> Iterator[handlers.Runtime]:
    runtime = handlers.Runtime(cluster=ZooKeeperModeCluster(zk))
    runtime.batcher.start()  # the follower is not started: the test calls it
    yield runtime
    runtime.batcher.stop()


def settled_resource(api: Any) -> dict[str, Any]:
    """A KafkaTopic as its reconcile left it (finalized, Ready); its topic is not made here:
    as if deleted by hand since, which a reconcile of drift creates again."""
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


@pytest.mark.parametrize("writer", WRITERS)
def test_a_deletion_waits_for_the_reconcile_of_drift_in_flight(
    emulator: ApiServer,
    rt: handlers.Runtime,
    request: pytest.FixtureRequest,
    writer: Callable[[handlers.Runtime, dict[str, Any]], None],
) -> None:
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    api = client.CustomObjectsApi()
    resource = settled_resource(api)
    meta = resource["metadata"]
    rt.claims.claim(Claim(meta["creationTimestamp"], "default", "orders", "orders"))
    backend = rt.backend
    assert not backend.topic_exists("orders")  # deleted by hand: drift the reconcile reverts

    # The reconcile holds at the batcher, after its read of the resource.
    submitted, go = threading.Event(), threading.Event()
    submit = rt.batcher.submit

    def held_submit(asked: Request) -> Any:
        submitted.set()
        go.wait(WAIT)
        return submit(asked)

    rt.batcher.submit = held_submit  # type: ignore[method-assign]
    reconcile = threading.Thread(target=writer, args=(rt, resource))
    reconcile.start()

    def release() -> None:  # a failed test leaves no thread held
        go.set()
        reconcile.join(WAIT)

    request.addfinalizer(release)
    assert submitted.wait(WAIT), "no reconcile of the drift"

    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    deleting = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    assert deleting["metadata"]["deletionTimestamp"]
    outcome: list[BaseException | None] = []

    def delete_handler() -> None:
        with_kopf_settings()
        try:
            asyncio.run(topic_deletion.delete(
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
    reconcile.join(WAIT)
    deletion.join(WAIT)
    assert not reconcile.is_alive() and not deletion.is_alive()

    # The reconcile wrote the topic first; the deletion then asked Kafka to delete it.
    assert backend.topic_exists("orders")
    assert backend.deletion_requested("orders")
    [answer] = outcome
    # It waits on the deletion (with no controller here: "no active controller").
    assert isinstance(answer, kopf.TemporaryError)
    assert "Deletion of topic 'orders' waits" in str(answer)


def test_a_drift_timer_that_sees_the_deletion_writes_nothing(
    emulator: ApiServer, rt: handlers.Runtime
) -> None:
    """kopf's timer body is live: a timer that took the lock after the delete handler sees the
    deletionTimestamp, and leaves the topic to the deletion."""
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    api = client.CustomObjectsApi()
    settled_resource(api)
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    deleting = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    drift_timer(rt, deleting)
    assert not rt.backend.topic_exists("orders")


def test_the_follower_decides_drift_on_the_resource_as_it_is_not_on_the_watchs_copy(
    emulator: ApiServer, rt: handlers.Runtime
) -> None:
    """The follower writes status from the watch's latest copy of a resource, but a copy the
    watch has not brought up to date must not have a deleted resource's topic created again."""
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    api = client.CustomObjectsApi()
    resource = settled_resource(api)
    meta = resource["metadata"]
    rt.claims.claim(Claim(meta["creationTimestamp"], "default", "orders", "orders"))
    rt.resources.saw("default", "orders", resource)  # the watch's copy, from before the deletion
    api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    follower_pass(rt, resource)
    assert not rt.backend.topic_exists("orders")
    # With the copy up to date the same: the deletion is the delete handler's.
    now = api.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    rt.resources.saw("default", "orders", now)
    follower_pass(rt, now)
    assert not rt.backend.topic_exists("orders")


def test_a_watch_copy_from_before_the_reconciles_status_does_not_hide_drift(
    emulator: ApiServer, rt: handlers.Runtime
) -> None:
    """The watch's copy may still be the one from before the reconcile wrote Ready: that copy
    says the topic is not the follower's to report, which the resource as it is now denies."""
    from kubernetes import client

    install_crd("kafkatopics.yaml")
    api = client.CustomObjectsApi()
    resource = settled_resource(api)
    meta = resource["metadata"]
    rt.claims.claim(Claim(meta["creationTimestamp"], "default", "orders", "orders"))
    before_status = {key: value for key, value in resource.items() if key != "status"}
    rt.resources.saw("default", "orders", before_status)
    follower_pass(rt, resource)  # the topic was deleted by hand: drift, created again
    assert rt.backend.topic_exists("orders")
