"""What a kube-apiserver needs to be a real, authenticating server: a certificate authority, a
serving certificate it signs, the service-account signing key pair, a static token file, and the
client certificate it shows kubelets. Generated once per server directory with `cryptography`;
pure apart from `write`."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The server's in-cluster name and the first address of its service range, as a cluster's own
# `kubernetes` Service would have them.
SERVING_NAMES = ("localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc")
SERVING_ADDRESSES = ("127.0.0.1", "10.0.0.1")
VALIDITY = datetime.timedelta(days=365)

ADMIN_TOKEN_USER = "kto-admin"
# Who the server is when it calls a kubelet (logs, exec): a member of system:masters, so the
# kubelet's webhook authorization allows it.
KUBELET_CLIENT = "kube-apiserver-kubelet-client"


@dataclass(frozen=True)
class Files:
    ca_cert: Path
    serving_cert: Path
    serving_key: Path
    service_account_key: Path
    service_account_public: Path
    tokens: Path
    kubelet_client_cert: Path
    kubelet_client_key: Path

    @staticmethod
    def under(folder: Path) -> Files:
        return Files(folder / "ca.crt", folder / "apiserver.crt", folder / "apiserver.key",
                     folder / "sa.key", folder / "sa.pub", folder / "tokens.csv",
                     folder / "kubelet-client.crt", folder / "kubelet-client.key")  # fmt: skip


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _private_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())  # fmt: skip


def _certificate(
    subject: str,
    key: rsa.RSAPrivateKey,
    issuer: tuple[x509.Certificate, rsa.RSAPrivateKey] | None,
    addresses: tuple[str, ...] = SERVING_ADDRESSES,
) -> x509.Certificate:
    """The authority (no issuer), or a serving certificate for `addresses` and the server's
    in-cluster names."""
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
    )
    if issuer is None:  # the authority signs itself
        builder = builder.issuer_name(name).add_extension(
            x509.BasicConstraints(ca=True, path_length=None), critical=True
        )
        return builder.sign(key, hashes.SHA256())
    ca_cert, ca_key = issuer
    alternative: list[x509.GeneralName] = [x509.DNSName(n) for n in SERVING_NAMES]
    alternative += [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
    builder = (
        builder.issuer_name(ca_cert.subject)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(alternative), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    )
    return builder.sign(ca_key, hashes.SHA256())


def _client_certificate(
    user: str,
    group: str,
    key: rsa.RSAPrivateKey,
    issuer: tuple[x509.Certificate, rsa.RSAPrivateKey],
) -> x509.Certificate:
    """A client certificate as Kubernetes reads one: the user in CN, a group in O."""
    now = datetime.datetime.now(datetime.UTC)
    ca_cert, ca_key = issuer
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, group)])  # fmt: skip
    return (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def self_signed(subject: str) -> tuple[bytes, bytes]:
    """A certificate that is its own authority, and its key, as PEM."""
    key = _key()
    certificate = _certificate(subject, key, None)
    return certificate.public_bytes(serialization.Encoding.PEM), _private_pem(key)


def write(folder: Path, admin_token: str, addresses: tuple[str, ...] = SERVING_ADDRESSES) -> Files:
    """Creates every file unless the folder has them already (a restarted server keeps its
    authority and keys, so clients' kubeconfigs and issued tokens stay valid); the serving
    certificate names `addresses`."""
    files = Files.under(folder)
    if files.tokens.exists():
        return files
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, serving_key, sa_key, client_key = _key(), _key(), _key(), _key()
    ca_cert = _certificate("kto-dev-ca", ca_key, None)
    serving = _certificate("kube-apiserver", serving_key, (ca_cert, ca_key), addresses)
    client = _client_certificate(KUBELET_CLIENT, "system:masters", client_key, (ca_cert, ca_key))
    files.ca_cert.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    files.serving_cert.write_bytes(serving.public_bytes(serialization.Encoding.PEM))
    files.serving_key.write_bytes(_private_pem(serving_key))
    files.kubelet_client_cert.write_bytes(client.public_bytes(serialization.Encoding.PEM))
    files.kubelet_client_key.write_bytes(_private_pem(client_key))
    files.service_account_key.write_bytes(_private_pem(sa_key))
    public = sa_key.public_key()
    files.service_account_public.write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    for secret in (files.serving_key, files.service_account_key, files.kubelet_client_key):
        secret.chmod(0o600)
    # token,user,uid,"groups": the tests' administrator, in system:masters.
    files.tokens.write_text(
        f'{admin_token},{ADMIN_TOKEN_USER},{ADMIN_TOKEN_USER},"system:masters"\n'
    )
    files.tokens.chmod(0o600)
    return files
