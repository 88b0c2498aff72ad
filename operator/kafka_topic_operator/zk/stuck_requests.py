"""Admin requests in ZooKeeper that Kafka 3.9's controller will not process, from a snapshot:
what is stuck, why, and what clears it. Pure, but for a memo of the last snapshot's answer.

Each comes from a defect of Kafka's ZooKeeper path (docs/fidelity.md, "Differences the
differential test allows"): the request stays, and since the controller's one watch on the
znode is spent only a failover makes it look again, so clearing one takes both steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_topic_operator.kafka.reassignment import invalid_target
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes

_AND_MOVE = "then move the controller (delete /controller) so that it watches the path again"


@dataclass(frozen=True, slots=True)
class StuckRequest:
    path: str
    partitions: tuple[TopicPartition, ...]
    why: str
    clears: str

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "partitions": [str(tp) for tp in self.partitions],
            "reason": self.why,
            "clears": self.clears,
        }


# The last snapshot's answer: status asks once per topic of a snapshot, and a rebalance's
# request can name thousands of partitions (read and written whole, so no torn pair).
_last: tuple[ClusterSnapshot, list[StuckRequest]] | None = None


def stuck_requests(snapshot: ClusterSnapshot) -> list[StuckRequest]:
    global _last
    last = _last
    if last is not None and last[0] is snapshot:
        return last[1]
    found = _stuck_requests(snapshot)
    _last = (snapshot, found)
    return found


def _stuck_requests(snapshot: ClusterSnapshot) -> list[StuckRequest]:
    out: list[StuckRequest] = []
    bad = {tp: (target, problem) for tp, target in sorted(snapshot.pending_reassignments.items())
           if (problem := invalid_target(target)) is not None}  # fmt: skip
    if bad:
        named = "; ".join(f"{tp} to {list(t)}: {problem}" for tp, (t, problem) in bad.items())
        out.append(StuckRequest(
            znodes.REASSIGN_PARTITIONS_PATH, tuple(bad),
            f"Kafka's controller takes a target it should refuse ({named}) and never removes the "
            "request, so it notices no later reassignment",
            f"delete {znodes.REASSIGN_PARTITIONS_PATH}, {_AND_MOVE}",
        ))  # fmt: skip
    never_led = tuple(sorted(
        tp for tp in snapshot.pending_preferred_elections
        if (topic := snapshot.topics.get(tp.topic)) is not None
        and (partition := topic.partitions.get(tp.partition)) is not None
        and partition.state is None
    ))  # fmt: skip
    if never_led:
        out.append(StuckRequest(
            znodes.PREFERRED_REPLICA_ELECTION_PATH, never_led,
            "Kafka's controller fails on a partition that never came online "
            f"({', '.join(map(str, never_led))}: NoSuchElementException) and never deletes the "
            "request, so it notices no later election",
            f"delete {znodes.PREFERRED_REPLICA_ELECTION_PATH}, {_AND_MOVE}",
        ))  # fmt: skip
    return out


def stuck_for(topic: str, stuck: list[StuckRequest]) -> list[StuckRequest]:
    """The stuck requests that name a partition of `topic`."""
    return [s for s in stuck if any(tp.topic == topic for tp in s.partitions)]
