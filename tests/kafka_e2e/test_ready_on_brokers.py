"""Ready means a client can use the topic, on ZooKeeper mode too: Kafka's controller writes a
partition's state znode before it tells the brokers, and with many topics created at once the
brokers' metadata lags the znodes by seconds. Here each KafkaTopic's Ready is caught on a watch
and, at that moment, a broker (each in turn) is asked for the topic's metadata: every partition
must have a leader there. (KRaft needs no such wait: the operator reads the brokers' metadata
itself, `tests/kafka_e2e/test_topics.py`.)"""

from __future__ import annotations

import itertools
import threading
from typing import Any

import pytest
from kto_testing import eventually

from .conftest import GROUP, READY, TOPICS, VERSION, Operator

pytestmark = [pytest.mark.kafka, pytest.mark.e2e]

COUNT = 150  # KafkaTopics applied at once
PARTITIONS = 12
TIMEOUT = 240.0  # for all of them to be Ready


class ReadyAsked:
    """On a watch of the KafkaTopics, each Ready's first appearance: a broker's metadata of
    its topic asked at once, and what it lacked kept."""

    def __init__(self, operator: Operator, names: set[str]) -> None:
        from confluent_kafka.admin import AdminClient

        self.operator, self.names = operator, names
        brokers = operator.kafka_cluster.brokers.values()
        self._clients = itertools.cycle(
            [AdminClient({"bootstrap.servers": b.spec.bootstrap, "log_level": 0})
             for b in brokers]
        )  # fmt: skip
        self.ready: set[str] = set()
        self.lacking: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> ReadyAsked:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def _watch(self) -> None:
        from kubernetes import watch

        stream = watch.Watch()
        for event in stream.stream(self.operator.api.list_namespaced_custom_object, GROUP,
                                   VERSION, "default", TOPICS, timeout_seconds=5):  # fmt: skip
            if self._stop.is_set():
                stream.stop()
                return
            self._see(event["object"])
        if not self._stop.is_set():
            self._watch()  # the watch's own timeout: go on

    def _see(self, obj: dict[str, Any]) -> None:
        name = obj["metadata"]["name"]
        if name not in self.names or name in self.ready:
            return
        if self.operator.condition(name, obj) != READY:
            return
        self.ready.add(name)
        client = next(self._clients)
        found = client.list_topics(name, timeout=10).topics.get(name)
        if found is None or found.error is not None:
            self.lacking.append(f"{name}: not in broker metadata ({found and found.error})")
            return
        led = sum(1 for p in found.partitions.values() if p.leader >= 0)
        if led < PARTITIONS:
            self.lacking.append(f"{name}: {led} of {PARTITIONS} partitions led")


def test_ready_never_precedes_the_brokers_metadata(zk_operator: Operator) -> None:
    names = {f"brokers-see-{i}" for i in range(COUNT)}
    with ReadyAsked(zk_operator, names) as asked:
        for name in sorted(names):
            zk_operator.apply(name, partitions=PARTITIONS, replicas=3)
        try:
            eventually(lambda: asked.ready >= names, f"{COUNT} KafkaTopics Ready", TIMEOUT)
        except AssertionError as e:
            late = sorted(names - asked.ready)[:5]
            conditions = [(n, zk_operator.condition(n)) for n in late]
            raise AssertionError(f"not Ready: {conditions}") from e
    assert asked.lacking == []
