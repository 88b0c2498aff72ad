"""`kto run`'s Kafka connection flags: each combination that can be used, what kafka-python is
given for it, and the message for each one that cannot."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

import pytest

from kafka_topic_operator.kafka.brokers import SecurityProtocol
from kafka_topic_operator.kafka_admin.connection import (
    PASSWORD_VARIABLE,
    KafkaConnection,
    add_kafka_arguments,
    kafka_connection,
    parse_bootstrap_servers,
)
from kafka_topic_operator.process.argparsing import RaisingParser, UsageError
from kto_dev.kube_apiserver.credentials import self_signed


@pytest.fixture(autouse=True)
def no_password_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PASSWORD_VARIABLE, raising=False)


def parse(argv: Sequence[str]) -> KafkaConnection | None:
    parser = RaisingParser(prog="kto run")
    add_kafka_arguments(parser)
    return kafka_connection(parser.parse_args(argv))


def rejected(argv: Sequence[str]) -> str:
    with pytest.raises(UsageError) as raised:
        parse(argv)
    return str(raised.value)


@pytest.fixture(scope="module")
def pem(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A self-signed certificate (its own CA), its key, and a key of another pair."""
    folder = tmp_path_factory.mktemp("pem")
    for name in ("client", "other"):
        certificate, key = self_signed(name)
        (folder / f"{name}.crt").write_bytes(certificate)
        (folder / f"{name}.key").write_bytes(key)
    (folder / "both.pem").write_bytes(
        (folder / "client.crt").read_bytes() + (folder / "client.key").read_bytes()
    )
    (folder / "garbage.pem").write_text("not a certificate\n")
    return {p.stem if p.suffix != ".key" else p.stem + "-key": p for p in folder.iterdir()}


# ---- what can be used ----------------------------------------------------------------------------


def test_no_bootstrap_servers_means_no_kafka_connection() -> None:
    assert parse([]) is None


def test_plaintext_is_the_default_and_gives_only_the_servers() -> None:
    connection = parse(["--bootstrap-servers", "kafka-0:9092, kafka-1:9092,kafka-0:9092"])
    assert connection == KafkaConnection(("kafka-0:9092", "kafka-1:9092"))
    assert connection.client_config() == {
        "bootstrap_servers": ["kafka-0:9092", "kafka-1:9092"],
        "security_protocol": "PLAINTEXT",
    }
    assert connection.bootstrap == "kafka-0:9092,kafka-1:9092"


def test_bootstrap_servers_take_names_ipv4_and_bracketed_ipv6() -> None:
    assert parse_bootstrap_servers("a.example.com:9093,10.0.0.1:9092,[::1]:9094") == (
        "a.example.com:9093",
        "10.0.0.1:9092",
        "[::1]:9094",
    )


def test_ssl_with_every_file_and_no_hostname_check(pem: dict[str, Path]) -> None:
    connection = parse(
        ["--bootstrap-servers", "k:9093", "--kafka-security-protocol", "ssl",
         "--kafka-ssl-cafile", str(pem["client"]), "--kafka-ssl-certfile", str(pem["client"]),
         "--kafka-ssl-keyfile", str(pem["client-key"]), "--kafka-ssl-no-hostname-check"]
    )  # fmt: skip
    assert connection is not None and connection.security_protocol is SecurityProtocol.SSL
    assert connection.client_config() == {
        "bootstrap_servers": ["k:9093"],
        "security_protocol": "SSL",
        "ssl_check_hostname": False,
        "ssl_cafile": str(pem["client"]),
        "ssl_certfile": str(pem["client"]),
        "ssl_keyfile": str(pem["client-key"]),
    }


def test_ssl_alone_checks_hostnames_against_the_system_cas() -> None:
    connection = parse(["--bootstrap-servers", "k:9093", "--kafka-security-protocol", "SSL"])
    assert connection is not None
    assert connection.client_config() == {
        "bootstrap_servers": ["k:9093"],
        "security_protocol": "SSL",
        "ssl_check_hostname": True,
    }


def test_a_certfile_may_hold_its_key(pem: dict[str, Path]) -> None:
    connection = parse(["--bootstrap-servers", "k:9093", "--kafka-security-protocol", "SSL",
                        "--kafka-ssl-certfile", str(pem["both"])])  # fmt: skip
    assert connection is not None and connection.ssl_keyfile is None
    assert connection.client_config()["ssl_certfile"] == str(pem["both"])
    assert "ssl_keyfile" not in connection.client_config()


