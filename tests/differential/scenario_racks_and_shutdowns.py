"""A broker restarted in another rack (its registration changes, and a topic then created
rack-aware from the registrations follows the new racks) and back in its own, with a controlled
shutdown of the broker leading most of a topic between.

Not here: the controller's broker killed as another broker shuts down. Which of the two brokers
left wins the next election is a race on Kafka itself; when the one shutting down wins, its
shutdown costs one election more (seen under load: controller epoch 2 on Kafka, 3 on the twin).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from kafka_topic_operator.kafka.assignment import BrokerMetadata, assign_replicas_to_brokers
from kafka_topic_operator.zk import admin, znodes

from .backends import Backend
from .scenario import Check, Step, World, _start, _stop, start_cluster
from .znode_tree import Tree

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


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("a topic led by broker 2", create_led),
    Step("broker 1 restarted in rack a", restart_in_rack(1, "a"), _in_rack(1, "a")),
    Step("a topic created rack-aware from the registrations", create_from_registrations),
    Step("broker 2 controlled shutdown", _stop(2)),
    Step("broker 2 back", _start(2)),
    Step("broker 1 restarted in its own rack", restart_in_rack(1, "b"), _in_rack(1, "b")),
)  # fmt: skip
