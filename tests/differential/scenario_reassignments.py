"""Reassignments across broker restarts, an outside rewrite of the request and a controller
failover: where a broker rejoining an ISR, the request znode's one watch and the controller
epoch of an ISR change show whether the twin does what Kafka does.

The request is deleted by hand while its reassignment waits, and written again: Kafka's
controller spends its only watch on that znode on the deletion
(`PartitionReassignmentHandler` acts on creation alone), and sets it again only when it reads
the znode itself (a reassignment finishing) or fails over, which then takes the request up.
"""

from __future__ import annotations

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import admin, znodes

from .backends import Backend
from .scenario import (
    Step,
    World,
    _assignment,
    _kill,
    _new_controller_epoch,
    _start,
    _stop,
    controller_epoch,
    start_cluster,
)
from .znode_tree import Tree, read_tree

MOVING = "moving"  # [1,2,0] to [1,2] while broker 2 is away
WAITING = "waiting"  # [0,1] to [0,2] while broker 2 is away; its request deleted by hand
IGNORED = "ignored"  # [0,2] to [2,0], asked in the request written again
REJOINING = "rejoining"  # broker 1 follows; it leaves before a failover and returns after

REQUEST = znodes.REASSIGN_PARTITIONS_PATH


def create_topics(backend: Backend, world: World) -> None:
    zk = backend.zk
    admin.create_topic_with_assignment(zk, MOVING, {0: [1, 2, 0]})
    admin.create_topic_with_assignment(zk, WAITING, {0: [0, 1]})
    admin.create_topic_with_assignment(zk, IGNORED, {0: [0, 2]})
    admin.create_topic_with_assignment(zk, REJOINING, {0: [0, 1]})
    world.topics |= {MOVING, WAITING, IGNORED, REJOINING}


def _reassign_waiting_for_2(topic: str, target: list[int]) -> Step:
    def act(backend: Backend, world: World) -> None:
        admin.reassign_partitions(backend.zk, {TopicPartition(topic, 0): target})
        world.requests_stay.add(REQUEST)
        world.reassigning.add(topic)

    return Step(f"{topic} reassigned to {target}, waiting for broker 2", act)


def _finish_with_2(backend: Backend, world: World) -> None:
    _start(2)(backend, world)
    world.reassigning.clear()
    world.requests_stay.discard(REQUEST)


def delete_request(backend: Backend, world: World) -> None:
    backend.zk.delete(REQUEST)
    world.requests_stay.discard(REQUEST)


def write_request_again(backend: Backend, world: World) -> None:
    admin.reassign_partitions(backend.zk, {TopicPartition(IGNORED, 0): [2, 0]})
    world.requests_stay.add(REQUEST)


def finish_waiting(backend: Backend, world: World) -> None:
    """Broker 2 returns: `waiting` finishes; the request written again stays (its watch spent)."""
    _start(2)(backend, world)
    world.reassigning.clear()


def move_controller(backend: Backend, world: World) -> None:
    """The failover takes up the request it finds."""
    world.controller_epoch = controller_epoch(read_tree(backend.zk))
    backend.zk.delete(znodes.CONTROLLER_PATH)
    world.requests_stay.discard(REQUEST)


def _taken_up(tree: Tree, world: World) -> str | None:
    have = _assignment(tree, IGNORED).get(0)
    if have != [2, 0]:
        return f"{IGNORED}-0 assigned {have}, not yet [2, 0]"
    return _new_controller_epoch(tree, world)


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("topics created", create_topics),
    Step("broker 2 controlled shutdown", _stop(2)),
    _reassign_waiting_for_2(MOVING, [1, 2]),
    Step("broker 2 restarted, the reassignment finished", _finish_with_2),
    Step("broker 2 killed", _kill(2)),
    _reassign_waiting_for_2(WAITING, [0, 2]),
    Step("the request deleted by hand", delete_request),
    Step("a request written again", write_request_again, quiet=2.0),
    Step("broker 2 restarted, the waiting reassignment finished", finish_waiting, quiet=2.0),
    Step("broker 1 killed", _kill(1)),
    Step("controller moved", move_controller, _taken_up),
    Step("broker 1 restarted after the failover", _start(1)),
)  # fmt: skip
