"""Kafka's ZooKeeper layout: every znode path and JSON codec in one place, as in Kafka's ZkData.

Pure (bytes in, bytes out, no kazoo). Encoders write compact UTF-8 JSON; decoders read keys by
name and are as tolerant as Kafka's (unknown keys, optional keys, any version), and raise
ZNodeDataError naming the path and the fault for anything Kafka could not read either.

Kept whole: it is Kafka's ZkData, one path and codec pair per znode, read side by side with
Kafka's own table of znodes; split, a reader would look for a znode in several files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from typing import Final

from kafka_topic_operator.kafka.brokers import (
    BrokerInfo,
    EndPoint,
    SecurityProtocol,
    SupportedVersionRange,
)
from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.ids import Uuid
from kafka_topic_operator.kafka.java import (
    INT_MAX,
    INT_MIN,
    LONG_MAX,
    LONG_MIN,
    SHORT_MAX,
    parse_int,
)
from kafka_topic_operator.kafka.leader_and_isr import (
    LeaderAndIsr,
    LeaderIsrAndControllerEpoch,
    LeaderRecoveryState,
)
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.json_codec import (
    JsonReader,
    encode_json,
    encode_plain_json,
    json_root,
    json_text,
)

# What every decoder here raises: part of this module's interface.
from kafka_topic_operator.zk.json_codec import ZNodeDataError as ZNodeDataError

# ---- shared constants and helpers --------------------------------------------------------------

NULL_DATA: Final = b""
"""What Kafka writes as null data (the kazoo facade reads null back as b"")."""

MATCH_ANY_VERSION: Final = -1
"""ZkVersion.MatchAnyVersion: a conditional write that matches any version."""

UNKNOWN_VERSION: Final = -2
"""ZkVersion.UnknownVersion: Kafka's version for a znode that does not exist."""


def _timestamp(root: JsonReader) -> int | None:
    """A registration's string timestamp in ms. Kafka never reads it, so a bad one is None."""
    stamp = root.get("timestamp")
    if stamp is None or not isinstance(stamp.value, str):
        return None
    return parse_int(stamp.value, LONG_MIN, LONG_MAX)


def _partition_number(reader: JsonReader, text: str) -> int:
    value = parse_int(text)
    if value is None:
        raise reader.fail(f"partition key {text!r} is not an integer")
    if value < 0:
        raise reader.fail(f"partition key {text!r} is negative")
    return value


def _non_negative(reader: JsonReader, what: str) -> int:
    value = reader.int32()
    if value < 0:
        raise reader.fail(f"{what} {value} is negative")
    return value


def _topic_partitions(reader: JsonReader) -> frozenset[TopicPartition]:
    """The `{"topic":..,"partition":..}` list shared by ISR changes and preferred elections."""
    out: set[TopicPartition] = set()
    for item in reader["partitions"].array():
        topic = item["topic"].string()
        out.add(TopicPartition(topic, _non_negative(item["partition"], "partition")))
    return frozenset(out)


def _encode_topic_partitions(partitions: Iterable[TopicPartition]) -> list[dict[str, object]]:
    # Kafka passes a Set: each partition once, in the caller's order.
    return [{"topic": tp.topic, "partition": tp.partition} for tp in dict.fromkeys(partitions)]


# ---- paths ------------------------------------------------------------------------------------

ADMIN_PATH: Final = "/admin"
BROKERS_PATH: Final = "/brokers"
BROKER_IDS_PATH: Final = "/brokers/ids"
TOPICS_PATH: Final = "/brokers/topics"
BROKER_SEQUENCE_ID_PATH: Final = "/brokers/seqid"
CONTROLLER_PATH: Final = "/controller"
CONTROLLER_EPOCH_PATH: Final = "/controller_epoch"
CONFIG_PATH: Final = "/config"
CONFIG_CHANGES_PATH: Final = "/config/changes"
CONFIG_CHANGE_PREFIX: Final = "config_change_"
DELETE_TOPICS_PATH: Final = "/admin/delete_topics"
REASSIGN_PARTITIONS_PATH: Final = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION_PATH: Final = "/admin/preferred_replica_election"
ISR_CHANGE_NOTIFICATION_PATH: Final = "/isr_change_notification"
ISR_CHANGE_PREFIX: Final = "isr_change_"
LOG_DIR_EVENT_NOTIFICATION_PATH: Final = "/log_dir_event_notification"
LOG_DIR_EVENT_PREFIX: Final = "log_dir_event_"
CLUSTER_PATH: Final = "/cluster"
CLUSTER_ID_PATH: Final = "/cluster/id"
FEATURE_PATH: Final = "/feature"
PRODUCER_ID_BLOCK_PATH: Final = "/latest_producer_id_block"
CONSUMERS_PATH: Final = "/consumers"


