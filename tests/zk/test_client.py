"""The kazoo facade against a real ZooKeeper: versions, pipelined reads, fenced transactions."""

from __future__ import annotations

import threading
import time

import pytest
from kto_testing import eventually
from network_partition import NetworkPartition

from kafka_topic_operator.kafka.errors import ControllerMovedException
from kafka_topic_operator.zk.client import (
    READS_PER_MULTI_READ,
    BadVersionError,
    Check,
    Create,
    Delete,
    DigestCredentials,
    Fence,
    NoAuthError,
    SetData,
    TransactionFailed,
    ZkClient,
    ZkConnectionError,
)
from kto_dev.zookeeper_server import ZooKeeperServer

pytestmark = pytest.mark.zookeeper


def test_create_get_and_conditional_set(zk: ZkClient) -> None:
    zk.create("/a/b", b"one", makepath=True)
    node = zk.get("/a/b")
    assert node is not None and (node.data, node.version) == (b"one", 0)
    assert zk.set("/a/b", b"two", version=0) == 1
    with pytest.raises(BadVersionError):
        zk.set("/a/b", b"three", version=0)
    assert zk.get("/missing") is None
    assert zk.children("/a") == ["b"]
    assert zk.children("/missing") is None


def test_pipelined_reads_keep_order_and_report_missing(zk: ZkClient) -> None:
    zk.multi([Create(f"/n{i}", str(i).encode()) for i in range(50)])
    nodes = zk.get_many([f"/n{i}" for i in range(50)] + ["/nope"])
    assert [n.data if n else None for n in nodes] == [str(i).encode() for i in range(50)] + [None]


def test_multi_read_batches_keep_order_versions_and_empty_data(zk: ZkClient) -> None:
    count = READS_PER_MULTI_READ * 2 + 7  # three multiRead requests, the last one partial
    for start in range(0, count, 500):
        zk.multi([Create(f"/m{i}", str(i).encode()) for i in range(start, min(count, start + 500))])
    zk.set("/m3", b"", version=0)
    paths = [f"/m{i}" for i in range(count)]
    paths.insert(600, "/gone")
    nodes = zk.get_many(paths)
    assert len(nodes) == count + 1 and nodes[600] is None
    read = [n for n in nodes if n is not None]
    assert [n.path for n in read] == [f"/m{i}" for i in range(count)]
    assert read[3].data == b"" and read[3].version == 1  # the chroot applied, the stat parsed
    assert read[1000].data == b"1000" and read[1000].version == 0


@pytest.mark.parametrize("multi_read", [True, False], ids=["multiRead", "pipelined"])
def test_data_and_children_read_together(zk: ZkClient, multi_read: bool) -> None:
    zk._multi_read_supported = multi_read  # the path taken on servers older than 3.6
    zk.multi(
        [Create("/p", b"parent"), Create("/p/b", b""), Create("/p/a", b"x"), Create("/e", b"")]
    )
    nodes, children = zk.read_many(
        data=["/p/a", "/missing", "/p"], children=["/p", "/e", "/missing"]
    )
    assert [(n.path, n.data) if n else None for n in nodes] == [
        ("/p/a", b"x"),
        None,
        ("/p", b"parent"),
    ]
    assert children == [["a", "b"], [], None]
    assert zk.read_many() == ([], [])


def test_reads_with_a_watch_set_it(zk: ZkClient) -> None:
    zk.create("/w", b"0")
    fired: list[object] = []
    nodes = zk.get_many(["/w", "/later"], watch=fired.append)
    assert [n.data if n else None for n in nodes] == [b"0", None]
    zk.set("/w", b"1")
    eventually(lambda: len(fired) == 1, "the data watch to fire", timeout=10)
    zk.create("/later", b"")  # as Kafka's exists-watches do, a missing znode's fires on creation
    eventually(lambda: len(fired) == 2, "the creation watch to fire", timeout=10)


def test_watches_fire_once_per_change_and_for_deletion(zk: ZkClient) -> None:
    zk.create("/a", b"0")
    zk.create("/b", b"0")
    fired: list[tuple[str, str]] = []
    zk.get_many(["/a", "/b"], watch=lambda e: fired.append((e.type, e.path)))
    zk.set("/a", b"1")
    zk.set("/a", b"2")  # a watch fires once: the second change is seen by the next read
    zk.delete("/b")
    eventually(lambda: len(fired) == 2, "both watches to fire", timeout=10)
    assert sorted(fired) == [("CHANGED", "/a"), ("DELETED", "/b")]


