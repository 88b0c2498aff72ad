"""The long-running commands' log lines: Kafka's format, and the resource named first on a line
kopf logs about one."""

from __future__ import annotations

import logging
import re

from kafka_topic_operator.process.log_format import KafkaStyleFormatter

LINE = r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] "


def record(**extra: object) -> logging.LogRecord:
    seen = logging.LogRecord("kopf.objects", logging.INFO, __file__, 1, "Handler %r succeeded.",
                             ("delete",), None)  # fmt: skip
    seen.__dict__.update(extra)
    return seen


def test_a_line_about_a_resource_names_it_first() -> None:
    ref = {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic", "name": "orders",
           "uid": "u", "namespace": "team-a"}  # fmt: skip
    text = KafkaStyleFormatter().format(record(k8s_ref=ref))
    assert re.fullmatch(LINE + r"INFO \[team-a/orders\] Handler 'delete' succeeded\. "
                        r"\(kopf\.objects\)", text), text  # fmt: skip
    cluster_wide = KafkaStyleFormatter().format(record(k8s_ref={**ref, "namespace": None}))
    assert "INFO [orders] Handler 'delete' succeeded." in cluster_wide


def test_any_other_line_is_kafkas_format() -> None:
    text = KafkaStyleFormatter().format(record())
    assert re.fullmatch(LINE + r"INFO Handler 'delete' succeeded\. \(kopf\.objects\)", text), text
