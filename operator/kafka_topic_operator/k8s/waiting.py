"""Waiting is not an error. A handler that waits for Kafka (a topic's partitions being created,
a deletion in progress or held by offline brokers) raises `waiting(...)`: a kopf TemporaryError,
which kopf logs at ERROR ("Handler 'delete' failed temporarily: ...") and posts as a Warning
event. `WaitingIsInfo`, on kopf's per-object logger, makes those lines INFO ("Handler 'delete'
will retry: ...") before any handler sees them, so the real errors stand out."""

from __future__ import annotations

import logging

import kopf

MARK = "waiting: "
KOPF_SAYS = "failed temporarily: "


def waiting(message: str, delay: float) -> kopf.TemporaryError:
    return kopf.TemporaryError(MARK + message, delay=delay)


class WaitingIsInfo(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        handler, said, why = text.partition(KOPF_SAYS + MARK)
        if said:
            record.msg, record.args = f"{handler.rstrip()} will retry: {why}", ()
            record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        return True


def install() -> None:
    """On kopf's per-object logger, whose records its event poster handles too."""
    logging.getLogger("kopf.objects").addFilter(WaitingIsInfo())
