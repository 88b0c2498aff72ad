"""`kto run --embedded-controller` for real: kopf against the API emulator, a real ZooKeeper,
the controller in the operator's process and dev brokers; KafkaTopics driven through the
Kubernetes Python client as kubectl would drive them."""

from __future__ import annotations

import contextlib
import datetime
import functools
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kto_testing import eventually
from status_captures import capture

from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.devbroker.broker import BrokerConfig, DevBroker
from kto_dev.kube_apiserver.launcher import KubeApiServer
from kto_dev.ports import free_port
from kube_api_emulator import ApiServer

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
GROUP, VERSION, PLURAL = "kto.dev", "v1", "kafkatopics"


# The API servers a test marked `on_both_api_servers` runs against: the emulator (the fast
# default) and a real kube-apiserver with etcd (built by `make kube-apiserver`).
API_SERVERS = ["emulator", pytest.param("kube-apiserver", marks=pytest.mark.apiserver)]
on_both_api_servers = pytest.mark.parametrize("setup", API_SERVERS, indirect=True)


class Setup:
    def __init__(
        self, api: ApiServer | KubeApiServer, zk: ZkClient, connect: str, root: Path
    ) -> None:
        from kubernetes import client, config

        self.zk, self.connect, self.root = zk, connect, root
        self.server = api
        kubeconfig = api.write_kubeconfig(root / "kubeconfig")
        config.load_kube_config(str(kubeconfig))
        self.api = client.CustomObjectsApi()
        self.ext = client.ApiextensionsV1Api()
        self.kubeconfig = kubeconfig
        self.brokers: dict[int, DevBroker] = {}
        self.operator: subprocess.Popen[bytes]
        self.restart_operator: Callable[[], subprocess.Popen[bytes]]

    def start_broker(self, broker_id: int) -> None:
        config = BrokerConfig(self.connect, broker_id, self.root / f"broker-{broker_id}",
                              rack=f"rack-{broker_id}", session_timeout=4.0)  # fmt: skip
        broker = DevBroker(config)
        broker.start()
        self.brokers[broker_id] = broker

    def kill_broker(self, broker_id: int) -> None:
        self.brokers.pop(broker_id).shutdown(controlled=False)

    def apply(self, name: str, annotations: dict[str, str] | None = None, **spec: Any) -> None:
        metadata: dict[str, Any] = {"name": name, "annotations": annotations or {}}
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                "metadata": metadata, "spec": spec}  # fmt: skip
        self.api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)

    def get(self, name: str) -> dict[str, Any] | None:
        from kubernetes.client.exceptions import ApiException

        try:
            obj: dict[str, Any] = self.api.get_namespaced_custom_object(
                GROUP, VERSION, "default", PLURAL, name
            )
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        return obj

    def ready(self, name: str) -> dict[str, Any]:
        def condition() -> dict[str, Any] | None:
            obj = self.get(name)
            status = (obj or {}).get("status") or {}
            generation = (obj or {}).get("metadata", {}).get("generation")
            for c in status.get("conditions") or []:
                if (c["type"], c["status"]) == ("Ready", "True") and (
                    status.get("observedGeneration") == generation
                ):
                    return obj
            return None

        return eventually(condition, f"KafkaTopic {name} Ready", timeout=60)

    def condition(self, name: str) -> tuple[str, str, str] | None:
        status = (self.get(name) or {}).get("status") or {}
        for c in status.get("conditions") or []:
            if c["type"] == "Ready":
                return c["status"], c["reason"], c.get("message", "")
        return None


