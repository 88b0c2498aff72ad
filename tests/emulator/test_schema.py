"""Structural schemas: pruning, defaulting and validation with kube-apiserver's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kube_api_emulator.schema import apply_defaults, prune, validate

SPEC: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["partitions"],
            "properties": {
                "partitions": {"type": "integer", "minimum": 1, "maximum": 100},
                "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0},
                "topicName": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 10,
                    "pattern": "^[a-z.]*$",
                },
                "policy": {"type": "string", "enum": ["delete", "compact"]},
                "replicas": {"type": "integer", "default": 1},
                "brokers": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "integer"},
                },
                "config": {
                    "type": "object",
                    "additionalProperties": {"x-kubernetes-int-or-string": True},
                },
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"level": {"type": "string", "default": "info"}},
                },
                "opaque": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "maybe": {"type": "string", "nullable": True},
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
            },
        },
    },
}


def messages(obj: dict[str, Any]) -> list[str]:
    return [str(e) for e in validate(obj, SPEC)]


def spec(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1", "kind": "T", "metadata": {"name": "t"}, "spec": fields}


def test_valid_object_has_no_errors() -> None:
    assert messages(spec(partitions=3, topicName="a.b", config={"x": 1, "y": "z"})) == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"partitions": 0},
            "spec.partitions: Invalid value: 0: spec.partitions in body should be greater than "
            "or equal to 1",
        ),
        (
            {"partitions": 101},
            "spec.partitions: Invalid value: 101: spec.partitions in body should be less than "
            "or equal to 100",
        ),
        (
            {"partitions": "3"},
            'spec.partitions: Invalid value: "string": spec.partitions in body must be of type '
            'integer: "string"',
        ),
        (
            {"partitions": 1.5},
            'spec.partitions: Invalid value: "number": spec.partitions in body must be of type '
            'integer: "number"',
        ),
        ({}, "spec.partitions: Required value"),
        (
            {"partitions": 1, "ratio": 0},
            "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0",
        ),
        (
            {"partitions": 1, "topicName": ""},
            'spec.topicName: Invalid value: "": spec.topicName in body should be at least 1 '
            "chars long",
        ),
        (
            {"partitions": 1, "topicName": "abcdefghijk"},
            "spec.topicName: Too long: may not be more than 10 bytes",
        ),
        (
            {"partitions": 1, "topicName": "A"},
            "spec.topicName: Invalid value: \"A\": spec.topicName in body should match '^[a-z.]*$'",
        ),
        (
            {"partitions": 1, "policy": "x"},
            'spec.policy: Unsupported value: "x": supported values: "delete", "compact"',
        ),
        (
            {"partitions": 1, "brokers": []},
            "spec.brokers: Invalid value: 0: spec.brokers in body should have at least 1 items",
        ),
        (
            {"partitions": 1, "brokers": [1, 2, 3, 4]},
            "spec.brokers: Too many: 4: must have at most 3 items",
        ),
        (
            {"partitions": 1, "brokers": [1, "2"]},
            'spec.brokers[1]: Invalid value: "string": spec.brokers[1] in body must be of type '
            'integer: "string"',
        ),
        (
            {"partitions": 1, "config": {"k": True}},
            'spec.config.k: Invalid value: "boolean": spec.config.k in body must be of type '
            'integer,string: "boolean"',
        ),
        (
            {"partitions": 1, "tags": ["a", "a"]},
            'spec.tags[1]: Duplicate value: "a"',
        ),
        (
            {"partitions": None},
            "spec.partitions: Required value",
        ),
    ],
)
def test_validation_messages(fields: dict[str, Any], message: str) -> None:
    assert messages(spec(**fields)) == [message]


def test_nullable_accepts_null_and_others_reject_it() -> None:
    assert messages(spec(partitions=1, maybe=None)) == []
    assert messages(spec(partitions=1, topicName=None)) == [
        'spec.topicName: Invalid value: "null": spec.topicName in body must be of type string: '
        '"null"'
    ]


def test_integral_float_is_an_integer() -> None:
    assert messages(spec(partitions=3.0)) == []


def test_prune_drops_unknown_fields_and_reports_their_paths() -> None:
    obj = spec(partitions=1, bogus=1, nested={"level": "x", "extra": 2}, opaque={"any": {"x": 1}})
    obj["metadata"]["bogusMeta"] = 1
    obj["topLevel"] = True
    unknown = prune(obj, SPEC)
    assert sorted(unknown) == ["metadata.bogusMeta", "spec.bogus", "spec.nested.extra", "topLevel"]
    assert obj["spec"] == {"partitions": 1, "nested": {"level": "x"}, "opaque": {"any": {"x": 1}}}
    assert obj["metadata"] == {"name": "t"}
    assert obj["apiVersion"] == "kto.dev/v1"


def test_prune_keeps_additional_properties_and_prunes_inside_list_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"a": {"type": "string"}}},
                    },
                    "map": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "properties": {"b": {"type": "string"}},
                        },
                    },
                },
            }
        },
    }
    obj = {"spec": {"items": [{"a": "x", "z": 1}], "map": {"k": {"b": "y", "z": 2}}}}
    assert prune(obj, schema) == ["spec.items[0].z", "spec.map.k.z"]
    assert obj == {"spec": {"items": [{"a": "x"}], "map": {"k": {"b": "y"}}}}


def test_defaults_apply_recursively_and_keep_given_values() -> None:
    obj = spec(partitions=1)
    apply_defaults(obj, SPEC)
    assert obj["spec"]["replicas"] == 1
    assert obj["spec"]["nested"] == {"level": "info"}
    given = spec(partitions=1, replicas=3, nested={"level": "debug"})
    apply_defaults(given, SPEC)
    assert given["spec"]["replicas"] == 3
    assert given["spec"]["nested"] == {"level": "debug"}


def test_defaults_replace_null_of_non_nullable_fields() -> None:
    obj = spec(partitions=1, replicas=None)
    apply_defaults(obj, SPEC)
    assert obj["spec"]["replicas"] == 1
