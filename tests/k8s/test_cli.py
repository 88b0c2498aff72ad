"""`kto run`'s rebalancing options, as parsed."""

from __future__ import annotations

import argparse

import pytest

from kafka_topic_operator.k8s.cli import build_parser
from kafka_topic_operator.rebalance.spec import EngineType


def parse(*args: str) -> argparse.Namespace:
    return build_parser().parse_args(["--zookeeper", "zk:2181", *args])


def test_every_engine_and_no_default_image_unless_told() -> None:
    args = parse()
    assert args.rebalance is True
    assert args.rebalance_engines == frozenset(EngineType)
    assert args.planner_image is args.planner_service_account is None


def test_the_engines_and_the_planner_image_as_the_chart_passes_them() -> None:
    args = parse("--rebalance-engines", "kubernetes, sparkApplication",
                 "--planner-image", "registry/kto-spark:1",
                 "--planner-service-account", "kto-planner")  # fmt: skip
    assert args.rebalance_engines == {
        EngineType.KUBERNETES,
        EngineType.SPARK_APPLICATION,
    }
    assert args.planner_image == "registry/kto-spark:1"
    assert args.planner_service_account == "kto-planner"
    assert parse("--no-rebalance").rebalance is False


def test_an_unknown_engine_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse("--rebalance-engines", "kubernetes,spark")
    assert exit_.value.code == 2
    assert ("engines are among local, kubernetes, sparkApplication: got 'kubernetes,spark'"
            in capsys.readouterr().err)  # fmt: skip