@contextlib.contextmanager
def running(
    connect: str,
    root: Path,
    *extra: str,
    controller: tuple[str, ...] | None = None,
    api_server: str = "emulator",
    namespaces: tuple[str, ...] = (),
) -> Iterator[Setup]:
    """`controller`: run `kto controller` with these flags beside the operator instead of
    embedding it. `api_server`: "emulator" or "kube-apiserver" (real, with etcd).
    `namespaces`: made before the operator starts."""
    zk = ZkClient(connect)
    zk.start()
    beside = None
    if controller is not None:
        with (root / "controller.log").open("a") as controller_log:
            beside = subprocess.Popen(
                [sys.executable, "-m", "kafka_topic_operator.cli", "controller", "--zookeeper",
                 connect, "--session-timeout", "6", *controller],
                stdout=controller_log, stderr=subprocess.STDOUT,
            )  # fmt: skip
    server = (
        ApiServer()
        if api_server == "emulator"
        else KubeApiServer(root / "kube-apiserver", audit=True)
    )
    with server as api:
        s = Setup(api, zk, connect, root)
        names = []
        for crd_file in sorted((ROOT / "crds").glob("*.yaml")):
            crd = s.ext.create_custom_resource_definition(yaml.safe_load(crd_file.read_text()))
            names.append(crd.metadata.name)
        # kube-apiserver serves a new CRD's resources only once it is Established (a busy one,
        # a moment after the create returned: a KafkaTopic applied before got 404).
        for name in names:
            eventually(lambda n=name: any(
                c.type == "Established" and c.status == "True"
                for c in s.ext.read_custom_resource_definition(n).status.conditions or ()
            ), f"CRD {name} Established", timeout=30)  # fmt: skip
        for broker in (0, 1, 2):
            s.start_broker(broker)
        if namespaces:
            from kubernetes import client

            for namespace in namespaces:
                client.CoreV1Api().create_namespace({"metadata": {"name": namespace}})
        log = (root / "operator.log").open("a")
        env = {**os.environ, "KUBECONFIG": str(s.kubeconfig)}
        # kopf serves liveness once its startup handlers ran: the tests' waits begin with the
        # operator up (a busy machine took 20 s to start one, the whole of a test's wait).
        liveness = "" if "--liveness" in extra else f"http://127.0.0.1:{free_port()}/healthz"

        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [sys.executable, "-m", "kafka_topic_operator.cli", "run", "--zookeeper", connect,
                 *(["--embedded-controller"] if beside is None else []), "--liveness", liveness,
                 "--session-timeout", "6", "--metrics-port", "0", *extra],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=root,
            )  # fmt: skip

        s.operator = start()
        s.restart_operator = start
        # Every step of the cleanup runs even when one before it fails: a process or ZooKeeper
        # client left behind would outlive the test (its threads reach into later tests).
        with contextlib.ExitStack() as cleanup:
            # The operator's log, shown when a test fails.
            cleanup.callback(lambda: print((root / "operator.log").read_text()[-20000:]))
            cleanup.callback(zk.stop)
            if beside is not None:
                cleanup.callback(_stop, beside)
            cleanup.callback(_shut_down, s.brokers)
            cleanup.callback(log.close)
            cleanup.callback(lambda: _stop(s.operator))
            if liveness:
                eventually(lambda: _answers(liveness), "the operator started", timeout=120)
            yield s


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return bool(answer.status == 200)
    except OSError:  # not listening yet
        return False


def _shut_down(brokers: dict[int, DevBroker]) -> None:
    """The brokers the test left running, every one even if one fails to stop."""
    with contextlib.ExitStack() as each:
        for broker in brokers.values():
            each.callback(broker.shutdown, controlled=False)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, and SIGKILL if it has not exited within 30 s (said, so a slow stop shows)."""
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        print(f"process {process.pid} still ran 30 s after SIGTERM: killed")
        process.kill()
        process.wait()


@pytest.fixture
def setup(zk_chroot: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Setup]:
    with running(zk_chroot, tmp_path, api_server=getattr(request, "param", "emulator")) as s:
        yield s


def topic_partitions(zk: ZkClient, topic: str) -> dict[int, tuple[int, ...]]:
    node = zk.get(znodes.topic_path(topic))
    assert node is not None
    return {p: a.replicas for p, a in znodes.decode_topic(node.path, node.data).partitions.items()}


@on_both_api_servers
def test_a_topic_is_created_grown_and_deleted(setup: Setup) -> None:
    setup.apply("orders", partitions=3, replicas=3, config={"retention.ms": 86400000})
    obj = setup.ready("orders")
    capture(obj)
    status = obj["status"]
    assert status["topicName"] == "orders" and status["topicId"]
    assert status["partitionCounts"] == {"total": 3, "online": 3, "offline": 0,
                                         "underReplicated": 0}  # fmt: skip
    assert [p["state"] for p in status["partitions"]] == ["OnlinePartition"] * 3
    assert obj["metadata"]["finalizers"] == ["kto.dev/topic-deletion"]
    assert len(topic_partitions(setup.zk, "orders")) == 3

    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "orders", {"spec": {"partitions": 5}}
    )
    setup.ready("orders")
    assert len(topic_partitions(setup.zk, "orders")) == 5

    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "orders")
    reason_is(setup, "orders", "DeletionInProgress")  # marked; looked at again in 5 s
    capture(setup.get("orders"))
    eventually(lambda: setup.get("orders") is None, "the resource released", timeout=60)
    assert not setup.zk.exists(znodes.topic_path("orders"))
    assert not setup.zk.exists(znodes.topic_config_path("orders"))
    # What was done, as kubectl describe shows it.
    deleted = ("Normal", "Deleted", "Topic 'orders' deleted")
    said = eventually(lambda: (e := events_of("orders")) and deleted in e and e,
                      "the events of what was done", 30)  # fmt: skip
    assert sorted(said) == sorted([
        ("Normal", "Created", "Topic 'orders' created: 3 partitions, replication factor 3"),
        ("Normal", "PartitionsAdded", "Topic 'orders': 2 partitions added"),
        ("Normal", "DeletionStarted", "Topic 'orders' marked for deletion"),
        deleted,
    ])  # fmt: skip


def test_a_new_topic_is_ready_after_one_reconcile(setup: Setup) -> None:
    """The reconcile that creates a topic reads it back once the controller made its partitions
    (the batcher waits for their state znodes) and writes Ready itself: no second run a second
    later (kopf's retry), no Reconciling status in between."""
    setup.apply("single", partitions=6, replicas=3)
    setup.ready("single")
    lines = [line for line in (setup.root / "operator.log").read_text().splitlines()
             if "[default/single]" in line]  # fmt: skip
    assert not [line for line in lines if "will retry" in line], lines
    assert sum("Handler 'reconcile' succeeded" in line for line in lines) == 1, lines


@on_both_api_servers
def test_the_finalizer_is_on_the_resource_before_its_topic_is_written(setup: Setup) -> None:
    """The reconcile adds the deletion finalizer itself (kopf would spend a cycle of its own on
    it) and only then writes: a resource deleted at any moment either has it, and its delete
    handler runs, or never got a topic. Seen from ZooKeeper: when the topic znode appears, the
    resource already carries the finalizer (added after the write, it would come with the
    status, once the controller made the partitions)."""
    import threading

    seen: list[list[str]] = []
    written = threading.Event()

    def topic_written(event: Any) -> None:
        obj = setup.get("guarded")
        seen.append(list(((obj or {}).get("metadata") or {}).get("finalizers") or []))
        written.set()

    assert not setup.zk.exists(znodes.topic_path("guarded"), watch=topic_written)
    setup.apply("guarded", partitions=3, replicas=3)
    assert written.wait(60), "the topic was never written"
    assert seen == [["kto.dev/topic-deletion"]]
    assert setup.ready("guarded")["metadata"]["finalizers"] == ["kto.dev/topic-deletion"]
    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "guarded")
    eventually(lambda: setup.get("guarded") is None, "the resource released", timeout=60)
    assert not setup.zk.exists(znodes.topic_path("guarded"))


