"""How the operator reaches a KRaft cluster's brokers: the bootstrap servers, the security
protocol and its TLS files and SASL credentials, given as `kto run` flags.

`add_kafka_arguments` adds the flags; `kafka_connection` checks them together and returns a
`KafkaConnection` (None without `--bootstrap-servers`), or raises UsageError naming the flags
that cannot be used so. The SASL password comes from a file or `$KTO_KAFKA_SASL_PASSWORD`, never
from the command line, and is never logged or printed.
"""

from __future__ import annotations

import argparse
import os
import re
import ssl
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from kafka_topic_operator.kafka.brokers import SecurityProtocol
from kafka_topic_operator.process.argparsing import UsageError

PASSWORD_VARIABLE: Final = "KTO_KAFKA_SASL_PASSWORD"
SASL_MECHANISMS: Final = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
TLS_PROTOCOLS: Final = frozenset({SecurityProtocol.SSL, SecurityProtocol.SASL_SSL})
SASL_PROTOCOLS: Final = frozenset({SecurityProtocol.SASL_PLAINTEXT, SecurityProtocol.SASL_SSL})

# host:port, the host a name, an IPv4 address or a bracketed IPv6 address.
_SERVER = re.compile(r"(?P<host>\[[0-9A-Za-z:.%]+\]|[0-9A-Za-z][0-9A-Za-z._-]*):(?P<port>[0-9]+)")


@dataclass(frozen=True, slots=True, repr=False)
class KafkaConnection:
    """Where and how to connect; the password is never shown (`repr` hides it)."""

    bootstrap_servers: tuple[str, ...]
    security_protocol: SecurityProtocol = SecurityProtocol.PLAINTEXT
    ssl_cafile: Path | None = None
    ssl_certfile: Path | None = None
    ssl_keyfile: Path | None = None
    ssl_check_hostname: bool = True
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = None

    @property
    def bootstrap(self) -> str:
        return ",".join(self.bootstrap_servers)

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in TLS_PROTOCOLS

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol in SASL_PROTOCOLS

    def client_config(self) -> dict[str, Any]:
        """kafka-python's keyword arguments (KafkaAdminClient's) for this connection."""
        config: dict[str, Any] = {
            "bootstrap_servers": list(self.bootstrap_servers),
            "security_protocol": self.security_protocol.value,
        }
        if self.uses_tls:
            config["ssl_check_hostname"] = self.ssl_check_hostname
            for key, path in (
                ("ssl_cafile", self.ssl_cafile),
                ("ssl_certfile", self.ssl_certfile),
                ("ssl_keyfile", self.ssl_keyfile),
            ):
                if path is not None:
                    config[key] = str(path)
        if self.uses_sasl:
            config["sasl_mechanism"] = self.sasl_mechanism
            config["sasl_plain_username"] = self.sasl_username
            config["sasl_plain_password"] = self.sasl_password
        return config

    def librdkafka_config(self) -> dict[str, Any]:
        """librdkafka's properties (confluent-kafka's) for this connection: the status
        follower's client. Without a CA file, the system's CAs (`probe`), as kafka-python."""
        config: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap,
            "security.protocol": self.security_protocol.value,
            "client.id": "kafka-topic-operator-follower",
        }
        if self.uses_tls:
            config["ssl.ca.location"] = str(self.ssl_cafile) if self.ssl_cafile else "probe"
            config["ssl.endpoint.identification.algorithm"] = (
                "https" if self.ssl_check_hostname else "none"
            )
            if self.ssl_certfile is not None:
                config["ssl.certificate.location"] = str(self.ssl_certfile)
                # A key in the certificate's own file, as kafka-python reads it.
                config["ssl.key.location"] = str(self.ssl_keyfile or self.ssl_certfile)
        if self.uses_sasl:
            config["sasl.mechanism"] = self.sasl_mechanism
            config["sasl.username"] = self.sasl_username
            config["sasl.password"] = self.sasl_password
        return config

    def __repr__(self) -> str:
        shown = [
            f"bootstrap_servers={self.bootstrap!r}",
            f"security_protocol={self.security_protocol}",
        ]
        if self.uses_tls:
            shown += [
                f"ssl_cafile={self.ssl_cafile}",
                f"ssl_certfile={self.ssl_certfile}",
                f"ssl_keyfile={self.ssl_keyfile}",
                f"ssl_check_hostname={self.ssl_check_hostname}",
            ]
        if self.uses_sasl:
            shown += [
                f"sasl_mechanism={self.sasl_mechanism}",
                f"sasl_username={self.sasl_username!r}",
                "sasl_password=<hidden>",
            ]
        return f"KafkaConnection({', '.join(shown)})"


