"""Whether the brokers' metadata shows a topic's partitions led: what a client finds when it
asks a broker, which in ZooKeeper mode can lag the partition state znodes by many seconds (the
controller writes a partition's state, then tells the brokers).

A ZooKeeper-mode cluster's status reads the znodes; Ready waits for this too. Every live broker
is asked (a client may bootstrap from any), through the PLAINTEXT listener of its registration
(a dev broker, without a Kafka listener, publishes its metadata instead: `published`),
with one Metadata request of the waiting topics a round, however many resources wait: `confirm`
hands back a future, and a thread of this object's answers the waiting topics together. Where a
broker cannot be asked (no PLAINTEXT listener, nothing answering there), the answer says so
instead of claiming what was not checked.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final

from kafka_topic_operator.kafka.brokers import BrokerInfo, SecurityProtocol
from kafka_topic_operator.topics.status import Shown
from kafka_topic_operator.zk.json_codec import ZNodeDataError

log = logging.getLogger(__name__)

TIMEOUT: Final = 5.0  # seconds for a broker's answer
CLIENT_ID: Final = "kafka-topic-operator-brokers-metadata"
# Seconds before a listener that did not answer is asked again: each attempt waits TIMEOUT, and
# every waiting resource's round would wait with it.
RETRY_AFTER: Final = 30.0
PATIENCE: Final = 3.0  # seconds a topic not yet shown is asked again before the answer says so
ROUND_PAUSE: Final = 0.1  # seconds between rounds that ask again


# One broker's answer: each topic's partitions, each with its leader (-1: none), or an error.
Answer = Mapping[str, Mapping[int, int] | str]
# A broker's metadata as it publishes it (a dev broker's); None for a broker that publishes none.
Published = Callable[[int], Answer | None]


def shown(topic: str, partitions: int, answers: Mapping[int, Answer], unasked: str | None) -> Shown:
    """Whether the `answers` of the brokers asked (by broker id) show `topic`'s `partitions`
    led; `unasked`: why some live brokers could not be asked."""
    for broker, answer in sorted(answers.items()):
        found = answer.get(topic)
        if found is None:
            return Shown(f"broker {broker}'s metadata does not have topic '{topic}' yet", unasked)
        if isinstance(found, str):
            return Shown(f"broker {broker}'s metadata gives error {found} for topic '{topic}'",
                         unasked)  # fmt: skip
        led = sum(1 for p in range(partitions) if found.get(p, -1) >= 0)
        if led < partitions:
            return Shown(f"broker {broker}'s metadata shows {led} of {partitions} partitions "
                         "led", unasked)  # fmt: skip
    if not answers:
        return Shown(None, unasked or "no broker was asked")
    return Shown(None, unasked)


def unasked_message(away: Mapping[int, str]) -> str | None:
    """Why the brokers not asked were not (by broker id), brokers with the same reason together:
    "brokers 0, 1: no PLAINTEXT listener"."""
    by_reason: dict[str, list[int]] = {}
    for broker, why in sorted(away.items()):
        by_reason.setdefault(why, []).append(broker)
    said = [
        f"broker{'s' if len(ids) > 1 else ''} {', '.join(map(str, ids))}: {why}"
        for why, ids in by_reason.items()
    ]
    return "; ".join(said) or None


def plaintext_address(broker: BrokerInfo) -> str | None:
    """host:port of a broker's PLAINTEXT listener (the operator has no credentials for the
    brokers of a ZooKeeper-mode cluster), None if it has none."""
    for endpoint in broker.endpoints:
        if endpoint.security_protocol is SecurityProtocol.PLAINTEXT and endpoint.host:
            host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
            return f"{host}:{endpoint.port}"
    return None


@dataclass(frozen=True, slots=True)
class _Wanted:
    topic: str
    partitions: int
    brokers: Mapping[int, BrokerInfo]
    future: Future[Shown]
    until: float  # monotonic time: asked again in later rounds until then, while not shown


class BrokersMetadata:
    """Asks the live brokers' metadata for topics waiting to be Ready: one request per broker a
    round, on a network client of its own. Thread-safe."""

    def __init__(self, published: Published | None = None, timeout: float = TIMEOUT) -> None:
        """`published`: a broker's metadata as it publishes it itself, for brokers without a
        Kafka listener (dev brokers)."""
        self._published = published
        self._timeout = timeout
        self._lock = threading.Condition()
        self._wanted: list[_Wanted] = []
        self._client: Any = None  # kafka-python's network client, bootstrapped from:
        self._bootstrap = ""
        # Addresses that did not answer: until when they are not asked again, and why.
        self._failed: dict[str, tuple[float, str]] = {}
        self._stopped = False
        self._thread: threading.Thread | None = None

    def confirm(
        self,
        topic: str,
        partitions: int,
        brokers: Mapping[int, BrokerInfo],
        patience: float = PATIENCE,
    ) -> Future[Shown]:
        """What every one of `brokers` (the live ones, as last read) shows of `topic`, asked
        again for up to `patience` seconds while a broker does not show it yet: brokers learn
        of new partitions a moment after their state znodes, and one reconcile that waits a
        moment is cheaper than a reconcile again a second later."""
        future: Future[Shown] = Future()
        with self._lock:
            if self._stopped:
                future.set_result(Shown(None, "the operator is stopping"))
                return future
            until = time.monotonic() + patience
            self._wanted.append(_Wanted(topic, partitions, dict(brokers), future, until))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="brokers-metadata",
                                                daemon=True)  # fmt: skip
                self._thread.start()
            self._lock.notify_all()
        return future

    def close(self) -> None:
        with self._lock:
            self._stopped = True
            self._lock.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join()
        self._close_client()

    def _loop(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._wanted or self._stopped)
                if self._stopped:
                    wanted, self._wanted = self._wanted, []
                    for w in wanted:
                        w.future.set_result(Shown(None, "the operator is stopping"))
                    return
                wanted, self._wanted = self._wanted, []
            try:
                again = self._answer(wanted)
                with self._lock:
                    self._wanted.extend(again)
                    if again and not self._stopped:
                        # A pause before those are asked again, unless others arrive.
                        self._lock.wait(ROUND_PAUSE)
            except Exception as e:  # each waiting reconcile hears of it, none is left waiting
                log.exception("asking the brokers' metadata failed")
                for w in wanted:
                    if not w.future.done():
                        w.future.set_exception(e)

    def _answer(self, wanted: list[_Wanted]) -> list[_Wanted]:
        """Answers what was `wanted`, but for those to be asked again (returned)."""
        brokers: dict[int, BrokerInfo] = {}
        for w in wanted:
            brokers.update(w.brokers)
        topics = sorted({w.topic for w in wanted})
        answers: dict[int, Answer] = {}
        unreachable: dict[int, str] = {}
        for broker_id in sorted(brokers):
            try:
                answer = self._published(broker_id) if self._published is not None else None
            except ZNodeDataError as e:
                unreachable[broker_id] = f"its published metadata is unreadable ({e})"
                continue
            if answer is not None:
                answers[broker_id] = answer
        asked = {
            b: info for b, info in brokers.items() if b not in answers and b not in unreachable
        }
        addresses = {b: a for b, info in asked.items() if (a := plaintext_address(info))}
        unreachable.update({b: "no PLAINTEXT listener" for b in asked if b not in addresses})
        now = time.monotonic()
        for broker_id in sorted(addresses):
            address = addresses[broker_id]
            if (failed := self._failed.get(address)) is not None and failed[0] > now:
                unreachable[broker_id] = failed[1]  # not waited for again each round
                continue
            try:
                answers[broker_id] = self._ask(broker_id, addresses, topics)
            except Exception as e:  # kafka-python's: nothing answering there, in time
                why = f"{address} does not answer ({e!r})"
                unreachable[broker_id] = why
                self._failed[address] = (time.monotonic() + RETRY_AFTER, why)
            else:
                self._failed.pop(address, None)
        again = []
        now = time.monotonic()
        for w in wanted:
            mine = {b: a for b, a in answers.items() if b in w.brokers}
            away = {b: why for b, why in unreachable.items() if b in w.brokers}
            found = shown(w.topic, w.partitions, mine, unasked_message(away))
            if found.waiting is not None and now < w.until:
                again.append(w)
            else:
                w.future.set_result(found)
        return again

    def _ask(self, broker_id: int, addresses: Mapping[int, str], topics: list[str]) -> Answer:
        """Broker `broker_id`'s metadata of `topics`, asked of it alone (librdkafka would ask
        whichever broker it likes: kafka-python's network client sends to the node named)."""
        from kafka.net.compat import KafkaNetClient
        from kafka.protocol.metadata import MetadataRequest

        bootstrap = ",".join(addresses[b] for b in sorted(addresses))
        if self._client is None or self._bootstrap != bootstrap:
            self._close_client()
            self._client = KafkaNetClient(bootstrap_servers=bootstrap, client_id=CLIENT_ID)
            self._bootstrap = bootstrap
            # Bootstrapped: the client then knows each broker by its id.
            self._client.get_broker_version(int(self._timeout * 1000))
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in topics],
            allow_auto_topic_creation=False,
        )
        response = self._client.send_and_receive(broker_id, request,
                                                 timeout_ms=int(self._timeout * 1000))  # fmt: skip
        return {
            topic.name: error_name(topic.error_code) if topic.error_code
            else {p.partition_index: p.leader_id for p in topic.partitions}
            for topic in response.topics
        }  # fmt: skip

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()


def error_name(code: int) -> str:
    """Kafka's name of an error code: UNKNOWN_TOPIC_OR_PARTITION."""
    import kafka.errors

    return str(kafka.errors.for_code(code).message)
