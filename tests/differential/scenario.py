"""One scenario for both clusters: each step acts as the operator or an administrator would
(through ZooKeeper, as `kafka-topics --zookeeper` and the operator write) or stops, kills and
starts a broker, then waits until the cluster has settled, and the whole tree is read.

Settled means what Kafka's controller and brokers converge to once nothing is in flight: the
expected brokers registered, no admin request pending, no notification unprocessed, every
partition led by a live in-sync replica when one exists, and the in-sync replica set full when
every replica is alive. Each step may add its own condition (a leader it must see, an epoch).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kto_testing import Waiter

from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.kafka.ids import new_topic_id
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .backends import BROKERS, RACKS, Backend
from .znode_tree import Tree, read_tree

SETTLE_TIMEOUT = 90.0
POLL_INTERVAL = 0.1


@dataclass
class World:
    """What the scenario expects of the cluster after the step it has run."""

    live: set[int] = field(default_factory=set)
    topics: set[str] = field(default_factory=set)
    deleting: set[str] = field(default_factory=set)
    controller_epoch: int = 0
    # Admin requests that may be left pending (Kafka does not act on them), and topics that
    # must still be reassigning (a target's broker away).
    requests_stay: set[str] = field(default_factory=set)
    reassigning: set[str] = field(default_factory=set)
    # Topics whose reassignment and partitions are not checked, only that they stay as they
    # are: a partition that never came online, one a Kafka defect leaves half reassigned.
    unchecked: set[str] = field(default_factory=set)
    # Topics written without a config znode (by hand, as scripts do).
    without_config: set[str] = field(default_factory=set)


Check = Callable[[Tree, World], str | None]


@dataclass(frozen=True)
class Step:
    name: str
    act: Callable[[Backend, World], None]
    check: Check | None = None
    # For a step whose point is that Kafka does nothing: how long the tree must stay the same
    # before nothing counts as the answer (a controller acts within milliseconds).
    quiet: float = 0.0


# ---- reading the tree ----------------------------------------------------------------------


def _children(tree: Tree, path: str) -> set[str]:
    prefix = path + "/"
    return {p[len(prefix) :] for p in tree if p.startswith(prefix) and "/" not in p[len(prefix) :]}


def _assignment(tree: Tree, topic: str) -> dict[int, list[int]]:
    data = tree.get(znodes.topic_path(topic)) or {}
    return {int(p): list(r) for p, r in (data.get("partitions") or {}).items()}


def _state(tree: Tree, topic: str, partition: int) -> Any:
    return tree.get(znodes.topic_partition_state_path(TopicPartition(topic, partition)))


def controller_epoch(tree: Tree) -> int:
    value = tree.get(znodes.CONTROLLER_EPOCH_PATH)
    return value if isinstance(value, int) else 0


def unsettled(tree: Tree, world: World) -> str | None:
    """Why the cluster has not settled yet, or None once it has."""
    brokers = {int(b) for b in _children(tree, znodes.BROKER_IDS_PATH)}
    if brokers != world.live:
        return f"registered brokers {sorted(brokers)}, expected {sorted(world.live)}"
    controller = tree.get(znodes.CONTROLLER_PATH)
    if not isinstance(controller, dict) or controller.get("brokerid") not in world.live:
        return f"no live controller ({controller})"
    for path in (znodes.REASSIGN_PARTITIONS_PATH, znodes.PREFERRED_REPLICA_ELECTION_PATH):
        if path in tree and path not in world.requests_stay:
            return f"{path} pending"
    for path in (znodes.ISR_CHANGE_NOTIFICATION_PATH, znodes.LOG_DIR_EVENT_NOTIFICATION_PATH):
        if _children(tree, path):
            return f"{path} has unprocessed notifications"
    deleting = _children(tree, znodes.DELETE_TOPICS_PATH)
    if deleting != world.deleting:
        return f"deletions pending {sorted(deleting)}, expected {sorted(world.deleting)}"
    expected = world.topics | world.deleting
    for path, want in ((znodes.TOPICS_PATH, expected),
                       ("/config/topics", expected - world.without_config)):  # fmt: skip
        if _children(tree, path) != want:
            return f"{path} holds {sorted(_children(tree, path))}, expected {sorted(want)}"
    for topic in sorted(world.topics):
        if topic in world.unchecked:
            continue
        data = tree.get(znodes.topic_path(topic)) or {}
        reassigning = data.get("adding_replicas") or data.get("removing_replicas")
        if reassigning and topic not in world.reassigning:
            return f"{topic} is being reassigned"
        if not reassigning and topic in world.reassigning:
            return f"{topic} is not being reassigned"
        for partition, replicas in sorted(_assignment(tree, topic).items()):
            why = _partition_unsettled(_state(tree, topic, partition), replicas, world.live)
            if why:
                return f"{topic}-{partition}: {why}"
    return None


def _partition_unsettled(state: Any, replicas: list[int], live: set[int]) -> str | None:
    if not isinstance(state, dict):
        return "no state"
    leader, isr = state.get("leader"), set(state.get("isr") or ())
    if leader == -1:
        return "a live in-sync replica is not leading" if isr & live else None
    if leader not in live or leader not in isr:
        return f"leader {leader} is not a live in-sync replica"
    if isr - live:
        return f"dead brokers {sorted(isr - live)} still in the ISR"
    # The topics hold no data: a live follower catches up at once and joins the ISR.
    if isr != set(replicas) & live:
        return f"ISR {sorted(isr)} not yet {sorted(set(replicas) & live)}"
    return None


def settle(backend: Backend, world: World, check: Check | None, quiet: float = 0.0) -> Tree:
    """The tree once the cluster has settled; polled because it spans the whole chroot. A read
    of the tree is not atomic (a topic's znode may be read before its controller wrote the
    topic id, its partitions' states after), so settled also means read the same twice, and
    unchanged for `quiet` seconds."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    previous: Tree | None = None
    since = time.monotonic()
    while True:
        tree = read_tree(backend.zk)
        why = unsettled(tree, world) or (check(tree, world) if check else None)
        if tree != previous:
            since = time.monotonic()
        if why is None and tree == previous and time.monotonic() - since >= quiet:
            return tree
        if why is None:
            why = "changed since the last read" if tree != previous else "not quiet long enough"
        if time.monotonic() > deadline:
            raise AssertionError(f"{backend.name}: not settled after {SETTLE_TIMEOUT} s: {why}")
        previous = tree
        time.sleep(POLL_INTERVAL)


# ---- what the steps do -----------------------------------------------------------------------

RACKED = "racked"
PLAIN = "plain"
MANUAL = "manual"
CONFIGURED = "configured"
UNCLEAN = "unclean"
FALLBACK = "fallback"


def _rack_aware(partitions: int, rf: int, start: int) -> dict[int, list[int]]:
    brokers = [BrokerMetadata(b, RACKS[b]) for b in BROKERS]
    return assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=start)


