"""ControllerContext: the controller's cache of the cluster (ControllerContext.scala).

Rebuilt from ZooKeeper on every failover and changed only by the event thread. Lookups the
state machines make per partition are dictionary reads; per-broker and per-topic indexes are
kept so that a broker failure or a topic deletion does not scan every partition.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kafka_topic_operator.kafka.brokers import BrokerInfo
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.states import PartitionAndReplica, PartitionState, ReplicaState
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.client import Fence


@dataclass
class ControllerContext:
    epoch: int = 0
    epoch_zk_version: int = 0
    epoch_session: int = 0  # the ZooKeeper session the epoch was won in
    live_brokers: dict[int, BrokerInfo] = field(default_factory=dict)
    broker_epochs: dict[int, int] = field(default_factory=dict)
    shutting_down: set[int] = field(default_factory=set)
    topic_ids: dict[str, str] = field(default_factory=dict)
    assignments: dict[str, dict[int, ReplicaAssignment]] = field(default_factory=dict)
    leadership: dict[TopicPartition, LeaderIsrAndControllerEpoch] = field(default_factory=dict)
    partition_states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    replica_states: dict[PartitionAndReplica, ReplicaState] = field(default_factory=dict)
    topics_to_be_deleted: set[str] = field(default_factory=set)
    topics_with_deletion_started: set[str] = field(default_factory=set)
    topics_ineligible_for_deletion: set[str] = field(default_factory=set)
    partitions_being_reassigned: set[TopicPartition] = field(default_factory=set)
    # broker id -> its replicas in log directories that failed (learnt from LeaderAndIsr answers)
    replicas_on_offline_dirs: dict[int, set[TopicPartition]] = field(default_factory=dict)
    # Partition states this controller wrote while handling the current event: what it holds
    # of them is what ZooKeeper holds, so they need not be read again within the event.
    written_this_event: set[TopicPartition] = field(default_factory=set)
    # broker id -> partitions with a replica there (replicas, adding and removing alike), in
    # the order they came (a dict as an ordered set: a broker's 30,000 need no sorting)
    _by_broker: defaultdict[int, dict[TopicPartition, None]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    # ---- topics and assignments ------------------------------------------------------------------

    def fence(self) -> Fence:
        """What every write of this controller checks: its epoch, in the session it won it."""
        return Fence(self.epoch_zk_version, session=self.epoch_session)

    @property
    def all_topics(self) -> set[str]:
        return set(self.assignments)

    def add_topic(self, topic: str) -> None:
        self.assignments.setdefault(topic, {})

    def partitions_for_topic(self, topic: str) -> list[TopicPartition]:
        return [TopicPartition(topic, p) for p in sorted(self.assignments.get(topic, {}))]

    def all_partitions(self) -> list[TopicPartition]:
        return [TopicPartition(t, p) for t, parts in self.assignments.items() for p in parts]

    def assignment(self, tp: TopicPartition) -> ReplicaAssignment | None:
        partitions = self.assignments.get(tp.topic)
        return None if partitions is None else partitions.get(tp.partition)

    def replicas(self, tp: TopicPartition) -> tuple[int, ...]:
        assignment = self.assignment(tp)
        return assignment.replicas if assignment else ()

    def set_assignment(self, tp: TopicPartition, assignment: ReplicaAssignment) -> None:
        """updatePartitionFullReplicaAssignment; the reassigning set follows the assignment."""
        old = self.assignment(tp)
        if old is not None:
            for broker in old.replicas:
                self._by_broker[broker].pop(tp, None)
        self.assignments.setdefault(tp.topic, {})[tp.partition] = assignment
        for broker in assignment.replicas:
            self._by_broker[broker][tp] = None
        if assignment.is_being_reassigned:
            self.partitions_being_reassigned.add(tp)
        else:
            self.partitions_being_reassigned.discard(tp)

    def remove_replica(self, tp: TopicPartition, replica: int) -> None:
        assignment = self.assignment(tp)
        if assignment is not None:
            self.set_assignment(tp, assignment.remove_replica(replica))

    def remove_topic(self, topic: str) -> None:
        """controllerContext.removeTopic: every trace of the topic leaves the cache."""
        for tp in self.partitions_for_topic(topic):
            for broker in self.replicas(tp):
                self._by_broker[broker].pop(tp, None)
                self.replica_states.pop(PartitionAndReplica(tp, broker), None)
            self.leadership.pop(tp, None)
            self.partition_states.pop(tp, None)
            self.partitions_being_reassigned.discard(tp)
        self.assignments.pop(topic, None)
        self.topic_ids.pop(topic, None)
        self.topics_to_be_deleted.discard(topic)
        self.topics_with_deletion_started.discard(topic)
        self.topics_ineligible_for_deletion.discard(topic)

    def partitions_on_broker(self, broker: int) -> set[TopicPartition]:
        return set(self._by_broker.get(broker, ()))

    def replicas_on_brokers(self, brokers: Iterable[int]) -> list[PartitionAndReplica]:
        return [PartitionAndReplica(tp, b) for b in brokers for tp in self._by_broker.get(b, {})]

    def replicas_for_topic(self, topic: str) -> list[PartitionAndReplica]:
        return [
            PartitionAndReplica(tp, r)
            for tp in self.partitions_for_topic(topic)
            for r in self.replicas(tp)
        ]

    # ---- brokers ---------------------------------------------------------------------------------

    @property
    def live_broker_ids(self) -> set[int]:
        """Live and not shutting down: where a replica counts as online."""
        return set(self.live_brokers) - self.shutting_down

    @property
    def live_or_shutting_down_broker_ids(self) -> set[int]:
        return set(self.live_brokers)

    def is_replica_online(
        self, broker: int, tp: TopicPartition, include_shutting_down: bool = False
    ) -> bool:
        """On a live broker (or one shutting down, if asked) and not in a failed log dir."""
        if broker not in self.live_brokers or (
            not include_shutting_down and broker in self.shutting_down
        ):
            return False
        offline = self.replicas_on_offline_dirs.get(broker)
        return offline is None or tp not in offline

    def online_brokers(
        self, include_shutting_down: bool = False
    ) -> Callable[[TopicPartition], set[int]]:
        """For a partition, the brokers where a replica of it would be online: `live_broker_ids`
        (or live and shutting down) less those where it sits in a failed log dir."""
        base = self.live_or_shutting_down_broker_ids
        if not include_shutting_down:
            base -= self.shutting_down
        offline = self.replicas_on_offline_dirs
        if not any(offline.values()):
            return lambda _tp: base
        return lambda tp: {b for b in base if tp not in offline.get(b, ())}

    def add_live_brokers(self, brokers: dict[int, tuple[BrokerInfo, int]]) -> None:
        for broker_id, (info, epoch) in brokers.items():
            self.live_brokers[broker_id] = info
            self.broker_epochs[broker_id] = epoch

    def remove_live_brokers(self, broker_ids: Iterable[int]) -> None:
        for broker_id in broker_ids:
            self.live_brokers.pop(broker_id, None)
            self.broker_epochs.pop(broker_id, None)

    # ---- leadership ------------------------------------------------------------------------------

    def partitions_with_leaders(self) -> list[TopicPartition]:
        """Every partition with a state (a leader or not), of topics not queued for deletion
        (ControllerContext.partitionsWithLeaders)."""
        return [tp for tp in self.leadership if tp.topic not in self.topics_to_be_deleted]

    def partitions_with_offline_leader(self) -> list[TopicPartition]:
        """Partitions whose leader is not online, of topics not queued for deletion."""
        return [
            tp
            for tp, state in self.leadership.items()
            if not self.is_replica_online(state.leader_and_isr.leader, tp)
            and tp.topic not in self.topics_to_be_deleted
        ]

    def partition_leaders_on_broker(self, broker: int) -> list[TopicPartition]:
        return sorted(
            tp
            for tp in self.partitions_on_broker(broker)
            if (state := self.leadership.get(tp)) is not None
            and state.leader_and_isr.leader == broker
        )

    def partitions_in_states(self, *states: PartitionState) -> list[TopicPartition]:
        wanted = set(states)
        return [tp for tp, s in self.partition_states.items() if s in wanted]

    def offline_partition_count(self) -> int:
        return sum(
            1
            for tp, s in self.partition_states.items()
            if s is PartitionState.OFFLINE_PARTITION
            and tp.topic not in self.topics_with_deletion_started
        )
