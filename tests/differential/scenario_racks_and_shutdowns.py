"""A broker restarted in another rack (its registration changes, and a topic then created
rack-aware from the registrations follows the new racks), and the controller's broker killed
just as another broker begins its controlled shutdown: that broker's shutdown has no controller
to ask until the killed one's session expires and a new one is elected."""

from __future__ import annotations

import json
from collections.abc import Callable

from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.zk import admin, znodes

from .backends import Backend
from .scenario import (
    Check,
    Step,
    World,
    _kill,
    _new_controller_epoch,
    _start,
    controller_epoch,
    start_cluster,
)
from .znode_tree import Tree, read_tree

LED = "led-by-2"  # broker 2 leads two of its three partitions
MOVED = "after-the-move"  # created once broker 1 is in rack a


def create_led(backend: Backend, world: World) -> None:
    admin.create_topic_with_assignment(backend.zk, LED, {0: [2, 0, 1], 1: [2, 1, 0], 2: [0, 2, 1]})
    world.topics.add(LED)


def restart_in_rack(broker: int, rack: str) -> Callable[[Backend, World], None]:
    def act(backend: Backend, world: World) -> None:
        backend.stop_broker(broker)
        backend.start_broker(broker, rack=rack)

    return act


def _in_rack(broker: int, rack: str) -> Check:
    def check(tree: Tree, world: World) -> str | None:
        registered = tree.get(f"{znodes.BROKER_IDS_PATH}/{broker}") or {}
        have = registered.get("rack")
        return None if have == rack else f"broker {broker} registered in rack {have}"

    return check


def create_from_registrations(backend: Backend, world: World) -> None:
    """As `kafka-topics --create` assigns: rack-aware over the racks the brokers registered."""
    brokers = []
    for broker in sorted(backend.zk.children(znodes.BROKER_IDS_PATH) or [], key=int):
        node = backend.zk.get(f"{znodes.BROKER_IDS_PATH}/{broker}")
        assert node is not None
        brokers.append(BrokerMetadata(int(broker), json.loads(node.data).get("rack")))
    assignment = assign_replicas_to_brokers(brokers, 6, 2, fixed_start_index=0)
    admin.create_topic_with_assignment(backend.zk, MOVED, assignment)
    world.topics.add(MOVED)


def kill_controller_during_shutdown(backend: Backend, world: World) -> None:
    tree = read_tree(backend.zk)
    world.controller_epoch = controller_epoch(tree)
    controller = tree[znodes.CONTROLLER_PATH]["brokerid"]
    other = next(b for b in sorted(world.live) if b not in (controller, 1))
    _kill(controller)(backend, world)
    backend.stop_broker(other)  # its controlled shutdown asks the dead controller first
    world.live.discard(other)


def _both_back(backend: Backend, world: World) -> None:
    for broker in (0, 2):
        _start(broker)(backend, world)


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("a topic led by broker 2", create_led),
    Step("broker 1 restarted in rack a", restart_in_rack(1, "a"), _in_rack(1, "a")),
    Step("a topic created rack-aware from the registrations", create_from_registrations),
    Step("controller killed as broker 2 shuts down", kill_controller_during_shutdown,
         _new_controller_epoch),
    Step("brokers 0 and 2 back", _both_back),
    Step("broker 1 restarted in its own rack", restart_in_rack(1, "b"), _in_rack(1, "b")),
)  # fmt: skip
