"""Free TCP ports for the servers the dev cluster and the tests start.

Binding port 0 would hand out a port from the kernel's ephemeral range, the range it also gives
outgoing connections: between our check and the server's own bind, any client connecting
somewhere could take it (seen with many JVMs connecting at once: "Address already in use").
A port below that range is only ever taken by a server that asks for it.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Below 10,000 live many well-known services; the span leaves room for hundreds of servers.
LOWEST = 10_000
ATTEMPTS = 200

_handed_out: set[int] = set()


def ephemeral_range(source: Path = EPHEMERAL_RANGE) -> tuple[int, int]:
    """The kernel's range for outgoing connections' ports (Linux's default when unreadable)."""
    try:
        low, high = (int(part) for part in source.read_text().split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port free now, below the ephemeral range, not handed out before by this process."""
    low, _ = ephemeral_range()
    if low - LOWEST >= 1000:
        for _ in range(ATTEMPTS):
            port = random.randrange(LOWEST, low)
            if port not in _handed_out and is_free(port):
                _handed_out.add(port)
                return port
    # A kernel whose ephemeral range starts low leaves no such span: take one the kernel picks.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    _handed_out.add(port)
    return port


def accepts_connections(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server accepts connections there now (listening, not merely bound)."""
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0
