"""HTTP and kubectl clients for tests against a Kubernetes API server: the API emulator (plain
HTTP, no credentials) or a real kube-apiserver (a bearer token and the CA's SSL context)."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

Obj = dict[str, Any]


class Http:
    """Just enough HTTP for asserting on the emulator's answers (and, given a bearer token and
    the CA's context, on a real kube-apiserver's)."""

    def __init__(
        self, base: str, *, token: str | None = None, context: ssl.SSLContext | None = None
    ) -> None:
        self.base = base
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.context = context

    def open(self, req: urllib.request.Request, timeout: float) -> Any:
        for name, value in self.headers.items():
            req.add_header(name, value)
        return urllib.request.urlopen(req, timeout=timeout, context=self.context)

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
        raw: bytes | None = None,
    ) -> tuple[int, Any, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Accept", accept)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with self.open(req, 30) as resp:
                payload = resp.read()
                return resp.status, json.loads(payload) if payload else None, resp.headers
        except urllib.error.HTTPError as err:
            payload = err.read()
            return err.code, json.loads(payload) if payload else None, err.headers

    def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        code, body, _ = self.request("GET", path, **kw)
        return code, body

    def post(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        code, out, _ = self.request("POST", path, body, **kw)
        return code, out

    def put(self, path: str, body: Any) -> tuple[int, Any]:
        code, out, _ = self.request("PUT", path, body)
        return code, out

    def patch(self, path: str, body: Any, content_type: str) -> tuple[int, Any]:
        code, out, _ = self.request("PATCH", path, body, content_type=content_type)
        return code, out

    def delete(self, path: str, body: Any = None) -> tuple[int, Any]:
        code, out, _ = self.request("DELETE", path, body)
        return code, out

    def watch_until(self, path: str, predicate: Any, timeout: float = 60) -> Obj:
        """Follow a watch stream until an event satisfies the predicate (no polling)."""
        sep = "&" if "?" in path else "?"
        url = f"{self.base}{path}{sep}watch=true&timeoutSeconds={int(timeout)}"
        with self.open(urllib.request.Request(url), timeout + 30) as resp:
            for line in resp:
                event: Obj = json.loads(line)
                if predicate(event):
                    return event
        raise AssertionError(f"no matching event on {path} within {timeout} s")

    def watch(self, path: str) -> list[Obj]:
        """Read a (bounded: use timeoutSeconds) watch stream to its end, one event per line."""
        with self.open(urllib.request.Request(self.base + path), 60) as resp:
            assert resp.status == 200
            return [json.loads(line) for line in resp.read().splitlines() if line.strip()]


class Kubectl:
    def __init__(self, binary: Path, kubeconfig: Path, cache: Path) -> None:
        self.binary = binary
        self.kubeconfig = kubeconfig
        self.cache = cache

    def run(
        self, *args: str, check: bool = True, stdin: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        cmd = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.cache}",
            *args,
        ]
        result = subprocess.run(
            cmd, input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout}\n{result.stderr}"
            )
        return result

    def popen(self, *args: str) -> subprocess.Popen[str]:
        cmd = [
            str(self.binary),
            f"--kubeconfig={self.kubeconfig}",
            f"--cache-dir={self.cache}",
            *args,
        ]
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
