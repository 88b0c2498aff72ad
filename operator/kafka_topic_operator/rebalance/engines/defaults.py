"""What `kto run` gives a KafkaRebalance's planner when spec.engine leaves it out (the Helm
chart passes its rebalance values), so that `engine: {type: kubernetes}` is enough where the
operator was installed with a planner image, work directory and volume.

Pure: the flags' parsers and the merge, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafka_topic_operator.rebalance.spec import (
    CPU_PATTERN,
    NAME_PATTERN,
    EngineSpec,
    EngineType,
)

_MAX_NAME = 253


@dataclass(frozen=True)
class Claim:
    """A PersistentVolumeClaim: a claim is namespaced, so it serves only its own namespace."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class PlannerDefaults:
    """The operator's defaults for spec.engine's fields of the kubernetes and sparkApplication
    engines."""

    image: str | None = None
    service_account_name: str | None = None
    # Where the operator's pod mounts `volume`: the default workDir, and the only one the
    # default volume is mounted at.
    work_dir: str | None = None
    volume: Claim | None = None
    executor_cpu_request: str | None = None
    driver_cpu_request: str | None = None


def _name(text: str, what: str) -> str:
    if len(text) > _MAX_NAME or not re.match(NAME_PATTERN, text):
        raise ValueError(
            f"{what} {text!r} is not a Kubernetes name (lower-case letters, digits, '-' and "
            "'.', starting and ending with a letter or digit, at most 253 characters)"
        )
    return text


def parse_claim(text: str) -> Claim:
    """`NAMESPACE/CLAIM`, the planner volume's flag."""
    namespace, sep, name = text.partition("/")
    if not sep or not namespace or not name:
        raise ValueError(f"expected NAMESPACE/CLAIM, got {text!r}")
    return Claim(_name(namespace, "namespace"), _name(name, "claim"))


def parse_cpu(text: str) -> str:
    """A CPU request as spec.engine's executorCpuRequest takes it: 250m, 0.5, 2."""
    if not re.match(CPU_PATTERN, text):
        raise ValueError(f"expected a positive CPU quantity such as 250m, 0.5 or 2, got {text!r}")
    return text


def parse_work_dir(text: str) -> str:
    """An absolute path: the work directory is where a volume is mounted."""
    if not text.startswith("/"):
        raise ValueError(f"expected an absolute path, got {text!r}")
    return text


def with_defaults(engine: EngineSpec, defaults: PlannerDefaults, namespace: str) -> EngineSpec:
    """`engine` with what it leaves out taken from `defaults`, for a KafkaRebalance in
    `namespace`. The default volume goes only to its own namespace and only where the work
    directory is the default one, the path the operator's pod mounts it at."""
    if engine.type is EngineType.LOCAL:
        return engine
    work_dir = engine.work_dir or defaults.work_dir
    volume = engine.volume
    claim = defaults.volume
    at_default = work_dir is not None and work_dir == defaults.work_dir
    if volume is None and claim is not None and claim.namespace == namespace and at_default:
        volume = claim.name
    return engine.model_copy(
        update={
            "image": engine.image or defaults.image,
            "service_account_name": engine.service_account_name or defaults.service_account_name,
            "work_dir": work_dir,
            "volume": volume,
            "executor_cpu_request": engine.executor_cpu_request or defaults.executor_cpu_request,
            "driver_cpu_request": engine.driver_cpu_request or defaults.driver_cpu_request,
        }
    )