def test_watches_set_after_a_change_fire_at_once(zk: ZkClient) -> None:
    """A change between the zxid the watches are relative to and the SetWatches request (a
    change the caller may not have read) fires the watch at once, as does a missing znode
    that exists by then; one untouched since waits."""
    zk.create("/kept", b"0")
    zk.create("/changed", b"0")
    since = zk.raw.last_zxid
    zk.set("/changed", b"1")
    zk.create("/appeared", b"")
    fired: list[tuple[str, str]] = []
    zk.set_watches(
        since, ["/kept", "/changed"], ["/appeared"], lambda e: fired.append((e.type, e.path))
    )
    eventually(lambda: len(fired) == 2, "the watches on changed znodes to fire", timeout=10)
    assert sorted(fired) == [("CHANGED", "/changed"), ("CREATED", "/appeared")]
    zk.set("/kept", b"1")
    eventually(lambda: len(fired) == 3, "the watch on the untouched znode to fire", timeout=10)


def test_watches_on_many_znodes_span_several_requests(zk: ZkClient) -> None:
    paths = [f"/many/{'x' * 200}-{i}" for i in range(1_500)]  # > 128 KiB of paths
    zk.ensure_path("/many")
    zk.multi([Create(p, b"") for p in paths])
    fired: list[str] = []
    zk.get_many(paths, watch=lambda e: fired.append(e.path))
    zk.multi([SetData(p, b"1") for p in (paths[0], paths[-1])])
    eventually(lambda: len(fired) == 2, "the first and the last watch to fire", timeout=10)
    assert sorted(fired) == sorted([paths[0], paths[-1]])


def test_waiting_until_znodes_exist(zk: ZkClient) -> None:
    zk.create("/here", b"")
    assert zk.wait_until_exist(["/here"], timeout=0)
    assert zk.wait_until_exist([], timeout=0)
    assert not zk.wait_until_exist(["/here", "/never"], timeout=0.2)
    done: list[bool] = []
    waiting = threading.Thread(
        target=lambda: done.append(zk.wait_until_exist(["/here", "/a", "/b"], timeout=30))
    )
    waiting.start()
    watched = {zk.raw.chroot + p for p in ("/a", "/b")}
    eventually(lambda: watched <= set(zk.raw._data_watchers), "the creation watches", timeout=10)
    zk.create("/a", b"")
    assert waiting.is_alive()
    zk.create("/b", b"")
    waiting.join(30)
    assert done == [True]


def test_waiting_goes_on_while_znodes_keep_appearing(zk: ZkClient) -> None:
    paths = [f"/p{i}" for i in range(40)]

    def produce() -> None:
        for path in paths:
            time.sleep(0.1)  # a controller creating partitions for longer than `idle`
            zk.create(path, b"")

    producer = threading.Thread(target=produce)
    began = time.monotonic()
    producer.start()
    assert zk.wait_until_exist(paths, timeout=60, idle=2.0)
    assert time.monotonic() - began >= 4.0
    producer.join()
    # Nothing appears: it stops after `idle`, long before `timeout`.
    began = time.monotonic()
    assert not zk.wait_until_exist(["/never"], timeout=60, idle=0.5)
    assert time.monotonic() - began < 30


def test_fenced_multi_fails_with_controller_moved_when_epoch_changes(zk: ZkClient) -> None:
    zk.create("/controller_epoch", b"1")
    fence = Fence(epoch_zk_version=0)
    zk.multi([Create("/written", b"x")], fence=fence)
    assert zk.exists("/written")
    zk.set("/controller_epoch", b"2")  # another controller won an election
    with pytest.raises(ControllerMovedException):
        zk.multi([Create("/late", b"x")], fence=fence)
    assert not zk.exists("/late")


