"""Carrying out an approved plan, the way kafka-reassign-partitions and
kafka-preferred-replica-election ask for it, so that Kafka's own controller (or this project's)
does the moving: through ZooKeeper's znodes on a ZooKeeper-mode cluster, through Kafka's Admin
API on a KRaft cluster (`execution.cluster.RebalanceCluster`). Each step is decided by
`execution.next_step` from a fresh read, so the executor keeps no state of its own: stopped,
crashed or restarted, it resumes from the cluster.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.execution.cluster import RebalanceCluster

# Importable from here as before the cluster became an interface (tests/k8s read through it).
from kafka_topic_operator.rebalance.execution.zookeeper import read_now as read_now
from kafka_topic_operator.rebalance.results.summary import PartitionMove

log = logging.getLogger(__name__)

ABANDON_CHECK = 1.0  # seconds between looks at whether the caller gave up waiting


@dataclass(frozen=True, slots=True)
class Report:
    """What the executor tells its caller after each step."""

    step: ex.Step
    progress: ex.Progress
    batch: int  # requests written so far by this executor


class Executor:
    """Runs a plan step by step until it is done, the caller asks it to stop (after the batch in
    flight completes), or the plan no longer fits the cluster (`execution.PlanOutdated`)."""

    def __init__(
        self,
        cluster: RebalanceCluster,
        plan: Sequence[PartitionMove],
        limits: ex.Limits,
        *,
        throttle: int | None = None,
        batch_timeout: float = 3600.0,
    ) -> None:
        self.cluster, self.plan, self.limits = cluster, list(plan), limits
        self.throttle = throttle or None
        self.batch_timeout = batch_timeout
        self.batches = 0

    def run(
        self,
        stop: Callable[[], bool] = lambda: False,
        report: Callable[[Report], None] = lambda _r: None,
        abandon: Callable[[], bool] = lambda: False,
    ) -> bool:
        """True when the plan is done; False when stopped (after the batch in flight) or
        abandoned (at once, the batch left to the controller: the process is going away, and
        the next executor resumes). Throttles are cleared unless abandoned."""
        abandoned = False
        try:
            while True:
                now = self.cluster.now(self.plan)
                step = ex.next_step(self.plan, now, self.limits)
                report(Report(step, ex.progress(self.plan, now), self.batches))
                if step.phase is ex.Phase.DONE:
                    return True
                if step.wait:
                    if not self._wait_in_flight(now, abandon):
                        abandoned = True
                        return False
                    continue
                if stop():
                    return False
                self._start(step)
        finally:
            if self.throttle and not abandoned:
                self.cluster.clear_throttles(self.plan)

    def _start(self, step: ex.Step) -> None:
        if step.reassign:
            if self.throttle and step.phase is ex.Phase.REPLICAS:
                self.cluster.set_throttles(step.reassign, self.throttle)
            sent = self.cluster.reassign({m.partition: list(m.after) for m in step.reassign})
        else:
            sent = self.cluster.elect_preferred(step.elect)
        if not sent:
            return  # someone else's request got there first: the next read waits for it
        self.batches += 1
        log.info("%s: batch %d of %d partitions", step.phase, self.batches,
                 len(step.reassign or step.elect))  # fmt: skip

    def _wait_in_flight(self, now: ex.ClusterNow, abandon: Callable[[], bool]) -> bool:
        """Until what is in flight completes (True) or the caller abandons (False)."""
        deadline = time.monotonic() + self.batch_timeout
        while not abandon():
            if time.monotonic() > deadline:
                raise TimeoutError(f"still moving after {self.batch_timeout:.0f} s")
            if self.cluster.wait_in_flight(now, ABANDON_CHECK):
                return True
        return False
