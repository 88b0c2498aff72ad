"""The request decoder's fast path: plain partition states (every field of its type, as the
controller writes them) built straight from the parsed JSON. A broker reads thousands per request,
and the general path's readers matter only for an error message; anything else (None here) takes
the general path, which names what is wrong."""

from __future__ import annotations

from typing import Final, NamedTuple

from kafka_topic_operator.broker_channel.messages import (
    LeaderAndIsrPartitionState,
    UpdateMetadataPartitionState,
)
from kafka_topic_operator.kafka.java import INT_MAX, INT_MIN
from kafka_topic_operator.kafka.leader_and_isr import LeaderRecoveryState
from kafka_topic_operator.zk.json_codec import is_int32_array


def _plain_ints(value: object) -> tuple[int, ...] | None:
    return tuple(value) if is_int32_array(value) else None


def _plain_int32(value: object) -> bool:
    return type(value) is int and INT_MIN <= value <= INT_MAX


def _plain_optional_ints(fields: dict[str, object], key: str) -> tuple[int, ...] | None:
    value = fields.get(key)
    return () if value is None else _plain_ints(value)


class _PlainCore(NamedTuple):
    """What both kinds of partition state share: topic, partition, four 32-bit numbers (in
    the order `number_keys` names them), ISR and replicas."""

    fields: dict[str, object]
    topic: str
    partition: int
    numbers: tuple[int, int, int, int]
    isr: tuple[int, ...]
    replicas: tuple[int, ...]


def _plain_core(fields: object, number_keys: tuple[str, str, str, str]) -> _PlainCore | None:
    if type(fields) is not dict:
        return None
    try:
        topic, partition = fields["topic"], fields["partition"]
        numbers = tuple(fields[key] for key in number_keys)
        isr, replicas = _plain_ints(fields["isr"]), _plain_ints(fields["replicas"])
    except KeyError:
        return None
    if (
        type(topic) is not str
        or not (_plain_int32(partition) and partition >= 0)
        or not all(_plain_int32(n) for n in numbers)
        or isr is None
        or replicas is None
    ):
        return None
    return _PlainCore(fields, topic, partition, numbers, isr, replicas)


_LEADER_AND_ISR_NUMBERS: Final = ("controller_epoch", "leader", "leader_epoch", "partition_epoch")
_UPDATE_METADATA_NUMBERS: Final = ("controller_epoch", "leader", "leader_epoch", "zk_version")


def plain_leader_and_isr_state(fields: object) -> LeaderAndIsrPartitionState | None:
    core = _plain_core(fields, _LEADER_AND_ISR_NUMBERS)
    if core is None:
        return None
    adding = _plain_optional_ints(core.fields, "adding_replicas")
    removing = _plain_optional_ints(core.fields, "removing_replicas")
    is_new = core.fields.get("is_new", False)
    recovery = core.fields.get("leader_recovery_state", 0)
    if (
        adding is None
        or removing is None
        or not (is_new is None or type(is_new) is bool)
        or not (recovery is None or (type(recovery) is int and recovery in (0, 1)))
    ):
        return None
    controller_epoch, leader, leader_epoch, partition_epoch = core.numbers
    return LeaderAndIsrPartitionState(
        core.topic, core.partition, controller_epoch, leader, leader_epoch, core.isr,
        partition_epoch, core.replicas, adding, removing, bool(is_new),
        LeaderRecoveryState(recovery or 0),
    )  # fmt: skip


def plain_update_metadata_state(fields: object) -> UpdateMetadataPartitionState | None:
    core = _plain_core(fields, _UPDATE_METADATA_NUMBERS)
    if core is None:
        return None
    offline = _plain_optional_ints(core.fields, "offline_replicas")
    if offline is None:
        return None
    controller_epoch, leader, leader_epoch, zk_version = core.numbers
    return UpdateMetadataPartitionState(
        core.topic, core.partition, controller_epoch, leader, leader_epoch, core.isr,
        zk_version, core.replicas, offline,
    )  # fmt: skip
