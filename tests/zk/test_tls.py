"""ZooKeeper TLS settings: the files checked before anything connects, one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_topic_operator.zk.tls import ZkTls, ZkTlsError, _servers


def test_a_connect_string_names_its_servers_and_their_ports() -> None:
    assert _servers("a:2281,b:2282/kafka") == [("a", 2281), ("b", 2282)]
    assert _servers("zk/chroot") == [("zk", 2181)]


def test_a_certificate_needs_its_key_and_a_key_its_certificate(tmp_path: Path) -> None:
    for tls in (ZkTls(certfile=tmp_path / "c.pem"), ZkTls(keyfile=tmp_path / "k.pem")):
        with pytest.raises(ZkTlsError) as e:
            tls.check()
        assert str(e.value) == "--zookeeper-tls-certfile and --zookeeper-tls-keyfile go together"


def test_a_missing_or_malformed_ca_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ZkTlsError, match=r"^--zookeeper-tls-cafile /nonexistent: no such file$"):
        ZkTls(cafile=Path("/nonexistent")).check()
    junk = tmp_path / "ca.pem"
    junk.write_text("not a certificate\n")
    with pytest.raises(ZkTlsError) as e:
        ZkTls(cafile=junk).check()
    assert str(e.value).startswith(f"--zookeeper-tls-cafile {junk}: not a PEM CA certificate (")
    assert "\n" not in str(e.value)


@pytest.mark.zookeeper
def test_tls_to_a_plaintext_port_fails_in_one_line_naming_it(zk_chroot: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kafka_topic_operator.cli", "describe", "--zookeeper", zk_chroot,
         "--zookeeper-tls", "--timeout", "3"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    server = zk_chroot.split("/", 1)[0]
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"kto describe: error: cannot connect to ZooKeeper at {zk_chroot}: ZooKeeper at "
        f"{server} does not speak TLS (a plaintext client port?)\n"
    )
