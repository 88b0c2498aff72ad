"""`kto` end to end: real output for good input, one line on stderr and status 2 for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kafka_topic_operator import __version__
from kafka_topic_operator.cli import main

KTO = Path(sys.executable).parent / "kto"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> object:
    status, out, err = run(capsys, *argv, "--output", "json")
    assert (status, err) == (0, "")
    return json.loads(out)


def assert_one_line_error(result: tuple[int, str, str], *fragments: str) -> None:
    status, out, err = result
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


# ---- kto assign -----------------------------------------------------------------------------


def test_assign_rack_unaware_matches_kafkas_javadoc_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3,4", "--partitions", "10",
        "--replication-factor", "3", "--start-index", "0",
    )  # fmt: skip
    assert got == {
        "0": [0, 1, 2], "1": [1, 2, 3], "2": [2, 3, 4], "3": [3, 4, 0], "4": [4, 0, 1],
        "5": [0, 2, 3], "6": [1, 3, 4], "7": [2, 4, 0], "8": [3, 0, 1], "9": [4, 1, 2],
    }  # fmt: skip


def test_assign_rack_aware_matches_admin_rack_aware_test(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3,4,5",
        "--racks", "0:rack1,1:rack3,2:rack3,3:rack2,4:rack2,5:rack1",
        "--partitions", "7", "--replication-factor", "3", "--start-index", "0",
        "--start-partition", "0",
    )  # fmt: skip
    assert got == {
        "0": [0, 3, 1], "1": [3, 1, 5], "2": [1, 5, 4], "3": [5, 4, 2],
        "4": [4, 2, 0], "5": [2, 0, 3], "6": [0, 4, 2],
    }  # fmt: skip


def test_assign_existing_follows_the_add_partitions_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3", "--existing", '{"0":[2,3,0,1]}',
        "--partitions", "7",
    )  # fmt: skip
    assert got == {
        "0": [2, 3, 0, 1], "1": [3, 2, 0, 1], "2": [0, 3, 1, 2], "3": [1, 0, 2, 3],
        "4": [2, 3, 0, 1], "5": [3, 0, 1, 2], "6": [0, 1, 2, 3],
    }  # fmt: skip


def test_assign_existing_with_matching_replication_factor(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3", "--existing", '{"0":[1,2]}',
        "--partitions", "3", "--replication-factor", "2",
    )  # fmt: skip
    assert got == {"0": [1, 2], "1": [2, 0], "2": [3, 1]}


def test_assign_manual_placement_in_kafka_topics_syntax(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3,4,5", "--replica-assignment", "5:4,3:2,1:0"
    )
    assert got == {"0": [5, 4], "1": [3, 2], "2": [1, 0]}


def test_assign_manual_growth_drops_the_existing_entries(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2,3,4,5", "--existing", '{"0":[0,1],"1":[1,2]}',
        "--replica-assignment", "5:3,3:1,4:2", "--partitions", "3",
    )  # fmt: skip
    assert got == {"0": [0, 1], "1": [1, 2], "2": [4, 2]}


def test_assign_table_shows_partitions_and_brokers(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(
        capsys, "assign", "--brokers", "0,1,2", "--partitions", "3", "--replication-factor", "2",
        "--start-index", "0",
    )  # fmt: skip
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "3 partitions, replication factor 2, over 3 brokers (rack-unaware)"
    assert lines[2].split() == ["Partition", "Leader", "Replicas"]
    assert lines[3].split() == ["0", "0", "0,1"]
    broker_header = lines.index(next(line for line in lines if line.startswith("Broker")))
    assert lines[broker_header + 1].split() == ["0", "1", "1", "2", "0", "2"]


def test_assign_random_start_reports_both_draws(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        capsys, "assign", "--brokers", "0,1,2", "--partitions", "3", "--replication-factor", "2"
    )
    assert status == 0
    assert "random start index" in out and "replica shift" in out


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["--partitions", "10", "--replication-factor", "6"],
         ["InvalidReplicationFactorException",
          "Replication factor: 6 larger than available brokers: 5."]),
        (["--partitions", "10", "--replication-factor", "0"],
         ["Replication factor must be larger than 0."]),
        (["--partitions", "0", "--replication-factor", "1"],
         ["Number of partitions must be larger than 0."]),
        (["--partitions", "x", "--replication-factor", "1"], ["--partitions", "'x'"]),
        (["--partitions", "3"], ["--replication-factor"]),
        (["--racks", "0:a,1:b", "--partitions", "3", "--replication-factor", "2"],
         ["Not all brokers have rack information."]),
        (["--racks", "9:a", "--partitions", "3", "--replication-factor", "2"],
         ["broker 9 is not in --brokers"]),
        (["--racks", "0a", "--partitions", "3", "--replication-factor", "2"], ["'0a'"]),
        (["--existing", "{", "--partitions", "3"], ["--existing", "JSON"]),
        (["--existing", '{"1":[0,1]}', "--partitions", "3"],
         ["partition id 0 is missing"]),
        (["--existing", '{"0":[0,1]}', "--partitions", "1"],
         ["can only be increased"]),
        (["--existing", '{"0":[0,1]}', "--partitions", "3", "--replication-factor", "3"],
         ["does not match partition 0's replication factor 2"]),
        (["--existing", '{"0":[0,1]}', "--partitions", "3", "--start-index", "1"],
         ["cannot be combined with --existing"]),
        (["--replica-assignment", "0:0"], ["Partition replica lists may not contain duplicate"]),
        (["--replica-assignment", "0:1,2"], ["different replication factor"]),
        (["--replica-assignment", "0:9"], ["BrokerNotAvailableException"]),
    ],
)  # fmt: skip
def test_assign_errors_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], fragments: list[str]
) -> None:
    assert_one_line_error(run(capsys, "assign", "--brokers", "0,1,2,3,4", *argv), *fragments)


def test_assign_rejects_duplicate_brokers(capsys: pytest.CaptureFixture[str]) -> None:
    result = run(capsys, "assign", "--brokers", "0,1,1", "--partitions", "1",
                 "--replication-factor", "1")  # fmt: skip
    assert_one_line_error(result, "listed twice: 1")


def test_assign_safe_mode_drops_partial_racks(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(
        capsys, "assign", "--brokers", "0,1,2", "--racks", "0:a", "--rack-aware-mode", "safe",
        "--partitions", "3", "--replication-factor", "2", "--start-index", "0",
    )  # fmt: skip
    assert got == {"0": [0, 1], "1": [1, 2], "2": [2, 0]}


# ---- kto partition-for / consumers ----------------------------------------------------------


def test_partition_for_is_deterministic_and_in_range(capsys: pytest.CaptureFixture[str]) -> None:
    got = run_json(capsys, "partition-for", "--partitions", "12", "a", "b", "order-42")
    assert isinstance(got, dict)
    assert set(got) == {"a", "b", "order-42"}
    assert all(isinstance(p, int) and 0 <= p < 12 for p in got.values())
    assert got == run_json(capsys, "partition-for", "--partitions", "12", "a", "b", "order-42")


def test_consumers_by_count_and_by_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_json(
        capsys, "consumers", "--partitions", "3", "--members", "2", "--strategy", "range"
    ) == {"consumer-0": [0, 1], "consumer-1": [2]}
    assert run_json(
        capsys, "consumers", "--partitions", "3", "--members", "b,a", "--strategy", "roundrobin"
    ) == {"a": [0, 2], "b": [1]}


def test_consumers_bad_members_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(run(capsys, "consumers", "--partitions", "3", "--members", "a,a"), "a")


def test_unknown_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert_one_line_error(run(capsys, "frobnicate"), "kto: error:", "'frobnicate'")


def test_kto_alone_shows_its_help_and_knows_its_version() -> None:
    alone = subprocess.run([str(KTO)], capture_output=True, text=True, check=False)
    assert (alone.returncode, alone.stderr) == (0, "")
    assert alone.stdout.startswith("usage: kto ") and "plan" in alone.stdout
    version = subprocess.run([str(KTO), "--version"], capture_output=True, text=True, check=False)
    assert (version.returncode, version.stdout) == (0, f"kto {__version__}\n")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["consumers", "--partitions", "-1", "--members", "2"],
         "kto consumers: error: argument --partitions: -1 is not between 1 and 2147483647"),
        (["consumers", "--partitions", "x", "--members", "2"],
         "kto consumers: error: argument --partitions: 'x' is not an integer"),
        (["consumers", "--partitions", "3", "--members", "0"],
         "kto consumers: error: --members: a count must be at least 1, not 0"),
        (["partition-for", "--partitions", "0", "k"],
         "kto partition-for: error: argument --partitions: 0 is not between 1 and 2147483647"),
    ],
)  # fmt: skip
def test_bad_counts_name_the_flag(
    capsys: pytest.CaptureFixture[str], argv: list[str], said: str
) -> None:
    assert run(capsys, *argv) == (2, "", said + "\n")


def test_console_script_is_installed() -> None:
    result = subprocess.run([str(KTO), "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0
    assert "assign" in result.stdout and "partition-for" in result.stdout
