"""Kafka's own placement rules from its fetched jars (`KafkaRules.java`, run by the JVM's
single-file source launcher): the Java producer's murmur2 partitioner and
AdminUtils.assignReplicasToBrokers, asked many questions in one JVM."""

from __future__ import annotations

import subprocess
from pathlib import Path

from kto_dev.apache_kafka.broker import java_executable
from kto_dev.apache_kafka.distribution import KAFKA_VERSION, require_libs

SOURCE = Path(__file__).with_name("KafkaRules.java")


def ask_kafka(requests: list[str]) -> list[str]:
    """One answer per request (see `KafkaRules.java` for both forms)."""
    libs = require_libs(KAFKA_VERSION)
    done = subprocess.run(
        [java_executable(), "-Xmx256m", "-XX:+UseSerialGC", "-cp", f"{libs}/*", str(SOURCE)],
        input="".join(f"{r}\n" for r in requests),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = done.stdout.splitlines()
    assert len(answers) == len(requests), done.stderr
    return answers