@on_both_api_servers
def test_an_invalid_spec_says_why_and_writes_nothing(setup: Setup) -> None:
    setup.apply("bad", partitions=1, replicas=1, config={"retention.mss": 5})
    eventually(lambda: setup.condition("bad"), "a Ready condition", timeout=60)
    assert setup.condition("bad") == (
        "False",
        "InvalidSpec",
        "spec.config: Unknown topic config name: retention.mss (did you mean retention.ms?)",
    )
    capture(setup.get("bad"))
    assert not setup.zk.exists(znodes.topic_path("bad"))
    from kubernetes import client

    def warning() -> Any:
        events = (
            client.CoreV1Api()
            .list_namespaced_event("default", field_selector="involvedObject.name=bad")
            .items
        )
        return [e for e in events if e.reason == "InvalidSpec"]

    (event,) = eventually(warning, "an InvalidSpec event", timeout=30)
    assert event.type == "Warning"
    assert event.message == (
        "spec.config: Unknown topic config name: retention.mss (did you mean retention.ms?)"
    )


@on_both_api_servers
def test_deletion_waits_for_a_dead_broker_and_finishes_when_it_returns(setup: Setup) -> None:
    setup.apply("audit", replicaAssignment=[[2]])
    setup.ready("audit")
    setup.kill_broker(2)
    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "audit")

    def ineligible() -> tuple[str, str, str] | None:
        found = setup.condition("audit")
        return found if found and found[1] == "DeletionIneligible" else None

    status, _, message = eventually(ineligible, "DeletionIneligible", timeout=60)
    assert status == "False"
    assert "replicas on offline brokers 2" in message
    capture(setup.get("audit"))
    assert setup.zk.exists(znodes.topic_path("audit"))
    setup.start_broker(2)
    eventually(lambda: setup.get("audit") is None, "the resource released", timeout=60)
    assert not setup.zk.exists(znodes.topic_path("audit"))
    # What kubectl describe shows: the deletion started, a warning when it began to wait on
    # the dead broker (once), and its end.
    deleted = ("Normal", "Deleted", "Topic 'audit' deleted")
    said = eventually(lambda: (e := events_of("audit")) and deleted in e and e,
                      "the deletion's events", 30)  # fmt: skip
    assert ("Normal", "DeletionStarted", "Topic 'audit' marked for deletion") in said
    waits = [e for e in said if e[1] == "DeletionIneligible"]
    assert [(t, m.split(": ")[-1]) for t, _, m in waits] == [
        ("Warning", "replicas on offline brokers 2 (deletion resumes when they return)")
    ]
    # Waiting is said at INFO, not as an error.
    log = (setup.root / "operator.log").read_text()
    assert re.search(r"INFO \[default/audit\] Handler '[^']+' will retry: Deletion of topic "
                     r"'audit' waits: "
                     r"replicas on offline brokers 2", log), log[-5000:]  # fmt: skip
    assert "failed temporarily" not in log, log[-5000:]


def test_retain_during_a_stuck_deletion_releases_the_resource_and_says_the_topic_still_goes(
    setup: Setup,
) -> None:
    setup.apply("doomed", replicaAssignment=[[2]])
    setup.ready("doomed")
    setup.kill_broker(2)
    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "doomed")
    reason_is(setup, "doomed", "DeletionIneligible")
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "doomed",
                                             {"spec": {"deletionPolicy": "Retain"}})  # fmt: skip
    eventually(lambda: setup.get("doomed") is None, "the resource released", timeout=60)
    said = events_of("doomed")
    assert ("Warning", "DeletionAlreadyRequested",
            "deletionPolicy Retain releases this resource, but the deletion of topic 'doomed' "
            "was already requested and Kafka's controller finishes it once it can (when the "
            "offline brokers return)") in said  # fmt: skip
    # As said: Kafka's controller kept the deletion queued, and finishes it.
    setup.start_broker(2)
    eventually(lambda: not setup.zk.exists(znodes.topic_path("doomed")), "doomed deleted", 60)