class ConfigType(StrEnum):
    """The config entity types under /config (ConfigType)."""

    TOPIC = "topics"
    CLIENT = "clients"
    USER = "users"
    BROKER = "brokers"
    IP = "ips"


CONFIG_TYPES: Final = tuple(ConfigType)

PERSISTENT_ZK_PATHS: Final = (
    CONSUMERS_PATH,
    BROKER_IDS_PATH,
    TOPICS_PATH,
    CONFIG_CHANGES_PATH,
    DELETE_TOPICS_PATH,
    BROKER_SEQUENCE_ID_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
    PRODUCER_ID_BLOCK_PATH,
    LOG_DIR_EVENT_NOTIFICATION_PATH,
    *(f"{CONFIG_PATH}/{t}" for t in ConfigType),
)
"""ZkData.PersistentZkPaths: what a broker makes sure exists at startup, in Kafka's order."""


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS_PATH}/{topic}"


def topic_partitions_path(topic: str) -> str:
    return f"{topic_path(topic)}/partitions"


def topic_partition_path(partition: TopicPartition) -> str:
    return f"{topic_partitions_path(partition.topic)}/{partition.partition}"


def topic_partition_state_path(partition: TopicPartition) -> str:
    return f"{topic_partition_path(partition)}/state"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS_PATH}/{topic}"


def config_entity_type_path(entity_type: str) -> str:
    return f"{CONFIG_PATH}/{entity_type}"


def config_entity_path(entity_type: str, entity_name: str) -> str:
    return f"{config_entity_type_path(entity_type)}/{entity_name}"


def topic_config_path(topic: str) -> str:
    return config_entity_path(ConfigType.TOPIC, topic)


def config_change_path(sequence_number: str = "") -> str:
    """With no sequence number: the prefix to create a persistent sequential znode with."""
    return f"{CONFIG_CHANGES_PATH}/{CONFIG_CHANGE_PREFIX}{sequence_number}"


def isr_change_path(sequence_number: str = "") -> str:
    return f"{ISR_CHANGE_NOTIFICATION_PATH}/{ISR_CHANGE_PREFIX}{sequence_number}"


def log_dir_event_path(sequence_number: str = "") -> str:
    return f"{LOG_DIR_EVENT_NOTIFICATION_PATH}/{LOG_DIR_EVENT_PREFIX}{sequence_number}"


def sequence_suffix(counter: int) -> str:
    """ZooKeeper's suffix for a sequential znode: the parent's counter as ten digits."""
    return f"{counter:010d}"


def sequence_number(path: str, prefix: str) -> str:
    """What follows the last `prefix` in a sequential znode's name or path (sequenceNumber)."""
    index = path.rfind(prefix)
    return path[index + len(prefix) :] if index >= 0 else path


# ---- /controller and /controller_epoch --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ControllerData:
    """/controller: the active controller's broker id (the only key Kafka requires)."""

    broker_id: int
    timestamp: int | None = None
    kraft_controller_epoch: int | None = None


def encode_controller(
    broker_id: int, timestamp: int, *, version: int = 2, kraft_controller_epoch: int = -1
) -> bytes:
    """Version 1 is what 2.8 writes; version 2 (3.x) adds kraftControllerEpoch (-1 in ZK mode)."""
    if version not in (1, 2):
        raise ValueError(f"controller znode version {version} is not 1 or 2")
    content: dict[str, object] = {
        "version": version,
        "brokerid": broker_id,
        "timestamp": str(timestamp),
    }
    if version >= 2:
        content["kraftControllerEpoch"] = kraft_controller_epoch
    return encode_json(content)


