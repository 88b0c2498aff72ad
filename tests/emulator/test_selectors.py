"""Label and field selectors parse and match as kube-apiserver's do."""

from __future__ import annotations

import pytest

from kube_api_emulator.errors import ApiError
from kube_api_emulator.selectors import (
    exact_name,
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
)


def obj(**labels: str) -> dict[str, object]:
    return {"metadata": {"name": "n", "namespace": "ns", "labels": labels}, "spec": {"x": 3}}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        ("app=a", {"app": "a"}, True),
        ("app==a", {"app": "b"}, False),
        ("app!=a", {}, True),
        ("app!=a", {"app": "a"}, False),
        ("app in (a, b)", {"app": "b"}, True),
        ("app in (a,b)", {}, False),
        ("app notin (a,b)", {}, True),
        ("app notin (a,b)", {"app": "a"}, False),
        ("app", {"app": ""}, True),
        ("!app", {"app": "x"}, False),
        ("!app", {}, True),
        ("app=a,tier in (web),!legacy", {"app": "a", "tier": "web"}, True),
        ("app=a,tier in (web),!legacy", {"app": "a", "tier": "web", "legacy": "1"}, False),
        ("n>3", {"n": "4"}, True),
        ("n<3", {"n": "4"}, False),
        ("kto.dev/owner=x", {"kto.dev/owner": "x"}, True),
        ("", {}, True),
    ],
)
def test_label_selectors(selector: str, labels: dict[str, str], expected: bool) -> None:
    assert labels_match(parse_label_selector(selector), obj(**labels)) is expected


@pytest.mark.parametrize("bad", ["a=b,,c", "in (x", "bad key=1", "a=b c", "n>x"])
def test_label_selector_syntax_errors_are_bad_requests(bad: str) -> None:
    with pytest.raises(ApiError) as info:
        parse_label_selector(bad)
    assert info.value.code == 400


def test_field_selectors_compare_strings_and_find_exact_name() -> None:
    reqs = parse_field_selector("metadata.name=n,metadata.namespace!=other,spec.x=3")
    assert fields_match(reqs, obj())
    assert exact_name(reqs) == "n"
    assert not fields_match(parse_field_selector("metadata.name==m"), obj())
    assert exact_name(parse_field_selector("metadata.name!=n")) is None


def test_field_selector_escapes() -> None:
    reqs = parse_field_selector(r"metadata.name=a\,b")
    assert len(reqs) == 1
    assert reqs[0].value == "a,b"