def test_offline_partitions_are_not_retried_every_second_and_status_follows(
    setup: Setup,
) -> None:
    setup.apply("lonely", replicaAssignment=[[2]])
    setup.ready("lonely")
    setup.kill_broker(2)
    reason_is(setup, "lonely", "PartitionsOffline")  # the follower saw the leader go
    capture(setup.get("lonely"))
    # A change reconciled while the partition is offline: applied, and not retried each second.
    patch = {"spec": {"config": {"retention.ms": "3600000"}}}
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "lonely", patch)
    eventually(lambda: admin.topic_config(setup.zk, "lonely").get("retention.ms") == "3600000",
               "the config change written", timeout=60)  # fmt: skip
    reason_is(setup, "lonely", "PartitionsOffline")
    setup.start_broker(2)
    setup.ready("lonely")  # the follower again: no retry brought it back
    log = (setup.root / "operator.log").read_text()
    assert "no live leader" not in log, log[-5000:]


def events_of(name: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the events about a resource, oldest first."""
    from kubernetes import client

    found = client.CoreV1Api().list_namespaced_event(
        "default", field_selector=f"involvedObject.name={name}"
    )
    return [(e.type, e.reason, e.message) for e in found.items]


def reason_is(setup: Setup, name: str, reason: str) -> Any:
    def check() -> tuple[str, str, str] | None:
        found = setup.condition(name)
        return found if found and found[1] == reason else None

    return eventually(check, f"{name} with reason {reason}", timeout=60)


@on_both_api_servers
def test_two_resources_for_one_topic_the_oldest_wins(setup: Setup) -> None:
    setup.apply("first", topicName="shared", partitions=1, replicas=1)
    setup.ready("first")
    setup.apply("second", topicName="shared", partitions=1, replicas=1)
    _, _, message = reason_is(setup, "second", "Conflict")
    assert message == "Topic 'shared' is already managed by KafkaTopic default/first"
    capture(setup.get("second"))
    status = (setup.get("second") or {})["status"]
    assert (status["topicName"], status["topicManaged"]) == ("shared", False)
    # Deleting the loser leaves the topic alone.
    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "second")
    eventually(lambda: setup.get("second") is None, "the loser released", timeout=60)
    assert setup.zk.exists(znodes.topic_path("shared"))


def test_after_a_restart_the_oldest_resource_wins_whichever_is_listed_first(setup: Setup) -> None:
    setup.operator.terminate()
    setup.operator.wait(30)
    setup.apply("z-older", topicName="contested", partitions=1, replicas=1)
    older = (setup.get("z-older") or {})["metadata"]["creationTimestamp"]

    def later_second() -> bool:
        return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") > older

    eventually(later_second, "a creationTimestamp later than the older resource's")
    # Listed (and so handled) first, and asking for more partitions than the owner.
    setup.apply("a-younger", topicName="contested", partitions=2, replicas=1)
    setup.operator = setup.restart_operator()
    assert setup.ready("z-older")["status"]["topicName"] == "contested"
    _, _, message = reason_is(setup, "a-younger", "Conflict")
    assert message == "Topic 'contested' is already managed by KafkaTopic default/z-older"
    assert len(topic_partitions(setup.zk, "contested")) == 1


@on_both_api_servers
def test_retain_and_unmanaged_resources_release_without_deleting(setup: Setup) -> None:
    setup.apply("kept", partitions=1, replicas=1, deletionPolicy="Retain")
    setup.ready("kept")
    setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "kept")
    eventually(lambda: setup.get("kept") is None, "the Retain resource released", timeout=60)
    assert setup.zk.exists(znodes.topic_path("kept"))

    setup.apply("left", annotations={"kto.dev/managed": "false"}, partitions=1, replicas=1)
    reason_is(setup, "left", "Unmanaged")
    capture(setup.get("left"))
    assert not setup.zk.exists(znodes.topic_path("left"))
    # Managed again by the annotation alone: created at once, not at the next drift pass.
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "left",
        {"metadata": {"annotations": {"kto.dev/managed": None}}},
    )  # fmt: skip
    eventually(lambda: setup.zk.exists(znodes.topic_path("left")), "left created", timeout=20)


def test_with_topic_deletion_disabled_the_resource_says_so_and_can_be_released(
    zk_chroot: str, tmp_path: Path
) -> None:
    """Kafka's controller with delete.topic.enable=false removes the deletion marker and keeps
    the topic: the resource says DeletionDisabled (not waiting forever in silence), and
    releasing it lets it go with the topic kept."""
    with running(zk_chroot, tmp_path, controller=("--delete-topic-enable", "false")) as setup:
        setup.apply("kept", partitions=1, replicas=1)
        setup.ready("kept")
        setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "kept")
        _, _, message = reason_is(setup, "kept", "DeletionDisabled")
        assert message == (
            "Topic 'kept' is still there but its deletion marker is gone: the controller runs "
            "with delete.topic.enable=false. Enable it, or release this resource with "
            'deletionPolicy: Retain or kto.dev/managed: "false".'
        )
        capture(setup.get("kept"))
        assert setup.zk.exists(znodes.topic_path("kept"))
        # Said once as an error (with what to do); the checks every DELETION_RETRY (5 s) that
        # follow wait quietly.
        log_file = setup.root / "operator.log"
        retried = "Handler 'delete' will retry: Topic 'kept'"
        eventually(lambda: log_file.read_text().count(retried) >= 2, "two more checks", timeout=20)
        errors = [line for line in log_file.read_text().splitlines() if " ERROR " in line]
        assert len(errors) == 1 and errors[0].endswith(
            f"{message} (kafka_topic_operator.k8s.topic_deletion)"
        ), errors
        setup.api.patch_namespaced_custom_object(
            GROUP, VERSION, "default", PLURAL, "kept",
            {"metadata": {"annotations": {"kto.dev/managed": "false"}}},
        )  # fmt: skip
        eventually(lambda: setup.get("kept") is None, "the resource released", timeout=10)
        assert setup.zk.exists(znodes.topic_path("kept"))
        assert not setup.zk.exists(znodes.delete_topic_path("kept"))


def test_unreadable_znodes_are_named_in_status_and_nothing_is_written(setup: Setup) -> None:
    # A partition state someone overwrote with garbage, on a topic that was Ready.
    setup.apply("stateful", partitions=1, replicas=1)
    setup.ready("stateful")
    state = znodes.topic_partition_state_path(TopicPartition("stateful", 0))
    setup.zk.set(state, b"garbage")
    _, _, message = reason_is(setup, "stateful", "UnreadableZNode")
    assert message.startswith(
        f"Topic 'stateful' cannot be read: Malformed data in znode {state}: "
    ) and message.endswith("Nothing is changed until the znode holds what Kafka writes (fix or "
                           "delete it)")  # fmt: skip
    capture(setup.get("stateful"))
    # A topic znode holding invalid JSON: not taken for a new topic, nothing written.
    setup.zk.create(znodes.topic_path("junk"), b"{not json")
    setup.apply("junk", partitions=1, replicas=1)
    _, _, message = reason_is(setup, "junk", "UnreadableZNode")
    assert message.startswith(
        "Topic 'junk' cannot be read: Malformed data in znode /brokers/topics/junk: "
    )
    assert not setup.zk.exists(znodes.topic_config_path("junk"))
    node = setup.zk.get(znodes.topic_path("junk"))
    assert node is not None and node.data == b"{not json"


@on_both_api_servers
def test_paused_resources_are_not_reconciled(setup: Setup) -> None:
    setup.apply("later", annotations={"kto.dev/pause-reconciliation": "true"}, partitions=1,
                replicas=1)  # fmt: skip
    reason_is(setup, "later", "ReconciliationPaused")
    capture(setup.get("later"))
    assert not setup.zk.exists(znodes.topic_path("later"))
    # Named (kubectl get shows it) but not yet this resource's to change.
    status = (setup.get("later") or {})["status"]
    assert (status["topicName"], status["topicManaged"]) == ("later", False)
    # Resumed by the annotation alone: reconciled at once, not at the next drift pass.
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "later",
        {"metadata": {"annotations": {"kto.dev/pause-reconciliation": None}}},
    )  # fmt: skip
    ready = ("True", "Created", "The topic is as declared")
    eventually(lambda: setup.condition("later") == ready, "Ready well before a drift pass (60 s)",
               timeout=20)  # fmt: skip
    assert len(topic_partitions(setup.zk, "later")) == 1
    assert (setup.get("later") or {})["status"]["topicManaged"] is True
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "later",
                                             {"spec": {"partitions": 2}})  # fmt: skip
    eventually(lambda: len(topic_partitions(setup.zk, "later")) == 2, "2 partitions", 60)


def test_an_existing_topic_is_adopted_only_as_it_is(setup: Setup) -> None:
    from kafka_topic_operator.zk import admin

    admin.create_topic_with_assignment(setup.zk, "legacy", {0: [0, 1], 1: [1, 2]},
                                       {"retention.ms": "1000"})  # fmt: skip
    setup.apply("legacy", partitions=2, replicas=3)
    _, _, message = reason_is(setup, "legacy", "Conflict")
    assert message == (
        "Topic 'legacy' already exists and differs from this spec: replicas 2 (spec: 3); config "
        "retention.ms=1000 (spec: (default)). Change the spec to match to adopt it."
    )
    assert topic_partitions(setup.zk, "legacy") == {0: (0, 1), 1: (1, 2)}  # untouched
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "legacy",
        {"spec": {"replicas": 2, "config": {"retention.ms": 1000}}},
    )  # fmt: skip
    assert setup.ready("legacy")["status"]["topicName"] == "legacy"


def test_zookeeper_down_is_reported_and_recovered_from(tmp_path: Path) -> None:
    from kto_dev.zookeeper_server import ZooKeeperServer

    with (
        ZooKeeperServer(tmp_path / "zk") as server,
        running(server.connect_string, tmp_path, "--zookeeper-retry-seconds", "2") as setup,
    ):
        setup.apply("before", partitions=1, replicas=1)
        setup.ready("before")
        server.stop()
        try:
            setup.apply("during", partitions=1, replicas=1)
            _, _, message = reason_is(setup, "during", "ZooKeeperUnavailable")
            assert message == f"ZooKeeper at {server.connect_string} did not answer within 2.0 s"
            capture(setup.get("during"))
        finally:
            server.start()
        setup.ready("during")
        assert setup.zk.exists(znodes.topic_path("during"))


def _get(url: str) -> tuple[int, str]:
    """An HTTP GET answered within a second, as a Kubernetes probe with timeoutSeconds: 1."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_frozen_zookeeper_is_reported_at_once_and_recovered_from_at_once(
    tmp_path: Path,
) -> None:
    """ZooKeeper stopped (SIGSTOP: connections stay open, nothing is answered) while resources
    are applied: each says ZooKeeperUnavailable within the retry time, liveness stays healthy
    and answers, readiness says the outage, and once ZooKeeper answers again every resource is
    Ready without waiting out a retry delay."""
    from kto_dev.zookeeper_server import ZooKeeperServer

    liveness = f"http://127.0.0.1:{free_port()}/healthz"
    readiness = f"http://127.0.0.1:{free_port()}/readyz"
    metrics_port = free_port()
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    names = [f"during-{i}" for i in range(20)]
    with (
        ZooKeeperServer(tmp_path / "zk") as server,
        running(server.connect_string, tmp_path, "--zookeeper-retry-seconds", "2",
                "--liveness", liveness, "--readiness", readiness,
                "--metrics-port", str(metrics_port)) as setup,
    ):  # fmt: skip
        setup.apply("before", partitions=1, replicas=1)
        setup.ready("before")
        assert _get(readiness) == (200, "ok\n")
        server.freeze()
        try:
            frozen = time.monotonic()
            setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "before")
            for name in names:
                setup.apply(name, partitions=2, replicas=2)
            said = f"ZooKeeper at {server.connect_string} did not answer within 2.0 s"
            for name in names:
                assert reason_is(setup, name, "ZooKeeperUnavailable")[2] == said
            # The deletion too, and it waits for ZooKeeper rather than for kopf's retry (10 s).
            assert reason_is(setup, "before", "ZooKeeperUnavailable")[2].startswith("ZooKeeper")
            # Each within the retry time and one unanswered read (1 s), applied in turn.
            assert time.monotonic() - frozen < 2.0 + 1.0 + 5.0
            status, body = _get(liveness)
            assert status == 200
            assert json.loads(body)["cluster"] == "ZooKeeper not answering"
            assert _get(readiness) == (503, "ZooKeeper is not answering\n")
            assert "\nkto_zookeeper_up 0.0\n" in _get(metrics)[1]
        finally:
            server.thaw()
        thawed = time.monotonic()
        for name in names:
            eventually(functools.partial(_is_ready, setup, name), f"{name} Ready", timeout=10)
        print(f"every resource Ready {time.monotonic() - thawed:.1f} s after ZooKeeper's return")
        # Marked for deletion at once, then found gone at the finalizer's next look (5 s).
        eventually(lambda: setup.get("before") is None, "before deleted", timeout=8)
        print(f"the deletion done {time.monotonic() - thawed:.1f} s after ZooKeeper's return")
        eventually(lambda: _get(readiness) == (200, "ok\n"), "ready again", timeout=5)
        served = _get(metrics)[1]
        assert "\nkto_zookeeper_up 1.0\n" in served
        assert "kto_kafka_up" not in served  # the other kind of cluster's gauge: never served
        for name in names:
            assert len(topic_partitions(setup.zk, name)) == 2


