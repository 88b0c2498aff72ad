"""The differential test's comparison: what counts as a difference and what the allow list
in docs/fidelity.md explains."""

from __future__ import annotations

from pathlib import Path

import pytest

from .znode_tree import (
    Allowed,
    AllowListError,
    Difference,
    differences,
    judge,
    load_allow_list,
)

FIDELITY = Path(__file__).resolve().parents[2] / "docs" / "fidelity.md"
STATE = "/brokers/topics/t/partitions/0/state"


def test_objects_are_compared_field_by_field_as_parsed_json() -> None:
    kafka = {STATE: {"leader": 1, "isr": [1, 2], "leader_epoch": 3, "version": 1}}
    twin = {STATE: {"version": 1, "isr": [1, 2], "leader_epoch": 4, "leader": 1}}
    assert differences("s", kafka, twin) == [Difference("s", STATE, "leader_epoch", "3", "4")]


def test_a_znode_or_field_on_one_side_only_is_a_difference() -> None:
    kafka = {"/feature": {"version": 2}, STATE: {"leader": 1}}
    twin = {STATE: {"leader": 1, "leader_recovery_state": 1}}
    assert sorted(differences("s", kafka, twin)) == sorted(
        [
            Difference("s", STATE, "leader_recovery_state", "<absent>", "1"),
            Difference("s", "/feature", None, '{"version": 2}', "<absent>"),
        ]
    )


def test_random_ids_times_and_addresses_are_normalised_but_malformed_ids_are_not() -> None:
    kafka = {
        "/brokers/topics/a": {"topic_id": "AAAAAAAAAAAAAAAAAAAAAA"},
        "/brokers/topics/b": {"topic_id": "BBBBBBBBBBBBBBBBBBBBBB"},
        "/brokers/ids/0": {
            "host": "h",
            "port": 1,
            "timestamp": "1",
            "endpoints": ["PLAINTEXT://h:1"],
        },
        "/controller": {"brokerid": 0, "timestamp": "5"},
    }
    twin = {
        "/brokers/topics/a": {"topic_id": "CCCCCCCCCCCCCCCCCCCCCC"},
        "/brokers/topics/b": {"topic_id": "-"},
        "/brokers/ids/0": {
            "host": "k",
            "port": 2,
            "timestamp": "9",
            "endpoints": ["PLAINTEXT://k:2"],
        },
        "/controller": {"brokerid": 2, "timestamp": "7"},
        "/kto/brokers/0/requests": None,
    }
    assert differences("s", kafka, twin) == [
        Difference("s", "/brokers/topics/b", "topic_id", '"<topic id>"', '"-"')
    ]


def test_isrs_are_compared_as_sets_but_their_members_are_not() -> None:
    kafka = {STATE: {"isr": [1, 0, 2]}, STATE.replace("/0/", "/1/"): {"isr": [2]}}
    twin = {STATE: {"isr": [1, 2, 0]}, STATE.replace("/0/", "/1/"): {"isr": [0]}}
    assert differences("s", kafka, twin) == [
        Difference("s", STATE.replace("/0/", "/1/"), "isr", "[2]", "[0]")
    ]


def _difference(path: str = STATE, field: str | None = "isr", step: str = "s") -> Difference:
    return Difference(step, path, field, "[1]", "[2]")


def test_the_allow_list_explains_by_path_glob_field_and_step() -> None:
    allowed = [
        Allowed("isr", ("/brokers/topics/*/partitions/*/state",), "isr", ("s",), "why"),
        Allowed("whole", ("/feature", "/cluster/id"), None, (), "why"),
        Allowed("never", ("/nothing",), "*", (), "why"),
    ]
    found = [
        _difference(),
        _difference(step="other"),
        _difference(field="leader"),
        _difference("/feature", None),
        _difference("/cluster/id", None),
    ]
    verdict = judge(found, allowed)
    assert verdict.unexplained == [_difference(step="other"), _difference(field="leader")]
    assert verdict.explained == {
        "isr": [_difference()],
        "whole": [_difference("/feature", None), _difference("/cluster/id", None)],
    }
    assert [a.id for a in verdict.unused] == ["never"]


def test_an_allow_list_entry_may_name_several_paths(tmp_path: Path) -> None:
    doc = tmp_path / "fidelity.md"
    doc.write_text("```yaml differential-allow\n- {id: a, path: [/x, /y/*], reason: r}\n```\n")
    [entry] = load_allow_list(doc)
    assert entry.paths == ("/x", "/y/*")


def test_fidelity_md_holds_a_well_formed_allow_list() -> None:
    for entry in load_allow_list(FIDELITY):
        assert entry.reason.strip(), entry.id


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("- id: a\n  path: /x\n", "needs id, path and reason"),
        ("- {id: a, path: /x, reason: r, colour: red}\n", "unknown ['colour']"),
        ("- {id: a, path: /x, reason: r}\n- {id: a, path: /y, reason: r}\n", "duplicate ids"),
        ("id: a\n", "not a YAML list"),
    ],
)
def test_a_malformed_allow_list_is_refused_precisely(
    tmp_path: Path, block: str, message: str
) -> None:
    doc = tmp_path / "fidelity.md"
    doc.write_text(f"# F\n\n```yaml differential-allow\n{block}```\n")
    with pytest.raises(AllowListError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_allow_list(doc)
