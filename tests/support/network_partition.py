"""A TCP proxy that cuts a server's clients off as a network partition does."""

from __future__ import annotations

import contextlib
import socket
import threading


class NetworkPartition:
    """A TCP proxy between ZooKeeper's clients and the server that can cut them apart: open
    connections are closed and new ones refused until `heal`, as a network partition looks.
    The server expires the sessions it stops hearing from."""

    def __init__(self, target_port: int) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._target = target_port
        self._cut = threading.Event()
        self._lock = threading.Lock()
        self._open: dict[tuple[socket.socket, socket.socket], list[threading.Thread]] = {}
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            if self._cut.is_set():
                client.close()
                continue
            try:
                server = socket.create_connection(("127.0.0.1", self._target), timeout=1)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            for end in (client, server):  # forwarded as it comes: Nagle would add 40 ms waits
                end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pumps = [threading.Thread(target=self._pump, args=ends, daemon=True)
                     for ends in ((client, server), (server, client))]  # fmt: skip
            with self._lock:
                self._open[(client, server)] = pumps
            for pump in pumps:
                pump.start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                sink.sendall(data)
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Closes every connection (and waits until they are): the server sees its clients go,
        the clients see the server go."""
        self._cut.set()
        with self._lock:
            pairs, self._open = self._open, {}
        for ends in pairs:
            for end in ends:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
        for ends, pumps in pairs.items():
            for pump in pumps:
                pump.join()
            for end in ends:
                end.close()

    def heal(self) -> None:
        self._cut.clear()

    def close(self) -> None:
        self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing would not)
        self._acceptor.join()
        self._listener.close()
        self.cut()
