"""ZooKeeper credentials: digest or SASL DIGEST-MD5, from a file or the environment (the password
is never logged or printed)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Self


@dataclass(frozen=True, slots=True, repr=False)
class ZkCredentials:
    """`user:password` for ZooKeeper; the password is never logged or printed."""

    user: str
    password: str

    @classmethod
    def parse(cls, text: str, source: str) -> Self:
        user, sep, password = text.strip().partition(":")
        if not sep or not user or not password:
            raise ValueError(f"{source}: ZooKeeper credentials must be 'user:password'")
        return cls(user, password)

    @classmethod
    def from_file(cls, path: Path) -> Self:
        return cls.parse(path.read_text(), str(path))

    @classmethod
    def from_env(cls, variable: str) -> Self | None:
        text = os.environ.get(variable)
        return cls.parse(text, f"${variable}") if text else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(user={self.user!r}, password=<hidden>)"


@dataclass(frozen=True, slots=True, repr=False)
class DigestCredentials(ZkCredentials):
    """Digest authentication (`addauth digest user:password`); ACLs name `digest:<user>:<hash>`."""


@dataclass(frozen=True, slots=True, repr=False)
class SaslCredentials(ZkCredentials):
    """SASL DIGEST-MD5: what a Kafka broker's JAAS `Client` section with ZooKeeper's
    DigestLoginModule gives; ACLs name `sasl:<user>`."""


def load_credentials(digest_file: Path | None, sasl_file: Path | None) -> ZkCredentials | None:
    """The credentials a command was given: `--zookeeper-digest-file` or `--zookeeper-sasl-file`,
    else $KTO_ZOOKEEPER_DIGEST or $KTO_ZOOKEEPER_SASL; never both kinds."""
    if digest_file is not None and sasl_file is not None:
        raise ValueError("give --zookeeper-digest-file or --zookeeper-sasl-file, not both")
    if sasl_file is not None:
        return SaslCredentials.from_file(sasl_file)
    if digest_file is not None:
        return DigestCredentials.from_file(digest_file)
    digest = DigestCredentials.from_env("KTO_ZOOKEEPER_DIGEST")
    sasl = SaslCredentials.from_env("KTO_ZOOKEEPER_SASL")
    if digest is not None and sasl is not None:
        raise ValueError("set $KTO_ZOOKEEPER_DIGEST or $KTO_ZOOKEEPER_SASL, not both")
    return digest or sasl
