"""ZooKeeper over TLS (a secure client port, as Kafka's `zookeeper.ssl.*`): the files the flags
name, checked before anything connects, and why a handshake failed, in one line each.

kazoo retries a failed handshake until its start times out, so the reason is found here: the
files are checked when the flags are read, and a start that failed is explained by one
handshake of our own (`explain_failure`). Key material never reaches a message: only paths.
"""

from __future__ import annotations

import contextlib
import datetime
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

# How long a handshake's verdict may take to arrive: with TLS 1.3 a server refusing the
# client's certificate says so only after the client's side of the handshake has ended.
VERDICT_WAIT = 1.0


class ZkTlsError(ValueError):
    """TLS settings that cannot work; the message is one line, naming the file or server."""


@dataclass(frozen=True, slots=True)
class ZkTls:
    """The CA that signs the servers' certificates (None: the system's CAs), and this client's
    certificate and key (both or neither) for servers that ask for one."""

    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    check_hostname: bool = True

    def check(self, now: datetime.datetime | None = None) -> None:
        """ZkTlsError unless the files can be used: readable, PEM, the certificate valid now
        and its key the one it was issued for."""
        if (self.certfile is None) != (self.keyfile is None):
            raise ZkTlsError("--zookeeper-tls-certfile and --zookeeper-tls-keyfile go together")
        self.context()
        if self.certfile is not None:
            _check_validity(self.certfile, now or datetime.datetime.now(datetime.UTC))

    def context(self) -> ssl.SSLContext:
        """The client's context, as kazoo builds it from the same settings."""
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
        context.check_hostname = self.check_hostname
        if self.cafile is not None:
            try:
                context.load_verify_locations(cafile=str(self.cafile))
            except FileNotFoundError:
                raise ZkTlsError(f"--zookeeper-tls-cafile {self.cafile}: no such file") from None
            except (ssl.SSLError, OSError) as e:
                raise ZkTlsError(
                    f"--zookeeper-tls-cafile {self.cafile}: not a PEM CA certificate ({_why(e)})"
                ) from None
        if self.certfile is not None and self.keyfile is not None:
            for flag, path in (("certfile", self.certfile), ("keyfile", self.keyfile)):
                if not path.is_file():
                    raise ZkTlsError(f"--zookeeper-tls-{flag} {path}: no such file")
            try:
                context.load_cert_chain(str(self.certfile), str(self.keyfile))
            except ssl.SSLError as e:
                if "KEY_VALUES_MISMATCH" in str(e):
                    raise ZkTlsError(f"--zookeeper-tls-keyfile {self.keyfile} is not the key of "
                                     f"the certificate {self.certfile}") from None  # fmt: skip
                raise ZkTlsError(
                    f"--zookeeper-tls-certfile {self.certfile} with --zookeeper-tls-keyfile "
                    f"{self.keyfile}: not a PEM certificate and key ({_why(e)})"
                ) from None
        return context

    def kazoo_options(self) -> dict[str, object]:
        """KazooClient's arguments for these settings."""
        return {
            "use_ssl": True,
            "verify_certs": True,
            "check_hostname": self.check_hostname,
            "ca": None if self.cafile is None else str(self.cafile),
            "certfile": None if self.certfile is None else str(self.certfile),
            "keyfile": None if self.keyfile is None else str(self.keyfile),
        }


def _check_validity(certfile: Path, now: datetime.datetime) -> None:
    from cryptography import x509

    try:
        certificate = x509.load_pem_x509_certificate(certfile.read_bytes())
    except ValueError as e:
        raise ZkTlsError(f"--zookeeper-tls-certfile {certfile}: not a PEM certificate ({e})") from e
    if now < certificate.not_valid_before_utc:
        raise ZkTlsError(f"--zookeeper-tls-certfile {certfile} is not valid before "
                         f"{certificate.not_valid_before_utc:%Y-%m-%d %H:%M:%S} UTC")  # fmt: skip
    if now > certificate.not_valid_after_utc:
        raise ZkTlsError(f"--zookeeper-tls-certfile {certfile} expired on "
                         f"{certificate.not_valid_after_utc:%Y-%m-%d %H:%M:%S} UTC")  # fmt: skip