def _rack_unaware(partitions: int, rf: int, start: int) -> dict[int, list[int]]:
    brokers = [BrokerMetadata(b) for b in BROKERS]
    return assign_replicas_to_brokers(brokers, partitions, rf, fixed_start_index=start)


def start_cluster(backend: Backend, world: World) -> None:
    # Broker 0 first, so it becomes the controller in both runs; the others then join.
    backend.start_broker(0)
    world.live.add(0)
    Waiter(backend.zk).exists(znodes.CONTROLLER_PATH, timeout=SETTLE_TIMEOUT)
    for broker in BROKERS[1:]:
        backend.start_broker(broker)
        world.live.add(broker)


def create_topics(backend: Backend, world: World) -> None:
    zk = backend.zk
    # The operator writes a topic id; a topic written without one gets it from the controller.
    admin.create_topic_with_assignment(zk, RACKED, _rack_aware(6, 2, 1), topic_id=new_topic_id())
    admin.create_topic_with_assignment(zk, PLAIN, _rack_unaware(4, 2, 0))
    admin.create_topic_with_assignment(zk, MANUAL, {0: [2, 1], 1: [1], 2: [0, 2, 1]})
    admin.create_topic_with_assignment(
        zk,
        CONFIGURED,
        _rack_aware(3, 3, 2),
        config={"min.insync.replicas": "2", "cleanup.policy": "compact"},
        topic_id=new_topic_id(),
    )
    admin.create_topic_with_assignment(zk, UNCLEAN, {0: [1, 2]}, topic_id=new_topic_id())
    admin.create_topic_with_assignment(zk, FALLBACK, {0: [1, 2]}, topic_id=new_topic_id())
    world.topics |= {RACKED, PLAIN, MANUAL, CONFIGURED, UNCLEAN, FALLBACK}


