"""argparse that raises instead of exiting, so every `kto` command reports usage errors as one
line on stderr with exit status 2."""

from __future__ import annotations

import argparse
from typing import NoReturn


class UsageError(Exception):
    """A command-line argument is malformed; the message names it."""


class RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)
