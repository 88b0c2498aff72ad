"""A broker's registration as Kafka models it (kafka.cluster.Broker and EndPoint,
SecurityProtocol, SupportedVersionRange): the records `/brokers/ids/<id>` holds, the dev brokers
register and the controller and status read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from kafka_topic_operator.kafka.errors import IllegalArgumentException
from kafka_topic_operator.kafka.java import parse_int


class SecurityProtocol(StrEnum):
    PLAINTEXT = "PLAINTEXT"
    SSL = "SSL"
    SASL_PLAINTEXT = "SASL_PLAINTEXT"
    SASL_SSL = "SASL_SSL"

    @classmethod
    def for_name(cls, name: str) -> SecurityProtocol:
        """SecurityProtocol.forName: case-insensitive."""
        try:
            return cls(name.upper())
        except ValueError:
            raise IllegalArgumentException(
                "No enum constant org.apache.kafka.common.security.auth.SecurityProtocol."
                + name.upper()
            ) from None


# EndPoint.uriParseExp, matched against the whole string.
_ENDPOINT = re.compile(r"(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)")


@dataclass(frozen=True, slots=True)
class EndPoint:
    """A broker listener (kafka.cluster.EndPoint); `host` None binds every interface."""

    listener_name: str
    host: str | None
    port: int
    security_protocol: SecurityProtocol

    @property
    def connection_string(self) -> str:
        if self.host is None:
            return f"{self.listener_name}://:{self.port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener_name}://{host}:{self.port}"

    @classmethod
    def parse(
        cls,
        connection_string: str,
        security_protocol_map: Mapping[str, SecurityProtocol] | None = None,
    ) -> EndPoint:
        """EndPoint.createEndPoint; without a map, listener names are security protocol names.

        Raises ValueError with Kafka's message.
        """
        match = _ENDPOINT.fullmatch(connection_string)
        port = parse_int(match.group(3)) if match else None
        if match is None or port is None:
            raise ValueError(f"Unable to parse {connection_string} to a broker endpoint")
        listener = match.group(1).upper()  # ListenerName.normalised
        protocols: Mapping[str, SecurityProtocol] = (
            {p.value: p for p in SecurityProtocol}
            if security_protocol_map is None
            else security_protocol_map
        )
        if listener not in protocols:
            raise IllegalArgumentException(f"No security protocol defined for listener {listener}")
        return cls(listener, match.group(2) or None, port, protocols[listener])


@dataclass(frozen=True, slots=True)
class SupportedVersionRange:
    """A feature's supported versions as a broker advertises them (SupportedVersionRange)."""

    min_version: int
    max_version: int

    def __post_init__(self) -> None:
        if self.min_version < 1 or self.max_version < 1 or self.max_version < self.min_version:
            raise IllegalArgumentException(
                "Expected minValue >= 1, maxValue >= 1 and maxValue >= minValue, but received "
                f"minValue: {self.min_version}, maxValue: {self.max_version}"
            )


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """A broker registration: Broker(id, endPoints, rack, features) plus the JSON's own fields.

    `timestamp` is the registration time in ms (Kafka stores it as a string and never reads it);
    `version` is the JSON version it was read with.
    """

    id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    jmx_port: int = -1
    timestamp: int | None = None
    features: Mapping[str, SupportedVersionRange] = field(default_factory=dict)
    version: int = 5

    def endpoint(self, listener_name: str) -> EndPoint | None:
        return next((e for e in self.endpoints if e.listener_name == listener_name), None)
