"""`kto plan` for real: a cluster in a real ZooKeeper with dev brokers on three racks, planned
by the command in its own process with local Spark; partition sizes read from the dev brokers'
log directories; bad flags refused before Spark starts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kto_testing import eventually

from kafka_topic_operator.zk import admin
from kafka_topic_operator.zk.client import ZkClient

pytestmark = [pytest.mark.zookeeper]


def kto_plan(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kafka_topic_operator.cli", "plan", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300)  # fmt: skip


def crowded(zk: ZkClient) -> dict[tuple[str, int], list[int]]:
    """Every replica on brokers 0 and 1, each partition on two racks: broker 2 joined empty."""
    assignment = {}
    for topic in ("orders", "payments", "audit"):
        placed = {p: [p % 2, (p + 1) % 2] for p in range(6)}
        admin.create_topic_with_assignment(zk, topic, placed)
        assignment.update({(topic, p): r for p, r in placed.items()})
    return assignment


@pytest.mark.spark
@pytest.mark.e2e
def test_a_plan_and_its_report_from_the_command_line(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path
) -> None:
    before = crowded(zk)
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", "--report", "plan.html",
                    "--master", "local[1]", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert plan["version"] == 1
    after = dict(before)
    for entry in plan["partitions"]:
        key = (entry["topic"], entry["partition"])
        assert len(entry["replicas"]) == len(set(entry["replicas"])) == len(before[key])
        after[key] = entry["replicas"]
    replicas = Counter(b for r in after.values() for b in r)
    leaders = Counter(r[0] for r in after.values())
    assert sorted(replicas.values()) == [12, 12, 12]  # 36 replicas: the lower bound moves 12
    assert sum(len(set(after[k]) - set(before[k])) for k in before) == 12
    assert sorted(leaders.values()) == [6, 6, 6]
    assert done.stdout.splitlines()[0].startswith("12 replica moves (lower bound 12)")
    assert done.stdout.splitlines()[1].startswith("kafka-reassign-partitions --generate would move")
    assert "round  0 [" in done.stderr
    report = (tmp_path / "plan.html").read_text()
    assert report.startswith("<!DOCTYPE html>") and report.count("<svg") == 2


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--mode", "add-brokers"],
            "brokers is required when mode is add-brokers or remove-brokers",
        ),
        (
            ["--mode", "add-brokers", "--brokers", "9"],
            "brokers 9 to add are not registered (the cluster's brokers: 0, 1, 2)",
        ),
        (["--brokers", "x"], "--brokers must be comma-separated broker ids: x"),
        (["--goals", "Fastest"], "spec.goals.0: Input should be 'RackAware'"),
        (["--excluded-topics", "("], "not a valid regular expression"),
        (
            ["--mode", "remove-brokers", "--brokers", "0,1,2"],
            "no brokers would be left to hold replicas",
        ),
        (
            ["--goals", "ReplicaDistribution,DiskUsageDistribution"],
            "the DiskUsageDistribution goal needs partition sizes, and none are known",
        ),
        (["--sizes", "absent.json"], "absent.json: No such file or directory"),
        (["--log-dirs", "nowhere"], "nowhere: no such directory"),
    ],
)
def test_bad_flags_are_refused_with_the_reason(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path, flags: list[str], message: str
) -> None:
    crowded(zk)
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", *flags, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("kto plan: ") and message in done.stderr, done.stderr
    assert not (tmp_path / "plan.json").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--mode", "remove-brokers", "--brokers", "1,2"],
            "partition audit-0 cannot keep replication factor 2: only 1 broker remains after "
            "removing 1, 2 (and 17 other partitions)",
        ),
        (
            ["--mode", "remove-brokers", "--brokers", "1", "--excluded-topics", "pay.*|audit"],
            "topic audit is excluded from moves but has replicas on broker 1, which is being "
            "removed",
        ),
        (
            ["--goals", "RackAware,ReplicaCapacity", "--max-replicas-per-broker", "11"],
            "the 36 replicas do not fit 3 brokers of at most 11 replicas each "
            "(maxReplicasPerBroker)",
        ),
    ],
)
def test_hard_goals_no_plan_can_keep_are_refused_in_one_line_and_nothing_is_written(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path, flags: list[str], message: str
) -> None:
    crowded(zk)
    work = tmp_path / "work"  # tmp_path holds the dev brokers' log directories
    work.mkdir()
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", *flags, cwd=work)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"kto plan: {message}\n")
    assert list(work.iterdir()) == []


def test_a_reassignment_in_progress_is_not_planned_over(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path
) -> None:
    from kafka_topic_operator.kafka.topic_partition import TopicPartition

    crowded(zk)
    admin.reassign_partitions(zk, {TopicPartition("orders", 0): [2, 0]})  # no controller to run it
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "kto plan: a partition reassignment is in progress (orders-0): plan once it completes"
    )


def test_a_bad_sizes_file_is_refused_naming_the_entry(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, tmp_path: Path
) -> None:
    crowded(zk)
    (tmp_path / "sizes.json").write_text(
        '{"partitions": [{"topic": "orders", "partition": 0, "sizeBytes": 5}, '
        '{"topic": "orders", "partition": 1, "sizeBytes": "5"}]}'
    )
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", "--sizes", "sizes.json",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "kto plan: sizes.json: partitions[1]: sizeBytes must be a whole number >= 0, not '5'"
    )


@pytest.fixture
def controller(zk_chroot: str) -> Iterator[None]:
    """This project's controller, so that the dev brokers are told to host their replicas."""
    from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController

    running = KafkaController(ControllerConfig(zk_chroot, broker_id=100, session_timeout=4.0,
                                               auto_leader_rebalance_enable=False))  # fmt: skip
    running.start()
    yield
    running.stop()


