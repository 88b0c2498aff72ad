"""etcd and kube-apiserver, as the tests and `kto dev-cluster up --apiserver real` run them (on
loopback; a real node's pods reach it on the node's link address instead): TLS from a generated
authority, service-account tokens signed by a generated key, a static administrator token, RBAC
authorization, and optionally an audit log of every request.

`with KubeApiServer(folder) as api:` starts both and waits until the server is ready (`/readyz`
and the `default` namespace); `restart_apiserver()` and `compact()` are what the watch tests
need: the server gone and back, etcd's history cut short under the operator's watches.
"""

from __future__ import annotations

import base64
import json
import secrets
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from kto_dev.ports import free_port

from . import credentials
from .build import Binaries, require_binaries

STARTUP_TIMEOUT = 60.0
SERVICE_RANGE = "10.0.0.0/24"
# Every request, at Metadata level: who called what, and the answer's code. What the RBAC tests
# read to prove every call the operator made was allowed.
AUDIT_POLICY = {"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
                "omitStages": ["RequestReceived"], "rules": [{"level": "Metadata"}]}  # fmt: skip


class KubeApiServerError(RuntimeError):
    """etcd or kube-apiserver could not be started or reached; the message names the log."""


class KubeApiServer:
    def __init__(
        self,
        directory: Path,
        *,
        binaries: Binaries | None = None,
        audit: bool = False,
        port: int | None = None,
        extra_args: tuple[str, ...] = (),
        address: str = "127.0.0.1",
    ) -> None:
        self.directory = directory
        # Where the server listens and what it advertises as the `kubernetes` Service's
        # endpoint: pods cannot reach loopback.
        self.address = address
        self.binaries = binaries or require_binaries()
        self.audit = audit
        self.extra_args = extra_args
        token_file = directory / "admin-token"
        self.admin_token = token_file.read_text().strip() if token_file.exists() else None
        # A server started again on the same folder keeps its ports: etcd's member record names
        # its peer address, and clients' kubeconfigs the server's.
        ports_file = directory / "ports.json"
        saved = json.loads(ports_file.read_text()) if ports_file.exists() else {}
        self.port = int(saved.get("apiserver") or port or free_port())
        self.etcd_port = int(saved.get("etcd") or free_port())
        self.etcd_peer_port = int(saved.get("etcd-peer") or free_port())
        self._etcd: subprocess.Popen[bytes] | None = None
        self._apiserver: subprocess.Popen[bytes] | None = None

    # -- addresses and credentials ------------------------------------------------------------

    @property
    def url(self) -> str:
        return f"https://{self.address}:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def files(self) -> credentials.Files:
        return credentials.Files.under(self.directory / "pki")

    @property
    def pids(self) -> list[int]:
        """etcd's, then kube-apiserver's: each leads a process group of its own."""
        return [p.pid for p in (self._etcd, self._apiserver) if p is not None]

    @property
    def audit_log(self) -> Path:
        return self.directory / "audit.log"

    @property
    def log(self) -> Path:
        return self.directory / "apiserver.log"

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.files.ca_cert))

    def kubeconfig(self, token: str | None = None, user: str = "admin") -> dict[str, Any]:
        authority = base64.b64encode(self.files.ca_cert.read_bytes()).decode()
        return {
            "apiVersion": "v1", "kind": "Config", "current-context": "kto",
            "clusters": [{"name": "kto", "cluster": {"server": self.url,
                                                    "certificate-authority-data": authority}}],
            "users": [{"name": user, "user": {"token": token or self.admin_token}}],
            "contexts": [{"name": "kto", "context": {"cluster": "kto", "user": user,
                                                    "namespace": "default"}}],
        }  # fmt: skip

    def write_kubeconfig(self, path: Path, token: str | None = None, user: str = "admin") -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.kubeconfig(token, user)))
        path.chmod(0o600)
        return path

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> KubeApiServer:
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.admin_token is None:
            self.admin_token = secrets.token_hex(16)
            (self.directory / "admin-token").write_text(self.admin_token + "\n")
        addresses = tuple(dict.fromkeys((self.address, *credentials.SERVING_ADDRESSES)))
        credentials.write(self.directory / "pki", self.admin_token, addresses)
        ports = {"apiserver": self.port, "etcd": self.etcd_port, "etcd-peer": self.etcd_peer_port}
        (self.directory / "ports.json").write_text(json.dumps(ports) + "\n")
        self._start_etcd()
        self.start_apiserver()
        return self

    def _start_etcd(self) -> None:
        peer = f"http://127.0.0.1:{self.etcd_peer_port}"
        self._etcd = self._spawn(
            [str(self.binaries.etcd), "--name", "kto", "--data-dir", str(self.directory / "etcd"),
             "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", f"kto={peer}", "--log-level", "warn",
             # A test and dev store: durability across a power cut is not worth an fsync per write.
             "--unsafe-no-fsync"],
            self.directory / "etcd.log",
        )  # fmt: skip
        self._wait(self._etcd, lambda: self._get_json(self.etcd_url + "/health").get("health")
                   == "true", "etcd", self.directory / "etcd.log")  # fmt: skip

    def apiserver_args(self) -> list[str]:
        f = self.files
        args = [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            f"--secure-port={self.port}", f"--bind-address={self.address}",
            f"--advertise-address={self.address}",
            f"--tls-cert-file={f.serving_cert}", f"--tls-private-key-file={f.serving_key}",
            f"--client-ca-file={f.ca_cert}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={f.service_account_public}",
            f"--service-account-signing-key-file={f.service_account_key}",
            f"--token-auth-file={f.tokens}",
            "--authorization-mode=RBAC",
            f"--service-cluster-ip-range={SERVICE_RANGE}",
            f"--cert-dir={self.directory / 'pki'}",
            "--profiling=false",
        ]  # fmt: skip
        if self.audit:
            policy = self.directory / "audit-policy.yaml"
            policy.write_text(yaml.safe_dump(AUDIT_POLICY))
            args += [f"--audit-policy-file={policy}", f"--audit-log-path={self.audit_log}",
                     "--audit-log-format=json", "--audit-log-mode=blocking"]  # fmt: skip
        return args + list(self.extra_args)

    def start_apiserver(self) -> None:
        self._apiserver = self._spawn(self.apiserver_args(), self.log)
        self._wait(self._apiserver, self._is_ready, "kube-apiserver", self.log)

    def stop_apiserver(self) -> None:
        process, self._apiserver = self._apiserver, None
        _stop(process)

    def restart_apiserver(self) -> None:
        self.stop_apiserver()
        self.start_apiserver()

    def stop(self) -> None:
        self.stop_apiserver()
        process, self._etcd = self._etcd, None
        _stop(process)

    def __enter__(self) -> KubeApiServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- etcd -----------------------------------------------------------------------------------

    def etcd_revision(self) -> int:
        # etcd's gRPC gateway: a range over one key answers with the store's current revision.
        answer = self._post_json(self.etcd_url + "/v3/kv/range", {"key": base64.b64encode(
            b"/registry").decode()})  # fmt: skip
        return int(answer["header"]["revision"])

    def etcd_put(self, key: bytes, value: bytes) -> int:
        """Writes a key beside the server's own (outside `/registry`): etcd's history moves on
        while the server is down. Returns the new revision."""
        encoded = {"key": base64.b64encode(key).decode(), "value": base64.b64encode(value).decode()}
        answer = self._post_json(self.etcd_url + "/v3/kv/put", encoded)
        return int(answer["header"]["revision"])

    def compact(self) -> int:
        """Compacts etcd's history up to now: a watch resumed from any earlier resourceVersion
        gets 410 Gone. Returns the revision compacted to."""
        revision = self.etcd_revision()
        self._post_json(self.etcd_url + "/v3/kv/compaction",
                        {"revision": str(revision), "physical": True})  # fmt: skip
        return revision

    def get(self, path: str) -> Any:
        """A GET as the administrator, parsed."""
        return self._get_json(self.url + path, authorized=True)

    # -- plumbing ---------------------------------------------------------------------------------

    def _is_ready(self) -> bool:
        try:
            self._get_json(self.url + "/readyz", authorized=True, text=True)
            self._get_json(self.url + "/api/v1/namespaces/default", authorized=True)
        except (OSError, urllib.error.URLError, ValueError):
            return False
        return True

    def _get_json(self, url: str, *, authorized: bool = False, text: bool = False) -> Any:
        request = urllib.request.Request(url)
        context = None
        if authorized:
            request.add_header("Authorization", f"Bearer {self.admin_token}")
            context = self.ssl_context()
        with urllib.request.urlopen(request, timeout=2, context=context) as answer:
            body = answer.read()
        return body.decode() if text else json.loads(body)

    def _post_json(self, url: str, body: dict[str, Any]) -> Any:
        request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})  # fmt: skip
        with urllib.request.urlopen(request, timeout=5) as answer:
            return json.loads(answer.read())

    @staticmethod
    def _spawn(args: list[str], log_path: Path) -> subprocess.Popen[bytes]:
        with log_path.open("ab") as log:
            return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # fmt: skip

    @staticmethod
    def _wait(process: subprocess.Popen[bytes], ready: Any, what: str, log: Path) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise KubeApiServerError(
                    f"{what} exited with status {process.returncode}; see {log}"
                )
            try:
                if ready():
                    return
            except (OSError, urllib.error.URLError, ValueError):
                pass
            time.sleep(0.1)
        _stop(process)
        raise KubeApiServerError(f"{what} was not ready within {STARTUP_TIMEOUT:.0f} s; see {log}")


def _stop(process: subprocess.Popen[bytes] | None) -> None:
    if process is None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