def decode_controller(path: str, data: bytes | None) -> ControllerData:
    root = json_root(path, data)
    broker_id = root["brokerid"].int32()
    kraft = root.get("kraftControllerEpoch")
    return ControllerData(broker_id, _timestamp(root), kraft.int32() if kraft is not None else None)


def encode_controller_epoch(epoch: int) -> bytes:
    return str(epoch).encode()


def decode_controller_epoch(path: str, data: bytes | None) -> int:
    text = json_text(path, data)
    value = parse_int(text)
    if value is None:
        raise ZNodeDataError(path, f"expected a 32-bit integer, got {text!r}")
    return value


# ---- /brokers/ids/<id> ------------------------------------------------------------------------


def encode_broker(info: BrokerInfo, version: int = 5) -> bytes:
    """BrokerIdZNode.encode. BrokerInfo.apply picks 5 for IBP >= 2.7-IV0, 4 for IBP >=
    0.10.0-IV1, else 2; top-level host/port are the first PLAINTEXT endpoint's, for old clients."""
    if not 1 <= version <= 5:
        raise ValueError(f"broker registration version {version} is not between 1 and 5")
    if info.timestamp is None:
        raise ValueError("a broker registration needs a timestamp")
    plaintext = next(
        (e for e in info.endpoints if e.security_protocol is SecurityProtocol.PLAINTEXT), None
    )
    content: dict[str, object] = {
        "version": version,
        "host": plaintext.host if plaintext else None,
        "port": plaintext.port if plaintext else -1,
        "endpoints": [e.connection_string for e in info.endpoints],
        "jmx_port": info.jmx_port,
        "timestamp": str(info.timestamp),
    }
    if info.rack is not None and version >= 3:
        content["rack"] = info.rack
    if version >= 4:
        content["listener_security_protocol_map"] = {
            e.listener_name: e.security_protocol.value for e in info.endpoints
        }
    if version >= 5:
        content["features"] = {
            name: {"min_version": r.min_version, "max_version": r.max_version}
            for name, r in info.features.items()
        }
    return encode_json(content)


def _broker_id_from_path(path: str) -> int:
    name = path.rsplit("/", 1)[-1]
    broker_id = parse_int(name)
    if broker_id is None:
        raise ZNodeDataError(path, f"the znode name {name!r} is not a broker id")
    return broker_id


def _version_map(reader: JsonReader) -> dict[str, int]:
    # Kafka reads every feature's map as Map[String, Int] before picking its keys.
    return {key: value.int32() for key, value in reader.items()}


def _broker_features(root: JsonReader) -> dict[str, SupportedVersionRange]:
    features = root.optional("features")
    if features is None:
        return {}
    out: dict[str, SupportedVersionRange] = {}
    for name, ranges in features.items():
        levels = _version_map(ranges)
        for key in ("min_version", "max_version"):
            if key not in levels:
                raise ranges.fail(f"{key} absent in [{levels}]")
            if levels[key] > SHORT_MAX:
                raise ranges.fail(f"{key} {levels[key]} does not fit a short")
        try:
            out[name] = SupportedVersionRange(levels["min_version"], levels["max_version"])
        except IllegalArgumentException as e:
            raise ranges.fail(str(e)) from e
    return out