def test_librdkafka_takes_the_same_connection(pem: dict[str, Path], tmp_path: Path) -> None:
    """The status follower's librdkafka client: the same servers, files and credentials."""
    password = tmp_path / "password"
    password.write_text("s3cret\n")
    connection = parse(
        ["--bootstrap-servers", "k:9094,l:9094", "--kafka-security-protocol", "SASL_SSL",
         "--kafka-ssl-cafile", str(pem["client"]), "--kafka-ssl-certfile", str(pem["both"]),
         "--kafka-ssl-no-hostname-check", "--kafka-sasl-mechanism", "SCRAM-SHA-512",
         "--kafka-sasl-username", "operator", "--kafka-sasl-password-file", str(password)]
    )  # fmt: skip
    assert connection is not None
    assert connection.librdkafka_config() == {
        "bootstrap.servers": "k:9094,l:9094",
        "security.protocol": "SASL_SSL",
        "client.id": "kafka-topic-operator-follower",
        "ssl.ca.location": str(pem["client"]),
        "ssl.endpoint.identification.algorithm": "none",
        "ssl.certificate.location": str(pem["both"]),
        "ssl.key.location": str(pem["both"]),  # the key in the certificate's file
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "operator",
        "sasl.password": "s3cret",
    }
    plain = parse(["--bootstrap-servers", "k:9092"])
    assert plain is not None and plain.librdkafka_config() == {
        "bootstrap.servers": "k:9092",
        "security.protocol": "PLAINTEXT",
        "client.id": "kafka-topic-operator-follower",
    }
    system = parse(["--bootstrap-servers", "k:9093", "--kafka-security-protocol", "SSL"])
    assert system is not None and system.librdkafka_config()["ssl.ca.location"] == "probe"
    assert system.librdkafka_config()["ssl.endpoint.identification.algorithm"] == "https"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "scram-sha-512"])
def test_sasl_plaintext_with_a_password_file(tmp_path: Path, mechanism: str) -> None:
    password = tmp_path / "password"
    password.write_text("s3cret with spaces\n")
    connection = parse(
        ["--bootstrap-servers", "k:9092", "--kafka-security-protocol", "SASL_PLAINTEXT",
         "--kafka-sasl-mechanism", mechanism, "--kafka-sasl-username", "operator",
         "--kafka-sasl-password-file", str(password)]
    )  # fmt: skip
    assert connection is not None
    assert connection.client_config() == {
        "bootstrap_servers": ["k:9092"],
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": mechanism.upper(),
        "sasl_plain_username": "operator",
        "sasl_plain_password": "s3cret with spaces",
    }
    assert "s3cret" not in repr(connection) and "<hidden>" in repr(connection)


def test_sasl_ssl_takes_the_password_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, pem: dict[str, Path]
) -> None:
    monkeypatch.setenv(PASSWORD_VARIABLE, "from-env")
    connection = parse(
        ["--bootstrap-servers", "k:9094", "--kafka-security-protocol", "SASL_SSL",
         "--kafka-ssl-cafile", str(pem["client"]), "--kafka-sasl-mechanism", "SCRAM-SHA-512",
         "--kafka-sasl-username", "operator"]
    )  # fmt: skip
    assert connection is not None
    assert connection.client_config() == {
        "bootstrap_servers": ["k:9094"],
        "security_protocol": "SASL_SSL",
        "ssl_check_hostname": True,
        "ssl_cafile": str(pem["client"]),
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "operator",
        "sasl_plain_password": "from-env",
    }


def test_the_password_file_wins_over_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(PASSWORD_VARIABLE, "from-env")
    (tmp_path / "password").write_text("from-file")
    connection = parse(["--bootstrap-servers", "k:9092", "--kafka-security-protocol",
                        "SASL_PLAINTEXT", "--kafka-sasl-mechanism", "PLAIN",
                        "--kafka-sasl-username", "u", "--kafka-sasl-password-file",
                        str(tmp_path / "password")])  # fmt: skip
    assert connection is not None and connection.sasl_password == "from-file"


