"""Logging for the long-running `kto` commands: Kafka's log line format on stderr, for our own
loggers at the chosen level and for kazoo's warnings (connection loss, session expiry)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"


@contextlib.contextmanager
def process_logging(level: str | int, *others: str) -> Iterator[None]:
    """Our loggers (and the `others`, say kopf's) at `level`, kazoo's at WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    loggers = {
        logging.getLogger("kafka_topic_operator"): level,
        logging.getLogger("kazoo"): "WARNING",
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
