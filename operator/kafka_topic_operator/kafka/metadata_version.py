"""The version strings Kafka 3.6 accepts for `message.format.version` (MetadataVersion): each
release with its internal versions, "3.0-IV1", and the release alone ("3.0"), which means its
latest internal version. `from_version_string` ports MetadataVersion.fromVersionString: only the
first two segments count ("2.8.1" is "2.8"), three for versions starting with "0."."""

from __future__ import annotations

from typing import Final

# (release, internal versions) in Kafka's order; the 0.8 and 0.9 releases have none.
_RELEASES: Final[tuple[tuple[str, int], ...]] = (
    ("0.8.0", 0), ("0.8.1", 0), ("0.8.2", 0), ("0.9.0", 0),
    ("0.10.0", 2), ("0.10.1", 3), ("0.10.2", 1), ("0.11.0", 3),
    ("1.0", 1), ("1.1", 1), ("2.0", 2), ("2.1", 3), ("2.2", 2), ("2.3", 2), ("2.4", 2),
    ("2.5", 1), ("2.6", 1), ("2.7", 3), ("2.8", 2), ("3.0", 2), ("3.1", 1), ("3.2", 1),
    ("3.3", 4), ("3.4", 1), ("3.5", 3), ("3.6", 3),
)  # fmt: skip


def _versions() -> dict[str, str]:
    """Every accepted key → the full version it names."""
    versions: dict[str, str] = {}
    for release, internal in _RELEASES:
        full = [f"{release}-IV{i}" for i in range(internal)] or [release]
        versions.update({v: v for v in full})
        versions[release] = full[-1]
    return versions


VERSIONS: Final = _versions()


class InvalidVersion(ValueError):
    pass


def from_version_string(text: str) -> str:
    """The full version `text` names; InvalidVersion with Kafka's message if none."""
    segments = text.split(".")
    while segments and not segments[-1]:
        segments.pop()  # Java's String.split drops trailing empty strings
    count = 3 if text.startswith("0.") else 2
    key = text if count >= len(segments) else ".".join(segments[:count])
    try:
        return VERSIONS[key]
    except KeyError:
        raise InvalidVersion(f"Version {text} is not a valid version") from None