def test_the_password_in_the_environment_is_ignored_without_sasl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PASSWORD_VARIABLE, "from-env")
    connection = parse(["--bootstrap-servers", "k:9092"])
    assert connection is not None and "sasl_plain_password" not in connection.client_config()


# ---- what cannot ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ("", "--bootstrap-servers: no servers given: expected HOST:PORT[,HOST:PORT...]"),
        ("kafka", "--bootstrap-servers: 'kafka' is not HOST:PORT"),
        ("kafka:", "--bootstrap-servers: 'kafka:' is not HOST:PORT"),
        (":9092", "--bootstrap-servers: ':9092' is not HOST:PORT"),
        ("kafka:port", "--bootstrap-servers: 'kafka:port' is not HOST:PORT"),
        ("a:1,,b:2", "--bootstrap-servers: an empty entry is not HOST:PORT"),
        ("kafka:0", "--bootstrap-servers: 'kafka:0': port 0 is not between 1 and 65535"),
        ("kafka:65536",
         "--bootstrap-servers: 'kafka:65536': port 65536 is not between 1 and 65535"),
        ("PLAINTEXT://kafka:9092",
         "--bootstrap-servers: 'PLAINTEXT://kafka:9092' is not HOST:PORT"),
        ("::1:9092", "--bootstrap-servers: '::1:9092' is not HOST:PORT"),
    ],
)  # fmt: skip
def test_a_malformed_bootstrap_list(servers: str, message: str) -> None:
    assert rejected(["--bootstrap-servers", servers]) == message


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--kafka-security-protocol", "SSL"],
         "--kafka-security-protocol needs --bootstrap-servers"),
        (["--kafka-ssl-no-hostname-check", "--kafka-sasl-username", "u"],
         "--kafka-ssl-no-hostname-check, --kafka-sasl-username need --bootstrap-servers"),
    ],
)  # fmt: skip
def test_kafka_flags_without_bootstrap_servers(flags: list[str], message: str) -> None:
    assert rejected(flags) == message


def test_an_unknown_protocol_or_mechanism() -> None:
    assert "invalid choice: 'TLS'" in rejected(
        ["--bootstrap-servers", "k:1", "--kafka-security-protocol", "tls"]
    )
    assert "invalid choice: 'GSSAPI'" in rejected(
        ["--bootstrap-servers", "k:1", "--kafka-security-protocol", "SASL_SSL",
         "--kafka-sasl-mechanism", "GSSAPI"]
    )  # fmt: skip


@pytest.mark.parametrize("protocol", [None, "PLAINTEXT", "SSL"])
def test_sasl_flags_without_a_sasl_protocol(protocol: str | None, tmp_path: Path) -> None:
    (tmp_path / "password").write_text("p")
    chosen = ["--kafka-security-protocol", protocol] if protocol else []
    message = rejected(
        ["--bootstrap-servers", "k:1", *chosen, "--kafka-sasl-mechanism", "PLAIN",
         "--kafka-sasl-username", "u", "--kafka-sasl-password-file", str(tmp_path / "password")]
    )  # fmt: skip
    assert message == (
        "--kafka-sasl-mechanism, --kafka-sasl-username, --kafka-sasl-password-file need "
        f"--kafka-security-protocol SASL_PLAINTEXT or SASL_SSL (it is {protocol or 'PLAINTEXT'})"
    )


@pytest.mark.parametrize("protocol", [None, "PLAINTEXT", "SASL_PLAINTEXT"])
def test_tls_flags_with_a_plaintext_protocol(protocol: str | None, pem: dict[str, Path]) -> None:
    chosen = ["--kafka-security-protocol", protocol] if protocol else []
    sasl = ["--kafka-sasl-mechanism", "PLAIN", "--kafka-sasl-username", "u"]
    message = rejected(
        ["--bootstrap-servers", "k:1", *chosen, *(sasl if protocol == "SASL_PLAINTEXT" else []),
         "--kafka-ssl-cafile", str(pem["client"]), "--kafka-ssl-no-hostname-check"]
    )  # fmt: skip
    assert message == (
        "--kafka-ssl-cafile, --kafka-ssl-no-hostname-check need --kafka-security-protocol SSL "
        f"or SASL_SSL (it is {protocol or 'PLAINTEXT'})"
    )


