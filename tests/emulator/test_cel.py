"""x-kubernetes-validations: CEL rules with self/oldSelf, messages, reasons, ratcheting."""

from __future__ import annotations

from typing import Any

import pytest

from kube_api_emulator.cel import compile_schema, validate_rules


def schema_with(rules: list[dict[str, Any]], **prop: Any) -> dict[str, Any]:
    field = {"type": "integer", **prop}
    return {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "partitions": {**field, "x-kubernetes-validations": rules},
                    "name": {"type": "string"},
                },
            }
        },
    }


def check(schema: dict[str, Any], new: Any, old: Any = None) -> list[str]:
    errs = validate_rules(new, old, schema, has_old=old is not None)
    return [str(e) for e in errs]


def obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "kto.dev/v1", "kind": "T", "metadata": {"name": "t"}, "spec": spec}


GROW_ONLY = [{"rule": "self >= oldSelf", "message": "partitions cannot be decreased"}]


def test_transition_rule_uses_old_self_only_on_update() -> None:
    schema = schema_with(GROW_ONLY)
    assert check(schema, obj(partitions=1)) == []
    assert check(schema, obj(partitions=5), obj(partitions=3)) == []
    assert check(schema, obj(partitions=2), obj(partitions=3)) == [
        'spec.partitions: Invalid value: "integer": partitions cannot be decreased'
    ]


def test_transition_rule_is_skipped_when_the_field_is_new() -> None:
    schema = schema_with(GROW_ONLY)
    assert check(schema, obj(partitions=2), obj(name="x")) == []


def test_immutability_rule_and_default_message() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.name == oldSelf.name"}],
                "properties": {"name": {"type": "string"}},
            }
        },
    }
    assert check(schema, obj(name="b"), obj(name="a")) == [
        'spec: Invalid value: "object": failed rule: self.name == oldSelf.name'
    ]
    assert check(schema, obj(name="a"), obj(name="a")) == []


def test_message_expression_reason_and_field_path() -> None:
    rules = [
        {
            "rule": "self.partitions <= 10",
            "messageExpression": "'too many partitions: ' + string(self.partitions)",
            "reason": "FieldValueForbidden",
            "fieldPath": ".partitions",
        }
    ]
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": rules,
                "properties": {"partitions": {"type": "integer"}},
            }
        },
    }
    assert check(schema, obj(partitions=11)) == [
        "spec.partitions: Forbidden: too many partitions: 11"
    ]


def test_root_rules_see_metadata_name_only() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('t')", "message": "bad name"},
            {"rule": "!has(self.metadata.labels)", "message": "labels visible"},
        ],
        "properties": {"spec": {"type": "object"}},
    }
    named = obj()
    named["metadata"]["labels"] = {"a": "b"}
    assert check(schema, named) == []
    other = obj()
    other["metadata"]["name"] = "x"
    assert check(schema, other) == ['<nil>: Invalid value: "object": bad name']


def test_ratcheting_skips_unchanged_values_for_non_transition_rules() -> None:
    schema = schema_with([{"rule": "self < 5", "message": "at most 4"}])
    assert check(schema, obj(partitions=7)) == [
        'spec.partitions: Invalid value: "integer": at most 4'
    ]
    assert check(schema, obj(partitions=7, name="x"), obj(partitions=7)) == []
    assert check(schema, obj(partitions=8), obj(partitions=7)) == [
        'spec.partitions: Invalid value: "integer": at most 4'
    ]


def test_rules_on_map_values_and_list_items() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "config": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "string",
                            "x-kubernetes-validations": [{"rule": "self.size() < 4"}],
                        },
                    },
                    "brokers": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["id"],
                        "items": {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}, "rack": {"type": "string"}},
                            "x-kubernetes-validations": [
                                {"rule": "self.rack == oldSelf.rack", "message": "rack is fixed"}
                            ],
                        },
                    },
                },
            }
        },
    }
    assert check(schema, obj(config={"a": "long value"})) == [
        'spec.config[a]: Invalid value: "string": failed rule: self.size() < 4'
    ]
    old = obj(brokers=[{"id": 1, "rack": "a"}, {"id": 2, "rack": "b"}])
    new = obj(brokers=[{"id": 2, "rack": "c"}, {"id": 3, "rack": "z"}])
    assert check(schema, new, old) == ['spec.brokers[0]: Invalid value: "object": rack is fixed']


def test_optional_old_self() -> None:
    schema = schema_with(
        [
            {
                "rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                "optionalOldSelf": True,
                "message": "no decrease",
            }
        ]
    )
    assert check(schema, obj(partitions=1)) == []
    assert check(schema, obj(partitions=1), obj(partitions=2)) == [
        'spec.partitions: Invalid value: "integer": no decrease'
    ]


def test_kubernetes_string_helpers_are_available() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "self.lowerAscii() == self", "message": "lowercase"},
                            {"rule": "self.split('.').size() <= 2", "message": "one dot"},
                        ],
                    }
                },
            }
        },
    }
    assert check(schema, obj(name="a.b")) == []
    assert check(schema, obj(name="A.b.c")) == [
        'spec.name: Invalid value: "string": lowercase',
        'spec.name: Invalid value: "string": one dot',
    ]


def test_evaluation_errors_are_reported_with_the_rule() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.missing > 1"}],
                "properties": {"missing": {"type": "integer"}},
            }
        },
    }
    (message,) = check(schema, obj())
    assert message.startswith('spec: Invalid value: "object": ')
    assert message.endswith("evaluating rule: self.missing > 1")


@pytest.mark.parametrize("rule", ["self >", "self.(x", "'unterminated"])
def test_compile_errors_are_reported_per_rule(rule: str) -> None:
    schema = schema_with([{"rule": rule}])
    errs = compile_schema(schema, "spec.versions[0].schema.openAPIV3Schema")
    assert len(errs) == 1
    assert errs[0].field == (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[partitions]"
        ".x-kubernetes-validations[0].rule"
    )
    assert "compilation failed" in str(errs[0])