def decode_broker(path: str, data: bytes | None) -> BrokerInfo:
    """BrokerIdZNode.decode; the broker id is the znode's name (`/brokers/ids/<id>`)."""
    broker_id = _broker_id_from_path(path)
    root = json_root(path, data)
    version = root["version"].int32()
    jmx_port = root["jmx_port"].int32()
    if version < 1:
        raise ZNodeDataError(path, f"Unsupported version of broker registration: {version}")
    endpoints: tuple[EndPoint, ...]
    if version == 1:
        host = root["host"].string()
        port = root["port"].int32()
        endpoints = (EndPoint("PLAINTEXT", host, port, SecurityProtocol.PLAINTEXT),)
    else:
        protocol_map: dict[str, SecurityProtocol] | None = None
        raw_map = root.get("listener_security_protocol_map")
        if raw_map is not None:
            protocol_map = {}
            for listener, protocol in raw_map.items():
                try:
                    # The map's keys are taken as written; endpoint names are upper-cased.
                    protocol_map[listener] = SecurityProtocol.for_name(protocol.string())
                except IllegalArgumentException as e:
                    raise protocol.fail(str(e)) from e
        parsed = []
        for entry in root["endpoints"].array():
            connection_string = entry.string()
            try:
                parsed.append(EndPoint.parse(connection_string, protocol_map))
            except (ValueError, IllegalArgumentException) as e:
                raise entry.fail(str(e)) from e
        endpoints = tuple(parsed)
    rack = root.optional("rack")
    return BrokerInfo(
        id=broker_id,
        endpoints=endpoints,
        rack=rack.string() if rack is not None else None,
        jmx_port=jmx_port,
        timestamp=_timestamp(root),
        features=_broker_features(root),
        version=version,
    )


def broker_rack(path: str, data: bytes | None) -> str | None:
    """The broker's rack, or None (racks are read from registrations of version 3 and later)."""
    return decode_broker(path, data).rack


# ---- /brokers/topics/<t> ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicZNodeData:
    """A topic znode: its id (2.8+, may be absent) and each partition's replica assignment."""

    topic_id: str | None
    partitions: Mapping[int, ReplicaAssignment]


def encode_topic(partitions: Mapping[int, ReplicaAssignment], topic_id: str | None = None) -> bytes:
    """TopicZNode.encode: always version 3; adding/removing maps are always present and list
    only the partitions that have some."""
    for partition in partitions:
        if partition < 0:
            raise ValueError(f"partition {partition} is negative")
    order = sorted(partitions)
    content: dict[str, object] = {"version": 3}
    if topic_id is not None:
        content["topic_id"] = str(Uuid.from_string(topic_id))
    content["partitions"] = {str(p): list(partitions[p].replicas) for p in order}
    content["adding_replicas"] = {
        str(p): list(partitions[p].adding_replicas) for p in order if partitions[p].adding_replicas
    }
    content["removing_replicas"] = {
        str(p): list(partitions[p].removing_replicas)
        for p in order
        if partitions[p].removing_replicas
    }
    return encode_json(content)


def _replica_lists(root: JsonReader, key: str) -> Callable[[str], list[int]]:
    """An optional adding/removing map, looked up by partition key exactly as written."""
    lists = root.get(key)
    fields = lists.obj() if lists is not None else {}

    def lookup(partition_key: str) -> list[int]:
        if lists is None or partition_key not in fields:
            return []
        return lists[partition_key].int32_list()

    return lookup


def _plain_partitions(fields: object) -> dict[int, ReplicaAssignment] | None:
    """The partitions of a topic znode that is not being reassigned and whose keys and
    replicas are plain (digits only, 32-bit ints), or None for the general path. A controller
    reads every topic znode on failover and on each creation, so the common case skips the
    readers that only matter for an error message."""
    assert isinstance(fields, dict)  # _root checked it
    for key in ("adding_replicas", "removing_replicas"):
        moving = fields.get(key, {})
        if type(moving) is not dict or moving:
            return None
    raw = fields.get("partitions")
    if type(raw) is not dict:
        return None if "partitions" in fields else {}
    out: dict[int, ReplicaAssignment] = {}
    for key, replicas in raw.items():
        # ASCII digits only: what Integer.parseInt reads as a non-negative number.
        if not (key.isascii() and key.isdigit() and len(key) <= 10) or type(replicas) is not list:
            return None
        partition = int(key)
        if partition > INT_MAX:
            return None
        for r in replicas:
            if type(r) is not int or not INT_MIN <= r <= INT_MAX:
                return None
        out[partition] = ReplicaAssignment(tuple(replicas))
    return out


def decode_topic(path: str, data: bytes | None) -> TopicZNodeData:
    """TopicZNode.decode: version ignored; topic_id, adding_replicas, removing_replicas and
    partitions are all optional."""
    root = json_root(path, data)
    topic_id = None
    raw_id = root.get("topic_id")
    if raw_id is not None:
        try:
            topic_id = str(Uuid.from_string(raw_id.string()))
        except IllegalArgumentException as e:
            raise raw_id.fail(str(e)) from e
    fast = _plain_partitions(root.value)
    if fast is not None:
        return TopicZNodeData(topic_id, fast)
    return TopicZNodeData(topic_id, _partitions(root))


