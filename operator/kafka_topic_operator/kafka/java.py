"""Java's integer bounds and Integer.parseInt / Long.parseLong, for the values Kafka reads with
them (znode fields, listener ports, broker ids)."""

from __future__ import annotations

import re
from typing import Final

INT_MIN: Final = -(1 << 31)
INT_MAX: Final = (1 << 31) - 1
LONG_MIN: Final = -(1 << 63)
LONG_MAX: Final = (1 << 63) - 1
SHORT_MAX: Final = (1 << 15) - 1

# Integer.parseInt / Long.parseLong syntax (ASCII digits, optional sign, nothing else).
_JAVA_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_int(text: str, low: int = INT_MIN, high: int = INT_MAX) -> int | None:
    """Integer.parseInt (or Long.parseLong with the long bounds); None where Java would throw."""
    if not _JAVA_INTEGER.fullmatch(text):
        return None
    value = int(text)
    return value if low <= value <= high else None
