"""The planning job on the shared local Spark session: its input and output files, the modes,
excluded topics, the capacity goal and determinism."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance import job
from kafka_topic_operator.rebalance.algorithms.bounds import move_lower_bound, spread
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kafka_topic_operator.rebalance.planning_io import (
    PlanningError,
    PlanningInput,
    PlanningOutput,
    ProposalFailed,
    check_sizes,
)
from kafka_topic_operator.rebalance.results.summary import broker_bytes
from kafka_topic_operator.rebalance.spark.session import session_conf
from kto_dev.yardsticks.samples import grown_cluster

pytestmark = [
    pytest.mark.spark,
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def grown(seed: int, old: int, new: int) -> dict[TopicPartition, tuple[int, ...]]:
    model = grown_cluster(seed, old, new, topics=(3, 8), partitions=(1, 12))[0]
    return dict(model.assignment)


def after_of(
    before: dict[TopicPartition, tuple[int, ...]], output: PlanningOutput
) -> dict[TopicPartition, tuple[int, ...]]:
    after = dict(before)
    for change in output.changes:
        assert after[change.partition] == change.before
        after[change.partition] = change.after
    return after


def test_a_full_plan_moves_the_lower_bound_and_writes_kafkas_json(
    spark: Any, tmp_path: Path
) -> None:
    before = grown(1, 5, 2)
    request = PlanningInput(before, brokers=tuple(range(7)))
    output = job.plan(spark, request, tmp_path)
    after = after_of(before, output)
    model = ClusterModel(before)
    assert output.result.replica_moves == move_lower_bound(model.replica_counts(), range(7))
    assert output.result.replica_moves == output.result.replica_lower_bound
    assert spread(model.replica_counts(after), range(7)) <= 1
    assert spread(model.leader_counts(after), range(7)) <= 1
    assert output.result.balance_after == 100.0 > output.result.balance_before
    generated = output.result.generate_replica_moves
    assert generated is not None and generated > 2 * output.result.replica_moves
    for tp, replicas in after.items():
        assert len(replicas) == len(before[tp]) == len(set(replicas))
    job.write_output(output, tmp_path / "out")
    written = json.loads((tmp_path / "out" / "plan.json").read_text())
    assert written == {
        "version": 1,
        "partitions": [
            {
                "topic": c.partition.topic,
                "partition": c.partition.partition,
                "replicas": list(c.after),
            }
            for c in output.changes
        ],
    }
    assert job.read_changes(tmp_path / "out") == output.changes
    status = json.loads((tmp_path / "out" / "result.json").read_text())
    assert status["optimizationResult"] == output.result.to_status()
    # The same input plans the same moves.
    assert job.plan(spark, request, tmp_path).changes == output.changes


def test_excluded_topics_never_change(spark: Any, tmp_path: Path) -> None:
    before = grown(2, 5, 2)
    request = PlanningInput(before, brokers=tuple(range(7)), excluded_topics="t[01]")
    output = job.plan(spark, request, tmp_path)
    assert output.changes
    assert not [c for c in output.changes if c.partition.topic in ("t0", "t1")]


def test_adding_brokers_moves_replicas_only_onto_them(spark: Any, tmp_path: Path) -> None:
    before = grown(3, 6, 2)
    request = PlanningInput(before, brokers=tuple(range(8)), receivers=(6, 7))
    output = job.plan(spark, request, tmp_path)
    gained = {b for c in output.changes for b in set(c.after) - set(c.before)}
    assert gained == {6, 7}
    counts = ClusterModel(after_of(before, output)).replica_counts()
    assert abs(counts[6] - counts[7]) <= 1 and counts[6] >= min(counts[b] for b in range(6)) - 1


def test_removing_a_broker_empties_it(spark: Any, tmp_path: Path) -> None:
    before = grown(4, 6, 0)
    request = PlanningInput(before, brokers=(0, 1, 2, 3, 4))
    output = job.plan(spark, request, tmp_path)
    counts = ClusterModel(after_of(before, output)).replica_counts()
    assert counts[5] == 0 and spread(counts, range(5)) <= 1


def test_a_capacity_below_the_balanced_count_is_refused_before_planning(tmp_path: Path) -> None:
    before = {TopicPartition("t", p): (p % 7,) for p in range(100)}
    request = PlanningInput(before, brokers=tuple(range(7)), max_replicas_per_broker=14)
    with pytest.raises(ProposalFailed) as info:
        job.plan(None, request, tmp_path)  # refused before Spark is asked anything
    assert str(info.value) == (
        "the 100 replicas do not fit 7 brokers of at most 14 replicas each (maxReplicasPerBroker)"
    )
    assert info.value.reason == "ProposalFailed"
    assert not list(tmp_path.iterdir())


def test_the_input_file_round_trips_and_bad_files_are_refused() -> None:
    request = PlanningInput(
        {TopicPartition("a", 0): (1, 2)}, brokers=(1, 2, 3), racks={1: "x", 2: "y", 3: "z"},
        receivers=(3,), excluded_topics="b.*", max_replicas_per_broker=4, balance_leaders=False,
        removed=(4,),
    )  # fmt: skip
    assert PlanningInput.from_json(json.loads(json.dumps(request.to_json()))) == request
    with pytest.raises(PlanningError, match="unsupported planning input version 7"):
        PlanningInput.from_json({"version": 7})
    with pytest.raises(PlanningError, match="malformed planning input"):
        PlanningInput.from_json({"version": 1, "brokers": [1], "partitions": [{"topic": "a"}]})


# -- how the job is launched: by the local engine, or by spark-submit ------------------------------


def test_a_local_session_binds_loopback_and_a_submitted_one_keeps_spark_submits_address() -> None:
    local = session_conf(shuffle_partitions=4, local=True)
    submitted = session_conf(shuffle_partitions=4, local=False)
    assert local["spark.driver.host"] == local["spark.driver.bindAddress"] == "127.0.0.1"
    # In cluster mode the driver's address is its pod's: executors must reach it.
    assert not {k for k in submitted if k.startswith("spark.driver.")}
    assert submitted == {k: v for k, v in local.items() if not k.startswith("spark.driver.")}
    assert submitted["spark.sql.shuffle.partitions"] == "4"


def test_spark_submit_is_recognised_by_the_gateway_it_hands_over() -> None:
    assert job.launched_by_spark_submit({"PYSPARK_GATEWAY_PORT": "41233"})
    assert not job.launched_by_spark_submit({"PYSPARK_PYTHON": "python3"})


def test_an_unreadable_input_is_reported_in_the_directory(tmp_path: Path) -> None:
    bad = tmp_path / "input.json"
    bad.write_text(json.dumps({"version": 7}))
    assert job.main(["--input", str(bad), "--output", str(tmp_path / "out")]) == 2
    failure = json.loads((tmp_path / "out" / job.FAILURE_FILE).read_text())
    assert failure == {"reason": "CannotPlan",
                       "message": "unsupported planning input version 7"}  # fmt: skip


def test_hard_goals_no_plan_can_keep_are_reported_in_the_directory(tmp_path: Path) -> None:
    request = PlanningInput({TopicPartition("orders", 0): (0, 1, 2)}, brokers=(0, 1),
                            removed=(2,))  # fmt: skip
    (tmp_path / "input.json").write_text(json.dumps(request.to_json()))
    assert job.main(["--input", str(tmp_path / "input.json"), "--output", str(tmp_path)]) == 2
    failure = json.loads((tmp_path / job.FAILURE_FILE).read_text())
    assert failure == {
        "reason": "ProposalFailed",
        "message": "partition orders-0 cannot keep replication factor 3: only 2 brokers remain "
        "after removing 2",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == ["error.json", "input.json"]


def test_a_crash_is_reported_in_the_directory_and_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / job.FAILURE_FILE).write_text("stale")  # from an earlier run: never believed

    def crash(_: Any) -> int:
        raise MemoryError("Java heap space")

    monkeypatch.setattr(job, "_run", crash)
    with pytest.raises(MemoryError):
        job.main(["--input", str(tmp_path / "in.json"), "--output", str(tmp_path)])
    failure = json.loads((tmp_path / job.FAILURE_FILE).read_text())
    assert failure == {"reason": "PlanningFailed", "message": "MemoryError: Java heap space"}


@pytest.mark.e2e
def test_under_spark_submit_the_master_is_spark_submits(tmp_path: Path) -> None:
    """As the driver of the kubernetes and sparkApplication engines runs it: spark-submit starts
    the JVM with its master and runs the job file, with no --master of its own."""
    assignment = {TopicPartition("orders", p): (p % 2, (p + 1) % 2) for p in range(6)}
    (tmp_path / "input.json").write_text(
        json.dumps(PlanningInput(assignment, brokers=(0, 1, 2)).to_json())
    )
    submit = Path(sys.executable).with_name("spark-submit")  # pyspark's, in this environment
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(submit), "--master", "local[1]", "--conf", "spark.driver.host=127.0.0.1",
         "--conf", "spark.ui.enabled=false", str(Path(job.__file__ or "")),
         "--input", str(tmp_path / "input.json"), "--output", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    # (spark-submit's PythonRunner sends the Python process's stderr to its own stdout.)
    assert re.search(r"^planned 4 replica moves and \d+ leader moves in .* on local\[1\]$",
                     done.stdout, re.MULTILINE), done.stdout  # fmt: skip
    result = json.loads((tmp_path / "out" / "result.json").read_text())
    assert result["optimizationResult"]["replicaMoves"] == 4
    assert not (tmp_path / "out" / job.FAILURE_FILE).exists()


def sized(before: dict[TopicPartition, tuple[int, ...]]) -> dict[TopicPartition, int]:
    return {tp: 1000 * (1 + (tp.partition * 7 + len(tp.topic)) % 13) for tp in before}


def test_with_sizes_the_data_to_move_is_counted_and_the_swap_goals_run_in_order(
    spark: Any, tmp_path: Path
) -> None:

    before = grown(5, 5, 2)
    sizes = sized(before)
    goals = ("TopicReplicaDistribution", "DiskUsageDistribution")
    request = PlanningInput(before, brokers=tuple(range(7)), swap_goals=goals, sizes=sizes)
    output = job.plan(spark, request, tmp_path)
    after = after_of(before, output)
    moved = sum(sizes[tp] * len(set(after[tp]) - set(before[tp])) for tp in after)
    assert output.result.data_to_move_bytes == moved > 0
    assert output.result.to_status()["dataToMoveBytes"] == moved
    # Each broker's bytes before and after, summed by Spark, are the replicas' sizes it holds.
    held = {b.broker: (b.bytes_before, b.bytes_after) for b in output.result.brokers}
    before_bytes, after_bytes = broker_bytes(before, sizes), broker_bytes(after, sizes)
    assert held == {b: (before_bytes.get(b, 0), after_bytes.get(b, 0)) for b in range(7)}
    phases = [r["phase"] for r in output.rounds]
    assert phases.index("topics") < phases.index("disk") < phases.index("leaders")
    model = ClusterModel(before)
    assert spread(model.replica_counts(after), range(7)) <= 1  # the count balance kept
    assert output.result.replica_moves >= move_lower_bound(model.replica_counts(), range(7))
    # The snapshot carries the sizes.
    snapshot = spark.read.parquet(str(tmp_path / "snapshot.parquet"))
    by_partition = {(r.topic, r.partition): r.size for r in snapshot.collect()}
    assert by_partition == {(tp.topic, tp.partition): s for tp, s in sizes.items()}


def test_without_sizes_no_data_to_move_is_said(spark: Any, tmp_path: Path) -> None:
    before = {TopicPartition("a", p): (0, 1) for p in range(4)}
    output = job.plan(spark, PlanningInput(before, brokers=(0, 1, 2)), tmp_path)
    assert output.result.data_to_move_bytes is None
    assert "dataToMoveBytes" not in output.result.to_status()
    assert all(b.bytes_before is None and b.bytes_after is None for b in output.result.brokers)


def test_disk_balance_needs_every_partitions_size() -> None:
    before = {TopicPartition("a", p): (0, 1) for p in range(7)}
    disk = PlanningInput(before, brokers=(0, 1, 2), swap_goals=("DiskUsageDistribution",))
    with pytest.raises(PlanningError) as error:
        check_sizes(disk)
    assert str(error.value) == (
        "the DiskUsageDistribution goal needs partition sizes, and none are known (a "
        "KafkaRebalance reads them from the ConfigMap spec.partitionSizes names; kto plan with "
        "--sizes FILE or --log-dirs DIR)"
    )
    partial = PlanningInput(before, brokers=(0, 1, 2), sizes={TopicPartition("a", 3): 1})
    with pytest.raises(PlanningError) as error:
        check_sizes(partial)
    assert str(error.value) == (
        "partition sizes are missing for 6 partitions (a-0, a-1, a-2, a-4, a-5 ...)"
    )
    check_sizes(PlanningInput(before, brokers=(0, 1, 2)))  # no sizes, no disk goal


def test_sizes_and_swap_goals_round_trip_and_bad_ones_are_refused() -> None:
    request = PlanningInput(
        {TopicPartition("a", 0): (1, 2), TopicPartition("a", 1): (2, 3)}, brokers=(1, 2, 3),
        swap_goals=("DiskUsageDistribution", "TopicReplicaDistribution"),
        sizes={TopicPartition("a", 0): 5, TopicPartition("a", 1): 0},
    )  # fmt: skip
    data = json.loads(json.dumps(request.to_json()))
    assert data["partitions"][0]["sizeBytes"] == 5
    assert PlanningInput.from_json(data) == request
    unsized = PlanningInput({TopicPartition("a", 0): (1,)}, brokers=(1,))
    assert PlanningInput.from_json(unsized.to_json()) == unsized
    assert "sizeBytes" not in unsized.to_json()["partitions"][0]
    with pytest.raises(PlanningError, match="unknown swap goal ReplicaDistribution"):
        PlanningInput.from_json({**data, "swapGoals": ["ReplicaDistribution"]})
    with pytest.raises(PlanningError, match="malformed planning input: KeyError"):
        PlanningInput.from_json({**data, "partitions": [{"topic": "a", "partition": 0,
                                                             "replicas": [1]}]})  # fmt: skip


def test_a_removal_empties_the_broker_even_above_the_even_counts(
    spark: Any, tmp_path: Path
) -> None:
    # Two racks, a = {0, 2} and b = {1, 3}; removing 2 leaves rack a to broker 0 alone, which
    # already holds its even share: 2's replicas can only go there. Found on real Kafka, where
    # the plan stalled with them on broker 2 and was carried out as if the drain had worked.
    t = "t"
    before = {TopicPartition(t, 0): (0, 1), TopicPartition(t, 1): (0, 3),
              TopicPartition(t, 2): (0, 1), TopicPartition(t, 3): (0, 3),
              TopicPartition(t, 4): (2, 1), TopicPartition(t, 5): (2, 3)}  # fmt: skip
    racks = {0: "a", 1: "b", 2: "a", 3: "b"}
    output = job.plan(spark, PlanningInput(before, brokers=(0, 1, 3), racks=racks), tmp_path)
    after = after_of(before, output)
    assert 2 not in ClusterModel(after).replica_counts()
    assert all(sorted(racks[b] for b in replicas) == ["a", "b"] for replicas in after.values())
    assert output.result.unbalanced  # broker 0 ends above the even count, and says so


def test_a_removal_that_cannot_empty_the_broker_is_refused(spark: Any, tmp_path: Path) -> None:
    before = {TopicPartition("keep", 0): (2, 1), TopicPartition("keep", 1): (1, 2),
              TopicPartition("move", 0): (2, 0)}  # fmt: skip
    request = PlanningInput(before, brokers=(0, 1), excluded_topics="keep", removed=(2,))
    with pytest.raises(ProposalFailed) as error:
        job.plan(spark, request, tmp_path)
    assert str(error.value) == (
        "topic keep is excluded from moves but has replicas on broker 2, which is being removed"
    )
