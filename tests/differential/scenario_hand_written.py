"""Topic znodes written by hand (as old tools and scripts write them), a topic config changed
before the failures it is for, and brokers restarted in pairs."""

from __future__ import annotations

from kafka_topic_operator.zk import admin, znodes

from .backends import Backend
from .scenario import Step, World, _kill, _leader, _start, _stop, start_cluster

UNKNOWN = "unknown-broker"  # a replica on a broker id no broker ever had
GAP = "gap"  # partitions 0 and 2, no 1
PRESET = "preset"  # unclean leader election enabled before its ISR shrinks and its leader dies
PAIRED = "paired"


def write_topics_by_hand(backend: Backend, world: World) -> None:
    """The topic znode alone, as a script writes it: no config znode, no topic id."""
    zk = backend.zk
    for topic, partitions in ((UNKNOWN, {"0": [0, 7], "1": [7, 1]}), (GAP, {"0": [0], "2": [1]})):
        data = f'{{"version":1,"partitions":{_json(partitions)}}}'.encode()
        zk.create(znodes.topic_path(topic), data)
    world.topics |= {UNKNOWN, GAP}
    world.without_config |= {UNKNOWN, GAP}


def _json(partitions: dict[str, list[int]]) -> str:
    import json

    return json.dumps(partitions, separators=(",", ":"))


def create_preset(backend: Backend, world: World) -> None:
    admin.create_topic_with_assignment(backend.zk, PRESET, {0: [1, 2]})
    admin.create_topic_with_assignment(backend.zk, PAIRED, {0: [1, 2], 1: [2, 0], 2: [0, 1]})
    admin.change_topic_config(backend.zk, PRESET, {"unclean.leader.election.enable": "true"})
    world.topics |= {PRESET, PAIRED}


def _both(act: str, brokers: tuple[int, int]) -> Step:
    def run(backend: Backend, world: World) -> None:
        for broker in brokers:
            {"stop": _stop, "start": _start}[act](broker)(backend, world)

    return Step(f"brokers {brokers[0]} and {brokers[1]} {act}ped" if act == "stop"
                else f"brokers {brokers[0]} and {brokers[1]} started", run)  # fmt: skip


STEPS: tuple[Step, ...] = (
    Step("brokers started", start_cluster),
    Step("topics written by hand", write_topics_by_hand),
    Step("a topic with unclean election preset", create_preset),
    Step("broker 2 controlled shutdown", _stop(2)),
    Step("broker 1 killed", _kill(1), _leader(PRESET, 0, -1)),
    Step("broker 2 back, elected uncleanly at once", _start(2), _leader(PRESET, 0, 2)),
    Step("broker 1 back", _start(1)),
    _both("stop", (1, 2)),
    _both("start", (1, 2)),
    Step("broker 0 killed, broker 1 killed", lambda b, w: (_kill(0)(b, w), _kill(1)(b, w))),
    Step("brokers 0 and 1 back", lambda b, w: (_start(0)(b, w), _start(1)(b, w))),
)  # fmt: skip
