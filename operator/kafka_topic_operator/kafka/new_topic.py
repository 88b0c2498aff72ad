"""A topic to create, with its placement decided: what every backend's creation takes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class NewTopic:
    name: str
    assignment: Mapping[int, Sequence[int]]
    config: Mapping[str, str] = field(default_factory=dict)
    topic_id: str | None = None
