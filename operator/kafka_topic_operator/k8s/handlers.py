"""The kopf handlers for KafkaTopic resources (`operator_lifecycle` holds the operator-wide ones).

One reconcile path serves create, resume, spec updates and the drift timer; deletion is a
finalizer (`topic_deletion`).
The work itself is in `topics.*`; this module wires it to Kubernetes: annotations, ownership of
a topic name, status patches and events.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import kopf

from kafka_topic_operator.clusters.cluster import Cluster
from kafka_topic_operator.k8s import events, metrics
from kafka_topic_operator.k8s.cluster_health import ClusterHealth
from kafka_topic_operator.k8s.finalizer import (
    FINALIZER,
    ChangedMeanwhile,
    add_finalizer,
    finalized,
    kopf_patcher,
)
from kafka_topic_operator.k8s.kubeclient import api_client
from kafka_topic_operator.k8s.latest_resources import LatestResources
from kafka_topic_operator.k8s.topic_locks import TopicLocks
from kafka_topic_operator.k8s.waiting import waiting
from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    ReassignmentInProgressException,
)
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.topics.backend import StatusFollowing, TopicBackend
from kafka_topic_operator.topics.batcher import Outcome, ReconcileBatcher
from kafka_topic_operator.topics.ownership import TopicClaims
from kafka_topic_operator.topics.plan import announcement
from kafka_topic_operator.topics.reconcile import Request, Step
from kafka_topic_operator.topics.spec import parse_spec, topic_of
from kafka_topic_operator.topics.status import (
    FOLLOWED_REASONS,
    Condition,
    Shown,
    as_brokers_show,
    followed_status,
    managed_topic,
    ready_condition,
    settled_reason,
    status_patch,
    stuck_status,
    topic_status,
)

GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"
PAUSE = "kto.dev/pause-reconciliation"
MANAGED = "kto.dev/managed"
DRIFT_INTERVAL = 60.0
DRIFT_RECHECK = 1.0
REASSIGNMENT_RETRY = 2.0
BROKERS_RETRY = 5.0
# What a topic goes through (a reassignment, a deletion, brokers away), not drift to report:
# the status follower leaves status alone meanwhile (the resource's own handler reports it).
PASSING_REASONS = frozenset({"ReassignmentInProgress", "DeletionInProgress", "BrokersUnavailable"})
ZOOKEEPER_RETRY = 10.0

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    """What `kto run` sets up before kopf starts the handlers."""

    cluster: Cluster
    selector: Mapping[str, str] = field(default_factory=dict)
    namespaces: Sequence[str] = ()  # all when empty
    claims: TopicClaims = field(default_factory=TopicClaims)
    readiness: str | None = None  # the readiness endpoint's URL, if any
    # Waits for ZooKeeper between the first status write and the resumed reconcile; at most
    # this long before handing the retry back to kopf. (On Kafka's Admin API, the request
    # timeout bounds each call.)
    retry_seconds: float = 10.0
    batcher: ReconcileBatcher = field(init=False)
    health: ClusterHealth | None = field(init=False, default=None)  # made on kopf's loop
    # kopf's settings, kept at startup: the finalizer is patched through kopf's client.
    kopf_settings: kopf.OperatorSettings | None = field(init=False, default=None)
    follower: StatusFollowing = field(init=False)
    # Reconciles of drift (the follower's, the timer's) against the delete handler.
    topic_locks: TopicLocks = field(init=False, default_factory=TopicLocks)
    resources: LatestResources = field(init=False, default_factory=LatestResources)

    def __post_init__(self) -> None:
        self.batcher = ReconcileBatcher(self.backend)
        self.follower = self.cluster.follower(
            lambda snapshot, topics: refresh_statuses(self, snapshot, topics)
        )

    @property
    def backend(self) -> TopicBackend:
        return self.cluster.backend

    def start(self) -> None:
        self.batcher.start()
        self.follower.start()

    def stop(self) -> None:
        self.follower.stop()
        self.batcher.stop()
        if self.health is not None:
            self.health.close()


@dataclass(frozen=True)
class Call:
    """What kopf hands a KafkaTopic handler, as the handlers declare it."""

    name: str
    namespace: str | None
    spec: Mapping[str, Any]
    meta: Mapping[str, Any]
    status: Mapping[str, Any]
    patch: kopf.Patch
    body: kopf.Body
    memo: kopf.Memo


def runtime(memo: kopf.Memo) -> Runtime:
    """The Runtime `kto run` hands kopf as the operator's memo (`kopf.run(memo=...)`)."""
    rt = memo.get("runtime")
    if not isinstance(rt, Runtime):
        raise kopf.PermanentError("the operator runtime is not configured (start it with kto run)")
    return rt


