"""The kazoo facade: the only module that imports kazoo (Kafka's KafkaZkClient, without its size).

Connection loss is retried with backoff; writes that depend on what was read carry the version
they read; batches go through multi-op transactions, and a controller's writes are fenced by a
check of `/controller_epoch`'s version in the same transaction, so a deposed controller cannot
write (it gets ControllerMovedException instead).
"""

from __future__ import annotations

import functools
import logging
import socket
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any, cast

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import (
    AuthFailedError,
    BadVersionError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    UnimplementedError,
)
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry, RetryFailedError
from kazoo.security import OPEN_ACL_UNSAFE, make_acl, make_digest_acl

from kafka_topic_operator.kafka.errors import ClusterUnavailableError, ControllerMovedException
from kafka_topic_operator.zk import transaction as tx
from kafka_topic_operator.zk.credentials import (
    DigestCredentials,
    SaslCredentials,
    ZkCredentials,
    load_credentials,
)
from kafka_topic_operator.zk.multi_read import GET_CHILDREN, GET_DATA, MultiRead, ReadResult
from kafka_topic_operator.zk.ops import (
    CONTROLLER_EPOCH_PATH,
    Check,
    Create,
    Delete,
    Fence,
    Node,
    Op,
    SetData,
)
from kafka_topic_operator.zk.poll_handler import PollThreadingHandler
from kafka_topic_operator.zk.set_watches import SetWatches, set_watches_requests
from kafka_topic_operator.zk.tls import ZkTls, explain_failure

log = logging.getLogger(__name__)

READS_PER_MULTI_READ = 500

__all__ = [
    "CONTROLLER_EPOCH_PATH",
    "BadVersionError",
    "Check",
    "Create",
    "Delete",
    "DigestCredentials",
    "Fence",
    "NoAuthError",
    "NoNodeError",
    "Node",
    "NodeExistsError",
    "NotEmptyError",
    "Op",
    "SaslCredentials",
    "SetData",
    "TransactionFailed",
    "ZkClient",
    "ZkConnectionError",
    "ZkCredentials",
    "load_credentials",
]


class ZkConnectionError(ClusterUnavailableError):
    """ZooKeeper could not be reached within the allowed time."""


class TransactionFailed(Exception):
    """A multi-op failed: `errors` holds each operation's outcome (None where it rolled back)."""

    def __init__(self, ops: Sequence[Op], results: Sequence[object]) -> None:
        self.ops = tuple(ops)
        self.errors: tuple[KazooException | None, ...] = tuple(
            r if isinstance(r, KazooException) and not isinstance(r, RolledBackError) else None
            for r in results
        )
        failed = [
            f"{type(e).__name__} on {op.path}"
            for op, e in zip(self.ops, self.errors, strict=True)
            if e is not None
        ]
        super().__init__("transaction failed: " + ", ".join(failed))

    def first_error(self) -> tuple[Op, KazooException] | None:
        for op, error in zip(self.ops, self.errors, strict=True):
            if error is not None:
                return op, error
        return None


