"""Topic and broker dynamic configs through the Admin API (pure: what to send, what came back).

A topic's own configs are those DescribeConfigs gives with source DYNAMIC_TOPIC_CONFIG (what its
config znode holds in ZooKeeper mode); a broker's are those with source DYNAMIC_BROKER_CONFIG
(its `/config/brokers/<id>` znode), not the cluster-wide defaults (DYNAMIC_DEFAULT_BROKER_CONFIG,
`/config/brokers/<default>`) nor its static settings. Changes go as IncrementalAlterConfigs
operations: SET a value, or DELETE a key (None).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

from kafka.admin import ConfigResource, ConfigResourceType

ConfigKind = Literal["topic", "broker"]

RESOURCE_TYPES: Final[Mapping[ConfigKind, Any]] = {
    "topic": ConfigResourceType.TOPIC,
    "broker": ConfigResourceType.BROKER,
}
OWN_SOURCES: Final[Mapping[ConfigKind, str]] = {
    "topic": "DYNAMIC_TOPIC_CONFIG",
    "broker": "DYNAMIC_BROKER_CONFIG",
}
DELETE: Final = ("DELETE", None)


def describe_resources(
    kind: ConfigKind, names: Collection[str], keys: Collection[str]
) -> list[Any]:
    """DescribeConfigs' resources: `keys` of each topic or broker (`names`; a broker by its id)."""
    return [
        ConfigResource(RESOURCE_TYPES[kind], name, dict.fromkeys(sorted(keys))) for name in names
    ]


def own_configs(kind: ConfigKind, entries: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """The configs a topic or broker has of its own among describe_configs()' entries."""
    return {
        key: str(entry["value"])
        for key, entry in sorted(entries.items())
        if entry.get("config_source") == OWN_SOURCES[kind] and entry.get("value") is not None
    }


def alter_resources(kind: ConfigKind, changes: Mapping[str, Mapping[str, str | None]]) -> list[Any]:
    """IncrementalAlterConfigs' resources: each key SET to its value, or DELETEd for None;
    a topic or broker without changes is left out."""
    return [
        ConfigResource(
            RESOURCE_TYPES[kind],
            name,
            {key: DELETE if value is None else value for key, value in sorted(ops.items())},
        )
        for name, ops in sorted(changes.items())
        if ops
    ]
