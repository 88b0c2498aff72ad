"""The operator's watches across a real kube-apiserver's restart and etcd's compaction: the
server gone, its history cut short under the operator's last resourceVersion (a resumed watch
gets 410 Gone and kopf lists again), and every change made meanwhile done once, nothing
missed and nothing done twice."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kto_testing import eventually

from kafka_topic_operator.zk import znodes
from kto_dev.kube_apiserver.launcher import KubeApiServer

from .test_operator import GROUP, PLURAL, VERSION, Setup, events_of, running, topic_partitions

pytestmark = [pytest.mark.zookeeper, pytest.mark.e2e, pytest.mark.apiserver]


def topic_version(setup: Setup, topic: str) -> int:
    """The topic znode's version: any write to it (done again or not) moves it."""
    node = setup.zk.get(znodes.topic_path(topic))
    assert node is not None
    return node.version


def audit_events(server: KubeApiServer) -> list[dict[str, Any]]:
    lines = server.audit_log.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def grow(setup: Setup, name: str, partitions: int) -> None:
    setup.api.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, name,
                                             {"spec": {"partitions": partitions}})  # fmt: skip


def test_restarts_and_compaction_miss_nothing_and_repeat_nothing(
    zk_chroot: str, tmp_path: Path
) -> None:
    with running(zk_chroot, tmp_path, api_server="kube-apiserver") as setup:
        server = setup.server
        assert isinstance(server, KubeApiServer)
        for name in ("steady", "grows", "goes"):
            setup.apply(name, partitions=2, replicas=2)
        for name in ("steady", "grows", "goes"):
            setup.ready(name)
        steady = topic_version(setup, "steady")
        # kopf posts an event after the handler that made it: one still unposted when the
        # server goes away is lost (kopf logs it and goes on), so it is waited for here.
        created = "Topic 'steady' created: 2 partitions, replication factor 2"
        eventually(lambda: ("Normal", "Created", created) in events_of("steady"), "steady's event")

        for round_ in range(2):
            # The server goes away under the operator's watches; while it is down etcd's history
            # moves on and is compacted past every resourceVersion the operator has seen.
            server.stop_apiserver()
            before = server.etcd_revision()
            assert server.etcd_put(b"/test/mark", b"x") > before
            assert server.compact() > before
            server.start_apiserver()
            # Changes the operator's old watches never carried: it must list again to see them.
            grow(setup, "grows", 3 + round_)
            setup.apply(f"new-{round_}", partitions=1, replicas=1)
            eventually(lambda r=round_: len(topic_partitions(setup.zk, "grows")) == 3 + r,
                       "grows grown after the restart", timeout=90)  # fmt: skip
            setup.ready(f"new-{round_}")
        setup.api.delete_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "goes")
        eventually(lambda: setup.get("goes") is None, "goes released", timeout=90)
        assert not setup.zk.exists(znodes.topic_path("goes"))

        # The operator listed again after each restart: its resumed watches had been cut off.
        lists = [e for e in audit_events(server) if e["verb"] == "list"
                 and e.get("objectRef", {}).get("resource") == "kafkatopics"
                 and e.get("userAgent", "").startswith("kopf")]  # fmt: skip
        assert len(lists) >= 3, lists  # at startup, then once per round

        # Nothing done twice: the untouched topic was never written again, and every resource
        # says once what was done to it.
        assert topic_version(setup, "steady") == steady
        assert setup.ready("steady")["status"]["partitionCounts"]["total"] == 2
        assert [e for e in events_of("steady") if e[1] == "Created"] == [
            ("Normal", "Created", created)
        ]
        # Events made while the server was away wait in kopf's queue, retried with a growing
        # backoff (13 s and more between late attempts): waited for, then counted.
        for name in ("new-0", "new-1"):
            eventually(lambda n=name: len([e for e in events_of(n) if e[1] == "Created"]) == 1,
                       f"{name}'s Created event, once", timeout=90)  # fmt: skip
        added = ["Topic 'grows': 1 partitions added", "Topic 'grows': 1 partitions added"]
        eventually(lambda: [e[2] for e in events_of("grows") if e[1] == "PartitionsAdded"] == added,
                   "grows' two PartitionsAdded events, once each", timeout=90)  # fmt: skip
