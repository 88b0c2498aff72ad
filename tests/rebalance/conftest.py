"""One local SparkSession for every Spark test: starting one costs seconds."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from kafka_topic_operator.rebalance.spark.session import local_session

    session = local_session("kto-tests", master="local[2]", shuffle_partitions=4)
    yield session
    session.stop()
    gc.collect()


@pytest.fixture(autouse=True)
def collect_spark_sockets(request: pytest.FixtureRequest) -> Iterator[None]:
    """PySpark leaves the sockets of its Python-JVM exchanges to the garbage collector: they
    are collected before a Spark test ends, so that their warnings are never reported against
    whatever test runs next (the Spark tests ignore them)."""
    yield
    if request.node.get_closest_marker("spark") is not None:
        gc.collect()