def add_partitions(backend: Backend, world: World) -> None:
    admin.add_partitions(backend.zk, PLAIN, {4: [1, 2], 5: [2, 0]})


def _partition_count(topic: str, count: int) -> Check:
    def check(tree: Tree, world: World) -> str | None:
        have = len(_assignment(tree, topic))
        return None if have == count else f"{topic} has {have} partitions, expected {count}"

    return check


REASSIGNMENT: Mapping[TopicPartition, list[int]] = {
    TopicPartition(MANUAL, 1): [1, 2, 0],  # replication factor 1 → 3
    TopicPartition(CONFIGURED, 0): [2, 0],  # 3 → 2
    TopicPartition(RACKED, 0): [2, 0],  # moved
}


def reassign(backend: Backend, world: World) -> None:
    admin.reassign_partitions(backend.zk, REASSIGNMENT)


def _reassigned(tree: Tree, world: World) -> str | None:
    for tp, target in REASSIGNMENT.items():
        have = _assignment(tree, tp.topic).get(tp.partition)
        if have != target:
            return f"{tp} assigned {have}, expected {target}"
    return None


def _stop(broker: int) -> Callable[[Backend, World], None]:
    def act(backend: Backend, world: World) -> None:
        backend.stop_broker(broker)
        world.live.discard(broker)

    return act


def _kill(broker: int) -> Callable[[Backend, World], None]:
    def act(backend: Backend, world: World) -> None:
        backend.kill_broker(broker)
        world.live.discard(broker)

    return act


def _start(broker: int) -> Callable[[Backend, World], None]:
    def act(backend: Backend, world: World) -> None:
        backend.start_broker(broker)
        world.live.add(broker)

    return act


def elect_preferred(backend: Backend, world: World) -> None:
    tree = read_tree(backend.zk)
    partitions = [
        TopicPartition(topic, p)
        for topic in sorted(world.topics)
        for p in sorted(_assignment(tree, topic))
    ]
    admin.elect_preferred_leaders(backend.zk, partitions)


def _preferred_leading(tree: Tree, world: World) -> str | None:
    for topic in sorted(world.topics):
        for partition, replicas in sorted(_assignment(tree, topic).items()):
            state = _state(tree, topic, partition) or {}
            if state.get("leader") != replicas[0]:
                return f"{topic}-{partition} led by {state.get('leader')}, not {replicas[0]}"
    return None


def _leader(topic: str, partition: int, leader: int) -> Check:
    def check(tree: Tree, world: World) -> str | None:
        state = _state(tree, topic, partition) or {}
        have = state.get("leader")
        return None if have == leader else f"{topic}-{partition} led by {have}, not {leader}"

    return check


def enable_unclean_election(backend: Backend, world: World) -> None:
    admin.change_topic_config(backend.zk, UNCLEAN, {"unclean.leader.election.enable": "true"})
    admin.change_topic_config(
        backend.zk,
        CONFIGURED,
        {"min.insync.replicas": "2", "cleanup.policy": "compact", "retention.ms": "3600000"},
    )


def _unclean_by_default(enabled: bool) -> Callable[[Backend, World], None]:
    """The cluster-wide dynamic broker default, as `kafka-configs --entity-default` writes it."""

    def act(backend: Backend, world: World) -> None:
        value = str(enabled).lower()
        admin.change_broker_config(backend.zk, None, {"unclean.leader.election.enable": value})

    return act


