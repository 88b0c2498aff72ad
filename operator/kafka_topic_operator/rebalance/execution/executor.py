"""Carrying out an approved plan on a ZooKeeper-mode cluster, the way kafka-reassign-partitions
and kafka-preferred-replica-election write it, so that Kafka's own controller (or this project's)
does the moving. Each step is decided by `execution.next_step` from a fresh read, so the
executor keeps no state of its own: stopped, crashed or restarted, it resumes from the cluster.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.execution import steps as ex
from kafka_topic_operator.rebalance.results.summary import PartitionMove
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import NodeExistsError, ZkClient
from kafka_topic_operator.zk.snapshot_reader import read_cluster

log = logging.getLogger(__name__)

ABANDON_CHECK = 1.0  # seconds between looks at whether the caller gave up waiting


@dataclass(frozen=True, slots=True)
class Report:
    """What the executor tells its caller after each step."""

    step: ex.Step
    progress: ex.Progress
    batch: int  # requests written so far by this executor


def read_now(zk: ZkClient, plan: Sequence[PartitionMove]) -> ex.ClusterNow:
    snapshot = read_cluster(zk, sorted({m.partition.topic for m in plan}), list_topics=False)
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    leaders: dict[TopicPartition, int] = {}
    reassigning = set(snapshot.pending_reassignments)
    for name, topic in snapshot.topics.items():
        for p, partition in topic.partitions.items():
            tp = TopicPartition(name, p)
            assignment[tp] = partition.replicas
            leaders[tp] = partition.leader
            if partition.assignment.is_being_reassigned:
                reassigning.add(tp)
    return ex.ClusterNow(
        assignment,
        leaders,
        frozenset(reassigning),
        zk.exists(znodes.PREFERRED_REPLICA_ELECTION_PATH),
    )


def wait_absent(zk: ZkClient, path: str, timeout: float) -> bool:
    """Until `path` does not exist (by its watch, not by polling); False on timeout."""
    changed = threading.Event()
    deadline = time.monotonic() + timeout
    while zk.exists(path, watch=lambda _event: changed.set()):
        left = deadline - time.monotonic()
        if left <= 0 or not changed.wait(left):
            return False
        changed.clear()
    return True


def wait_changed(zk: ZkClient, path: str, timeout: float) -> bool:
    """Until `path` changes or goes; False on timeout."""
    changed = threading.Event()
    if not zk.exists(path, watch=lambda _event: changed.set()):
        return True
    return changed.wait(timeout)


def set_throttles(zk: ZkClient, batch: Sequence[PartitionMove], rate: int) -> None:
    """KIP-73's throttles for a batch: replicas per topic, merged with what is there, and the
    rate on every broker involved."""
    for topic, (leaders, followers) in ex.throttled_replicas(batch).items():
        config = admin.topic_config(zk, topic)
        config[ex.LEADER_THROTTLED_REPLICAS] = ex.merge_throttle(
            config.get(ex.LEADER_THROTTLED_REPLICAS), leaders
        )
        config[ex.FOLLOWER_THROTTLED_REPLICAS] = ex.merge_throttle(
            config.get(ex.FOLLOWER_THROTTLED_REPLICAS), followers
        )
        admin.change_topic_config(zk, topic, config)
    for broker in ex.throttled_brokers(batch):
        config = admin.broker_config(zk, broker)
        config[ex.LEADER_THROTTLED_RATE] = config[ex.FOLLOWER_THROTTLED_RATE] = str(rate)
        admin.change_broker_config(zk, broker, config)


def clear_throttles(zk: ZkClient, plan: Sequence[PartitionMove]) -> None:
    """What `kafka-reassign-partitions --verify` removes once a reassignment is done: the
    throttled-replica lists of the plan's topics and the rates of its brokers."""
    for topic in sorted({m.partition.topic for m in plan}):
        if not zk.exists(znodes.topic_path(topic)):
            continue  # deleted meanwhile: its config went with it
        config = admin.topic_config(zk, topic)
        keys = (ex.LEADER_THROTTLED_REPLICAS, ex.FOLLOWER_THROTTLED_REPLICAS)
        if any(k in config for k in keys):
            admin.change_topic_config(zk, topic, {k: v for k, v in config.items() if k not in keys})
    for broker in ex.throttled_brokers(plan):
        config = admin.broker_config(zk, broker)
        keys = (ex.LEADER_THROTTLED_RATE, ex.FOLLOWER_THROTTLED_RATE)
        if any(k in config for k in keys):
            admin.change_broker_config(
                zk, broker, {k: v for k, v in config.items() if k not in keys}
            )


class Executor:
    """Runs a plan step by step until it is done, the caller asks it to stop (after the batch in
    flight completes), or the plan no longer fits the cluster (`execution.PlanOutdated`)."""

    def __init__(
        self,
        zk: ZkClient,
        plan: Sequence[PartitionMove],
        limits: ex.Limits,
        *,
        throttle: int | None = None,
        batch_timeout: float = 3600.0,
    ) -> None:
        self.zk, self.plan, self.limits = zk, list(plan), limits
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
                now = read_now(self.zk, self.plan)
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
                clear_throttles(self.zk, self.plan)

    def _start(self, step: ex.Step) -> None:
        try:
            if step.reassign:
                if self.throttle and step.phase is ex.Phase.REPLICAS:
                    set_throttles(self.zk, step.reassign, self.throttle)
                admin.reassign_partitions(
                    self.zk, {m.partition: list(m.after) for m in step.reassign}
                )
            else:
                admin.elect_preferred_leaders(self.zk, step.elect)
        except NodeExistsError:
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
            if self._wait_once(now, ABANDON_CHECK):
                return True
        return False

    def _wait_once(self, now: ex.ClusterNow, timeout: float) -> bool:
        for path in (znodes.REASSIGN_PARTITIONS_PATH, znodes.PREFERRED_REPLICA_ELECTION_PATH):
            if self.zk.exists(path):
                return wait_absent(self.zk, path, timeout)
        # Moving without the znode (a reassignment made through Kafka's Admin API, KIP-455):
        # its topic znode changes when the move completes.
        topic = min(now.reassigning).topic
        return wait_changed(self.zk, znodes.topic_path(topic), timeout)
