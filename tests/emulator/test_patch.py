"""The patch formats: RFC 7386 merge patch, RFC 6902 JSON patch, strategic merge patch."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kube_api_emulator.patch import (
    PatchError,
    deep_copy,
    json_patch,
    merge_patch,
    strategic_merge_patch,
)


# RFC 7386 appendix A examples.
@pytest.mark.parametrize(
    ("target", "patch", "result"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_rfc7386_examples(target: Any, patch: Any, result: Any) -> None:
    assert merge_patch(target, patch) == result


def test_merge_patch_does_not_mutate_inputs() -> None:
    target = {"a": {"b": 1}}
    merge_patch(target, {"a": {"b": 2}})
    assert target == {"a": {"b": 1}}


def test_json_patch_operations() -> None:
    doc = {"foo": "bar", "list": [1, 2], "obj": {"k": "v"}}
    ops = [
        {"op": "add", "path": "/baz", "value": "qux"},
        {"op": "add", "path": "/list/1", "value": 9},
        {"op": "add", "path": "/list/-", "value": 3},
        {"op": "replace", "path": "/foo", "value": "boo"},
        {"op": "remove", "path": "/obj/k"},
        {"op": "copy", "from": "/baz", "path": "/obj/copied"},
        {"op": "move", "from": "/baz", "path": "/moved"},
        {"op": "test", "path": "/list", "value": [1, 9, 2, 3]},
    ]
    assert json_patch(doc, ops) == {
        "foo": "boo",
        "list": [1, 9, 2, 3],
        "obj": {"copied": "qux"},
        "moved": "qux",
    }
    assert doc["foo"] == "bar"


def test_json_patch_escaped_pointer() -> None:
    doc = {"metadata": {"annotations": {"kto.dev/x": "1", "a~b": "2"}}}
    out = json_patch(
        doc,
        [
            {"op": "remove", "path": "/metadata/annotations/kto.dev~1x"},
            {"op": "replace", "path": "/metadata/annotations/a~0b", "value": "3"},
        ],
    )
    assert out == {"metadata": {"annotations": {"a~b": "3"}}}


def test_json_patch_failed_test_is_unprocessable() -> None:
    doc = {"metadata": {"resourceVersion": "5"}}
    with pytest.raises(PatchError) as info:
        json_patch(doc, [{"op": "test", "path": "/metadata/resourceVersion", "value": "4"}])
    assert not info.value.malformed
    assert "testing value /metadata/resourceVersion failed" in str(info.value)


def test_json_patch_test_distinguishes_types() -> None:
    with pytest.raises(PatchError):
        json_patch({"a": 1}, [{"op": "test", "path": "/a", "value": True}])


@pytest.mark.parametrize(
    "ops",
    [
        [{"op": "remove", "path": "/missing"}],
        [{"op": "replace", "path": "/missing", "value": 1}],
        [{"op": "add", "path": "/a/b/c", "value": 1}],
        [{"op": "add", "path": "/list/7", "value": 1}],
    ],
)
def test_json_patch_missing_paths_fail(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(PatchError):
        json_patch({"list": []}, ops)


def test_json_patch_malformed_operations_are_bad_requests() -> None:
    with pytest.raises(PatchError) as info:
        json_patch({}, [{"op": "frobnicate", "path": "/a"}])
    assert info.value.malformed
    with pytest.raises(PatchError) as info:
        json_patch({}, {"op": "add"})
    assert info.value.malformed


def deployment(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": list(containers)}}}}


def test_strategic_merge_patch_merges_containers_by_name() -> None:
    live = deployment(
        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
        {"name": "sidecar", "image": "side:1"},
    )
    patch = deployment({"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}]})
    out = strategic_merge_patch(live, patch)
    containers = out["spec"]["template"]["spec"]["containers"]
    assert containers == [
        {
            "name": "app",
            "image": "app:2",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
        },
        {"name": "sidecar", "image": "side:1"},
    ]


def test_strategic_merge_patch_directives() -> None:
    live = deployment({"name": "app", "image": "a"}, {"name": "old", "image": "o"})
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "new"}, {"name": "app"}],
                    "containers": [
                        {"name": "old", "$patch": "delete"},
                        {"name": "new", "image": "n"},
                    ],
                }
            }
        }
    }
    out = strategic_merge_patch(live, patch)
    assert out["spec"]["template"]["spec"] == {
        "containers": [{"name": "new", "image": "n"}, {"name": "app", "image": "a"}]
    }


def test_strategic_merge_patch_replace_delete_and_primitive_lists() -> None:
    live = {"metadata": {"finalizers": ["a"]}, "data": {"x": "1", "y": "2"}, "args": ["1", "2"]}
    out = strategic_merge_patch(
        live,
        {
            "metadata": {"finalizers": ["b"]},
            "data": {"$patch": "replace", "z": "3"},
            "args": ["3"],
            "$deleteFromPrimitiveList/finalizers": ["zzz"],
        },
    )
    assert out == {"metadata": {"finalizers": ["a", "b"]}, "data": {"z": "3"}, "args": ["3"]}
    assert strategic_merge_patch(live, {"data": {"$patch": "delete"}}) == {
        "metadata": {"finalizers": ["a"]},
        "args": ["1", "2"],
    }


def test_strategic_merge_patch_service_ports_by_port_and_retain_keys() -> None:
    live = {"spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443, "name": "https"}]}}
    out = strategic_merge_patch(live, {"spec": {"ports": [{"port": 80, "targetPort": 8080}]}})
    assert out["spec"]["ports"] == [
        {"port": 80, "name": "http", "targetPort": 8080},
        {"port": 443, "name": "https"},
    ]
    strategy = {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}
    out = strategic_merge_patch(
        strategy, {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}
    )
    assert out == {"strategy": {"type": "Recreate"}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=20,
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@given(json_values)
def test_a_deep_copy_is_equal_and_shares_no_container(value: Any) -> None:
    doubled = {"a": value, "b": value}  # one value twice: copied twice
    copied = deep_copy(doubled)
    assert copied == doubled
    assert [type(x) for x in _containers(copied)] == [type(x) for x in _containers(doubled)]
    ids = [id(c) for c in _containers(copied)]
    assert len(set(ids)) == len(ids)
    assert not set(ids) & {id(c) for c in _containers(doubled)}
    if isinstance(value, bool):
        assert copied["a"] is value
