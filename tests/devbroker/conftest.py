"""Fixtures for dev broker tests: a ZooKeeper client on the test's chroot, a test-played
controller that writes requests and reads responses, and waits on ZooKeeper watches."""

from __future__ import annotations

import pytest
from kto_testing import Waiter

from kafka_topic_operator import broker_channel as bc
from kafka_topic_operator.zk.client import ZkClient


class PlayedController:
    """What the project's controller does on the channel, played by the test."""

    def __init__(self, zk: ZkClient, waiter: Waiter) -> None:
        self.zk = zk
        self.waiter = waiter
        self.next_correlation_id = 0

    def correlation_id(self) -> int:
        self.next_correlation_id += 1
        return self.next_correlation_id

    def send(self, broker_id: int, request: bc.Request) -> str:
        self.zk.ensure_path(bc.requests_path(broker_id))
        return self.zk.create(
            bc.request_prefix(broker_id), bc.encode_request(request), sequence=True
        )

    def responses(self, broker_id: int) -> list[bc.Response]:
        path = bc.responses_path(broker_id)
        names = self.zk.children(path) or []
        nodes = self.zk.get_many(f"{path}/{n}" for n in names)
        return [bc.decode_response(n.path, n.data) for n in nodes if n is not None]

    def await_response(self, broker_id: int, correlation_id: int) -> bc.Response:
        path = bc.responses_path(broker_id)

        def answered(names: list[str]) -> bool:
            return any(r.correlation_id == correlation_id for r in self.responses(broker_id))

        self.waiter.children(path, answered)
        return next(r for r in self.responses(broker_id) if r.correlation_id == correlation_id)

    def call(self, broker_id: int, request: bc.Request) -> bc.Response:
        self.send(broker_id, request)
        return self.await_response(broker_id, request.correlation_id)


@pytest.fixture
def waiter(zk: ZkClient) -> Waiter:
    return Waiter(zk)


@pytest.fixture
def controller(zk: ZkClient, waiter: Waiter) -> PlayedController:
    return PlayedController(zk, waiter)
