"""`kto describe` against a real ZooKeeper, and `kto dev-broker` reached through `kto`."""

from __future__ import annotations

import json

import pytest

from kafka_topic_operator.cli import main
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kafka_topic_operator.zk.server import free_port

pytestmark = pytest.mark.zookeeper


def test_describe_prints_kafka_topics_lines_and_json(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    zk = ZkClient(zk_chroot)
    zk.start()
    try:
        for path in znodes.PERSISTENT_ZK_PATHS:
            zk.ensure_path(path)
        zk.create(
            znodes.topic_path("orders"), znodes.encode_topic({0: ReplicaAssignment.of([1, 2])})
        )
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1, 2)), 1)
        zk.create(
            znodes.topic_partition_state_path(TopicPartition("orders", 0)),
            znodes.encode_partition_state(state),
            makepath=True,
        )
    finally:
        zk.stop()

    assert main(["describe", "--zookeeper", zk_chroot]) == 0
    text = capsys.readouterr().out
    assert "Topic: orders\tTopicId: none\tPartitionCount: 1\tReplicationFactor: 2" in text
    assert (
        "\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\tState: Offline" in text
    )

    assert main(["describe", "--zookeeper", zk_chroot, "orders", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["offline_partitions"] == ["orders-0"]
    assert report["topics"][0]["partitions"][0]["isr"] == [1, 2]


def test_describe_unknown_topic_and_unreachable_zookeeper_are_one_line(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["describe", "--zookeeper", zk_chroot, "nope"]) == 2
    assert capsys.readouterr().err == "kto describe: error: topics not found: nope\n"
    dead = f"127.0.0.1:{free_port()}"
    assert main(["describe", "--zookeeper", dead, "--timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("kto describe: error: cannot connect to ZooKeeper") and err.count("\n") == 1
    )


def test_dev_broker_is_reachable_through_kto(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev-broker", "--bogus"]) == 2
    assert "kto dev-broker" in capsys.readouterr().err