def parse_bootstrap_servers(text: str) -> tuple[str, ...]:
    """`host:port[,host:port...]`; ValueError saying which entry is wrong."""
    entries = [entry.strip() for entry in text.split(",")]
    if not any(entries):
        raise ValueError("no servers given: expected HOST:PORT[,HOST:PORT...]")
    servers: list[str] = []
    for entry in entries:
        match = _SERVER.fullmatch(entry)
        if match is None:
            shown = f"'{entry}'" if entry else "an empty entry"
            raise ValueError(f"{shown} is not HOST:PORT")
        port = int(match.group("port"))
        if not 1 <= port <= 65535:
            raise ValueError(f"'{entry}': port {port} is not between 1 and 65535")
        if entry not in servers:
            servers.append(entry)
    return tuple(servers)


def add_kafka_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that connect to a KRaft cluster through its brokers."""
    parser.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT[,HOST:PORT...]",
        help="Kafka brokers to reach a KRaft cluster through Kafka's Admin API",
    )
    parser.add_argument(
        "--kafka-security-protocol",
        type=str.upper,
        choices=[p.value for p in SecurityProtocol],
        help="how to talk to the brokers (default: PLAINTEXT)",
    )
    parser.add_argument(
        "--kafka-ssl-cafile",
        type=Path,
        metavar="FILE",
        help="PEM CA certificates that sign the brokers' certificates (default: the system's)",
    )
    parser.add_argument(
        "--kafka-ssl-certfile",
        type=Path,
        metavar="FILE",
        help="the operator's PEM client certificate, for brokers that require one",
    )
    parser.add_argument(
        "--kafka-ssl-keyfile",
        type=Path,
        metavar="FILE",
        help="the client certificate's PEM private key, if not in --kafka-ssl-certfile",
    )
    parser.add_argument(
        "--kafka-ssl-no-hostname-check",
        action="store_true",
        help="accept a broker certificate that does not name the broker's host",
    )
    parser.add_argument(
        "--kafka-sasl-mechanism",
        type=str.upper,
        choices=SASL_MECHANISMS,
        help="the SASL mechanism (with a SASL_* security protocol)",
    )
    parser.add_argument("--kafka-sasl-username", metavar="NAME", help="the SASL user")
    parser.add_argument(
        "--kafka-sasl-password-file",
        type=Path,
        metavar="FILE",
        help=f"the SASL user's password (else ${PASSWORD_VARIABLE})",
    )


_TLS_FLAGS = {
    "kafka_ssl_cafile": "--kafka-ssl-cafile",
    "kafka_ssl_certfile": "--kafka-ssl-certfile",
    "kafka_ssl_keyfile": "--kafka-ssl-keyfile",
    "kafka_ssl_no_hostname_check": "--kafka-ssl-no-hostname-check",
}
_SASL_FLAGS = {
    "kafka_sasl_mechanism": "--kafka-sasl-mechanism",
    "kafka_sasl_username": "--kafka-sasl-username",
    "kafka_sasl_password_file": "--kafka-sasl-password-file",
}


def _given(args: argparse.Namespace, flags: dict[str, str]) -> list[str]:
    return [flag for attribute, flag in flags.items() if getattr(args, attribute, None)]


def _listed(flags: list[str]) -> str:
    """The flags and the verb that follows them: "--a needs", "--a, --b need"."""
    return f"{', '.join(flags)} {'needs' if len(flags) == 1 else 'need'}"


def kafka_connection(args: argparse.Namespace) -> KafkaConnection | None:
    """The connection the flags describe, None without `--bootstrap-servers`; UsageError for
    flags that cannot be used together or files that cannot be read."""
    protocol_name: str | None = args.kafka_security_protocol
    if args.bootstrap_servers is None:
        others = [
            *(["--kafka-security-protocol"] if protocol_name else []),
            *_given(args, _TLS_FLAGS),
            *_given(args, _SASL_FLAGS),
        ]
        if others:
            raise UsageError(f"{_listed(others)} --bootstrap-servers")
        return None
    try:
        servers = parse_bootstrap_servers(args.bootstrap_servers)
    except ValueError as e:
        raise UsageError(f"--bootstrap-servers: {e}") from None
    protocol = SecurityProtocol(protocol_name or SecurityProtocol.PLAINTEXT)

    tls_flags = _given(args, _TLS_FLAGS)
    if tls_flags and protocol not in TLS_PROTOCOLS:
        raise UsageError(
            f"{_listed(tls_flags)} --kafka-security-protocol SSL or SASL_SSL (it is {protocol})"
        )
    sasl_flags = _given(args, _SASL_FLAGS)
    if sasl_flags and protocol not in SASL_PROTOCOLS:
        raise UsageError(
            f"{_listed(sasl_flags)} --kafka-security-protocol SASL_PLAINTEXT or SASL_SSL "
            f"(it is {protocol})"
        )

    connection = KafkaConnection(servers, protocol)
    if protocol in TLS_PROTOCOLS:
        connection = _with_tls(connection, args)
    if protocol in SASL_PROTOCOLS:
        connection = _with_sasl(connection, args)
    return connection


def _readable(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise UsageError(f"{flag}: cannot read {path}: {e.strerror or e}") from None


def _with_tls(connection: KafkaConnection, args: argparse.Namespace) -> KafkaConnection:
    cafile: Path | None = args.kafka_ssl_cafile
    certfile: Path | None = args.kafka_ssl_certfile
    keyfile: Path | None = args.kafka_ssl_keyfile
    if keyfile is not None and certfile is None:
        raise UsageError("--kafka-ssl-keyfile needs --kafka-ssl-certfile")
    # Loaded here as kafka-python loads them at its first connection, so that a wrong file
    # stops the start instead of every connection attempt failing later.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if cafile is not None:
        _readable(cafile, "--kafka-ssl-cafile")
        try:
            context.load_verify_locations(cafile=str(cafile))
        except ssl.SSLError as e:
            raise UsageError(
                f"--kafka-ssl-cafile: {cafile} holds no PEM CA certificate ({e.reason})"
            ) from None
    if certfile is not None:
        _readable(certfile, "--kafka-ssl-certfile")
        if keyfile is not None:
            _readable(keyfile, "--kafka-ssl-keyfile")
        try:
            context.load_cert_chain(str(certfile), str(keyfile) if keyfile else None)
        except ssl.SSLError as e:
            key = f" with the key in {keyfile}" if keyfile else " (certificate and key)"
            raise UsageError(
                f"--kafka-ssl-certfile: {certfile}{key} is not a PEM client certificate and "
                f"its private key ({e.reason})"
            ) from None
    return replace(
        connection,
        ssl_cafile=cafile,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
        ssl_check_hostname=not args.kafka_ssl_no_hostname_check,
    )


def _with_sasl(connection: KafkaConnection, args: argparse.Namespace) -> KafkaConnection:
    protocol = connection.security_protocol
    mechanism: str | None = args.kafka_sasl_mechanism
    username: str | None = args.kafka_sasl_username
    if mechanism is None:
        raise UsageError(
            f"--kafka-security-protocol {protocol} needs --kafka-sasl-mechanism "
            f"({', '.join(SASL_MECHANISMS)})"
        )
    if not username:
        raise UsageError(f"--kafka-security-protocol {protocol} needs --kafka-sasl-username")
    password_file: Path | None = args.kafka_sasl_password_file
    if password_file is not None:
        raw = _readable(password_file, "--kafka-sasl-password-file")
        try:
            password = raw.decode().rstrip("\r\n")
        except UnicodeDecodeError:
            raise UsageError(f"--kafka-sasl-password-file: {password_file} is not UTF-8") from None
        if not password:
            raise UsageError(f"--kafka-sasl-password-file: {password_file} is empty")
    else:
        password = os.environ.get(PASSWORD_VARIABLE, "")
        if not password:
            raise UsageError(
                f"--kafka-security-protocol {protocol} needs the SASL password: "
                f"--kafka-sasl-password-file or ${PASSWORD_VARIABLE}"
            )
    return replace(
        connection,
        sasl_mechanism=mechanism,
        sasl_username=username,
        sasl_password=password,
    )
