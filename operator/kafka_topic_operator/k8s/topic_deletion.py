"""The KafkaTopic finalizer: deletion as TopicDeletionManager does it (the delete marker, then
waiting, with the reason in status, until the topic's znodes are gone; on KRaft, until Kafka no
longer lists the topic). Registered by `registration` for resources carrying the finalizer."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import kopf

from kafka_topic_operator.k8s.handlers import (
    MANAGED,
    Call,
    handling,
    report_unavailable,
    runtime,
    set_condition,
    set_status,
)
from kafka_topic_operator.k8s.waiting import waiting
from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    TopicAlreadyMarkedForDeletionException,
    TopicDeletionDisabledException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.topics.backend import TopicBackend
from kafka_topic_operator.topics.reconcile import Request
from kafka_topic_operator.topics.spec import DeletionPolicy, RejectedSpec, parse_spec, topic_of
from kafka_topic_operator.topics.status import Condition, managed_topic, topic_status

DELETION_RETRY = 5.0

log = logging.getLogger(__name__)


async def delete(
    name: str,
    namespace: str | None,
    spec: kopf.Spec,
    meta: kopf.Meta,
    status: kopf.Status,
    patch: kopf.Patch,
    body: kopf.Body,
    memo: kopf.Memo,
    **_: Any,
) -> None:
    call = Call(name, namespace, spec, meta, status, patch, body, memo)
    # A reconcile of drift that read this resource before its deletion writes first.
    async with runtime(memo).topic_locks.held(topic_of(name, spec)):
        pass
    with handling(call, deleting=True):
        await _delete_through_outages(call)


async def _delete_through_outages(call: Call) -> None:
    """The finalizer's work in a thread; while ZooKeeper does not answer, status says
    ZooKeeperUnavailable and the deletion waits for ZooKeeper's return, then goes on at once
    (kopf's retry delay would outlive a short outage)."""
    rt = runtime(call.memo)
    health = rt.health
    reported = False
    waited = 0.0
    while True:
        try:
            await asyncio.to_thread(_delete, call)
            return
        except ClusterUnavailableError as e:
            if health is None or waited > rt.retry_seconds * 30:
                raise  # kopf retries (ZOOKEEPER_RETRY)
            health.report_failure(str(e))
            if not reported:
                parsed = parse_spec(call.name, call.spec)
                request = Request(call.name, parsed, managed_topic(call.status))
                status = await report_unavailable(rt, request, call.namespace, call.meta,
                                                  call.status, call.body, str(e))  # fmt: skip
                call = dataclasses.replace(call, status=status)
                reported = True
            started = time.monotonic()
            await health.wait_up()
            waited += time.monotonic() - started


def _deletion_disabled(call: Call, topic: str, why: str) -> NoReturn:
    """Says, once, that the cluster does not delete topics, and waits."""
    message = (
        f"Topic '{topic}' is still there but {why} runs with delete.topic.enable=false. Enable "
        f'it, or release this resource with deletionPolicy: Retain or {MANAGED}: "false".'
    )
    disabled = Condition("False", "DeletionDisabled", message)
    if set_condition(call.patch, call.status, call.meta, disabled, topic):
        log.error("%s", message)  # once: the checks that follow wait quietly
        kopf.warn(call.body, reason="DeletionDisabled", message=message)
    raise waiting(message, delay=DELETION_RETRY)


def _created_again(backend: TopicBackend, topic: str, status: Mapping[str, Any]) -> str | None:
    """Why the topic there now is not the one this resource asked to delete, if it is not (its
    topic id differs): a client producing to it with auto.create.topics.enable, or another
    writer, made it after the deletion. (A controller with delete.topic.enable=false keeps the
    very topic, its id unchanged.)"""
    deleted = status.get("topicId")
    now = backend.read([topic], list_topics=False).topics.get(topic)
    if not deleted or now is None or now.topic_id is None or now.topic_id == deleted:
        return None
    return (
        f"Topic '{topic}' was deleted, then created again (topic id {now.topic_id}; the one this "
        f"resource deleted was {deleted}) by another writer or by a client producing to it "
        "with auto.create.topics.enable: the new topic is left alone"
    )


def _say_deleted(body: kopf.Body, topic: str) -> None:
    kopf.event(body, type="Normal", reason="Deleted", message=f"Topic '{topic}' deleted")


def _delete(call: Call) -> None:
    name, namespace, spec, meta = call.name, call.namespace, call.spec, call.meta
    status, patch, body = call.status, call.patch, call.body
    rt = runtime(call.memo)
    desired = parse_spec(name, spec)
    if isinstance(desired, RejectedSpec):
        return  # an invalid spec never created a topic
    released = (meta.get("annotations") or {}).get(MANAGED) == "false"
    if released or desired.deletion_policy is DeletionPolicy.RETAIN:
        if rt.backend.deletion_requested(desired.name):
            # Kafka's controller keeps a requested deletion queued until it can finish it (the
            # marker is read at failover only): the resource goes, the topic will not stay.
            why = f'{MANAGED}: "false"' if released else "deletionPolicy Retain"
            kopf.warn(body, reason="DeletionAlreadyRequested", message=(
                f"{why} releases this resource, but the deletion of topic '{desired.name}' was "
                "already requested and Kafka's controller finishes it once it can (when the "
                "offline brokers return)"))  # fmt: skip
            return
        log.info("Keeping topic %s: %s", desired.name, "unmanaged" if released else "Retain")
        return
    owner = rt.claims.owner(desired.name)
    if owner is not None and owner != (namespace or "", name):
        return  # the topic belongs to another resource
    backend = rt.backend
    asked = status.get("deletion", {}).get("requested") if isinstance(status, Mapping) else None
    if not backend.topic_exists(desired.name):
        if asked:  # the controller finished what this handler started
            _say_deleted(body, desired.name)
        return
    if not backend.deletion_requested(desired.name):
        # On ZooKeeper a controller with delete.topic.enable=false removes the marker and keeps
        # the topic; on KRaft the brokers refuse the request.
        again = _created_again(backend, desired.name, status) if asked else None
        if again is not None:  # what this resource deleted is gone
            _say_deleted(body, desired.name)
            kopf.warn(body, reason="TopicCreatedAgain", message=again)
            return
        if asked and backend.deletion_is_marked:
            _deletion_disabled(call, desired.name, "its deletion marker is gone: the controller")
        try:
            backend.delete_topic(desired.name)
        except (TopicAlreadyMarkedForDeletionException, UnknownTopicOrPartitionException):
            pass
        except TopicDeletionDisabledException:
            _deletion_disabled(call, desired.name, "Kafka refused to delete it: the cluster")
        else:
            said = "marked for deletion" if backend.deletion_is_marked else "deleted"
            kopf.event(body, type="Normal", reason="DeletionStarted",
                       message=f"Topic '{desired.name}' {said}")  # fmt: skip
    snapshot = backend.read([desired.name], list_topics=False)
    if desired.name not in snapshot.topics:
        _say_deleted(body, desired.name)
        return
    blockers = snapshot.deletion_blockers(desired.name)
    reason = "DeletionIneligible" if blockers else "DeletionInProgress"
    message = (
        f"Deletion of topic '{desired.name}' waits: {'; '.join(blockers)}"
        if blockers
        else f"Topic '{desired.name}' is being deleted"
    )
    new = topic_status(desired.name, int(meta.get("generation") or 0),
                       Condition("False", reason, message), snapshot)  # fmt: skip
    new["deletion"] = {**new.get("deletion", {}), "requested": True}
    if set_status(patch, status, new) and blockers:  # said once, when the wait starts
        kopf.warn(body, reason=reason, message=message)
    raise waiting(message, delay=DELETION_RETRY)