@pytest.mark.parametrize("protocol", ["SASL_PLAINTEXT", "SASL_SSL"])
def test_a_sasl_protocol_needs_mechanism_username_and_password(
    protocol: str, tmp_path: Path
) -> None:
    base = ["--bootstrap-servers", "k:1", "--kafka-security-protocol", protocol]
    assert rejected(base) == (
        f"--kafka-security-protocol {protocol} needs --kafka-sasl-mechanism "
        "(PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"
    )
    with_mechanism = [*base, "--kafka-sasl-mechanism", "PLAIN"]
    assert rejected(with_mechanism) == (
        f"--kafka-security-protocol {protocol} needs --kafka-sasl-username"
    )
    assert rejected([*with_mechanism, "--kafka-sasl-username", "u"]) == (
        f"--kafka-security-protocol {protocol} needs the SASL password: "
        f"--kafka-sasl-password-file or ${PASSWORD_VARIABLE}"
    )
    (tmp_path / "empty").write_text("\n")
    assert rejected(
        [*with_mechanism, "--kafka-sasl-username", "u", "--kafka-sasl-password-file",
         str(tmp_path / "empty")]
    ) == f"--kafka-sasl-password-file: {tmp_path / 'empty'} is empty"  # fmt: skip


def test_unreadable_files(tmp_path: Path, pem: dict[str, Path]) -> None:
    missing = tmp_path / "missing.pem"
    ssl = ["--bootstrap-servers", "k:1", "--kafka-security-protocol", "SSL"]
    assert rejected([*ssl, "--kafka-ssl-cafile", str(missing)]) == (
        f"--kafka-ssl-cafile: cannot read {missing}: No such file or directory"
    )
    assert rejected([*ssl, "--kafka-ssl-certfile", str(missing)]) == (
        f"--kafka-ssl-certfile: cannot read {missing}: No such file or directory"
    )
    assert (
        rejected(
            [*ssl, "--kafka-ssl-certfile", str(pem["client"]), "--kafka-ssl-keyfile", str(missing)]
        )
        == f"--kafka-ssl-keyfile: cannot read {missing}: No such file or directory"
    )
    assert rejected(
        ["--bootstrap-servers", "k:1", "--kafka-security-protocol", "SASL_PLAINTEXT",
         "--kafka-sasl-mechanism", "PLAIN", "--kafka-sasl-username", "u",
         "--kafka-sasl-password-file", str(tmp_path)]
    ) == f"--kafka-sasl-password-file: cannot read {tmp_path}: Is a directory"  # fmt: skip


def test_files_that_are_not_what_they_should_be(pem: dict[str, Path]) -> None:
    ssl = ["--bootstrap-servers", "k:1", "--kafka-security-protocol", "SSL"]
    garbage = pem["garbage"]
    assert rejected([*ssl, "--kafka-ssl-cafile", str(garbage)]).startswith(
        f"--kafka-ssl-cafile: {garbage} holds no PEM CA certificate ("
    )
    assert rejected(
        [*ssl, "--kafka-ssl-certfile", str(pem["client"]), "--kafka-ssl-keyfile",
         str(pem["other-key"])]
    ).startswith(
        f"--kafka-ssl-certfile: {pem['client']} with the key in {pem['other-key']} is not a PEM "
        "client certificate and its private key ("
    )  # fmt: skip
    assert rejected([*ssl, "--kafka-ssl-certfile", str(pem["client"])]).startswith(
        f"--kafka-ssl-certfile: {pem['client']} (certificate and key) is not a PEM client "
        "certificate and its private key ("
    )
    assert rejected([*ssl, "--kafka-ssl-keyfile", str(pem["client-key"])]) == (
        "--kafka-ssl-keyfile needs --kafka-ssl-certfile"
    )


def test_the_flags_are_exactly_these() -> None:
    parser = argparse.ArgumentParser()
    add_kafka_arguments(parser)
    flags = {option for action in parser._actions for option in action.option_strings}
    assert flags - {"-h", "--help"} == {
        "--bootstrap-servers",
        "--kafka-security-protocol",
        "--kafka-ssl-cafile",
        "--kafka-ssl-certfile",
        "--kafka-ssl-keyfile",
        "--kafka-ssl-no-hostname-check",
        "--kafka-sasl-mechanism",
        "--kafka-sasl-username",
        "--kafka-sasl-password-file",
    }
