"""What `kafka-topics.sh --zookeeper` and the other ZooKeeper-mode admin tools write
(AdminZkClient): topic and config znodes, deletion markers, partition additions, reassignment
and preferred-election requests. Validation is the caller's (`kafka.assignment`, `kafka.configs`),
except for requests Kafka's controller would take and never finish (`zk.stuck_requests`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from kafka_topic_operator.kafka.errors import (
    InvalidReplicaAssignmentException,
    ReassignmentInProgressException,
    TopicAlreadyMarkedForDeletionException,
    TopicExistsException,
    UnknownTopicOrPartitionException,
)
from kafka_topic_operator.kafka.new_topic import NewTopic
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment, invalid_target
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    Create,
    NodeExistsError,
    NoNodeError,
    TransactionFailed,
    ZkClient,
)


def create_topic_with_assignment(
    zk: ZkClient,
    topic: str,
    assignment: Mapping[int, Sequence[int]],
    config: Mapping[str, str] | None = None,
    topic_id: str | None = None,
) -> None:
    """createTopicWithAssignment: the config znode first (not transactional with the topic, as
    in Kafka), then the topic znode; without `topic_id` the controller assigns one."""
    zk.ensure_path(znodes.topic_config_path(topic).rsplit("/", 1)[0])
    path = znodes.topic_config_path(topic)
    data = znodes.encode_config(config or {})
    if zk.get(path) is None:
        try:
            zk.create(path, data)
        except NodeExistsError:
            zk.set(path, data)
    else:
        zk.set(path, data)
    try:
        zk.create(
            znodes.topic_path(topic),
            znodes.encode_topic(
                {p: ReplicaAssignment(tuple(r)) for p, r in assignment.items()}, topic_id
            ),
            makepath=True,
        )
    except NodeExistsError:
        raise TopicExistsException(f"Topic '{topic}' already exists.") from None


TOPICS_PER_TRANSACTION = 200


def create_topics(zk: ZkClient, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
    """Many topics at once, each written as `create_topic_with_assignment` writes it (config
    znode, then topic znode), in pipelined multi-op batches. A batch that fails (a topic or a
    config znode exists already) is redone topic by topic, so each topic gets its own outcome:
    None when created, otherwise the exception `create_topic_with_assignment` raised."""
    if not topics:
        return {}
    # No parents made first: in a Kafka cluster they exist, and where they do not the batch
    # fails and the topic-by-topic path makes them.
    batches = [
        topics[start : start + TOPICS_PER_TRANSACTION]
        for start in range(0, len(topics), TOPICS_PER_TRANSACTION)
    ]
    outcomes = zk.multi_many(
        [[op for topic in batch for op in _creates(topic)] for batch in batches]
    )
    results: dict[str, Exception | None] = {}
    for batch, outcome in zip(batches, outcomes, strict=True):
        for topic in batch:
            if not isinstance(outcome, TransactionFailed):
                results[topic.name] = None
                continue
            try:
                create_topic_with_assignment(
                    zk, topic.name, topic.assignment, topic.config, topic.topic_id
                )
            except Exception as e:
                results[topic.name] = e
            else:
                results[topic.name] = None
    return results


def _creates(topic: NewTopic) -> list[Create]:
    return [
        Create(znodes.topic_config_path(topic.name), znodes.encode_config(topic.config)),
        Create(
            znodes.topic_path(topic.name),
            znodes.encode_topic(
                {p: ReplicaAssignment(tuple(r)) for p, r in topic.assignment.items()},
                topic.topic_id,
            ),
        ),
    ]


def change_topic_config(zk: ZkClient, topic: str, config: Mapping[str, str]) -> None:
    """AdminZkClient.changeTopicConfig: the topic must exist; the config znode is replaced, then
    a change notification (`/config/changes/config_change_<seq>`) tells brokers to reload it."""
    if not zk.exists(znodes.topic_path(topic)):
        # validateTopicConfig's wording (AdminZkClient.scala, 3.9).
        raise UnknownTopicOrPartitionException(f"Topic '{topic}' does not exist.")
    _write_config(zk, znodes.ConfigType.TOPIC, topic, config)


def _write_config(
    zk: ZkClient, entity_type: znodes.ConfigType, name: str, config: Mapping[str, str]
) -> None:
    """AdminZkClient.changeEntityConfig: KafkaZkClient.setOrCreateEntityConfigs (set; on NoNode
    create with parents; if someone created it meanwhile, set), then
    createConfigChangeNotification (a persistent sequential `config_change_` with
    `{"version":2,"entity_path":"<type>/<name>"}`). Like `kafka-configs --zookeeper`, there is no
    check on `/controller` (the brokers' own AdminZkClient has one, to fence KRaft migration)."""
    path = znodes.config_entity_path(entity_type, name)
    data = znodes.encode_config(config)
    try:
        zk.set(path, data)
    except NoNodeError:
        try:
            zk.create(path, data, makepath=True)
        except NodeExistsError:
            zk.set(path, data)
    zk.ensure_path(znodes.CONFIG_CHANGES_PATH)
    zk.create(
        znodes.config_change_path(),
        znodes.encode_config_change(f"{entity_type}/{name}"),
        sequence=True,
    )


def topic_config(zk: ZkClient, topic: str) -> dict[str, str]:
    """A topic's config overrides (empty when it has none)."""
    node = zk.get(znodes.topic_config_path(topic))
    return znodes.decode_config(node.path, node.data) if node is not None else {}


DEFAULT_ENTITY: Final = "<default>"
"""ZooKeeperInternals.DEFAULT_STRING: the entity name of cluster-wide broker defaults."""


def _broker_entity(broker: int | None) -> str:
    return DEFAULT_ENTITY if broker is None else str(broker)


def broker_config(zk: ZkClient, broker: int | None) -> dict[str, str]:
    """A broker's dynamic config overrides, or the cluster-wide defaults for None (empty when
    there are none)."""
    node = zk.get(znodes.config_entity_path(znodes.ConfigType.BROKER, _broker_entity(broker)))
    return znodes.decode_config(node.path, node.data) if node is not None else {}


def change_broker_config(zk: ZkClient, broker: int | None, config: Mapping[str, str]) -> None:
    """AdminZkClient.changeBrokerConfig(Option[Int]), as `kafka-configs --zookeeper
    --entity-type brokers` writes it: the config znode of broker `<id>` (or `<default>` for None),
    then a change notification naming `brokers/<id>`. The config replaces the old one whole."""
    _write_config(zk, znodes.ConfigType.BROKER, _broker_entity(broker), config)


def delete_topic(zk: ZkClient, topic: str) -> None:
    """AdminZkClient.deleteTopic: the marker under `/admin/delete_topics`."""
    if not zk.exists(znodes.topic_path(topic)):
        raise UnknownTopicOrPartitionException(f"Topic `{topic}` to delete does not exist")
    try:
        zk.create(znodes.delete_topic_path(topic), znodes.DELETE_TOPIC_MARKER_DATA, makepath=True)
    except NodeExistsError:
        raise TopicAlreadyMarkedForDeletionException(
            f"topic {topic} is already marked for deletion"
        ) from None


def add_partitions(zk: ZkClient, topic: str, new: Mapping[int, Sequence[int]]) -> None:
    """The topic znode rewritten with the new partitions added, conditional on the version read
    (Kafka's createPartitionsWithAssignment writes unconditionally; a concurrent writer here
    fails instead of being overwritten)."""
    path = znodes.topic_path(topic)
    node = zk.get(path)
    if node is None:
        # What ZkAdminManager.createPartitions says before it calls AdminZkClient.
        raise UnknownTopicOrPartitionException(f"The topic '{topic}' does not exist.")
    current = znodes.decode_topic(path, node.data)
    partitions = dict(current.partitions)
    partitions.update({p: ReplicaAssignment(tuple(r)) for p, r in new.items()})
    zk.set(path, znodes.encode_topic(partitions, current.topic_id), node.version)


def reassign_partitions(
    zk: ZkClient, targets: Mapping[TopicPartition, Sequence[int]], *, validate: bool = True
) -> None:
    """What `kafka-reassign-partitions --zookeeper` writes; fails if one is in progress (written
    and not yet taken up by the controller, or running). Unless told not to `validate`, refuses
    (before writing anything) a target Kafka's controller would take and never finish: empty,
    or with duplicated brokers (its ZooKeeper path does not check them; the request stays)."""
    if validate:
        bad = {tp: problem for tp, t in targets.items() if (problem := invalid_target(t))}
        if bad:
            raise InvalidReplicaAssignmentException(
                "Refusing to request a reassignment Kafka's controller would never finish: "
                + "; ".join(
                    f"{tp} to {list(targets[tp])}: {why}" for tp, why in sorted(bad.items())
                )
            )
    try:
        zk.create(
            znodes.REASSIGN_PARTITIONS_PATH, znodes.encode_reassignment(targets), makepath=True
        )
    except NodeExistsError as e:
        topics = sorted({tp.topic for tp in targets})
        raise ReassignmentInProgressException(
            f"A partition reassignment is in progress for the topic '{topics[0]}'."
            if len(topics) == 1
            else "There is an existing assignment running."
        ) from e


def elect_preferred_leaders(
    zk: ZkClient, partitions: Iterable[TopicPartition], *, validate: bool = True
) -> list[TopicPartition]:
    """What `kafka-preferred-replica-election --zookeeper` writes; the partitions asked for.
    Unless told not to `validate`, leaves out partitions that never came online (no state
    znode): Kafka's controller fails on such a request and never deletes it; nothing is written
    when none are left."""
    asked = sorted(set(partitions))
    if validate:
        states = zk.get_many(znodes.topic_partition_state_path(tp) for tp in asked)
        asked = [tp for tp, state in zip(asked, states, strict=True) if state is not None]
        if not asked:
            return []
    zk.create(
        znodes.PREFERRED_REPLICA_ELECTION_PATH,
        znodes.encode_preferred_replica_election(asked),
        makepath=True,
    )
    return asked
