"""`kto dev-broker` arguments: usage errors exit 2, startup failures exit 1, one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from kto_dev.devbroker.cli import build_parser, config_from_args, main
from kto_dev.ports import free_port


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--zookeeper", "h:1", "--log-dir", "d"], "--id"),
        (["--zookeeper", "h:1", "--id", "-1", "--log-dir", "d"], "-1 is negative"),
        (["--zookeeper", "h:1", "--id", "x", "--log-dir", "d"], "'x' is not an integer"),
        (
            ["--zookeeper", "h:1", "--id", "1", "--log-dir", "d", "--session-timeout", "0"],
            "0 is not positive",
        ),
        (["--zookeeper", "h:1", "--id", "1", "--log-dir", "d", "--log-level", "loud"], "LOUD"),
    ],
)
def test_usage_errors(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kto dev-broker: ") and fragment in err
    assert err.count("\n") == 1


def test_a_malformed_digest_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = tmp_path / "digest"
    digest.write_text("no-colon")
    argv = ["--zookeeper", "h:1", "--id", "1", "--log-dir", "d", "--zookeeper-digest-file"]
    assert main([*argv, str(digest)]) == 2
    assert "must be 'user:password'" in capsys.readouterr().err


def test_settings_default_to_kafkas() -> None:
    args = build_parser().parse_args(
        ["--zookeeper", "zk:2181/kafka", "--id", "3", "--log-dir", "/data", "--rack", "a"]
    )
    config = config_from_args(args)
    assert (config.zookeeper, config.broker_id, config.log_dir, config.rack) == (
        "zk:2181/kafka",
        3,
        Path("/data"),
        "a",
    )
    assert (config.host, config.port, config.session_timeout) == ("localhost", 9092, 18.0)
    assert config.controlled_shutdown_enable
    assert config.controlled_shutdown_max_retries == 3
    assert config.controlled_shutdown_retry_backoff == 5.0
    assert config.controlled_shutdown_timeout == 30.0


def test_an_unreachable_zookeeper_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--zookeeper", f"127.0.0.1:{free_port()}", "--id", "1", "--log-dir", str(tmp_path)]
    assert main([*argv, "--session-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "cannot connect to ZooKeeper" in err
    assert not (tmp_path / "meta.properties").exists()
