"""Kafka's Admin API for KRaft clusters (Kafka 4.x): the `TopicBackend` that reaches a cluster
through its brokers instead of ZooKeeper, with kafka-python (the only package in the operator that
imports it, as `zk` is the only one importing kazoo)."""

from __future__ import annotations

import warnings

# kafka-python 3.0 loads its protocol schemas with importlib.resources' read_text and open_text,
# deprecated on Python 3.11 and 3.12: imported here once, quietly, before any module of this
# package uses it (the tests turn warnings into errors).
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", r"\w+ is deprecated\. Use files\(\)", DeprecationWarning)
    import kafka.admin  # noqa: F401
