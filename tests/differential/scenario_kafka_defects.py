"""Requests Kafka 3.9's controller takes badly, where the twin does better on purpose (each an
entry of docs/fidelity.md's allow list, which the differential test checks still happens):

- a preferred leader election naming a partition that never came online: Kafka's controller
  throws (`partitionLeadershipInfo(partition).get`) and never deletes the request;
- a reassignment to a duplicated target (`[1,1]`): Kafka's ZooKeeper path takes it (the
  partition becomes `[1]`) and keeps the request for ever;
- a reassignment to an empty target: Kafka takes it, and every later failover would throw
  (`ControllerContext.hasPreferredLeader`), so none follows here.
"""

from __future__ import annotations

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .backends import Backend
from .scenario import Step, World, _stop, start_cluster

NEVER = "never"  # its only replica's broker is down from before its creation
DOUBLED = "doubled"  # reassigned to [1, 1]
EMPTIED = "emptied"  # reassigned to []


def create_topics(backend: Backend, world: World) -> None:
    zk = backend.zk
    admin.create_topic_with_assignment(zk, NEVER, {0: [2]})
    admin.create_topic_with_assignment(zk, DOUBLED, {0: [0, 1]})
    admin.create_topic_with_assignment(zk, EMPTIED, {0: [1, 0]})
    world.topics |= {NEVER, DOUBLED, EMPTIED}
    world.unchecked.add(NEVER)


def elect_never_online(backend: Backend, world: World) -> None:
    admin.elect_preferred_leaders(
        backend.zk, [TopicPartition(NEVER, 0), TopicPartition(DOUBLED, 0)], validate=False
    )
    world.requests_stay.add(znodes.PREFERRED_REPLICA_ELECTION_PATH)


def reassign_to_bad_targets(backend: Backend, world: World) -> None:
    admin.reassign_partitions(
        backend.zk,
        {TopicPartition(DOUBLED, 0): [1, 1], TopicPartition(EMPTIED, 0): []},
        validate=False,
    )
    world.requests_stay.add(znodes.REASSIGN_PARTITIONS_PATH)
    world.unchecked |= {DOUBLED, EMPTIED}  # Kafka leaves `emptied` reassigning for ever


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("broker 2 controlled shutdown", _stop(2)),
    Step("topics created", create_topics),
    Step("a preferred election naming a partition never online", elect_never_online,
         quiet=2.0),
    Step("a reassignment to a duplicated and an empty target", reassign_to_bad_targets,
         quiet=2.0),
)  # fmt: skip
