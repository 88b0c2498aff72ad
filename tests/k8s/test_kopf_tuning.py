"""The copies left out of kopf change none of its results: compared with kopf's own code."""

from __future__ import annotations

import copy
from typing import Any

import kopf
from hypothesis import given
from hypothesis import strategies as st
from kopf._cogs.structs import patches

from kafka_topic_operator.k8s import kopf_tuning

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)
bodies = st.fixed_dictionaries(
    {
        "apiVersion": st.just("kto.dev/v1"),
        "kind": st.just("KafkaTopic"),
        "metadata": st.fixed_dictionaries(
            {
                "name": st.just("orders"),
                "resourceVersion": st.just("7"),
                "uid": st.just("0b5e4c1d"),
                "finalizers": st.lists(st.sampled_from(["kto.dev/topic-deletion", "x"])),
            },
            optional={
                "labels": st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=2),
                "annotations": st.dictionaries(
                    st.sampled_from(
                        [
                            "a",
                            "kopf.zalando.org/last-handled-configuration",
                            "kubectl.kubernetes.io/last-applied-configuration",
                        ]
                    ),
                    st.text(max_size=5),
                    max_size=2,
                ),
            },
        ),
        "spec": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
    },
    optional={"status": st.dictionaries(st.text(max_size=5), json_values, max_size=3)},
)


@given(bodies)
def test_the_essence_is_kopfs(raw: dict[str, Any]) -> None:
    body = kopf.Body(copy.deepcopy(raw))
    ours = kopf_tuning.StatusDiffBaseStorage().build(body=body)
    assert ours == kopf.StatusDiffBaseStorage().build(body=body)
    assert "status" not in ours
    assert kopf.Body(raw) == body  # untouched


def outcome(function: Any, *args: Any) -> object:
    """The result, or the error's type and message (kopf refuses some patches of odd bodies)."""
    try:
        return function(*args)
    except Exception as e:
        return type(e), str(e)


@given(bodies, st.dictionaries(st.sampled_from(["spec", "status", "metadata"]),
                               st.dictionaries(st.text(max_size=3), json_values, max_size=2),
                               max_size=2),
       st.booleans())  # fmt: skip
def test_json_patches_are_kopfs(raw: dict[str, Any], merge: dict[str, Any], fn: bool) -> None:
    patch = patches.Patch(copy.deepcopy(merge))
    if fn:
        patch.fns.append(lambda b: b.setdefault("metadata", {}).setdefault("finalizers", ["x"]))
    original = outcome(kopf_tuning._kopf_as_json_patch, patch, kopf.Body(copy.deepcopy(raw)))
    assert outcome(kopf_tuning._as_json_patch, patch, kopf.Body(copy.deepcopy(raw))) == original
    assert kopf_tuning._as_json_patch(patches.Patch(), None) == []


def test_installed_in_kopf() -> None:
    kopf_tuning.skip_empty_patch_copies()
    assert patches.Patch.as_json_patch is kopf_tuning._as_json_patch