class ZkClient:
    """A connected session; `hosts` may end in a chroot (`host:2181/kafka`)."""

    def __init__(
        self,
        hosts: str,
        *,
        session_timeout: float = 10.0,
        credentials: ZkCredentials | None = None,
        secure_acls: bool = False,
        retry_deadline: float | None = None,
        tls: ZkTls | None = None,
    ) -> None:
        """`retry_deadline`: give up on an operation (ZkConnectionError) after retrying a lost
        connection this long; None retries until the connection is back. `tls`: a secure client
        port's settings, checked by the caller (ZkTls.check)."""
        sasl = isinstance(credentials, SaslCredentials)
        auth = None
        sasl_options = None
        if credentials is not None and sasl:
            sasl_options = {"mechanism": "DIGEST-MD5", "username": credentials.user,
                            "password": credentials.password}  # fmt: skip
        elif credentials is not None:
            auth = [("digest", f"{credentials.user}:{credentials.password}")]
        acl = None
        if secure_acls:
            if credentials is None:
                raise ValueError("secure ACLs need digest or SASL credentials")
            # Kafka's secure ACLs: full rights for the authenticated user, read for everyone.
            owner = (
                make_acl("sasl", credentials.user, all=True)
                if sasl
                else make_digest_acl(credentials.user, credentials.password, all=True)
            )
            acl = [owner, make_acl("world", "anyone", read=True)]
        # An expired session is retried too, on the new session kazoo opens: whoever depends on
        # the old one (the controller, a broker's registration) learns of it from the state
        # listener, and a controller's writes stay fenced by the epoch and its session.
        self._retry = KazooRetry(
            max_tries=-1, delay=0.05, max_delay=2.0, ignore_expire=True, deadline=retry_deadline
        )
        self._kazoo: Any = KazooClient(
            hosts=hosts,
            timeout=session_timeout,
            auth_data=auth,
            sasl_options=sasl_options,
            default_acl=acl,
            connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=1.0),
            command_retry=None,
            handler=PollThreadingHandler(),
            **({} if tls is None else tls.kazoo_options()),
        )
        self.hosts = hosts
        self._sasl_user = credentials.user if sasl and credentials is not None else None
        self._multi_read_supported = True
        self._session_timeout = session_timeout
        self._credentials = credentials
        self._secure_acls = secure_acls
        self._tls = tls

    def sibling(self) -> ZkClient:
        """A new, unstarted client with this one's servers and credentials: a connection of
        its own, whose requests never queue behind this one's."""
        return ZkClient(self.hosts, session_timeout=self._session_timeout,
                        credentials=self._credentials, secure_acls=self._secure_acls,
                        tls=self._tls)  # fmt: skip

    # ---- session ----------------------------------------------------------------------------

    def start(self, timeout: float = 15.0) -> None:
        try:
            with warnings.catch_warnings():
                # A missing chroot is for the caller to judge (the operator creates it, the
                # read-only commands refuse it), not a library warning on the user's terminal.
                warnings.filterwarnings("ignore", "No chroot path exists", UserWarning)
                self._kazoo.start(timeout=timeout)
            if self._sasl_user is not None:
                # kazoo says connected before the SASL exchange ends: one round trip after it
                # tells whether the server took the credentials (Kafka fails on AuthFailed too).
                self._kazoo.exists("/")
        except AuthFailedError as e:
            self.stop()
            raise ZkConnectionError(
                f"cannot connect to ZooKeeper at {self.hosts}: SASL authentication of user "
                f"'{self._sasl_user}' failed"
            ) from e
        except Exception as e:  # kazoo raises its own timeout type from the handler
            # A refused SASL exchange can end the session before `start` saw it connected:
            # kazoo then times out, remembering why, or, when the server closed the socket
            # before its answer was read, as a dropped connection it kept retrying. A server
            # that takes connections but never let this client in refused its credentials.
            refused = self._sasl_user is not None and (
                self._kazoo.client_state == "AUTH_FAILED" or _reachable(self.hosts)
            )
            self.stop()
            if self._tls is not None and (why := explain_failure(self.hosts, self._tls)):
                raise ZkConnectionError(
                    f"cannot connect to ZooKeeper at {self.hosts}: {why}"
                ) from e
            if refused:
                raise ZkConnectionError(
                    f"cannot connect to ZooKeeper at {self.hosts}: SASL authentication of user "
                    f"'{self._sasl_user}' failed"
                ) from e
            raise ZkConnectionError(f"cannot connect to ZooKeeper at {self.hosts}: {e}") from e

    def stop(self) -> None:
        self._kazoo.stop()
        self._kazoo.close()

    @property
    def connected(self) -> bool:
        return bool(self._kazoo.connected)

    @property
    def closed(self) -> bool:
        """Whether the client has no session to work in: never started, or stopped."""
        return bool(self._kazoo.client_state == KeeperState.CLOSED)

    @property
    def session_id(self) -> int:
        return int(self._kazoo.client_id[0]) if self._kazoo.client_id else 0

    def answers(self, timeout: float) -> bool:
        """Whether the server answers a read within `timeout`. A server frozen or cut off on
        the far side still looks connected to kazoo until its read timeout (two thirds of the
        session timeout); this asks it."""
        if not self._kazoo.connected:
            return False
        try:
            self._kazoo.exists_async("/").get(timeout=timeout)
        except Exception:  # kazoo's handler raises its own timeout type; any failure is a no
            return False
        return True

    def add_state_listener(self, listener: Callable[[str], None]) -> None:
        """`listener` gets "LOST", "SUSPENDED" or "CONNECTED"; it runs on kazoo's thread."""

        def adapter(state: Any) -> None:
            listener(str(state))

        self._kazoo.add_listener(adapter)

    # ---- reads ------------------------------------------------------------------------------

    def get(self, path: str, watch: Callable[[Any], None] | None = None) -> Node | None:
        try:
            data, stat = self._call(self._kazoo.get, path, watch=watch)
        except NoNodeError:
            return None
        return _node(path, data, stat)

    def exists(self, path: str, watch: Callable[[Any], None] | None = None) -> bool:
        return self._call(self._kazoo.exists, path, watch=watch) is not None

    def children(self, path: str, watch: Callable[[Any], None] | None = None) -> list[str] | None:
        try:
            names: list[str] = self._call(self._kazoo.get_children, path, watch=watch)
        except NoNodeError:
            return None
        return sorted(names)

    def get_many(
        self, paths: Iterable[str], watch: Callable[[Any], None] | None = None
    ) -> list[Node | None]:
        """Pipelined reads: every request is sent before the first answer is awaited. They go
        as multiRead batches (ZooKeeper 3.6+), one request per batch. With a watch, it is set
        on every path as Kafka's registerZNodeChangeHandler does (it fires on a change, a
        deletion, or the creation of a znode that was missing), by one SetWatches request per
        batch relative to the last zxid seen before the read: no change after the read is
        missed, and no `exists` per znode is needed."""
        paths = list(paths)
        if watch is None:
            return self.read_many(data=paths)[0]
        self._require_connection()
        since = self._kazoo.last_zxid
        nodes = self.read_many(data=paths)[0]
        self.set_watches(
            since,
            [p for p, n in zip(paths, nodes, strict=True) if n is not None],
            [p for p, n in zip(paths, nodes, strict=True) if n is None],
            watch,
        )
        return nodes

    def set_watches(
        self, since: int, data: Sequence[str], exist: Sequence[str], watch: Callable[[Any], None]
    ) -> None:
        """`watch` on the data of `data` (modified after zxid `since` or gone: it fires at
        once) and on the creation of `exist` (existing already: it fires at once)."""
        chroot = self._kazoo.chroot
        full_data = [_prefix_root(chroot, p) for p in data]
        full_exist = [_prefix_root(chroot, p) for p in exist]
        # In kazoo's table first: the server may fire a watch as soon as it reads the request.
        watchers = self._kazoo._data_watchers
        for path in (*full_data, *full_exist):
            watchers[path].add(watch)
        pending = []
        for request in set_watches_requests(since, full_data, full_exist):
            result = self._kazoo.handler.async_result()
            self._kazoo._call(request, result)
            pending.append((request, result))
        for request, result in pending:
            try:
                result.get()
            except KazooException:
                # Connection trouble: set them again once the session is back (relative to the
                # same zxid, so nothing that changed meanwhile is missed).
                self._call(self._set_watches_now, request)

    def wait_until_exist(
        self, paths: Iterable[str], timeout: float, *, idle: float | None = None
    ) -> bool:
        """Until every one of `paths` exists, at most `timeout` seconds and, with `idle`, as
        long as one appears at least every `idle` seconds: one read, then a watch on the
        creation of each missing znode (not polled). False if some did not appear in time (or
        appeared and went again: the reader that follows sees which)."""
        paths = list(paths)
        if not paths:
            return True
        self._require_connection()
        missing: set[str] = set()
        appeared = threading.Condition()

        def created(event: Any) -> None:
            with appeared:
                missing.discard(event.path)
                appeared.notify()

        since = self._kazoo.last_zxid
        nodes = self.read_many(data=paths)[0]
        with appeared:
            missing.update(p for p, n in zip(paths, nodes, strict=True) if n is None)
            if not missing:
                return True
            absent = sorted(missing)
        self.set_watches(since, [], absent, created)
        deadline = time.monotonic() + timeout
        with appeared:
            while missing:
                left = deadline - time.monotonic()
                stretch = min(left, idle if idle is not None else left)
                fewer = functools.partial(_fewer_than, missing, len(missing))
                if stretch <= 0 or not appeared.wait_for(fewer, stretch):
                    return False
            return True

    def _set_watches_now(self, request: SetWatches) -> None:
        result = self._kazoo.handler.async_result()
        self._kazoo._call(request, result)
        result.get()

    def children_many(self, paths: Iterable[str]) -> list[list[str] | None]:
        return self.read_many(children=list(paths))[1]

    def read_many(
        self, data: Sequence[str] = (), children: Sequence[str] = ()
    ) -> tuple[list[Node | None], list[list[str] | None]]:
        """The data of `data` and the sorted children of `children` (None where a znode is
        missing), read together: one multiRead request per batch on ZooKeeper 3.6+, pipelined
        asynchronous reads before. Not atomic, and no watches."""
        reads = [(GET_DATA, p) for p in data] + [(GET_CHILDREN, p) for p in children]
        if not reads:
            return [], []
        self._require_connection()
        answers: list[Node | list[str] | None] | None = None
        if self._multi_read_supported:
            try:
                answers = self._multi_read(reads)
            except UnimplementedError:
                log.info("ZooKeeper does not support multiRead; reading znodes one by one")
                self._multi_read_supported = False
        if answers is None:
            kazoo = self._kazoo
            send = {GET_DATA: kazoo.get_async, GET_CHILDREN: kazoo.get_children_async}
            pending = [(op, path, send[op](path)) for op, path in reads]
            answers = [self._answer(path, op, result) for op, path, result in pending]
        nodes = cast("list[Node | None]", answers[: len(data)])
        return nodes, cast("list[list[str] | None]", answers[len(data) :])

    def _answer(
        self, path: str, operation: int, result: Any, watch: Callable[[Any], None] | None = None
    ) -> Node | list[str] | None:
        try:
            answer = result.get()
        except NoNodeError:
            return None
        except KazooException:
            # Connection trouble: read this one again once the session is back.
            return self._read_one(operation, path, watch)
        if operation == GET_DATA:
            return _node(path, *answer)
        return sorted(answer)

    def _read_one(
        self, operation: int, path: str, watch: Callable[[Any], None] | None = None
    ) -> Node | list[str] | None:
        return self.get(path, watch) if operation == GET_DATA else self.children(path)

    def _multi_read(self, reads: list[tuple[int, str]]) -> list[Node | list[str] | None]:
        chroot = self._kazoo.chroot
        pending = []
        for start in range(0, len(reads), READS_PER_MULTI_READ):
            batch = reads[start : start + READS_PER_MULTI_READ]
            result = self._kazoo.handler.async_result()
            request = MultiRead([(op, _prefix_root(chroot, path)) for op, path in batch])
            self._kazoo._call(request, result)
            pending.append((batch, result))
        out: list[Node | list[str] | None] = []
        for batch, result in pending:
            try:
                answers: list[ReadResult] = result.get()
            except UnimplementedError:
                raise
            except KazooException:
                # Connection trouble: read this batch again once the session is back.
                out.extend(self._read_one(op, path) for op, path in batch)
                continue
            for (op, path), answer in zip(batch, answers, strict=True):
                if answer.error is None:
                    found = answer.children
                    out.append(
                        _node(path, answer.data, answer.stat) if found is None else sorted(found)
                    )
                elif isinstance(answer.error, NoNodeError):
                    out.append(None)
                else:
                    out.append(self._read_one(op, path))
        return out

    # ---- writes -----------------------------------------------------------------------------

    def ensure_path(self, path: str) -> None:
        self._call(self._kazoo.ensure_path, path)

    def create(
        self,
        path: str,
        data: bytes = b"",
        *,
        ephemeral: bool = False,
        sequence: bool = False,
        makepath: bool = False,
    ) -> str:
        created: str = self._call(
            self._kazoo.create,
            path,
            data,
            ephemeral=ephemeral,
            sequence=sequence,
            makepath=makepath,
        )
        return created

    def set(self, path: str, data: bytes, version: int = -1) -> int:
        """Conditional when `version` >= 0; returns the znode's new version."""
        stat = self._call(self._kazoo.set, path, data, version=version)
        return int(stat.version)

    def delete(self, path: str, version: int = -1, *, recursive: bool = False) -> bool:
        """Deletes the znode (and its children if `recursive`); False if it was already gone."""
        try:
            self._call(self._kazoo.delete, path, version=version, recursive=recursive)
        except NoNodeError:
            return False
        return True

    def multi(self, ops: Sequence[Op], fence: Fence | None = None) -> list[object]:
        """All of `ops` or none; with a fence, ControllerMovedException if the epoch moved."""
        all_ops: list[Op] = ([Check(fence.path, fence.epoch_zk_version)] if fence else []) + list(
            ops
        )
        if not all_ops:
            return []
        outcome = self._outcome(all_ops, self._call(self._fenced_commit, all_ops, fence), fence)
        if isinstance(outcome, TransactionFailed):
            raise outcome
        return outcome

    def multi_many(
        self, batches: Iterable[Sequence[Op]], fence: Fence | None = None
    ) -> list[list[object] | TransactionFailed]:
        """Many independent transactions, pipelined: all are sent before the first answer is
        awaited, each as soon as `batches` yields it (ZooKeeper applies the first while the
        caller builds the next). Each batch succeeds or fails alone; a fenced one raises
        ControllerMovedException if the epoch moved. A batch whose answer was lost with the
        connection is retried synchronously, so its ops must tolerate having been applied."""
        prefix: list[Op] = [Check(fence.path, fence.epoch_zk_version)] if fence else []
        self._require_connection()
        self._call(self._check_session, fence)
        pending = []
        for ops in batches:
            all_ops = [*prefix, *ops]
            pending.append((all_ops, self._commit_async(all_ops)))
        outcomes: list[list[object] | TransactionFailed] = []
        for all_ops, result in pending:
            try:
                results: list[object] = result.get()
            except KazooException:
                results = self._call(self._fenced_commit, all_ops, fence)
            outcomes.append(self._outcome(all_ops, results, fence))
        return outcomes

    def _outcome(
        self, all_ops: Sequence[Op], results: list[object], fence: Fence | None
    ) -> list[object] | TransactionFailed:
        if not any(isinstance(r, KazooException) for r in results):
            return results[1:] if fence else results
        failure = TransactionFailed(all_ops, results)
        first = failure.first_error()
        if fence and first and first[0] is all_ops[0]:
            raise ControllerMovedException(
                f"Controller epoch zkVersion check fails. Expected zkVersion = "
                f"{fence.epoch_zk_version}"
            )
        return failure

    def _fenced_commit(self, ops: Sequence[Op], fence: Fence | None) -> list[object]:
        self._check_session(fence)  # each attempt: a retry may find a new session
        return self._commit(ops)

    def _check_session(self, fence: Fence | None) -> None:
        if fence is None or not fence.session:
            return
        if not self._kazoo.connected:
            # The session may live on (a dropped connection) or not (an expiry): retried until
            # kazoo knows which. It holds no session id while it reconnects.
            raise ConnectionLoss()
        if self.session_id != fence.session:
            raise ControllerMovedException(
                f"The ZooKeeper session {fence.session:#x} the controller epoch was won in has "
                "expired"
            )

    def _commit(self, ops: Sequence[Op]) -> list[object]:
        results: list[object] = self._commit_async(ops).get()
        return results

    def _commit_async(self, ops: Sequence[Op]) -> Any:
        """kazoo's TransactionRequest.commit_async without its per-operation argument checks,
        path normalisation and logging, and serialized in one pass (`zk.transaction`): our
        paths come from the codecs, already absolute and normal."""
        chroot = self._kazoo.chroot or ""
        acl: bytes | None = None
        parts: list[bytes] = []
        for op in ops:
            path = tx.string(chroot + op.path if op.path != "/" else (chroot or "/"))
            match op:
                case Create():
                    if acl is None:
                        acl = tx.acl_list(self._kazoo.default_acl or OPEN_ACL_UNSAFE)
                    flags = (1 if op.ephemeral else 0) | (2 if op.sequence else 0)
                    parts += (tx.CREATE_HEADER, path, tx.buffer(op.data), acl, tx.pack_int(flags))
                case SetData():
                    parts += (tx.SET_DATA_HEADER, path, tx.buffer(op.data), tx.pack_int(op.version))
                case Delete():
                    parts += (tx.DELETE_HEADER, path, tx.pack_int(op.version))
                case Check():
                    parts += (tx.CHECK_HEADER, path, tx.pack_int(op.version))
        result = self._kazoo.handler.async_result()
        self._kazoo._call(tx.Multi(parts), result)
        return result

    # ---- plumbing ---------------------------------------------------------------------------

    def _call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        # A copy per call: KazooRetry keeps its attempt count and deadline in the instance, and
        # callers (kopf's handler threads) share this client.
        retry = self._retry.copy()
        deadline = retry.deadline

        def attempt() -> Any:
            # kazoo reports a closed client as a session expiry, which the retry recovers from:
            # a thread still at work when the client's owner stopped it would retry forever.
            if self.closed:
                raise self._closed()
            # kazoo queues a request made while disconnected until the connection is back: with
            # a deadline, fail fast instead (ConnectionLoss is retried until the deadline).
            if deadline is not None and not self._kazoo.connected:
                raise ConnectionLoss()
            try:
                return func(*args, **kwargs)
            except ConnectionClosedError as e:
                raise self._closed() from e

        try:
            return retry(attempt)
        except RetryFailedError as e:
            raise self._unreachable() from e

    def _closed(self) -> ZkConnectionError:
        return ZkConnectionError(f"the ZooKeeper client for {self.hosts} is closed")

    def _unreachable(self) -> ZkConnectionError:
        return ZkConnectionError(
            f"ZooKeeper at {self.hosts} did not answer within {self._retry.deadline} s"
        )

    def _require_connection(self) -> None:
        """With a retry deadline, wait for the connection at most that long (pipelined reads
        and transactions would otherwise wait in kazoo's queue until it returns)."""
        if self._retry.deadline is None or self._kazoo.connected:
            return
        deadline = time.monotonic() + self._retry.deadline
        while not self._kazoo.connected:
            if self.closed:
                raise self._closed()
            if time.monotonic() > deadline:
                raise self._unreachable()
            time.sleep(0.05)

    @property
    def raw(self) -> Any:
        """The kazoo client, for recipes the facade does not wrap (watches, locks)."""
        return self._kazoo


def _fewer_than(items: set[str], count: int) -> bool:
    return len(items) < count


def _node(path: str, data: bytes | None, stat: Any) -> Node:
    return Node(
        path=path,
        data=data or b"",
        version=int(stat.version),
        ephemeral_owner=int(stat.ephemeralOwner),
        czxid=int(stat.czxid),
        mtime=int(stat.mtime),
    )


def is_connected_state(state: str) -> bool:
    return state == str(KazooState.CONNECTED)


def _reachable(hosts: str) -> bool:
    """Whether any of the servers in a connect string takes a TCP connection."""
    for server in hosts.split("/", 1)[0].split(","):
        host, _, port = server.rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port or 2181)), timeout=2):
                return True
        except (OSError, ValueError):
            continue
    return False