def _partitions(root: JsonReader) -> dict[int, ReplicaAssignment]:
    adding = _replica_lists(root, "adding_replicas")
    removing = _replica_lists(root, "removing_replicas")
    partitions: dict[int, ReplicaAssignment] = {}
    raw_partitions = root.get("partitions")
    if raw_partitions is not None:
        for key, replicas in raw_partitions.items():
            partitions[_partition_number(replicas, key)] = ReplicaAssignment.of(
                replicas.int32_list(), adding(key), removing(key)
            )
    return partitions


# ---- /brokers/topics/<t>/partitions/<p>/state -------------------------------------------------


def encode_partition_state(state: LeaderIsrAndControllerEpoch) -> bytes:
    """TopicPartitionStateZNode.encode; leader_recovery_state is written only when RECOVERING."""
    lai = state.leader_and_isr
    content: dict[str, object] = {
        "version": 1,
        "leader": lai.leader,
        "leader_epoch": lai.leader_epoch,
        "controller_epoch": state.controller_epoch,
        "isr": list(lai.isr),
    }
    if lai.leader_recovery_state is not LeaderRecoveryState.RECOVERED:
        content["leader_recovery_state"] = int(lai.leader_recovery_state)
    return encode_plain_json(content)  # integers only; tens of thousands per broker failure


def decode_partition_state(
    path: str, data: bytes | None, version: int
) -> LeaderIsrAndControllerEpoch:
    """TopicPartitionStateZNode.decode; `version` is the znode's zkVersion (the partition epoch)."""
    root = json_root(path, data)
    leader = root["leader"].int32()
    leader_epoch = root["leader_epoch"].int32()
    isr = root["isr"].int32_list()
    recovery = LeaderRecoveryState.RECOVERED
    raw_recovery = root.get("leader_recovery_state")
    if raw_recovery is not None:
        value = raw_recovery.int32()
        if value not in (s.value for s in LeaderRecoveryState):
            raise raw_recovery.fail(f"Value {value} is not a valid leader recovery state")
        recovery = LeaderRecoveryState(value)
    controller_epoch = root["controller_epoch"].int32()
    return LeaderIsrAndControllerEpoch(
        LeaderAndIsr(
            leader=leader,
            isr=tuple(isr),
            leader_epoch=leader_epoch,
            leader_recovery_state=recovery,
            partition_epoch=version,
        ),
        controller_epoch,
    )


# ---- /admin/delete_topics/<t>, /brokers/seqid, partitions znodes: null data -------------------

DELETE_TOPIC_MARKER_DATA: Final = NULL_DATA
BROKER_SEQUENCE_ID_DATA: Final = NULL_DATA
TOPIC_PARTITIONS_DATA: Final = NULL_DATA


# ---- /config/<type>/<name> and /config/changes ------------------------------------------------


def encode_config(config: Mapping[str, str]) -> bytes:
    """ConfigEntityZNode.encode: `{"version":1,"config":{...}}`, every value a string."""
    for key, value in config.items():
        if not isinstance(value, str):
            raise ValueError(f"config {key!r} has a non-string value {value!r}")
    return encode_json({"version": 1, "config": dict(config)})


def decode_config(path: str, data: bytes | None) -> dict[str, str]:
    """ConfigEntityZNode.decode: null data or a missing `config` is an empty config."""
    if not data:
        return {}
    root = json_root(path, data)
    config = root.optional("config")
    if config is None:
        return {}
    return {key: value.string() for key, value in config.items()}


@dataclass(frozen=True, slots=True)
class ConfigChangeNotification:
    """A config change notification; `entity_path` is `<entity type>/<entity name>`.

    Version 1 (`entity_type` + `entity_name`) is read into the same shape. A version 2 path is
    kept as written: ZkConfigManager only acts on one that starts with a known type and '/'.
    """

    version: int
    entity_path: str

    @property
    def entity_type(self) -> str | None:
        index = self.entity_path.find("/")
        return self.entity_path[:index] if index >= 0 else None

    @property
    def entity_name(self) -> str | None:
        index = self.entity_path.find("/")
        return self.entity_path[index + 1 :] if index >= 0 else None