def hosted(zk: ZkClient, log_dirs: Path) -> dict[tuple[str, int], list[int]]:
    """crowded()'s cluster once every replica has its directory and every partition a leader;
    each replica then holds data: its leader 1000 x (partition + 1) bytes, followers other
    amounts (more, here: a follower not yet truncated to its leader's log), so that only the
    leader's replica gives the partition's size."""
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    before = crowded(zk)

    def ready() -> bool:
        dirs = all((log_dirs / f"broker-{b}" / f"{t}-{p}").is_dir()
                   for (t, p), replicas in before.items() for b in replicas)  # fmt: skip
        topics = read_cluster(zk).topics
        return dirs and all(topics[t].partitions[p].leader >= 0 for t, p in before)

    eventually(ready, "every replica hosted and led")
    for (t, p), replicas in before.items():
        for i, b in enumerate(replicas):  # the first replica leads
            segment = log_dirs / f"broker-{b}" / f"{t}-{p}" / "00000000000000000000.log"
            segment.write_bytes(b"x" * (1000 * (p + 1) + 10 * i))
    return before


def test_partition_sizes_are_the_leaders_replicas_in_the_dev_brokers_log_directories(
    zk: ZkClient, dev_brokers: None, controller: None, tmp_path: Path
) -> None:
    from kafka_topic_operator.kafka.topic_partition import TopicPartition
    from kafka_topic_operator.rebalance.inputs import leaders, planning_input
    from kafka_topic_operator.rebalance.sizes import read_partition_sizes
    from kafka_topic_operator.rebalance.spec import rebalance_spec
    from kafka_topic_operator.zk.snapshot_reader import read_cluster

    before = hosted(zk, tmp_path)
    snapshot = read_cluster(zk)
    dirs = [tmp_path / f"broker-{b}" for b in (0, 1, 2)]
    sizes = read_partition_sizes(dirs, leaders(snapshot))
    assert sizes == {TopicPartition(t, p): 1000 * (p + 1) for t, p in before}
    spec = rebalance_spec({"goals": ["RackAware", "ReplicaDistribution", "DiskUsageDistribution"]})
    request = planning_input(snapshot, spec, sizes)
    assert request.sizes == sizes and request.swap_goals == ("DiskUsageDistribution",)


@pytest.mark.spark
@pytest.mark.e2e
def test_a_plan_balancing_bytes_from_the_log_directories(
    zk: ZkClient, zk_chroot: str, dev_brokers: None, controller: None, tmp_path: Path
) -> None:
    before = hosted(zk, tmp_path)
    dirs = [str(tmp_path / f"broker-{b}") for b in (0, 1, 2)]
    done = kto_plan("--zookeeper", zk_chroot, "--output", "plan.json", "--log-dirs", *dirs,
                    "--goals", "RackAware,ReplicaDistribution,LeaderDistribution,"
                    "DiskUsageDistribution", "--master", "local[1]", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    after = dict(before)
    for entry in json.loads((tmp_path / "plan.json").read_text())["partitions"]:
        after[entry["topic"], entry["partition"]] = entry["replicas"]
    size = {key: 1000 * (key[1] + 1) for key in before}
    moved = sum(size[k] * len(set(after[k]) - set(before[k])) for k in before)
    held: Counter[int] = Counter()
    for key, replicas in after.items():
        held.update({b: size[key] for b in replicas})
    mean = sum(held.values()) / 3
    assert all(abs(held[b] - mean) <= 0.09 * mean for b in (0, 1, 2))
    from kafka_topic_operator.rebalance.results.report import human_bytes

    assert f"leader moves, {human_bytes(moved)} to move, balance" in done.stdout.splitlines()[0]


def test_the_progress_bar_shows_each_phase_and_bytes_for_the_disk_phase(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kafka_topic_operator.cli.plan import _Bar
    from kafka_topic_operator.rebalance.spark.planner import RoundReport

    bar = _Bar()
    bar(RoundReport(0, 40, 30, 0.5))
    bar(RoundReport(1, 10, 10, 0.25))
    bar(RoundReport(0, 4096, 1024, 1.0, unit="bytes"))  # a new phase starts a new bar
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "round  0 [######################........]  75% 30 placed in 0.5 s",
        "round  1 [##############################] 100% 10 placed in 0.2 s",
        "round  0 [########......................]  25% 1.0 KiB placed in 1.0 s",
    ]