def selected(labels: Mapping[str, str], memo: kopf.Memo, **_: Any) -> bool:
    selector = runtime(memo).selector
    return all(labels.get(k) == v for k, v in selector.items())


async def reconcile(
    name: str,
    namespace: str | None,
    spec: kopf.Spec,
    meta: kopf.Meta,
    status: kopf.Status,
    patch: kopf.Patch,
    body: kopf.Body,
    memo: kopf.Memo,
    resource: kopf.Resource,
    logger: logging.Logger | logging.LoggerAdapter[logging.Logger],
    **_: Any,
) -> None:
    """Async: it waits on the batcher's future in kopf's loop, not in one of kopf's threads."""
    if not finalized(meta):
        settings = runtime(memo).kopf_settings
        if settings is None:
            raise kopf.PermanentError("kopf's settings were not kept (the startup handler)")
        try:
            if not await add_finalizer(meta, kopf_patcher(settings, resource, namespace, name,
                                                          logger)):  # fmt: skip
                return  # deleted before anything was written for it
        except ChangedMeanwhile as e:
            raise waiting(f"the resource changed while it was read: {e}", delay=0.5) from e
    call = Call(name, namespace, spec, meta, status, patch, body, memo)
    with handling(call):
        await _reconcile(call)


async def drift(
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
    """Reverts what was changed behind the operator's back (a config edited in ZooKeeper) and
    reports what cannot be (partitions added by hand)."""
    async with runtime(memo).topic_locks.held(topic_of(name, spec)):
        if meta.get("deletionTimestamp"):  # live: the delete handler has the topic now
            return
        call = Call(name, namespace, spec, meta, status, patch, body, memo)
        with handling(call):
            await _reconcile(call)


def unsettled(
    labels: Mapping[str, str], status: Mapping[str, Any], memo: kopf.Memo, **_: Any
) -> bool:
    # Followed reasons are watched; a resource not reconciled yet waits for its create handler
    # (a timer would add a second reconcile of it to a long queue: ten thousand applied at
    # once). Reconciling keeps its timer: a Reconciling status the timer itself wrote (a
    # reassignment it applied after the operator restarted) has no handler retrying it, and a
    # timer whose filter stops matching is stopped with its retry. While a handler retries
    # one, the resource keeps changing and the timer's idle time keeps it from firing.
    reason = _ready_reason(status)
    return selected(labels, memo) and reason is not None and reason not in UNSETTLED_EXCEPT


UNSETTLED_EXCEPT = FOLLOWED_REASONS


def _ready_reason(status: Mapping[str, Any]) -> str | None:
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Ready":
            return str(condition.get("reason"))
    return None


@contextlib.contextmanager
def handling(call: Call, *, deleting: bool = False) -> Iterator[None]:
    """Metrics around a handler; the cluster out of reach is said in status and retried later,
    instead of hanging."""
    started = time.monotonic()
    result = "error"
    try:
        yield
        result = "ok"
    except kopf.TemporaryError:
        result = "retry"
        raise
    except ClusterUnavailableError as e:
        rt = runtime(call.memo)
        result = _unavailable_result(rt)
        if (health := rt.health) is not None:
            health.report_failure(str(e))
        unavailable = Condition("Unknown", rt.backend.unavailable_reason, str(e))
        named = topic_of(call.name, call.spec)
        set_condition(call.patch, call.status, call.meta, unavailable, named)
        raise kopf.TemporaryError(str(e), delay=ZOOKEEPER_RETRY) from e
    finally:
        metrics.RECONCILES.labels(result).inc()
        metrics.RECONCILE_SECONDS.observe(time.monotonic() - started)
        if deleting and result == "ok":
            metrics.STATES.forget(f"{call.namespace}/{call.name}")
        else:
            current = {**call.status, **dict(call.patch.status or {})}
            metrics.STATES.record_status(f"{call.namespace}/{call.name}", current, call.meta)


async def _reconcile(call: Call) -> None:
    name, namespace, spec, meta = call.name, call.namespace, call.spec, call.meta
    status, patch, body, memo = call.status, call.patch, call.body, call.memo
    annotations = meta.get("annotations") or {}
    generation = int(meta.get("generation") or 0)
    rt = runtime(memo)
    desired = parse_spec(name, spec)  # the spec's one parse: typed from here to the znodes
    topic = desired.name
    if annotations.get(PAUSE) == "true":
        paused = Condition("Unknown", "ReconciliationPaused", f'{PAUSE} is "true"')
        set_condition(patch, status, meta, paused, topic)
        return
    if annotations.get(MANAGED) == "false":
        left = Condition("Unknown", "Unmanaged", f'{MANAGED} is "false": the topic is left alone')
        set_condition(patch, status, meta, left, topic)
        return
    owner = rt.claims.owner(topic)
    if owner is not None and owner != (namespace or "", name):
        message = f"Topic '{topic}' is already managed by KafkaTopic {owner[0]}/{owner[1]}"
        set_condition(patch, status, meta, Condition("False", "Conflict", message), topic)
        return
    request = Request(name, desired, managed_topic=managed_topic(status))
    try:
        outcome, status = await _through_outages(rt, request, name, namespace, meta, status,
                                                 body)  # fmt: skip
    except ReassignmentInProgressException as e:
        # Written, and not yet taken up by Kafka's controller (or someone else's): as waiting.
        raise waiting(str(e), delay=REASSIGNMENT_RETRY) from e
    condition = _ready(outcome)
    if (shown := _brokers_show(rt, outcome, condition)) is not None:
        condition = as_brokers_show(condition, await asyncio.wrap_future(shown))
    new = _settled(rt, outcome, status, generation, condition)
    if set_status(patch, status, new):
        for kind, reason, message in _announcements(outcome.step, condition):
            kopf.event(body, type=kind, reason=reason, message=message)
    # Partitions the controller is still making are looked at again in a second. Offline ones
    # are not: status follows the controller (FOLLOWED_REASONS), and retrying every second
    # while a broker is down only repeated the same lines.
    if condition.status == "False" and condition.reason == "Reconciling":
        raise waiting(condition.message, delay=1)
    # A reassignment Kafka's controller has not picked up or finished yet (this one's own, read
    # a moment too early, or someone else's): looked at again soon, not at the next drift pass.
    if condition.reason == "ReassignmentInProgress":
        raise waiting(condition.message, delay=REASSIGNMENT_RETRY)
    # Too few brokers for the placement (an outage ending, brokers registering one by one, as
    # a KRaft cluster's do after a restart): looked at again soon, not at the next drift pass.
    if condition.reason == "BrokersUnavailable":
        raise waiting(condition.message, delay=BROKERS_RETRY)


def _managed_name(step: Step) -> str | None:
    """The topic a reconcile's resource manages (created, or adopted as it was): what later
    passes treat as theirs (status.topicManaged); only its fields go into status."""
    return step.desired.name if step.desired and step.plan.blocked is None else None


def _ready(outcome: Outcome) -> Condition:
    """The Ready condition of a reconcile's outcome, as the cluster's state shows it."""
    step = outcome.step
    return ready_condition(step.plan, outcome.snapshot, _managed_name(step), step.desired)


def _brokers_show(rt: Runtime, outcome: Outcome, condition: Condition) -> Future[Shown] | None:
    """For a topic Ready in its cluster's state, what the brokers' metadata shows of it, where
    that state is not the brokers' own (ZooKeeper mode: the controller writes partition state
    before it tells the brokers)."""
    topic = _managed_name(outcome.step)
    if condition.status != "True" or topic is None or outcome.snapshot is None:
        return None
    return rt.cluster.brokers_show(topic, outcome.snapshot)


def _settled(
    rt: Runtime, outcome: Outcome, status: Mapping[str, Any], generation: int, condition: Condition
) -> dict[str, Any]:
    """The status a reconcile's outcome gives, with its Ready `condition`."""
    step, snapshot = outcome.step, outcome.snapshot
    topic_name = _managed_name(step)
    named = step.desired.name if step.desired else status.get("topicName")
    managed = topic_name is not None or (named is not None and managed_topic(status) == named)
    new = topic_status(named, generation, condition, snapshot if managed else None, managed)
    if topic_name is not None:
        # From now on status follows what Kafka's controller does, from the zxid it was read at.
        rt.follower.follow(topic_name, since=outcome.zxid if snapshot is not None else None)
    return new


def _announcements(step: Step, condition: Condition) -> list[tuple[str, str, str]]:
    """Events for what users should see (type, reason, message): what was done, and why
    nothing could be."""
    if step.plan.blocked is not None:
        return [("Warning", condition.reason, condition.message)]
    if step.desired is None:
        return []
    return [("Normal", *announcement(step.desired.name, a)) for a in step.plan.actions]


async def _through_outages(
    rt: Runtime,
    request: Request,
    name: str,
    namespace: str | None,
    meta: Mapping[str, Any],
    status: Mapping[str, Any],
    body: kopf.Body,
) -> tuple[Outcome, Mapping[str, Any]]:
    """The batcher's outcome, and the status it is to be compared with. While ZooKeeper does
    not answer (known down, no outcome within the retry time and a read unanswered, or the
    batcher giving up) status says ZooKeeperUnavailable at once and the request waits for
    ZooKeeper's return, then goes again without delay. (Kafka's Admin API: each call is bounded
    by its timeout, and kopf retries the handler.)"""
    health = rt.health
    reported = False
    waited = 0.0
    while True:
        future = asyncio.ensure_future(asyncio.wrap_future(rt.batcher.submit(request)))
        try:
            if health is not None and not reported:
                done = set[Any]()
                if not health.down:
                    done, _ = await asyncio.wait({future}, timeout=rt.retry_seconds)
                if not done and (health.down or not await health.check()):
                    why = f"{rt.backend.where} did not answer within {rt.retry_seconds} s"
                    status = await report_unavailable(rt, request, namespace, meta, status,
                                                      body, why)  # fmt: skip
                    reported = True
            outcome = await future
            if health is not None:
                health.report_answer()
            return outcome, status
        except ClusterUnavailableError as e:
            if health is None or waited > rt.retry_seconds * 30:
                raise  # kopf retries (ZOOKEEPER_RETRY), as before the health watch started
            health.report_failure(str(e))
            if not reported:
                status = await report_unavailable(rt, request, namespace, meta, status, body,
                                                  str(e))  # fmt: skip
                reported = True
            started = time.monotonic()
            await health.wait_up()
            waited += time.monotonic() - started


async def report_unavailable(
    rt: Runtime,
    request: Request,
    namespace: str | None,
    meta: Mapping[str, Any],
    status: Mapping[str, Any],
    body: kopf.Body,
    why: str,
) -> Mapping[str, Any]:
    """Writes ZooKeeperUnavailable (KafkaUnavailable) to status now (kopf would only write it
    when the handler returns) and warns once; returns the status written, which the outcome is
    compared with."""
    reason = rt.backend.unavailable_reason
    metrics.RECONCILES.labels(_unavailable_result(rt)).inc()
    unavailable = Condition("Unknown", reason, why)
    new = _condition_only(status, meta, unavailable, request.topic)
    changes = _status_changes(status, new)
    if changes is None:
        return status
    kopf.warn(body, reason=reason, message=f"{why}: waiting for it")
    try:
        await asyncio.to_thread(_patch_status_now, namespace or "", request.resource_name, changes)
    except Exception as e:  # the API server unreachable too: kopf's patch says it later
        log.warning(
            "could not report %s for %s/%s: %s",
            reason,
            namespace,
            request.resource_name,
            e,
        )
        return status
    current = {**status, **changes}
    return {k: v for k, v in current.items() if v is not None}


def _unavailable_result(rt: Runtime) -> str:
    return metrics.UNAVAILABLE_RESULTS[rt.backend.unavailable_reason]


def _patch_status(
    api: Any, namespace: str, name: str, changes: Mapping[str, Any], version: str = ""
) -> None:
    """A merge patch of status (`changes` from status_patch) through a CustomObjectsApi; with
    `version`, conditional on the resourceVersion read (409 if written meanwhile)."""
    body: dict[str, Any] = {"status": changes}
    if version:
        body["metadata"] = {"resourceVersion": version}
    api.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, name, body)