def _is_ready(setup: Setup, name: str) -> bool:
    found = setup.condition(name)
    return found is not None and found[0] == "True"


def test_kill_9_during_bulk_creation_and_deletion_converges(setup: Setup) -> None:
    names = [f"bulk-{i}" for i in range(150)]
    for name in names:
        setup.apply(name, partitions=2, replicas=2)
    eventually(lambda: len(setup.zk.children(znodes.TOPICS_PATH) or []) >= 20,
               "some topics written", timeout=60)  # fmt: skip
    setup.operator.kill()  # mid-way: some created, some half-done, some untouched
    setup.operator.wait()
    setup.operator = setup.restart_operator()
    for name in names:
        setup.ready(name)
    topics = setup.zk.children(znodes.TOPICS_PATH) or []
    assert sorted(topics) == sorted(names)  # none lost, none extra
    for name in names:
        assert topic_partitions(setup.zk, name).keys() == {0, 1}  # created once, as declared

    for name in names:
        setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name)
    eventually(lambda: len(setup.zk.children(znodes.TOPICS_PATH) or []) <= 120,
               "some topics deleted", timeout=60)  # fmt: skip
    setup.operator.kill()
    setup.operator.wait()
    setup.operator = setup.restart_operator()
    eventually(lambda: all(setup.get(n) is None for n in names), "every resource released",
               timeout=120)  # fmt: skip
    eventually(lambda: not (setup.zk.children(znodes.TOPICS_PATH) or [])
               and not (setup.zk.children(znodes.DELETE_TOPICS_PATH) or []),
               "no topic and no marker left", timeout=60)  # fmt: skip
    configs = setup.zk.children(znodes.config_entity_type_path(znodes.ConfigType.TOPIC)) or []
    assert configs == []  # no orphan config znode


