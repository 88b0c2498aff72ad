"""SASL DIGEST-MD5 to a real ZooKeeper configured as a Kafka ensemble with SASL is (a JAAS `Server`
section with ZooKeeper's DigestLoginModule), and Kafka's secure ACLs for the SASL user."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafka_topic_operator.process.argparsing import UsageError
from kafka_topic_operator.zk import admin, znodes
from kafka_topic_operator.zk.client import (
    DigestCredentials,
    NoAuthError,
    SaslCredentials,
    ZkClient,
    ZkConnectionError,
)
from kafka_topic_operator.zk.credential_flags import (
    add_zookeeper_auth_arguments,
    zookeeper_credentials,
)
from kto_dev.zookeeper_server import ZooKeeperServer

pytestmark = pytest.mark.zookeeper


@pytest.fixture(scope="module")
def sasl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk-sasl"), sasl_users={"kafka": "k-s3cret"})
    server.start()
    yield server
    server.stop()


def sasl_client(connect: str, *, secure_acls: bool = False) -> ZkClient:
    client = ZkClient(connect, credentials=SaslCredentials("kafka", "k-s3cret"),
                      secure_acls=secure_acls)  # fmt: skip
    client.start()
    return client


def test_sasl_acls_name_the_sasl_user_and_keep_others_read_only(
    sasl_server: ZooKeeperServer,
) -> None:
    root = sasl_client(sasl_server.connect_string)
    root.ensure_path("/sasl-acl")
    root.stop()
    owner = sasl_client(sasl_server.connect_string + "/sasl-acl", secure_acls=True)
    stranger = ZkClient(sasl_server.connect_string + "/sasl-acl")
    stranger.start()
    try:
        admin.create_topic_with_assignment(owner, "orders", {0: [0]}, {})
        acls, _ = owner.raw.get_acls(znodes.topic_path("orders"))
        assert sorted((a.id.scheme, a.id.id, a.perms) for a in acls) == [
            ("sasl", "kafka", 31),  # ALL
            ("world", "anyone", 1),  # READ
        ]
        assert stranger.get(znodes.topic_path("orders")) is not None
        with pytest.raises(NoAuthError):
            stranger.set(znodes.topic_path("orders"), b"{}")
    finally:
        owner.stop()
        stranger.stop()


def test_a_wrong_sasl_password_never_connects(sasl_server: ZooKeeperServer) -> None:
    client = ZkClient(sasl_server.connect_string, credentials=SaslCredentials("kafka", "wrong"))
    with pytest.raises(ZkConnectionError, match="SASL authentication of user 'kafka' failed"):
        client.start(timeout=3.0)


def test_describe_reads_with_sasl_from_the_environment(sasl_server: ZooKeeperServer) -> None:
    root = sasl_client(sasl_server.connect_string)
    try:
        root.ensure_path("/sasl-describe")  # describe refuses a chroot that does not exist
    finally:
        root.stop()
    env = {**os.environ, "KTO_ZOOKEEPER_SASL": "kafka:k-s3cret"}
    env.pop("KTO_ZOOKEEPER_DIGEST", None)
    done = subprocess.run(
        [sys.executable, "-m", "kafka_topic_operator.cli", "describe", "--zookeeper",
         sasl_server.connect_string + "/sasl-describe", "--timeout", "10"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Controller: none"), done.stdout


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_zookeeper_auth_arguments(parser, acl=True)
    return parser.parse_args(argv)


def test_the_credential_flags(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KTO_ZOOKEEPER_DIGEST", raising=False)
    monkeypatch.delenv("KTO_ZOOKEEPER_SASL", raising=False)
    secret = tmp_path / "secret"
    secret.write_text("kafka:k-s3cret\n")
    assert zookeeper_credentials(parse("--zookeeper-sasl-file", str(secret))) == SaslCredentials(
        "kafka", "k-s3cret"
    )
    assert zookeeper_credentials(parse("--zookeeper-digest-file", str(secret))) == (
        DigestCredentials("kafka", "k-s3cret")
    )
    assert zookeeper_credentials(parse()) is None
    with pytest.raises(UsageError, match="not both"):
        zookeeper_credentials(parse("--zookeeper-sasl-file", str(secret),
                                    "--zookeeper-digest-file", str(secret)))  # fmt: skip
    with pytest.raises(UsageError, match="--zookeeper-set-acl needs digest or SASL credentials"):
        zookeeper_credentials(parse("--zookeeper-set-acl"))
    with pytest.raises(UsageError, match="No such file"):
        zookeeper_credentials(parse("--zookeeper-sasl-file", str(tmp_path / "missing")))
    (tmp_path / "bad").write_text("no-colon")
    with pytest.raises(UsageError, match="must be 'user:password'"):
        zookeeper_credentials(parse("--zookeeper-sasl-file", str(tmp_path / "bad")))
    monkeypatch.setenv("KTO_ZOOKEEPER_SASL", "kafka:from-env")
    assert zookeeper_credentials(parse()) == SaslCredentials("kafka", "from-env")
    monkeypatch.setenv("KTO_ZOOKEEPER_DIGEST", "kto:x")
    with pytest.raises(UsageError, match="not both"):
        zookeeper_credentials(parse())
    assert "k-s3cret" not in repr(SaslCredentials("kafka", "k-s3cret"))


def test_the_controller_authenticates_with_sasl_and_acls_what_it_creates(
    sasl_server: ZooKeeperServer, tmp_path: Path
) -> None:
    root = sasl_client(sasl_server.connect_string)
    root.ensure_path("/sasl-controller")
    secret = tmp_path / "sasl"
    secret.write_text("kafka:k-s3cret")
    controller = subprocess.Popen(
        [sys.executable, "-m", "kafka_topic_operator.cli", "controller", "--zookeeper",
         sasl_server.connect_string + "/sasl-controller", "--zookeeper-sasl-file", str(secret),
         "--zookeeper-set-acl", "--log-level", "WARNING"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        elected = threading.Event()
        if not root.exists("/sasl-controller/controller", watch=lambda _: elected.set()):
            assert elected.wait(30), "no controller elected"
        acls, _ = root.raw.get_acls("/sasl-controller/controller_epoch")
        assert ("sasl", "kafka") in {(a.id.scheme, a.id.id) for a in acls}
    finally:
        controller.terminate()
        controller.wait(30)
        root.stop()