def test_a_fence_of_a_session_waits_out_a_dropped_connection(
    zookeeper_server: ZooKeeperServer, zk_chroot: str
) -> None:
    """A write fenced by the session it was planned in goes through once the connection is
    back in the same session (cut as a network partition does: the session outlives it), and
    is refused in another session. (A restarted server can leave a reconnecting client waiting
    out its whole handshake timeout, the session's, and the session expires meanwhile.)"""
    partition = NetworkPartition(zookeeper_server.port)
    chroot = zk_chroot.removeprefix(zookeeper_server.connect_string)
    zk = ZkClient(f"127.0.0.1:{partition.port}{chroot}", session_timeout=30.0)
    zk.start()
    try:
        zk.create("/controller_epoch", b"1")
        fence = Fence(epoch_zk_version=0, session=zk.session_id)
        partition.cut()
        eventually(lambda: not zk.connected, "the client to see its connection go")
        written = threading.Thread(target=zk.multi, args=([Create("/written", b"x")], fence))
        written.start()
        partition.heal()
        written.join(60)
        assert not written.is_alive() and zk.exists("/written")
        with pytest.raises(ControllerMovedException, match=r"session .* has expired"):
            zk.multi([Create("/late", b"x")], Fence(0, session=zk.session_id + 1))
        assert not zk.exists("/late")
    finally:
        zk.stop()
        partition.close()


def test_failed_multi_changes_nothing_and_names_the_failing_path(zk: ZkClient) -> None:
    zk.create("/exists", b"")
    with pytest.raises(TransactionFailed, match="NodeExistsError on /exists"):
        zk.multi([Create("/new", b""), Create("/exists", b""), SetData("/exists", b"y")])
    assert not zk.exists("/new")
    node = zk.get("/exists")
    assert node is not None and node.data == b""


def test_multi_supports_every_operation(zk: ZkClient) -> None:
    zk.create("/x", b"1")
    zk.multi([Check("/x", 0), SetData("/x", b"2", 0), Create("/y", b"")])
    zk.multi([Delete("/y"), Delete("/x", 1)])
    assert not zk.exists("/x") and not zk.exists("/y")


def test_recursive_delete_and_deleting_a_missing_node(zk: ZkClient) -> None:
    zk.create("/t/partitions/0/state", b"{}", makepath=True)
    assert zk.delete("/t", recursive=True)
    assert not zk.delete("/t")


def test_digest_acls_keep_other_sessions_read_only(zk_chroot: str) -> None:
    owner = ZkClient(zk_chroot, credentials=DigestCredentials("kto", "s3cret"), secure_acls=True)
    stranger = ZkClient(zk_chroot)
    owner.start()
    stranger.start()
    try:
        owner.create("/secured", b"data")
        node = stranger.get("/secured")
        assert node is not None and node.data == b"data"
        with pytest.raises(NoAuthError):
            stranger.set("/secured", b"changed")
    finally:
        owner.stop()
        stranger.stop()


def test_credentials_never_show_the_password() -> None:
    credentials = DigestCredentials.parse("kto:s3cret\n", "test")
    assert "s3cret" not in repr(credentials)
    with pytest.raises(ValueError, match="user:password"):
        DigestCredentials.parse("no-colon", "test")


def test_unreachable_server_is_a_clear_error() -> None:
    from kto_dev.ports import free_port

    client = ZkClient(f"127.0.0.1:{free_port()}")
    with pytest.raises(ZkConnectionError, match="cannot connect to ZooKeeper"):
        client.start(timeout=1.0)


@pytest.mark.parametrize("deadline", [None, 5.0], ids=["no-deadline", "deadline"])
@pytest.mark.parametrize("started", [True, False], ids=["stopped", "never-started"])
def test_a_call_on_a_closed_client_fails_at_once(
    zk_chroot: str, deadline: float | None, started: bool
) -> None:
    """kazoo reports a closed client as a session expiry, which the retry recovers from: a
    controller thread still at work when its owner stopped the client retried forever."""
    client = ZkClient(zk_chroot, retry_deadline=deadline)
    if started:
        client.start()
        client.stop()
    outcome: list[Exception | None] = []

    def call() -> None:
        try:
            client.multi([Create("/late", b"")])
            outcome.append(None)
        except Exception as e:
            outcome.append(e)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(timeout=5.0)
    assert not caller.is_alive(), "the call is still retrying"
    assert isinstance(outcome[0], ZkConnectionError) and "is closed" in str(outcome[0])