def test_metrics_count_topics_by_reason(zk_chroot: str, tmp_path: Path) -> None:
    import urllib.request

    port = free_port()
    with running(zk_chroot, tmp_path, "--metrics-port", str(port)) as setup:
        # Away from broker 2, which is stopped below: Kafka's placement starts at a random
        # broker, and a replica there would make this topic offline too.
        setup.apply("measured", replicaAssignment=[[0]])
        setup.ready("measured")
        setup.apply("wrong", partitions=1, replicas=1, config={"nope": 1})
        reason_is(setup, "wrong", "InvalidSpec")

        def scrape() -> str | None:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text: str = r.read().decode()
            wanted = ('kto_topics{reason="Created"} 1.0', 'kto_topics{reason="InvalidSpec"} 1.0')
            return text if all(w in text for w in wanted) else None

        text = eventually(scrape, "the topic gauges", timeout=30)
        assert 'kto_reconciles_total{result="ok"}' in text
        assert "kto_offline_partitions 0.0" in text
        assert "kto_reconcile_duration_seconds_count" in text

        # What the status follower writes between reconciles counts too: a broker lost.
        setup.apply("lonely", replicaAssignment=[[2]])
        setup.apply("spread", replicaAssignment=[[0, 1, 2], [1, 2, 0]])
        setup.ready("lonely")
        setup.ready("spread")
        setup.kill_broker(2)

        def gauges(*wanted: str) -> Callable[[], str | None]:
            def read() -> str | None:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text: str = r.read().decode()
                return text if all(f"\n{w}\n" in text for w in wanted) else None

            return read

        lost = ('kto_topics{reason="PartitionsOffline"} 1.0', "kto_offline_partitions 1.0",
                "kto_under_replicated_partitions 2.0")  # fmt: skip
        eventually(gauges(*lost), "the lost broker", timeout=30)
        setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "lonely")
        text = eventually(gauges("kto_deletions_waiting 1.0"), "the deletion waiting", timeout=30)
        waited = re.search(r"\nkto_deletion_wait_seconds_max (\S+)\n", text)
        assert waited is not None and 0 < float(waited.group(1)) < 60, text
        setup.start_broker(2)
        eventually(gauges("kto_deletions_waiting 0.0", "kto_deletion_wait_seconds_max 0.0",
                          "kto_offline_partitions 0.0", "kto_under_replicated_partitions 0.0"),
                   "all back", timeout=60)  # fmt: skip


