"""The `/kto/controlled_shutdown/<id>` znode: the broker's ControlledShutdownRequest, and the
controller's result written back into the same znode."""

from __future__ import annotations

from kafka_topic_operator.broker_channel.field_readers import (
    read_array,
    read_error_name,
    read_int64,
    read_partition,
)
from kafka_topic_operator.broker_channel.framing import CHANNEL_VERSION, read_root, read_version
from kafka_topic_operator.broker_channel.messages import (
    ControlledShutdownRequest,
    ControlledShutdownResult,
    ControlledShutdownZNode,
    Errors,
)
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk.json_codec import encode_json


def encode_controlled_shutdown(
    request: ControlledShutdownRequest, result: ControlledShutdownResult | None = None
) -> bytes:
    """Without a result: what the broker writes. With one: what the controller writes back."""
    content: dict[str, object] = {
        "version": CHANNEL_VERSION,
        "broker_id": request.broker_id,
        "broker_epoch": request.broker_epoch,
    }
    if result is not None:
        content["error"] = str(result.error)
        content["remaining_partitions"] = [
            {"topic": tp.topic, "partition": tp.partition}
            for tp in dict.fromkeys(result.remaining_partitions)
        ]
    return encode_json(content)


def decode_controlled_shutdown(path: str, data: bytes | None) -> ControlledShutdownZNode:
    root = read_root(path, data)
    read_version(root)
    request = ControlledShutdownRequest(root["broker_id"].int32(), read_int64(root["broker_epoch"]))
    raw_error = root.optional("error")
    raw_remaining = root.optional("remaining_partitions")
    if raw_error is None and raw_remaining is None:
        return ControlledShutdownZNode(request)
    remaining = tuple(
        TopicPartition(item["topic"].string(), read_partition(item["partition"]))
        for item in read_array(raw_remaining)
    )
    error = read_error_name(raw_error) if raw_error is not None else Errors.NONE.value
    return ControlledShutdownZNode(request, ControlledShutdownResult(error, remaining))