def _why(error: BaseException) -> str:
    reason = getattr(error, "reason", None)
    return str(reason or error).lower().replace("_", " ")


def explain_failure(hosts: str, tls: ZkTls, timeout: float = 5.0) -> str | None:
    """Why a TLS session with the first server of `hosts` that answers fails, or None when
    the handshake succeeds (the failure lies elsewhere)."""
    context = tls.context()
    last: str | None = None
    for host, port in _servers(hosts):
        try:
            raw = socket.create_connection((host, port), timeout=timeout)
        except OSError as e:
            last = f"cannot reach {host}:{port} ({e.strerror or e})"
            continue
        try:
            return _handshake(context, raw, host, port, tls)
        finally:
            raw.close()
    return last


def _handshake(
    context: ssl.SSLContext, raw: socket.socket, host: str, port: int, tls: ZkTls
) -> str | None:
    where = f"ZooKeeper at {host}:{port}"
    try:
        with context.wrap_socket(raw, server_hostname=host) as conn:
            conn.settimeout(VERDICT_WAIT)
            with contextlib.suppress(TimeoutError):  # silence is consent
                conn.recv(1)  # a refusal of our certificate arrives here
            return None
    except ssl.SSLCertVerificationError as e:
        return _verification_failure(where, host, e, tls)
    except ssl.SSLError as e:
        return _refusal(where, e, tls)
    except (ConnectionResetError, BrokenPipeError, TimeoutError):
        return f"{where} does not speak TLS (a plaintext client port?)"
    except OSError as e:
        return f"{where}: {e.strerror or e}"


def _verification_failure(
    where: str, host: str, error: ssl.SSLCertVerificationError, tls: ZkTls
) -> str:
    message = str(error.verify_message or error)
    if error.verify_code in (20, 19, 2):  # unable to get (local) issuer; self-signed in chain
        ca = f"--zookeeper-tls-cafile {tls.cafile}" if tls.cafile else "the system's CAs"
        return f"{where} presents a certificate not signed by a CA in {ca} (unknown CA)"
    if error.verify_code == 10:
        return f"{where} presents an expired certificate"
    if error.verify_code == 9:
        return f"{where} presents a certificate that is not valid yet"
    if error.verify_code == 62 or "hostname" in message.lower() or "IP address" in message:
        return (f"{where} presents a certificate that does not name {host} "
                "(--zookeeper-tls-no-hostname-check skips this check)")  # fmt: skip
    return f"{where}: its certificate failed verification ({message})"


def _refusal(where: str, error: ssl.SSLError, tls: ZkTls) -> str:
    reason = str(error.reason or "")
    if reason in ("WRONG_VERSION_NUMBER", "UNEXPECTED_EOF_WHILE_READING", "RECORD_LAYER_FAILURE",
                  "PACKET_LENGTH_TOO_LONG") or "EOF" in str(error):  # fmt: skip
        return f"{where} does not speak TLS (a plaintext client port?)"
    if tls.certfile is None and reason in (
        "TLSV13_ALERT_CERTIFICATE_REQUIRED",
        "SSLV3_ALERT_BAD_CERTIFICATE",
        "SSLV3_ALERT_HANDSHAKE_FAILURE",
    ):
        return (f"{where} wants a client certificate and got none (give "
                "--zookeeper-tls-certfile and --zookeeper-tls-keyfile)")  # fmt: skip
    if reason in ("TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_BAD_CERTIFICATE",
                  "SSLV3_ALERT_CERTIFICATE_UNKNOWN"):  # fmt: skip
        return f"{where} does not trust the client certificate {tls.certfile}"
    if reason == "SSLV3_ALERT_CERTIFICATE_EXPIRED":
        return f"{where} refuses the client certificate {tls.certfile} as expired"
    return f"{where} refused the TLS handshake ({_why(error)})"


def _servers(hosts: str) -> list[tuple[str, int]]:
    """`host:port,host:port/chroot` as (host, port) pairs; ZooKeeper's default port 2181."""
    out = []
    for entry in hosts.split("/", 1)[0].split(","):
        host, sep, port = entry.strip().rpartition(":")
        out.append((host, int(port)) if sep else (entry.strip(), 2181))
    return out
