"""Whether a plan can keep every hard goal, decided before any planning (pure).

The hard goals a plan's final assignment must keep:

- every partition keeps its replication factor, on distinct brokers;
- replicas only on the brokers that may hold them (brokers being removed, or no longer
  registered, end with none, hence lead nothing);
- with racks, no rack holds more of a partition than `model.max_per_rack` allows over the racks
  of the brokers that may hold replicas (so a partition spans min(RF, racks) racks or more);
- with maxReplicasPerBroker, no broker holds more replicas than that;
- partitions of excluded topics never change.

`blocker` answers None exactly when some assignment keeps them all, else one line naming the
first goal that cannot hold and why. The per-partition goals are checked on their own (a
partition's replicas only need enough brokers, and racks with room); the capacity then by a
maximum flow over a network with a node per replication factor, not per partition: partitions
of one replication factor are interchangeable, and any flow of it splits into partitions (deal
the brokers' units out round-robin, sorted by rack then broker: a broker holds at most one unit
per partition, and a rack at most its share). Its minimum cut names the brokers too few for the
replicas that must go to them.

What the check leaves out, on purpose: excluded topics are held to no goal but the brokers they
are on (they never move, so a rack they crowd stays crowded, as Cruise Control's goals skip
them); and in add-brokers mode the rule that only the new brokers take replicas is the mode's,
not a hard goal: a replica of an unregistered broker that only an old broker could take is
found after planning (`job.check_drained`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.flow import FlowNetwork
from kafka_topic_operator.rebalance.algorithms.model import Assignment, max_per_rack

# AdminUtils' message when some brokers have a rack and others do not.
NOT_ALL_RACKS = "Not all brokers have rack information for replica rack aware assignment."
_SHOWN = 10  # brokers named in a message before "..."


@dataclass(frozen=True)
class HardGoals:
    assignment: Assignment
    brokers: Collection[int]  # the brokers that may hold replicas after the plan
    racks: Mapping[int, str] = field(default_factory=dict)  # rack-aware when given
    excluded_topics: str | None = None  # a regular expression on the whole topic name
    max_replicas_per_broker: int | None = None
    removed: Collection[int] = ()  # brokers being removed: only for what a message says


@dataclass
class _Class:
    """The movable partitions of one replication factor."""

    count: int
    first: TopicPartition


@dataclass
class _Cluster:
    """What the checks need, from one pass over the assignment."""

    eligible: list[int]
    classes: dict[int, _Class]  # replication factor -> its movable partitions
    pinned: Counter[int]  # replicas of excluded topics per eligible broker
    stranded: dict[str, set[int]]  # excluded topic -> the brokers it may not stay on
    racks: dict[str, list[int]]  # rack -> its eligible brokers; empty without racks


def blocker(goals: HardGoals) -> str | None:
    """None when every hard goal can hold, else why not (one line)."""
    eligible = sorted(set(goals.brokers))
    if not eligible:
        return "no brokers may hold replicas"
    if goals.racks and any(goals.racks.get(b) is None for b in eligible):
        return NOT_ALL_RACKS
    cluster = _survey(goals, eligible)
    return (
        _stranded(goals, cluster)
        or _too_few_brokers(goals, cluster)
        or _too_few_racks(goals, cluster)
        or _over_capacity(goals, cluster)
    )


def _survey(goals: HardGoals, eligible: list[int]) -> _Cluster:
    match = re.compile(goals.excluded_topics).fullmatch if goals.excluded_topics else None
    excluded: dict[str, bool] = {}  # per topic: the expression is matched once
    staying = set(eligible)
    cluster = _Cluster(eligible, {}, Counter(), {}, {})
    for tp, replicas in goals.assignment.items():
        if not replicas:
            continue
        if tp.topic not in excluded:
            excluded[tp.topic] = match is not None and match(tp.topic) is not None
        if excluded[tp.topic]:
            for b in replicas:
                if b in staying:
                    cluster.pinned[b] += 1
                else:
                    cluster.stranded.setdefault(tp.topic, set()).add(b)
            continue
        known = cluster.classes.get(len(replicas))
        if known is None:
            cluster.classes[len(replicas)] = _Class(1, tp)
        else:
            known.count += 1
            known.first = min(known.first, tp)
    if goals.racks:
        for b in eligible:
            cluster.racks.setdefault(goals.racks[b], []).append(b)
    return cluster


def _stranded(goals: HardGoals, cluster: _Cluster) -> str | None:
    """A replica of an excluded topic on a broker that may not hold one: it may not move, and
    may not stay."""
    if not cluster.stranded:
        return None
    topic = min(cluster.stranded)
    brokers = sorted(cluster.stranded[topic])
    removed = [b for b in brokers if b in set(goals.removed)]
    one = len(brokers) == 1
    if len(removed) == len(brokers):
        why = "which is being removed" if one else "which are being removed"
    elif not removed:
        why = "which is not registered" if one else "which are not registered"
    else:
        why = "which may not hold replicas"
    return (
        f"topic {topic} is excluded from moves but has replicas on broker{'' if one else 's'} "
        f"{_ids(brokers)}, {why}"
    )


def _too_few_brokers(goals: HardGoals, cluster: _Cluster) -> str | None:
    n = len(cluster.eligible)
    wide = {rf: c for rf, c in cluster.classes.items() if rf > n}
    if not wide:
        return None
    first = min(c.first for c in wide.values())
    rf = len(goals.assignment[first])
    if goals.removed:
        where = f"{_count(n, 'broker')} remain{'s' if n == 1 else ''} after removing " + _ids(
            sorted(goals.removed)
        )
    else:
        where = f"{_count(n, 'broker')} may hold replicas ({_ids(cluster.eligible)})"
    return f"partition {first} cannot keep replication factor {rf}: only {where}" + _more(wide)


def _too_few_racks(goals: HardGoals, cluster: _Cluster) -> str | None:
    """With racks, a partition of replication factor RF needs RF places with no rack above its
    share: sum over racks of min(share, brokers in the rack)."""
    if not cluster.racks:
        return None
    sizes = [len(members) for members in cluster.racks.values()]
    short = {rf: c for rf, c in cluster.classes.items()
             if sum(min(_share(rf, cluster), s) for s in sizes) < rf}  # fmt: skip
    if not short:
        return None
    first = min(c.first for c in short.values())
    rf = len(goals.assignment[first])
    racks = ", ".join(f"{rack} ({_count(len(members), 'broker')})"
                      for rack, members in sorted(cluster.racks.items()))  # fmt: skip
    which = "remaining brokers" if goals.removed else "brokers that may hold replicas"
    return (
        f"partition {first} cannot keep its {rf} replicas rack-aware, at most "
        f"{_share(rf, cluster)} in a rack: the {which} are in racks {racks}" + _more(short)
    )


def _over_capacity(goals: HardGoals, cluster: _Cluster) -> str | None:
    cap = goals.max_replicas_per_broker
    if cap is None:
        return None
    crowded = [b for b in cluster.eligible if cluster.pinned[b] > cap]
    if crowded:
        b = crowded[0]
        return (
            f"broker {b} holds {cluster.pinned[b]} replicas of excluded topics, which never "
            f"move, more than maxReplicasPerBroker {cap}"
        )
    total = sum(rf * c.count for rf, c in cluster.classes.items()) + cluster.pinned.total()
    n = len(cluster.eligible)
    if total > n * cap:
        return (
            f"the {total} replicas do not fit {_count(n, 'broker')} of at most {cap} replicas "
            "each (maxReplicasPerBroker)"
        )
    return _cut(goals, cluster, cap)


def _cut(goals: HardGoals, cluster: _Cluster, cap: int) -> str | None:
    """The capacity as a maximum flow: source -> replication factor (its replicas) -> (that
    factor, rack) (its partitions x the rack's share) -> broker (its partitions: one replica
    each at most) -> sink (the broker's room). Without racks, one rack holds every broker."""
    groups = cluster.racks or {"": cluster.eligible}
    net = FlowNetwork()
    source, sink = net.node(), net.node()
    broker_node = {b: net.node() for b in cluster.eligible}
    for b, node in broker_node.items():
        net.arc(node, sink, cap - cluster.pinned[b])
    class_node = {}
    for rf, c in sorted(cluster.classes.items()):
        class_node[rf] = net.node()
        net.arc(source, class_node[rf], rf * c.count)
        for members in groups.values():
            group = net.node()
            net.arc(class_node[rf], group, c.count * _share(rf, cluster))
            for b in members:
                net.arc(group, broker_node[b], c.count)
    needed = sum(rf * c.count for rf, c in cluster.classes.items())
    if net.max_flow(source, sink) == needed:
        return None
    # The cut's brokers are full; each partition of a factor on its side has more replicas than
    # the brokers beyond the cut can take (one each, and each rack its share), and the rest,
    # together, need more room than the full brokers have.
    side = net.source_side(source)
    full = [b for b, node in broker_node.items() if node in side]
    beyond = {rack: [b for b in members if b not in set(full)]
              for rack, members in groups.items()}  # fmt: skip
    takes = {rf: sum(min(_share(rf, cluster), len(m)) for m in beyond.values())
             for rf in cluster.classes}  # fmt: skip
    short = [rf for rf, node in class_node.items() if node in side and rf > takes[rf]]
    need = sum((rf - takes[rf]) * cluster.classes[rf].count for rf in short)
    room = sum(cap - cluster.pinned[b] for b in full)
    taken = sum(cluster.pinned[b] for b in full)
    whose = " and ".join(
        f"partition {cluster.classes[rf].first}" if cluster.classes[rf].count == 1
        else f"the {cluster.classes[rf].count} partitions of replication factor {rf}"
        for rf in short
    )  # fmt: skip
    one = len(short) == 1 and cluster.classes[short[0]].count == 1
    at_most = " and ".join(str(takes[rf]) for rf in short)
    rule = "one per broker" + (" and their share of a rack" if cluster.racks else "")
    return (
        f"the replicas do not fit maxReplicasPerBroker {cap}: {whose} need{'s' if one else ''} "
        f"{need} of {'its' if one else 'their'} replicas on broker{'' if len(full) == 1 else 's'} "
        f"{_ids(full)}, which "
        f"{'has' if len(full) == 1 else 'have'} room for {room}"
        + (f" ({taken} places hold excluded topics)" if taken else "")
        + f"; the other brokers take at most {at_most} of each ({rule})"
    )


def _share(rf: int, cluster: _Cluster) -> int:
    """Replicas of a partition one rack may hold (all of them without racks)."""
    return max_per_rack(rf, len(cluster.racks)) if cluster.racks else rf


def _more(failing: Mapping[int, _Class]) -> str:
    others = sum(c.count for c in failing.values()) - 1
    return f" (and {_count(others, 'other partition')})" if others else ""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _ids(brokers: Iterable[int]) -> str:
    shown = list(brokers)
    return ", ".join(map(str, shown[:_SHOWN])) + (" ..." if len(shown) > _SHOWN else "")
