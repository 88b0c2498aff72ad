"""The finalizer, when the topic it deleted is there again: created anew (another topic id) by
a client producing to it with auto.create.topics.enable, or by another tool."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import kopf
import pytest
from kopf._core.engines import posting

from kafka_topic_operator.clusters.zookeeper_mode import ZooKeeperModeCluster
from kafka_topic_operator.k8s import handlers, topic_deletion
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient

pytestmark = [pytest.mark.zookeeper]


def topic_id() -> str:
    return str(Uuid.from_bytes(uuid.uuid4().bytes))


@pytest.fixture
def rt(zk: ZkClient) -> handlers.Runtime:
    """No brokers needed: the handler reads the topic's znodes and its deletion marker."""
    return handlers.Runtime(cluster=ZooKeeperModeCluster(zk))


def deleting(deleted_id: str) -> dict[str, Any]:
    """A resource whose deletion this operator asked for, of the topic with id `deleted_id`."""
    return {
        "apiVersion": "kto.dev/v1", "kind": "KafkaTopic",
        "metadata": {"name": "orders", "namespace": "default", "uid": "u-1", "generation": 1,
                     "deletionTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"partitions": 1, "replicas": 1},
        "status": {"topicName": "orders", "topicId": deleted_id, "deletion": {"requested": True}},
    }  # fmt: skip


def run_delete(rt: handlers.Runtime, resource: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The delete handler as kopf runs it; its answer (None: done, or the exception it raised)
    and the events it posted."""

    async def handler() -> tuple[Any, list[Any]]:
        settings = kopf.OperatorSettings()
        posting.settings_var.set(settings)
        posting.event_queue_loop_var.set(asyncio.get_running_loop())
        queue: asyncio.Queue[Any] = asyncio.Queue()
        posting.event_queue_var.set(queue)
        body = kopf.Body(resource)
        try:
            await topic_deletion.delete(name="orders", namespace="default", spec=body.spec,
                                        meta=body.meta, status=body.status, patch=kopf.Patch(),
                                        body=body, memo=kopf.Memo(runtime=rt))  # fmt: skip
            answer: Any = None
        except kopf.TemporaryError as e:
            answer = e
        await asyncio.sleep(0)  # events posted from the handler's thread arrive
        events = []
        while not queue.empty():
            events.append(queue.get_nowait())
        return answer, events

    return asyncio.run(handler())


def test_a_topic_created_again_is_left_alone_and_said(zk: ZkClient, rt: handlers.Runtime) -> None:
    deleted, created_again = topic_id(), topic_id()
    admin.create_topic_with_assignment(zk, "orders", {0: [0]}, topic_id=created_again)
    answer, events = run_delete(rt, deleting(deleted))
    assert answer is None  # the resource goes
    assert [(e.type, e.reason) for e in events] == [("Normal", "Deleted"),
                                                    ("Warning", "TopicCreatedAgain")]  # fmt: skip
    message = events[1].message
    assert created_again in message and deleted in message
    assert "auto.create.topics.enable" in message
    assert rt.backend.topic_exists("orders") and not rt.backend.deletion_requested("orders")


def test_the_same_topic_back_without_its_marker_is_deletion_disabled(
    zk: ZkClient, rt: handlers.Runtime
) -> None:
    """What a controller with delete.topic.enable=false leaves: the marker gone, the topic (its
    id unchanged) still there."""
    same = topic_id()
    admin.create_topic_with_assignment(zk, "orders", {0: [0]}, topic_id=same)
    answer, events = run_delete(rt, deleting(same))
    assert isinstance(answer, kopf.TemporaryError)
    assert "delete.topic.enable=false" in str(answer)
    assert [(e.type, e.reason) for e in events] == [("Warning", "DeletionDisabled")]
