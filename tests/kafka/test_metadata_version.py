"""MetadataVersion.fromVersionString's vectors (Kafka's MetadataVersionTest)."""

from __future__ import annotations

import pytest

from kafka_topic_operator.kafka.metadata_version import (
    VERSIONS,
    InvalidVersion,
    from_version_string,
)


@pytest.mark.parametrize(
    ("text", "version"),
    [
        ("0.8.0", "0.8.0"),
        ("0.8.0.0", "0.8.0"),
        ("0.8.0.1", "0.8.0"),
        ("0.8.2.2", "0.8.2"),
        ("0.9.0.1", "0.9.0"),
        ("0.10.0-IV0", "0.10.0-IV0"),
        ("0.10.0", "0.10.0-IV1"),
        ("0.10.0.0", "0.10.0-IV1"),
        ("0.10.0.0-IV0", "0.10.0-IV1"),  # the fourth segment and what follows are ignored
        ("0.10.1", "0.10.1-IV2"),
        ("0.11.0.3", "0.11.0-IV2"),
        ("1.0", "1.0-IV0"),
        ("1.0.1", "1.0-IV0"),  # "misconfigured" values parse: only two segments count
        ("1.0.0-IV0", "1.0-IV0"),
        ("2.8", "2.8-IV1"),
        ("2.8-IV0", "2.8-IV0"),
        ("3.0", "3.0-IV1"),
        ("3.0-IV1", "3.0-IV1"),
        ("3.3", "3.3-IV3"),
        ("3.5-IV1", "3.5-IV1"),
        ("3.6", "3.6-IV2"),
    ],
)
def test_version_strings_name_kafkas_versions(text: str, version: str) -> None:
    assert from_version_string(text) == version


@pytest.mark.parametrize(
    # "3.0.": Java's split drops the trailing empty segment, so the whole string is the key
    "text",
    ["", "3", "9.9", "3.7", "3.6-IV3", "2.8-IV2", "0.10", "1.0-iv0", "banana", "...", "3.0."],
)
def test_unknown_versions_are_refused_with_kafkas_message(text: str) -> None:
    with pytest.raises(InvalidVersion, match=f"^Version {text} is not a valid version$"):
        from_version_string(text)


def test_every_release_names_its_latest_internal_version() -> None:
    # MetadataVersion's 48 constants, IBP_0_8_0 to IBP_3_6_IV2, each under its own name
    assert len({v for v in VERSIONS.values()}) == len({k for k, v in VERSIONS.items() if k == v})
    assert len({v for v in VERSIONS.values()}) == 48
    assert VERSIONS["2.7"] == "2.7-IV2" and VERSIONS["0.9.0"] == "0.9.0"
