"""The `kto` command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    del argv
    print("kto: no commands yet", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
