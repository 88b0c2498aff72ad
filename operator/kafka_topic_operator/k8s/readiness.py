"""The readiness endpoint (`kto run --readiness`): 200 while the cluster (ZooKeeper, or Kafka's
brokers) answers, 503 while it does not. Served by its own thread from a flag, so an answer
never waits on the cluster or on kopf's handlers."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


def serve(url: str, ready: threading.Event, what: str = "ZooKeeper") -> ThreadingHTTPServer:
    """Starts serving `url` (`http://HOST:PORT/PATH`) in a daemon thread; `what` names what
    does not answer when not ready."""
    unready = f"{what} is not answering\n".encode()
    parts = urlsplit(url)
    if parts.scheme != "http" or parts.port is None:
        raise ValueError(f"--readiness must be http://HOST:PORT/PATH, not {url!r}")
    path = parts.path or "/"

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if urlsplit(self.path).path != path:
                self._answer(404, b"not found\n")
            elif ready.is_set():
                self._answer(200, b"ok\n")
            else:
                self._answer(503, unready)

        def _answer(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (its name)
            pass  # a probe every few seconds is not news

    server = ThreadingHTTPServer((parts.hostname or "0.0.0.0", parts.port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="readiness", daemon=True).start()
    return server
