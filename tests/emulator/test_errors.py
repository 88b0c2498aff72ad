"""Status objects and field-error texts match apimachinery's formatting."""

from __future__ import annotations

from kube_api_emulator import errors as fe


def test_invalid_value_prints_numbers_bare_and_strings_quoted() -> None:
    assert str(fe.invalid("spec.partitions", 0, "too small")) == (
        "spec.partitions: Invalid value: 0: too small"
    )
    assert str(fe.invalid("spec.name", "a b", "bad")) == 'spec.name: Invalid value: "a b": bad'
    assert str(fe.invalid("spec.flag", True, "bad")) == "spec.flag: Invalid value: true: bad"


def test_null_value_prints_as_quoted_null() -> None:
    assert str(fe.invalid("<nil>", None, "x")) == '<nil>: Invalid value: "null": x'


def test_required_forbidden_and_too_long_omit_the_value() -> None:
    assert str(fe.required("spec.partitions")) == "spec.partitions: Required value"
    assert str(fe.forbidden("metadata.finalizers", "no")) == "metadata.finalizers: Forbidden: no"
    assert str(fe.too_long("spec.topicName", 249)) == (
        "spec.topicName: Too long: may not be more than 249 bytes"
    )


def test_not_supported_lists_quoted_values() -> None:
    err = fe.not_supported("spec.cleanupPolicy", "x", ["delete", "compact"])
    assert str(err) == (
        'spec.cleanupPolicy: Unsupported value: "x": supported values: "delete", "compact"'
    )


def test_too_many_prints_actual_count() -> None:
    assert str(fe.too_many("spec.items", 4, 3)) == (
        "spec.items: Too many: 4: must have at most 3 items"
    )


def test_invalid_object_status_single_and_multiple_errors() -> None:
    one = fe.invalid_object("kto.dev", "KafkaTopic", "t", [fe.required("spec.partitions")])
    status = one.status()
    assert status["code"] == 422
    assert status["reason"] == "Invalid"
    assert status["message"] == 'KafkaTopic.kto.dev "t" is invalid: spec.partitions: Required value'
    assert status["details"] == {
        "name": "t",
        "kind": "KafkaTopic",
        "group": "kto.dev",
        "causes": [
            {
                "reason": "FieldValueRequired",
                "message": "Required value",
                "field": "spec.partitions",
            }
        ],
    }
    two = fe.invalid_object(
        "", "ConfigMap", "c", [fe.required("data"), fe.invalid("data.x", 1, "bad")]
    )
    assert (
        two.message
        == 'ConfigMap "c" is invalid: [data: Required value, data.x: Invalid value: 1: bad]'
    )


def test_not_found_and_conflict_messages() -> None:
    nf = fe.not_found("kto.dev", "kafkatopics", "t").status()
    assert nf["message"] == 'kafkatopics.kto.dev "t" not found'
    assert nf["details"] == {"name": "t", "kind": "kafkatopics", "group": "kto.dev"}
    core = fe.not_found("", "namespaces", "x").status()
    assert core["message"] == 'namespaces "x" not found'
    assert "group" not in core["details"]
    assert fe.conflict("", "configmaps", "c").message == (
        'Operation cannot be fulfilled on configmaps "c": the object has been modified; please '
        "apply your changes to the latest version and try again"
    )
    assert fe.already_exists("", "configmaps", "c").code == 409