def encode_config_change(entity_path: str) -> bytes:
    """ConfigEntityChangeNotificationSequenceZNode.encode (version 2)."""
    return encode_json({"version": 2, "entity_path": entity_path})


def decode_config_change(path: str, data: bytes | None) -> ConfigChangeNotification:
    """ZkConfigManager's reading: version 1 or 2. (Kafka skips non-JSON notifications as left
    over from the old TopicConfigManager; here they raise ZNodeDataError for the caller to skip.)"""
    root = json_root(path, data)
    version = root["version"].int32()
    if version == 1:
        entity_type = root.optional("entity_type")
        if entity_type is None or entity_type.string() not in (
            ConfigType.TOPIC,
            ConfigType.CLIENT,
        ):
            raise root.fail(
                "Version 1 config change notification must have 'entity_type' set to "
                "'clients' or 'topics'."
            )
        entity_name = root.optional("entity_name")
        if entity_name is None:
            raise root.fail("Version 1 config change notification does not specify 'entity_name'.")
        return ConfigChangeNotification(1, f"{entity_type.string()}/{entity_name.string()}")
    if version == 2:
        entity_path = root.optional("entity_path")
        if entity_path is None:
            raise root.fail("Version 2 config change notification must specify 'entity_path'.")
        return ConfigChangeNotification(2, entity_path.string())
    raise root.fail(
        f"Config change notification has unsupported version '{version}', supported versions "
        "are 1 and 2."
    )


# ---- /admin/reassign_partitions and /admin/preferred_replica_election -------------------------


def encode_reassignment(reassignment: Mapping[TopicPartition, Sequence[int]]) -> bytes:
    """ReassignPartitionsZNode.encode (deprecated since 2.4, still read by 2.8 and 3.x)."""
    return encode_json(
        {
            "version": 1,
            "partitions": [
                {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas)}
                for tp, replicas in reassignment.items()
            ],
        }
    )


def decode_reassignment(path: str, data: bytes | None) -> dict[TopicPartition, list[int]]:
    """ReassignPartitionsZNode.decode; a partition listed twice keeps its last replicas."""
    root = json_root(path, data)
    out: dict[TopicPartition, list[int]] = {}
    for item in root["partitions"].array():
        tp = TopicPartition(item["topic"].string(), _non_negative(item["partition"], "partition"))
        out[tp] = item["replicas"].int32_list()
    return out


def encode_preferred_replica_election(partitions: Iterable[TopicPartition]) -> bytes:
    return encode_json({"version": 1, "partitions": _encode_topic_partitions(partitions)})


def decode_preferred_replica_election(path: str, data: bytes | None) -> frozenset[TopicPartition]:
    return _topic_partitions(json_root(path, data))


# ---- /isr_change_notification and /log_dir_event_notification ---------------------------------

ISR_CHANGE_NOTIFICATION_VERSION: Final = 1
LOG_DIR_FAILURE_EVENT: Final = 1


def encode_isr_change(partitions: Iterable[TopicPartition]) -> bytes:
    return encode_json(
        {
            "version": ISR_CHANGE_NOTIFICATION_VERSION,
            "partitions": _encode_topic_partitions(partitions),
        }
    )


def decode_isr_change(path: str, data: bytes | None) -> frozenset[TopicPartition]:
    return _topic_partitions(json_root(path, data))


def encode_log_dir_event(broker_id: int) -> bytes:
    return encode_json({"version": 1, "broker": broker_id, "event": LOG_DIR_FAILURE_EVENT})


def decode_log_dir_event(path: str, data: bytes | None) -> int:
    """The broker whose log directory failed (Kafka reads nothing else)."""
    return json_root(path, data)["broker"].int32()


# ---- /cluster/id, /feature, /latest_producer_id_block -----------------------------------------