def test_drift_is_reverted_or_reported(zk_chroot: str, tmp_path: Path) -> None:
    from kafka_topic_operator.zk import admin

    # The bulk pass (--drift-interval) is far off: the topic's watched znodes tell.
    with running(zk_chroot, tmp_path, "--drift-interval", "3600") as setup:
        setup.apply("tuned", partitions=2, replicas=2, config={"retention.ms": 1000})
        setup.ready("tuned")

        def config() -> dict[str, str]:
            node = setup.zk.get(znodes.topic_config_path("tuned"))
            assert node is not None
            return znodes.decode_config(node.path, node.data)

        admin.change_topic_config(setup.zk, "tuned", {"retention.ms": "5"})  # behind our back
        eventually(lambda: config() == {"retention.ms": "1000"}, "the config reverted", timeout=30)
        reverted = ("Normal", "ConfigChanged", "Topic 'tuned': config now retention.ms=1000")
        eventually(lambda: reverted in events_of("tuned"), "the revert announced")

        setup.zk.delete(znodes.topic_path("tuned"), recursive=True)  # deleted by hand
        eventually(lambda: setup.zk.exists(znodes.topic_path("tuned")), "the topic recreated")
        setup.ready("tuned")

        admin.add_partitions(setup.zk, "tuned", {2: [0, 1]})  # partitions added by hand
        _, _, message = reason_is(setup, "tuned", "NotSupported")
        assert message == (
            "Topic 'tuned' has 3 partitions; Kafka cannot decrease the partition count to 2."
        )
        capture(setup.get("tuned"))


def test_a_replication_factor_change_is_a_minimal_reassignment(setup: Setup) -> None:
    setup.apply("grow", partitions=3, replicas=1)
    setup.ready("grow")
    before = topic_partitions(setup.zk, "grow")
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "grow", {"spec": {"replicas": 3}}
    )
    status = setup.ready("grow")["status"]
    after = topic_partitions(setup.zk, "grow")
    for p, replicas in after.items():
        assert len(replicas) == 3 and replicas[0] == before[p][0]  # leaders kept, 2 added each
    assert status["partitionCounts"]["underReplicated"] == 0
    assert "replicasChange" not in status  # done
    assert not setup.zk.exists(znodes.REASSIGN_PARTITIONS_PATH)


