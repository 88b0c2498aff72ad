"""Output shared by the `kto` commands that print results."""

from __future__ import annotations

import json


def print_json(value: object) -> None:
    """One line of compact JSON, for scripts that pipe `--output json` into jq."""
    print(json.dumps(value, indent=None, separators=(",", ":")))