def _delete(topic: str) -> Callable[[Backend, World], None]:
    def act(backend: Backend, world: World) -> None:
        admin.delete_topic(backend.zk, topic)
        world.topics.discard(topic)
        world.deleting.add(topic)

    return act


def _deleted(topic: str) -> Callable[[World], None]:
    def done(world: World) -> None:
        world.deleting.discard(topic)

    return done


def delete_plain(backend: Backend, world: World) -> None:
    _delete(PLAIN)(backend, world)
    world.deleting.discard(PLAIN)  # every replica is alive: it must finish


def _deletion_stuck(topic: str) -> Check:
    """TopicDeletionManager with a replica's broker down: the live replicas are taken offline
    (out of the ISR, leaderless) and the topic stays until the broker returns."""

    def check(tree: Tree, world: World) -> str | None:
        for partition in sorted(_assignment(tree, topic)):
            state = _state(tree, topic, partition) or {}
            if state.get("leader") != -1:
                return f"{topic}-{partition} still led by {state.get('leader')}"
        return None

    return check


def restart_and_finish_deletion(backend: Backend, world: World) -> None:
    _start(2)(backend, world)
    world.deleting.discard(RACKED)


def kill_controller(backend: Backend, world: World) -> None:
    tree = read_tree(backend.zk)
    world.controller_epoch = controller_epoch(tree)
    controller = tree[znodes.CONTROLLER_PATH]["brokerid"]
    assert controller == 0, f"{backend.name}: broker 0 should still be the controller"
    _kill(0)(backend, world)


def move_controller(backend: Backend, world: World) -> None:
    """What an administrator does to move the controller: delete `/controller`."""
    world.controller_epoch = controller_epoch(read_tree(backend.zk))
    backend.zk.delete(znodes.CONTROLLER_PATH)


def _new_controller_epoch(tree: Tree, world: World) -> str | None:
    epoch = controller_epoch(tree)
    return None if epoch > world.controller_epoch else f"controller epoch still {epoch}"


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("topics created", create_topics),
    Step("partitions added", add_partitions, _partition_count(PLAIN, 6)),
    Step("replicas reassigned", reassign, _reassigned),
    Step("broker 1 controlled shutdown", _stop(1)),
    Step("broker 1 restarted", _start(1)),
    Step("preferred leaders elected", elect_preferred, _preferred_leading),
    Step("broker 2 killed", _kill(2)),
    Step("broker 2 restarted", _start(2)),
    Step("broker 2 killed again", _kill(2)),
    Step("broker 1 killed", _kill(1), _leader(UNCLEAN, 0, -1)),
    Step("broker 2 restarted outside the ISR", _start(2), _leader(UNCLEAN, 0, -1)),
    Step("unclean election enabled by a config change", enable_unclean_election,
         _leader(UNCLEAN, 0, 2)),
    Step("unclean election enabled cluster-wide", _unclean_by_default(True),
         _leader(FALLBACK, 0, 2)),
    Step("cluster-wide unclean election disabled again", _unclean_by_default(False)),
    Step("broker 1 restarted after the unclean election", _start(1)),
    Step("topic deleted", delete_plain),
    # Killed a step before: Kafka notices a kill -9 only when the session expires, so a deletion
    # in between would race the broker's death.
    Step("broker 2 killed before a deletion", _kill(2)),
    Step("deletion with a replica's broker down", _delete(RACKED), _deletion_stuck(RACKED)),
    Step("deletion finished once the broker returned", restart_and_finish_deletion),
    Step("controller's broker killed", kill_controller, _new_controller_epoch),
    Step("broker 0 restarted", _start(0)),
    Step("controller moved", move_controller, _new_controller_epoch),
)  # fmt: skip


def run(backend: Backend, steps: tuple[Step, ...] = STEPS) -> list[tuple[str, Tree]]:
    """Each step's name and the tree once it settled."""
    world = World()
    out: list[tuple[str, Tree]] = []
    for step in steps:
        step.act(backend, world)
        out.append((step.name, settle(backend, world, step.check, step.quiet)))
    return out
