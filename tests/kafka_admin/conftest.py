"""Shared by the Admin API backend's tests.

kafka-python is imported through the operator's package first, which silences the deprecation
warning its import raises on Python 3.11 (the tests turn warnings into errors).

kafka-python 3.0.12 leaves the socket of a refused connection open, for the garbage collector to
close: it raises from its connect loop without closing it, and the exception keeps the frame
that holds it. The tests that refuse connections (a stopped broker, an unreachable cluster)
ignore the ResourceWarning of that collection (their module's mark), and each module collects
what is left before it ends, so that no later test (where warnings are errors) meets it.
kafka-python also logs each refused connection at ERROR with the exception as an argument, and
pytest keeps the records of every test until the session ends, with the exceptions and their
sockets: its log is kept quiet here."""

from __future__ import annotations

import gc
import logging
import warnings
from collections.abc import Iterator

import pytest

import kafka_topic_operator.kafka_admin  # noqa: F401


@pytest.fixture(autouse=True, scope="module")
def refused_sockets_collected() -> Iterator[None]:
    kafka_python = logging.getLogger("kafka")
    level = kafka_python.level
    kafka_python.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        kafka_python.setLevel(level)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ResourceWarning)
            gc.collect()