def test_a_reassignment_in_progress_shows_in_status(setup: Setup) -> None:
    # Broker 3 is registered with no dev broker behind it. As the partition's leader it never
    # adds a follower to the ISR, so the reassignment below stays open.
    endpoint = EndPoint("PLAINTEXT", "localhost", 9095, SecurityProtocol.PLAINTEXT)
    fake = BrokerInfo(id=3, endpoints=(endpoint,), rack="rack-3", jmx_port=-1,
                             timestamp=0)  # fmt: skip
    setup.zk.create(znodes.broker_path(3), znodes.encode_broker(fake), ephemeral=True)
    setup.apply("moving", replicaAssignment=[[3]])
    # Its metadata cannot be asked: Ready says so rather than claiming it.
    _, _, said = reason_is(setup, "moving", "Created")
    assert said.startswith("The topic is as declared (the brokers' metadata not checked: broker "
                           "3: localhost:9095 does not answer ("), said  # fmt: skip
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "moving", {"spec": {"replicaAssignment": [[3, 0]]}}
    )

    def moving() -> dict[str, Any] | None:
        status = (setup.get("moving") or {}).get("status") or {}
        return status if "replicasChange" in status else None

    status = eventually(moving, "the reassignment in status", timeout=60)
    assert status["replicasChange"] == {"partitionsMoving": [0], "targets": {"0": [3, 0]}}
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "Reconciling"), ready
    capture(setup.get("moving"))
    assert topic_partitions(setup.zk, "moving") == {0: (3, 0)}  # adding 0, recorded in the znode
    assert setup.zk.exists(znodes.REASSIGN_PARTITIONS_PATH)
    # Another change while it is open waits for it, and says so.
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "moving", {"spec": {"replicaAssignment": [[3, 1]]}}
    )
    _, _, message = reason_is(setup, "moving", "ReassignmentInProgress")
    assert "moving" in message, message
    capture(setup.get("moving"))
    assert topic_partitions(setup.zk, "moving") == {0: (3, 0)}  # the open one is left alone


def test_more_replicas_than_live_brokers_wait_for_brokers_and_say_so(setup: Setup) -> None:
    setup.apply("wide", partitions=2, replicas=4)
    _, _, message = reason_is(setup, "wide", "BrokersUnavailable")
    assert "larger than available brokers: 3" in message, message
    capture(setup.get("wide"))
    assert not setup.zk.exists(znodes.topic_path("wide"))  # nothing half-written
    setup.api.patch_namespaced_custom_object(
        GROUP, VERSION, "default", PLURAL, "wide", {"spec": {"replicas": 3}}
    )
    setup.ready("wide")


def test_an_operator_watches_only_the_namespaces_it_is_given(
    zk_chroot: str, tmp_path: Path
) -> None:
    with running(zk_chroot, tmp_path, "--namespace", "team-a", "--namespace", "team-b",
                 namespaces=("team-a", "team-b", "elsewhere")) as setup:  # fmt: skip

        def apply(namespace: str, name: str, topic: str) -> None:
            body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                    "metadata": {"name": name},
                    "spec": {"topicName": topic, "partitions": 1, "replicas": 1}}  # fmt: skip
            setup.api.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, body)

        def reason(namespace: str, name: str) -> str | None:
            obj = setup.api.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, name)
            for c in (obj.get("status") or {}).get("conditions") or []:
                if c["type"] == "Ready":
                    return str(c["reason"])
            return None

        apply("team-a", "orders", "orders")
        apply("elsewhere", "ignored", "ignored")
        eventually(lambda: reason("team-a", "orders") == "Created", "team-a/orders Created")
        # The same topic from the other watched namespace: the older resource keeps it.
        apply("team-b", "orders-too", "orders")
        eventually(lambda: reason("team-b", "orders-too") == "Conflict", "team-b Conflict")
        apply("team-b", "payments", "payments")
        eventually(lambda: reason("team-b", "payments") == "Created", "team-b/payments Created")
        ignored = setup.api.get_namespaced_custom_object(
            GROUP, VERSION, "elsewhere", PLURAL, "ignored"
        )
        assert "status" not in ignored and "finalizers" not in ignored["metadata"]
        assert not setup.zk.exists(znodes.topic_path("ignored"))


def test_operators_share_a_cluster_by_label_selector(zk_chroot: str, tmp_path: Path) -> None:
    with running(zk_chroot, tmp_path, "--selector", "kto.dev/cluster=blue") as setup:
        body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "KafkaTopic",
                "metadata": {"name": "red-topic", "labels": {"kto.dev/cluster": "red"}},
                "spec": {"partitions": 1, "replicas": 1}}  # fmt: skip
        setup.api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        body = {**body, "metadata": {"name": "blue-topic", "labels": {"kto.dev/cluster": "blue"}}}
        setup.api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        setup.ready("blue-topic")
        red = setup.get("red-topic")
        assert red is not None and "status" not in red  # another operator's resource
        assert "finalizers" not in red["metadata"]
        assert not setup.zk.exists(znodes.topic_path("red-topic"))
