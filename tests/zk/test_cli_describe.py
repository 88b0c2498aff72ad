"""`kto describe` against a real ZooKeeper, and `kto dev-broker` reached through `kto`."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

from kafka_topic_operator.cli import main
from kafka_topic_operator.kafka.leader_and_isr import LeaderAndIsr, LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import ZkClient
from kto_dev.ports import free_port
from kto_dev.zookeeper_server import ZooKeeperServer

pytestmark = pytest.mark.zookeeper


@contextlib.contextmanager
def cluster_layout(connect: str) -> Iterator[ZkClient]:
    """A client in a chroot holding Kafka's persistent znodes, for the test to add topics."""
    zk = ZkClient(connect)
    zk.start()
    try:
        for path in znodes.PERSISTENT_ZK_PATHS:
            zk.ensure_path(path)
        yield zk
    finally:
        zk.stop()


def test_describe_prints_kafka_topics_lines_and_json(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with cluster_layout(zk_chroot) as zk:
        zk.create(
            znodes.topic_path("orders"), znodes.encode_topic({0: ReplicaAssignment.of([1, 2])})
        )
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1, 2)), 1)
        zk.create(
            znodes.topic_partition_state_path(TopicPartition("orders", 0)),
            znodes.encode_partition_state(state),
            makepath=True,
        )

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


def test_describe_names_unreadable_znodes_by_path(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with cluster_layout(zk_chroot) as zk:
        zk.create(znodes.topic_path("orders"), znodes.encode_topic({0: ReplicaAssignment.of([1])}))
        zk.create(znodes.topic_partition_state_path(TopicPartition("orders", 0)), b"garbage",
                  makepath=True)  # fmt: skip
        zk.create(znodes.topic_path("junk"), b"{not json")
    assert main(["describe", "--zookeeper", zk_chroot]) == 0
    lines = capsys.readouterr().out.splitlines()
    state = "/brokers/topics/orders/partitions/0/state"
    assert any(
        line.startswith(f"\tUnreadable: Malformed data in znode {state}: ") for line in lines
    )
    assert any(line.startswith("Topic: junk\tunreadable: Malformed data in znode "
                               "/brokers/topics/junk: ") for line in lines)  # fmt: skip
    # Named, it is not "not found": it exists and cannot be read.
    assert main(["describe", "--zookeeper", zk_chroot, "junk", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["missing_topics"] == []
    assert list(report["unreadable_topics"]) == ["junk"]


def test_describe_unknown_topic_and_unreachable_zookeeper_are_one_line(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["describe", "--zookeeper", zk_chroot, "nope"]) == 2
    assert capsys.readouterr().err == "kto describe: error: topics not found: nope\n"
    dead = f"127.0.0.1:{free_port()}"
    assert main(["describe", "--zookeeper", dead, "--timeout", "1"]) == 1  # not reached: 1
    err = capsys.readouterr().err
    assert (
        err.startswith("kto describe: error: cannot connect to ZooKeeper") and err.count("\n") == 1
    )


def test_a_missing_chroot_and_a_dead_zookeeper_say_one_line_and_nothing_else(
    zk_chroot: str, zookeeper_server: ZooKeeperServer
) -> None:
    # In a process of its own: the ZooKeeper client's warnings and connection chatter would
    # reach the terminal there, as they did (a UserWarning, "Connection dropped" lines).
    def kto_describe(connect: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", "describe",
                               "--zookeeper", connect, "--timeout", "2"],
                              capture_output=True, text=True, timeout=60)  # fmt: skip

    missing = kto_describe(f"{zookeeper_server.connect_string}/no-such-chroot")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr == (
        f"kto describe: error: {zookeeper_server.connect_string}/no-such-chroot: the chroot does "
        "not exist in ZooKeeper, so no Kafka cluster keeps its data there (--zookeeper takes "
        "what the brokers' zookeeper.connect says)\n"
    )
    dead = kto_describe(f"127.0.0.1:{free_port()}")
    assert (dead.returncode, dead.stdout) == (1, "")
    assert dead.stderr.startswith("kto describe: error: cannot connect to ZooKeeper at 127.0.0.1:")
    assert dead.stderr.count("\n") == 1, dead.stderr
    assert main(["describe", "--zookeeper", zk_chroot]) == 0  # an empty chroot is a cluster


def test_dev_broker_is_reachable_through_kto(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dev-broker", "--bogus"]) == 2
    assert "kto dev-broker" in capsys.readouterr().err


def test_describe_names_admin_requests_kafkas_controller_will_not_process(
    zk_chroot: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """As Kafka 3.9 leaves them (docs/fidelity.md): a reassignment to a duplicated target kept
    for ever, a preferred election naming a partition that never came online."""
    with cluster_layout(zk_chroot) as zk:
        for topic in ("doubled", "never"):
            zk.create(znodes.topic_path(topic), znodes.encode_topic({0: ReplicaAssignment.of([1])}))
        state = LeaderIsrAndControllerEpoch(LeaderAndIsr(1, (1,)), 1)
        zk.create(znodes.topic_partition_state_path(TopicPartition("doubled", 0)),
                  znodes.encode_partition_state(state), makepath=True)  # fmt: skip
        zk.create(znodes.REASSIGN_PARTITIONS_PATH,
                  znodes.encode_reassignment({TopicPartition("doubled", 0): [1, 1]}))  # fmt: skip
        zk.create(znodes.PREFERRED_REPLICA_ELECTION_PATH, znodes.encode_preferred_replica_election(
            [TopicPartition("never", 0), TopicPartition("doubled", 0)]))  # fmt: skip
    assert main(["describe", "--zookeeper", zk_chroot]) == 0
    lines = capsys.readouterr().out.splitlines()
    stuck = [line for line in lines if line.startswith("Stuck: ")]
    assert stuck == [
        "Stuck: /admin/reassign_partitions: Kafka's controller takes a target it should refuse "
        "(doubled-0 to [1, 1]: the replica list has duplicate brokers) and never removes the "
        "request, so it notices no later reassignment. To clear it: delete "
        "/admin/reassign_partitions, then move the controller (delete /controller) so that it "
        "watches the path again",
        "Stuck: /admin/preferred_replica_election: Kafka's controller fails on a partition that "
        "never came online (never-0: NoSuchElementException) and never deletes the request, so "
        "it notices no later election. To clear it: delete /admin/preferred_replica_election, "
        "then move the controller (delete /controller) so that it watches the path again",
    ]
    assert main(["describe", "--zookeeper", zk_chroot, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [s["partitions"] for s in report["stuck_admin_requests"]] == [["doubled-0"], ["never-0"]]