def encode_cluster_id(cluster_id: str) -> bytes:
    """ClusterIdZNode.toJson: the version is the string "1"."""
    return encode_json({"version": "1", "id": cluster_id})


def decode_cluster_id(path: str, data: bytes | None) -> str:
    return json_root(path, data)["id"].string()


FEATURE_ZNODE_VERSION: Final = 2
"""FeatureZNode.V2: what IBP 3.3 and later write (version 1 also had min_version_level)."""


class FeatureZNodeStatus(IntEnum):
    DISABLED = 0
    ENABLED = 1


@dataclass(frozen=True, slots=True)
class FeatureZNodeData:
    """/feature (KIP-584): finalized features as their max version level (3.x's model).

    Version 1 also stores a min level; encoding writes it equal to the max, as 3.x does.
    """

    version: int
    status: FeatureZNodeStatus
    features: Mapping[str, int] = field(default_factory=dict)


def encode_feature(node: FeatureZNodeData) -> bytes:
    if node.version not in (1, 2):
        raise ValueError(f"feature znode version {node.version} is not 1 or 2")
    levels: dict[str, dict[str, int]] = {}
    for name, level in node.features.items():
        levels[name] = {"max_version_level": level}
        if node.version == 1:
            levels[name]["min_version_level"] = level
    return encode_json({"version": node.version, "status": int(node.status), "features": levels})


def decode_feature(path: str, data: bytes | None) -> FeatureZNodeData:
    """FeatureZNode.decode (3.x): versions 1 and 2; a status and a features map are required."""
    root = json_root(path, data)
    version = root["version"].int32()
    if version < 1 or version > 2:
        raise root.fail(f"Unsupported version: {version} of feature information")
    status_reader = root.optional("status")
    if status_reader is None:
        raise root.fail("Status can not be absent in feature information")
    status = status_reader.int32()
    if status not in (s.value for s in FeatureZNodeStatus):
        raise status_reader.fail(f"Malformed status: {status} found in feature information")
    features = root.optional("features")
    if features is None:
        raise root.fail("Features map can not be absent")
    finalized: dict[str, int] = {}
    for name, ranges in features.items():
        levels = _version_map(ranges)
        if version == 1 and "min_version_level" not in levels:
            raise ranges.fail(f"min_version_level absent in [{levels}]")
        if "max_version_level" not in levels:
            raise ranges.fail(f"max_version_level absent in [{levels}]")
        max_level = levels["max_version_level"]
        if version == 1:
            min_level = levels["min_version_level"]
            if min_level < 1 or max_level < min_level:
                raise ranges.fail(
                    "Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received "
                    f"minValue: {min_level}, maxValue: {max_level}"
                )
        if max_level < 1:
            raise ranges.fail(f"Expected maxValue >= 1, but received maxValue: {max_level}")
        if max_level > SHORT_MAX:
            raise ranges.fail(f"max_version_level {max_level} does not fit a short")
        finalized[name] = max_level
    return FeatureZNodeData(version, FeatureZNodeStatus(status), finalized)


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """The last producer id block handed out: ids `block_start`..`block_end`, both inclusive."""

    broker_id: int
    block_start: int
    block_end: int


def encode_producer_id_block(block: ProducerIdBlock) -> bytes:
    """Start and end are written as strings (they are longs)."""
    return encode_json(
        {
            "version": 1,
            "broker": block.broker_id,
            "block_start": str(block.block_start),
            "block_end": str(block.block_end),
        }
    )


def decode_producer_id_block(path: str, data: bytes | None) -> ProducerIdBlock:
    root = json_root(path, data)
    broker_id = root["broker"].int32()
    bounds = []
    for key in ("block_start", "block_end"):
        reader = root[key]
        value = parse_int(reader.string(), LONG_MIN, LONG_MAX)
        if value is None:
            raise reader.fail(f"{reader.value!r} is not a 64-bit integer")
        bounds.append(value)
    start, end = bounds
    # 3.x keeps the block's size as an int (Math.toIntExact).
    if not INT_MIN <= end - start + 1 <= INT_MAX:
        raise root.fail(f"block size {end - start + 1} does not fit a 32-bit integer")
    return ProducerIdBlock(broker_id, start, end)