def _patch_status_now(namespace: str, name: str, changes: Mapping[str, Any]) -> None:
    import kubernetes

    with api_client() as client:
        _patch_status(kubernetes.client.CustomObjectsApi(client), namespace, name, changes)


def set_condition(
    patch: kopf.Patch,
    status: Mapping[str, Any],
    meta: Mapping[str, Any],
    condition: Condition,
    topic: str | None = None,
) -> bool:
    return set_status(patch, status, _condition_only(status, meta, condition, topic))


def _condition_only(
    status: Mapping[str, Any],
    meta: Mapping[str, Any],
    condition: Condition,
    topic: str | None = None,
) -> dict[str, Any]:
    """Status that only states a condition (nothing read from Kafka), naming the topic
    (`topic`, else the one named before) and keeping whether it is managed and a requested
    deletion already recorded."""
    named = topic or status.get("topicName")
    managed = named is not None and managed_topic(status) == named
    new = topic_status(named, int(meta.get("generation") or 0), condition, None, managed)
    if "deletion" in status:
        new["deletion"] = status["deletion"]
    return new


def set_status(patch: kopf.Patch, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Patches status only when it changed (ignoring transition times); True if it did."""
    changes = _status_changes(old, new)
    for key, value in (changes or {}).items():
        patch.status[key] = value
    return changes is not None


def _status_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any] | None:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return status_patch(old, new, now)


def refresh_statuses(rt: Runtime, snapshot: ClusterSnapshot, topics: Iterable[str]) -> None:
    """The status follower's callback (in its thread): each topic's resource shows what
    Kafka's controller did since its last reconcile. Written STATUS_WRITERS at a time: a
    broker's going changes thousands."""
    import kubernetes

    owned: list[tuple[str, tuple[str, str]]] = []
    for topic in topics:
        owner = rt.claims.owner(topic)
        if owner is None:
            rt.follower.unfollow(topic)
        else:
            owned.append((topic, owner))
    if not owned:
        return
    with api_client(connections=STATUS_WRITERS) as client:
        api: Any = kubernetes.client.CustomObjectsApi(client)

        def refresh(item: tuple[str, tuple[str, str]]) -> None:
            topic, (namespace, name) = item
            _refresh_status(rt, client, api, snapshot, topic, namespace, name)

        if len(owned) == 1:
            refresh(owned[0])
            return
        with ThreadPoolExecutor(min(STATUS_WRITERS, len(owned)), "status-writer") as pool:
            for _ in pool.map(refresh, owned):
                pass  # a failure is raised here, once the others are done


STATUS_WRITERS = 8


def _refresh_status(
    rt: Runtime,
    client: Any,
    api: Any,
    snapshot: ClusterSnapshot,
    topic: str,
    namespace: str,
    name: str,
) -> None:
    """One resource's status from `snapshot`: from the resource as the watch last delivered
    it, or as read from the API where that copy was outdated or drift is to be reconciled
    (what is done to Kafka is decided on the resource as it is now)."""
    from kubernetes.client.exceptions import ApiException

    try:
        with rt.topic_locks(topic):  # the read and any write it leads to
            latest = rt.resources.get(namespace, name)
            done = latest is not None and _follow(rt, api, snapshot, topic, latest, fresh=False)
            if not done:
                resource = api.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
                _follow(rt, api, snapshot, topic, resource, fresh=True, client=client)
    except ApiException as e:
        if e.status == 409:  # written meanwhile: read it again
            rt.follower.refresh(topic)
        elif e.status != 404:
            raise


def _follow(
    rt: Runtime,
    api: Any,
    snapshot: ClusterSnapshot,
    topic: str,
    resource: Mapping[str, Any],
    *,
    fresh: bool,
    client: Any = None,
) -> bool:
    """Writes `resource`'s status as `snapshot` shows it (conditionally on its version: a
    reconcile that wrote meanwhile wins), or, on a `fresh` read, reconciles its drift; False
    when a copy that is not `fresh` cannot serve. Such a copy serves only for a write, whose
    version check tells whether it was outdated: that it needs no write, or that the topic is
    not its to follow, may be what an outdated copy says (one from before its reconcile wrote
    status) and is decided on the resource as it is now."""
    from kubernetes.client.exceptions import ApiException

    meta = resource["metadata"]
    new = followed_status(meta["name"], resource, topic, snapshot)
    said: list[tuple[str, str, str]] = []
    if new is None and _drifted(resource, topic) and fresh:
        new, said = _reconcile_drift(rt, meta["name"], resource, topic, snapshot)
    changes = None if new is None else _status_changes(resource["status"], new)
    if changes is None and not fresh:
        return False
    if new is not None and changes is not None:
        try:
            _patch_status(api, meta["namespace"], meta["name"], changes, meta["resourceVersion"])
        except ApiException as e:
            if e.status == 409 and not fresh:
                return False  # the watch had not caught up yet
            raise
        metrics.STATES.record_status(f"{meta['namespace']}/{meta['name']}", new, meta)
    for kind, reason, message in said:  # a revert leaves status as it was
        events.post(client, resource, kind, reason, message)
    return True


def _drifted(resource: Mapping[str, Any], topic: str) -> bool:
    """Whether a settled resource is to be reconciled now that its topic's znodes or the brokers
    changed: followed_status declined it, and nothing else (a spec change, a deletion, a pause)
    is for its handlers to decide."""
    annotations = (resource.get("metadata") or {}).get("annotations") or {}
    return (
        annotations.get(PAUSE) != "true"
        and annotations.get(MANAGED) != "false"
        and settled_reason(resource, topic) in RECONCILED_ON_CHANGE
    )


# A settled resource is reconciled when its topic's znodes or the brokers change: for drift,
# and to go on at once from a wait that such a change ends (brokers registered again after an
# outage, a reassignment finished).
RECONCILED_ON_CHANGE = FOLLOWED_REASONS | {"BrokersUnavailable", "ReassignmentInProgress"}


def _reconcile_drift(
    rt: Runtime, name: str, resource: Mapping[str, Any], topic: str, snapshot: ClusterSnapshot
) -> tuple[dict[str, Any] | None, list[tuple[str, str, str]]]:
    """A settled resource's reconcile, run when its topic changed behind the operator's back
    (in the status follower's thread): the new status and the events to post. While the
    controller is still at work (a topic created again, partitions being made) status stays as
    it is and the topic is looked at again in a second: no handler would retry a Reconciling
    status written here."""
    status = resource.get("status") or {}
    generation = int((resource.get("metadata") or {}).get("generation") or 0)
    request = Request(name, parse_spec(name, resource.get("spec") or {}), managed_topic(status))
    try:
        outcome = rt.batcher.submit(request).result()
    except ReassignmentInProgressException as e:
        # Another topic's reassignment holds /admin/reassign_partitions: its end changes only
        # its own topics' znodes, so nothing would report this one again. One that Kafka's
        # controller will never finish, naming this topic, is said in its status meanwhile.
        _look_again_in(rt, topic, REASSIGNMENT_RETRY)
        stuck = stuck_status(topic, generation, str(e), snapshot)
        if stuck is None or _ready_reason(status) == "ReassignmentInProgress":
            return stuck, []  # said once
        return stuck, [("Warning", "ReassignmentInProgress", stuck["conditions"][0]["message"])]
    condition = _ready(outcome)
    if (shown := _brokers_show(rt, outcome, condition)) is not None:
        condition = as_brokers_show(condition, shown.result())
    new = _settled(rt, outcome, status, generation, condition)
    said = _announcements(outcome.step, condition)
    if condition.reason == "Reconciling":
        _look_again_in(rt, topic, DRIFT_RECHECK)
        return None, said
    if condition.reason in PASSING_REASONS:
        # Its end changes a watched znode: the follower reports it again. Said once.
        return None, said if condition.reason != _ready_reason(status) else []
    return new, said


def _look_again_in(rt: Runtime, topic: str, delay: float) -> None:
    again = threading.Timer(delay, _look_again, [rt, topic])
    again.daemon = True
    again.start()


def _look_again(rt: Runtime, topic: str) -> None:
    rt.follower.follow(topic)
    rt.follower.refresh(topic)


__all__ = ["FINALIZER", "Runtime"]
