"""What the ZooKeeper facade reads and writes, as plain data: a znode read (`Node`), the
operations of a multi-op transaction, and the controller's epoch fence."""

from __future__ import annotations

from dataclasses import dataclass

CONTROLLER_EPOCH_PATH = "/controller_epoch"


@dataclass(frozen=True, slots=True)
class Node:
    """A znode's data and the version that conditional writes must name."""

    path: str
    data: bytes
    version: int
    ephemeral_owner: int
    czxid: int
    mtime: int = 0  # milliseconds since the epoch, the server's clock at the last write


@dataclass(frozen=True, slots=True)
class Create:
    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequence: bool = False


@dataclass(frozen=True, slots=True)
class SetData:
    path: str
    data: bytes
    version: int = -1


@dataclass(frozen=True, slots=True)
class Delete:
    path: str
    version: int = -1


@dataclass(frozen=True, slots=True)
class Check:
    path: str
    version: int


Op = Create | SetData | Delete | Check


@dataclass(frozen=True, slots=True)
class Fence:
    """The controller epoch znode's version this controller won with; every write checks it.
    `session`: the ZooKeeper session it was won in (0: any). A write is never sent in another
    session: after an expiry, kazoo opens a new session at once, and an event the controller
    was handling would otherwise go on writing there before it learns of the expiry (Kafka's
    client fails such a request with SESSIONEXPIRED)."""

    epoch_zk_version: int
    path: str = CONTROLLER_EPOCH_PATH
    session: int = 0
