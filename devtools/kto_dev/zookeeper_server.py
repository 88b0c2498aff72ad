"""A private ZooKeeper server (Debian's `zookeeper` package) for tests and the dev cluster.

It runs `zkServer.sh start-foreground` as a child process with its own config, data directory and
client port, so several can run side by side; health is ZooKeeper's own `srvr` four-letter word.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from kto_dev.ports import free_port

DEFAULT_HOME = Path("/usr/share/zookeeper")


class ZooKeeperServerError(RuntimeError):
    """The server could not be found, started or reached."""


def four_letter_word(port: int, word: str, host: str = "127.0.0.1", timeout: float = 1.0) -> str:
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(word.encode())
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def zookeeper_home() -> Path:
    home = Path(os.environ.get("KTO_ZOOKEEPER_HOME", DEFAULT_HOME))
    if not (home / "bin" / "zkServer.sh").exists():
        raise ZooKeeperServerError(
            f"ZooKeeper not found at {home} (install Debian's 'zookeeper' package, "
            "or set KTO_ZOOKEEPER_HOME)"
        )
    return home


@dataclass
class ZooKeeperServer:
    """One standalone server; `with ZooKeeperServer(dir) as zk: zk.connect_string`."""

    directory: Path
    port: int = field(default_factory=free_port)
    tick_time_ms: int = 500
    min_session_timeout_ms: int = 1000
    max_session_timeout_ms: int = 10000
    # SASL DIGEST-MD5 users (name → password), as a Kafka ensemble's JAAS `Server` section
    # with ZooKeeper's DigestLoginModule; none: no SASL.
    sasl_users: dict[str, str] = field(default_factory=dict)
    # Where it listens: loopback, or a real node's link address so that pods reach it too.
    host: str = "127.0.0.1"
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def connect_string(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        """The server's process (zkServer.sh execs the JVM), None when it is not running."""
        return self._process.pid if self._process is not None else None

    @property
    def config_path(self) -> Path:
        return self.directory / "zoo.cfg"

    def write_config(self) -> None:
        data = self.directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(
            "\n".join(
                [
                    f"tickTime={self.tick_time_ms}",
                    f"dataDir={data}",
                    f"clientPort={self.port}",
                    f"clientPortAddress={self.host}",
                    f"minSessionTimeout={self.min_session_timeout_ms}",
                    f"maxSessionTimeout={self.max_session_timeout_ms}",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=*",
                    # Tests write many small znodes; fsync per write is the main cost and a
                    # private test server loses nothing that matters without it.
                    "forceSync=no",
                    *(
                        ["authProvider.sasl=org.apache.zookeeper.server.auth."
                         "SASLAuthenticationProvider"]
                        if self.sasl_users
                        else []
                    ),
                    "",
                ]
            )
        )  # fmt: skip
        if self.sasl_users:
            users = "".join(
                f'\n  user_{name}="{password}"' for name, password in self.sasl_users.items()
            )
            self.jaas_path.write_text(
                f"Server {{\n  org.apache.zookeeper.server.auth.DigestLoginModule required"
                f"{users};\n}};\n"
            )

    @property
    def jaas_path(self) -> Path:
        return self.directory / "jaas.conf"

    def start(self, timeout: float = 30.0) -> None:
        if self._process is not None:
            return
        home = zookeeper_home()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.write_config()
        env = {**os.environ, "ZOO_LOG_DIR": str(self.directory), "ZOO_LOG4J_PROP": "WARN,CONSOLE"}
        if self.sasl_users:
            login = f"-Djava.security.auth.login.config={self.jaas_path}"
            env["SERVER_JVMFLAGS"] = f"{env.get('SERVER_JVMFLAGS', '')} {login}".strip()
        log = (self.directory / "server.log").open("ab")
        self._process = subprocess.Popen(
            [str(home / "bin" / "zkServer.sh"), "start-foreground", str(self.config_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        log.close()
        self.wait_until_serving(timeout)

    def is_serving(self) -> bool:
        # `ruok` answers before the server has loaded its database; `srvr` shows a mode only
        # once it serves requests.
        try:
            return "Mode: " in four_letter_word(self.port, "srvr", self.host, timeout=0.5)
        except OSError:
            return False

    def wait_until_serving(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process is not None and self._process.poll() is not None:
                raise ZooKeeperServerError(
                    f"ZooKeeper exited with status {self._process.returncode}; "
                    f"see {self.directory / 'server.log'}"
                )
            if self.is_serving():
                return
            time.sleep(0.05)
        raise ZooKeeperServerError(f"ZooKeeper was not serving within {timeout:.0f} s")

    def freeze(self) -> None:
        """SIGSTOP: the server keeps its connections but answers nothing, as a network
        partition looks to its clients."""
        if self._process is not None:
            self._process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self._process is not None:
            self._process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.send_signal(signal.SIGCONT)  # a frozen server cannot act on SIGTERM
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def wipe(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> ZooKeeperServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
