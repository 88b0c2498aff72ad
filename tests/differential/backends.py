"""The two clusters one scenario runs on: real Kafka brokers with Kafka's own controller, and the
twin (our controller and dev brokers, in this process). Both have brokers 0, 1, 2 on racks a, b, c
and automatic leader rebalancing off (its timer would make the runs differ by when it fires).

In Kafka the controller lives in a broker; the twin runs one controller beside each dev broker,
with the broker's id and the broker's ZooKeeper session (KafkaServer shares one KafkaZkClient
between the two), so stopping or killing a broker stops its controller too, and a kill ends the
broker's registration and `/controller` at once, as in Kafka."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Protocol

from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.apache_kafka.broker import KafkaBroker
from kto_dev.apache_kafka.cluster import KafkaCluster
from kto_dev.devbroker.broker import BrokerConfig, DevBroker

BROKERS = (0, 1, 2)
RACKS = {0: "a", 1: "b", 2: "c"}
TWIN_SESSION_TIMEOUT = 4.0


class Backend(Protocol):
    name: str
    zk: ZkClient

    def start_broker(self, broker_id: int, rack: str | None = None) -> None:
        """Returns once the broker is registered (and, for Kafka, answers requests); in `rack`
        if given, else in its own (RACKS)."""

    def stop_broker(self, broker_id: int) -> None:
        """A controlled shutdown (SIGTERM for Kafka); returns once the broker has exited."""

    def kill_broker(self, broker_id: int) -> None:
        """Gone with no goodbye (kill -9 for Kafka); its registration may linger until its
        ZooKeeper session expires."""

    def close(self) -> None: ...


class KafkaBackend:
    name = "kafka"

    def __init__(self, zookeeper: str, directory: Path) -> None:
        self.cluster = KafkaCluster(
            zookeeper,
            directory,
            len(BROKERS),
            racks=[RACKS[b] for b in BROKERS],
            overrides={"auto.leader.rebalance.enable": "false"},
        )
        self.zk = ZkClient(zookeeper)
        self.zk.start()

    def _broker(self, broker_id: int) -> KafkaBroker:
        return self.cluster.brokers[broker_id]

    def start_broker(self, broker_id: int, rack: str | None = None) -> None:
        broker = self._broker(broker_id)
        # Its properties are written again at each start: a restart in another rack.
        broker.spec = replace(broker.spec, rack=rack or RACKS[broker_id])
        broker.start()

    def stop_broker(self, broker_id: int) -> None:
        self._broker(broker_id).stop()

    def kill_broker(self, broker_id: int) -> None:
        self._broker(broker_id).kill()

    def close(self) -> None:
        self.cluster.kill()
        self.zk.stop()


class TwinBackend:
    name = "twin"

    def __init__(self, zookeeper: str, directory: Path) -> None:
        self.zookeeper = zookeeper
        self.directory = directory
        self.brokers: dict[int, DevBroker] = {}
        self.controllers: dict[int, KafkaController] = {}
        self.zk = ZkClient(zookeeper)
        self.zk.start()

    def start_broker(self, broker_id: int, rack: str | None = None) -> None:
        config = BrokerConfig(
            self.zookeeper,
            broker_id,
            self.directory / f"broker-{broker_id}",
            rack=rack or RACKS[broker_id],
            session_timeout=TWIN_SESSION_TIMEOUT,
            controlled_shutdown_retry_backoff=0.2,
        )
        broker = DevBroker(config)
        broker.start()
        self.brokers[broker_id] = broker
        # One session: with two, a killed controller's `/controller` went first and the next
        # controller could still see the dead broker registered, taking one leader epoch where
        # Kafka's failover takes two (the replicas offline, then the election).
        controller = KafkaController(
            ControllerConfig(
                self.zookeeper,
                broker_id=broker_id,
                auto_leader_rebalance_enable=False,
                session_timeout=TWIN_SESSION_TIMEOUT,
            ),
            zk=broker.zk,
        )
        controller.start()
        self.controllers[broker_id] = controller

    def stop_broker(self, broker_id: int) -> None:
        # KafkaServer.shutdown: the controlled shutdown first; closing the shared session then
        # ends the registration and, if it was the controller, `/controller` together.
        self.brokers.pop(broker_id).shutdown(controlled=True)
        self.controllers.pop(broker_id).stop()

    def kill_broker(self, broker_id: int) -> None:
        # The broker first: the controller's stop would resign, deleting `/controller` alone.
        self.brokers.pop(broker_id).shutdown(controlled=False)
        self.controllers.pop(broker_id).stop()

    def close(self) -> None:
        for broker_id in list(self.brokers):
            self.kill_broker(broker_id)
        self.zk.stop()
