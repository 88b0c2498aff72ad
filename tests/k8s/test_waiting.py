"""Waiting is said at INFO: the filter on kopf's per-object logger rewrites what kopf logs at
ERROR for a handler that waits, and leaves every real error as it is."""

from __future__ import annotations

import logging

from kafka_topic_operator.k8s.waiting import WaitingIsInfo, waiting


def record(message: str) -> logging.LogRecord:
    return logging.LogRecord("kopf.objects", logging.ERROR, __file__, 1, message, None, None)


def test_a_handler_that_waits_is_info_and_says_it_will_retry() -> None:
    raised = waiting("Topic 'orders' is being deleted", delay=5)
    assert raised.delay == 5
    seen = record(f"Handler 'delete' failed temporarily: {raised}")
    assert WaitingIsInfo().filter(seen)
    assert (seen.levelno, seen.levelname) == (logging.INFO, "INFO")
    assert seen.getMessage() == "Handler 'delete' will retry: Topic 'orders' is being deleted"


def test_a_real_error_stays_an_error() -> None:
    seen = record("Handler 'reconcile' failed temporarily: ZooKeeper is not connected")
    assert WaitingIsInfo().filter(seen)
    assert (seen.levelno, seen.levelname) == (logging.ERROR, "ERROR")
    assert seen.getMessage() == "Handler 'reconcile' failed temporarily: ZooKeeper is not connected"
