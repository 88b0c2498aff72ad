"""Where the broker channel lives in ZooKeeper: under `/kto`, one request and one response queue
per broker, a controlled shutdown znode and a shutting-down mark per broker."""

from __future__ import annotations

import re
from typing import Final

KTO_PATH: Final = "/kto"
BROKER_CHANNELS_PATH: Final = "/kto/brokers"
CONTROLLED_SHUTDOWN_PATH: Final = "/kto/controlled_shutdown"
SHUTTING_DOWN_PATH: Final = "/kto/shutting_down"
"""A broker's ephemeral mark from its first controlled shutdown request until it leaves. Kafka's
controller refuses to add such a broker to an ISR (KIP-841); dev brokers write ISR expansions
themselves, so the leader reads the marks instead."""
REQUEST_PREFIX: Final = "request_"
RESPONSE_PREFIX: Final = "response_"


def broker_channel_path(broker_id: int) -> str:
    return f"{BROKER_CHANNELS_PATH}/{broker_id}"


def requests_path(broker_id: int) -> str:
    """The broker's request queue; the broker creates it before it registers."""
    return f"{broker_channel_path(broker_id)}/requests"


def request_prefix(broker_id: int) -> str:
    """What the controller creates a persistent sequential request znode with."""
    return f"{requests_path(broker_id)}/{REQUEST_PREFIX}"


def responses_path(broker_id: int) -> str:
    return f"{broker_channel_path(broker_id)}/responses"


def response_prefix(broker_id: int) -> str:
    """What the broker creates a persistent sequential response znode with."""
    return f"{responses_path(broker_id)}/{RESPONSE_PREFIX}"


def metadata_path(broker_id: int) -> str:
    """A dev broker's metadata leaders (`metadata_leaders`), written by the broker from before
    it registers: a broker that has it is one without a Kafka listener."""
    return f"{broker_channel_path(broker_id)}/metadata"


def fetching_root(follower: int) -> str:
    """Where a dev broker publishes what it follows, one child per leader (`fetching`); the
    broker empties it before it registers."""
    return f"{broker_channel_path(follower)}/fetching"


def fetching_path(follower: int, leader: int) -> str:
    return f"{fetching_root(follower)}/{leader}"


def shutting_down_path(broker_id: int) -> str:
    return f"{SHUTTING_DOWN_PATH}/{broker_id}"


def controlled_shutdown_path(broker_id: int) -> str:
    return f"{CONTROLLED_SHUTDOWN_PATH}/{broker_id}"


def channel_sequence(name_or_path: str) -> int | None:
    """The sequence number of a `request_<seq>` or `response_<seq>` znode, None for other names."""
    name = name_or_path.rsplit("/", 1)[-1]
    for prefix in (REQUEST_PREFIX, RESPONSE_PREFIX):
        digits = name.removeprefix(prefix)
        if digits != name and re.fullmatch(r"-?[0-9]{1,10}", digits):
            return int(digits)
    return None
