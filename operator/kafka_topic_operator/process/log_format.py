"""Logging for the long-running `kto` commands: Kafka's log line format on stderr, for our own
loggers at the chosen level and for kazoo's warnings (connection loss, session expiry)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


class KafkaStyleFormatter(logging.Formatter):
    """LOG_FORMAT; a line about a Kubernetes object (kopf's records carry it as `k8s_ref`)
    names the object first, as kopf's own formatter does: "Handler 'delete' succeeded" alone
    does not say for which resource."""

    def __init__(self) -> None:
        super().__init__(LOG_FORMAT)

    def formatMessage(self, record: logging.LogRecord) -> str:
        ref = getattr(record, "k8s_ref", None)
        if not isinstance(ref, dict) or not ref.get("name"):
            return super().formatMessage(record)
        namespace, name = ref.get("namespace"), ref["name"]
        prefix = f"[{namespace}/{name}]" if namespace else f"[{name}]"
        return LOG_FORMAT % {**record.__dict__, "message": f"{prefix} {record.message}"}


@contextlib.contextmanager
def process_logging(level: str | int, *others: str) -> Iterator[None]:
    """Our loggers (and the `others`, say kopf's) at `level`, kazoo's at WARNING, kafka-python's
    at CRITICAL (it logs an error per refused connection while brokers are away; the Admin API
    backend says once what failed, and status says KafkaUnavailable)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KafkaStyleFormatter())
    loggers = {
        logging.getLogger("kafka_topic_operator"): level,
        logging.getLogger("kazoo"): "WARNING",
        logging.getLogger("kafka"): "CRITICAL",
        **{logging.getLogger(name): level for name in others},
    }
    previous = {logger: logger.level for logger in loggers}
    for logger, logger_level in loggers.items():
        logger.addHandler(handler)
        logger.setLevel(logger_level)
    try:
        yield
    finally:
        for logger, logger_level in previous.items():
            logger.removeHandler(handler)
            logger.setLevel(logger_level)
