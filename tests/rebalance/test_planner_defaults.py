"""The operator's defaults for a planner's spec.engine (kto run --planner-*)."""

from __future__ import annotations

from typing import Any

import pytest

from kafka_topic_operator.rebalance.engines.defaults import (
    Claim,
    PlannerDefaults,
    parse_claim,
    parse_cpu,
    parse_work_dir,
    with_defaults,
)
from kafka_topic_operator.rebalance.spec import EngineSpec, rebalance_spec

# As the Helm chart passes them, installed in namespace kafka.
CHART = PlannerDefaults(
    image="kafka-topic-operator-spark:0.1.0",
    service_account_name="kto-planner",
    work_dir="/var/lib/kto/rebalance",
    volume=Claim("kafka", "kto-plans"),
    executor_cpu_request="250m",
    driver_cpu_request="500m",
)


def engine(**fields: Any) -> EngineSpec:
    return rebalance_spec({"engine": fields}).engine


def test_an_engine_naming_only_its_type_and_size_takes_everything_else_from_the_operator() -> None:
    given = engine(type="kubernetes", executors=2, executorMemory="1Gi")
    assert with_defaults(given, CHART, "kafka") == engine(
        type="kubernetes", executors=2, executorMemory="1Gi",
        image="kafka-topic-operator-spark:0.1.0", serviceAccountName="kto-planner",
        workDir="/var/lib/kto/rebalance", volume="kto-plans", executorCpuRequest="250m",
        driverCpuRequest="500m",
    )  # fmt: skip


def test_what_the_spec_sets_wins() -> None:
    given = engine(type="sparkApplication", image="spark:4", serviceAccountName="mine",
                   workDir="/plans", volume="my-plans", executorCpuRequest="2",
                   driverCpuRequest="1")  # fmt: skip
    assert with_defaults(given, CHART, "kafka") == given


def test_the_default_claim_serves_only_its_namespace_and_only_at_the_default_work_dir() -> None:
    elsewhere = with_defaults(engine(type="kubernetes"), CHART, "payments")
    assert (elsewhere.work_dir, elsewhere.volume) == ("/var/lib/kto/rebalance", None)
    own_dir = with_defaults(engine(type="kubernetes", workDir="/mnt/plans"), CHART, "kafka")
    assert (own_dir.work_dir, own_dir.volume) == ("/mnt/plans", None)


def test_no_defaults_change_nothing_and_the_local_engine_takes_none() -> None:
    remote = engine(type="kubernetes")
    assert with_defaults(remote, PlannerDefaults(), "kafka") == remote
    local = engine(type="local")
    assert with_defaults(local, CHART, "kafka") == local
    assert with_defaults(local, CHART, "kafka").image is None


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_claim, "kto-plans", "expected NAMESPACE/CLAIM, got 'kto-plans'"),
        (parse_claim, "kafka/", "expected NAMESPACE/CLAIM, got 'kafka/'"),
        (parse_claim, "Kafka/plans", "namespace 'Kafka' is not a Kubernetes name"),
        (parse_claim, "kafka/plans/x", "claim 'plans/x' is not a Kubernetes name"),
        (parse_cpu, "0", "expected a positive CPU quantity such as 250m, 0.5 or 2, got '0'"),
        (parse_cpu, "250M", "got '250M'"),
        (parse_work_dir, "plans", "expected an absolute path, got 'plans'"),
    ],
)  # fmt: skip
def test_bad_flags_say_what_is_wrong(parse: Any, text: str, message: str) -> None:
    with pytest.raises(ValueError) as refused:
        parse(text)
    assert message in str(refused.value)


def test_good_flags_parse() -> None:
    assert parse_claim("kafka/kto-plans") == Claim("kafka", "kto-plans")
    assert str(parse_claim("kafka/kto-plans")) == "kafka/kto-plans"
    assert [parse_cpu(c) for c in ("250m", "0.5", "2")] == ["250m", "0.5", "2"]
    assert parse_work_dir("/var/lib/kto") == "/var/lib/kto"
