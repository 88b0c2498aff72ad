"""What the operator does around the KafkaTopic handlers: kopf's settings at startup, the topic
claims seeded from one list and kept current from the watch stream, the cluster's health checks
(readiness) and the liveness probe's answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

import kopf

from kafka_topic_operator.k8s import kopf_tuning, readiness
from kafka_topic_operator.k8s.claims import list_claims
from kafka_topic_operator.k8s.cluster_health import cluster_health
from kafka_topic_operator.k8s.handlers import FINALIZER, GROUP, PLURAL, VERSION, runtime, selected
from kafka_topic_operator.topics.ownership import claim_of

log = logging.getLogger(__name__)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_: Any) -> None:
    # kopf removes the finalizer when the delete handler is done; the reconcile adds it.
    settings.persistence.finalizer = FINALIZER
    runtime(memo).kopf_settings = settings
    # Progress and the last handled spec in status.kopf (the CRDs declare it): a handler's
    # outcome is then one status patch, not a patch of the object and another of its status,
    # and the object's metadata stays what users and GitOps tools applied.
    settings.persistence.progress_storage = kopf.StatusProgressStorage()
    settings.persistence.diffbase_storage = kopf_tuning.StatusDiffBaseStorage()
    kopf_tuning.skip_empty_patch_copies()
    # kopf's own log lines ("Handler ... succeeded") become events from this level up; the
    # events for what was done are posted explicitly (kopf.event, whatever this level).
    settings.posting.level = logging.WARNING
    # Deletion handlers (threads) wait on ZooKeeper most of the time: more of them in flight
    # than kopf's default. Reconciles are async and wait on the batcher instead.
    settings.execution.max_workers = 128


@kopf.on.startup()
def seed_claims(memo: kopf.Memo, **_: Any) -> None:
    """Every selected resource's topic claim, before any handler asks who owns a topic."""
    rt = runtime(memo)
    try:
        claims = list_claims(rt.namespaces, rt.selector)
    except Exception as e:  # the API not reachable yet: kopf retries startup handlers
        raise kopf.TemporaryError(f"listing KafkaTopics failed: {e}", delay=5) from e
    for claim in claims:
        rt.claims.claim(claim)


@kopf.on.startup()
async def watch_cluster(memo: kopf.Memo, **_: Any) -> None:
    rt = runtime(memo)
    check = await asyncio.to_thread(rt.cluster.health_check)  # opens its own connection
    rt.health = cluster_health(check, asyncio.get_running_loop())
    if rt.readiness:
        readiness.serve(rt.readiness, rt.health.ready, rt.health.what)


@kopf.on.probe(id="cluster")
async def cluster_answering(memo: kopf.Memo, **_: Any) -> str:
    """Shown by the liveness endpoint ("ZooKeeper answering", "Kafka not answering"), never
    failing it: a restart does not bring the cluster back (readiness, status, events and
    kto_zookeeper_up or kto_kafka_up say it). Async, so it is answered on kopf's loop even
    while every handler thread waits on the cluster."""
    health = runtime(memo).health
    if health is None:
        return "not checked yet"
    return f"{health.what} {'not answering' if health.down else 'answering'}"


@kopf.on.event(GROUP, VERSION, PLURAL)
async def track_resources(event: Mapping[str, Any], name: str, namespace: str | None,
                       spec: Mapping[str, Any], meta: Mapping[str, Any],
                       labels: Mapping[str, str], memo: kopf.Memo,
                       **_: Any) -> None:  # fmt: skip
    """Keeps the topic claims and the latest resources current. Async, so it runs inline on
    kopf's loop: a resource's own claim is recorded before its reconcile handler runs. (kopf's
    indexes would do this too, but they make every event wait on every other new object:
    quadratic in a burst.)"""
    rt = runtime(memo)
    if event.get("type") == "DELETED" or not selected(labels, memo):
        rt.claims.release(namespace or "", name)
        rt.resources.saw(namespace or "", name, None)
    else:
        rt.claims.claim(claim_of(namespace, name, spec, meta))
        rt.resources.saw(namespace or "", name, event.get("object"))
