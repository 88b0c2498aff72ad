"""`kto plan` for real: a cluster in a real ZooKeeper with dev brokers on three racks, planned
by the command in its own process with local Spark; bad flags refused before Spark starts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

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
            "brokers 9 to add are not registered in ZooKeeper",
        ),
        (["--brokers", "x"], "--brokers must be comma-separated broker ids: x"),
        (["--goals", "Fastest"], "spec.goals.0: Input should be 'RackAware'"),
        (["--excluded-topics", "("], "not a valid regular expression"),
        (
            ["--mode", "remove-brokers", "--brokers", "0,1,2"],
            "no brokers would be left to hold replicas",
        ),
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
