"""Several real brokers started together: the tests' Kafka cluster."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

from kto_dev.apache_kafka.broker import BrokerSpec, KafkaBroker, KafkaBrokerError
from kto_dev.ports import free_port

RACKS = ("a", "b", "c")


class KafkaCluster:
    """Brokers 0..n-1 (racks a, b, c, ...) in `zookeeper` (a connect string with its chroot)."""

    def __init__(
        self,
        zookeeper: str,
        directory: Path,
        size: int = 3,
        *,
        racks: Sequence[str | None] | None = RACKS,
        overrides: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        self.zookeeper = zookeeper
        self.brokers = {
            broker_id: KafkaBroker(
                BrokerSpec(
                    broker_id=broker_id,
                    zookeeper=zookeeper,
                    directory=directory / f"broker-{broker_id}",
                    port=free_port(),
                    rack=None if racks is None else racks[broker_id % len(racks)],
                    internal_replication_factor=min(3, size),
                    overrides=dict(overrides or {}),
                    host=host,
                )
            )
            for broker_id in range(size)
        }

    @property
    def bootstrap(self) -> str:
        return ",".join(b.spec.bootstrap for b in self.brokers.values() if b.running)

    def start(self) -> None:
        """Starts every broker at once and waits for all of them."""
        try:
            for broker in self.brokers.values():
                broker.start(wait=False)
            for broker in self.brokers.values():
                broker.wait_until_ready()
        except KafkaBrokerError:
            self.stop()
            raise

    def stop(self) -> None:
        for broker in self.brokers.values():
            broker.stop()

    def kill(self) -> None:
        for broker in self.brokers.values():
            broker.kill()

    def __enter__(self) -> KafkaCluster:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
