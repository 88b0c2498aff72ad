"""The reference planner's working state (pure): the assignment being planned, each broker's
replica and leader counts, and the moves that keep them true. The planner (`reference_planner`)
and its swap goals (`reference_swaps`) both work on it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.bounds import targets
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel, max_per_rack


class PlannerState:
    def __init__(
        self,
        model: ClusterModel,
        eligible: tuple[int, ...],
        assignment: dict[TopicPartition, list[int]],
        capacity: int | None,
    ) -> None:
        self.model = model
        self.eligible = eligible
        self.assignment = assignment
        self.capacity = capacity
        self.counts: Counter[int] = Counter({b: 0 for b in eligible})
        self.counts.update(b for replicas in assignment.values() for b in replicas)
        self.on: dict[int, set[TopicPartition]] = {b: set() for b in eligible}
        for tp, replicas in assignment.items():
            for b in replicas:
                self.on.setdefault(b, set()).add(tp)
        self.leaders: Counter[int] = Counter(r[0] for r in assignment.values() if r)
        self.leader_share = -(-len(assignment) // len(eligible))  # ceil: most any should lead
        involved = set(eligible) | set(self.counts)
        self.racked = model.rack_aware(involved)
        self.rack_count = len({model.rack_of(b) for b in eligible}) if self.racked else 0

    # -- replicas -----------------------------------------------------------------------------

    def legal(
        self, tp: TopicPartition, donor: int, receiver: int, *, capacity: bool = True
    ) -> bool:
        """Whether the replica of `tp` on `donor` may move to `receiver`; `capacity=False` for a
        leg of a swap, which leaves the receiver's count as it was."""
        replicas = self.assignment[tp]
        if receiver in replicas:
            return False
        if capacity and self.capacity is not None and self.counts[receiver] >= self.capacity:
            return False
        if self.racked:
            rack = self.model.rack_of(receiver)
            others = [self.model.rack_of(b) for b in replicas if b != donor]
            if others.count(rack) + 1 > max_per_rack(len(replicas), self.rack_count):
                return False
        return True

    def move(self, tp: TopicPartition, donor: int, receiver: int) -> None:
        replicas = self.assignment[tp]
        if replicas[0] == donor:
            self.leaders[donor] -= 1
            self.leaders[receiver] += 1
        replicas[replicas.index(donor)] = receiver
        self.counts[donor] -= 1
        self.counts[receiver] += 1
        self.on[donor].discard(tp)
        self.on[receiver].add(tp)

    def adopt(self, tp: TopicPartition, replicas: list[int]) -> None:
        """`tp`'s replicas replaced by `replicas` (several moves at once, in any order)."""
        old = self.assignment[tp]
        if old[:1] != replicas[:1]:
            self.leaders.subtract(old[:1])
            self.leaders.update(replicas[:1])
        self.counts.subtract(old)
        self.counts.update(replicas)
        for b in set(old) - set(replicas):
            self.on[b].discard(tp)
        for b in set(replicas) - set(old):
            self.on.setdefault(b, set()).add(tp)
        self.assignment[tp] = replicas

    def receivers(self) -> list[int]:
        return sorted(self.eligible, key=lambda b: (self.counts[b], b))

    def first_move(self, donor: int, receivers: Iterable[int],
                   movable: set[TopicPartition]) -> tuple[TopicPartition, int] | None:  # fmt: skip
        candidates = sorted(
            (tp for tp in self.on[donor] if tp in movable),
            key=lambda tp: (self.leader_cost(tp, donor), tp),
        )
        for receiver in receivers:
            for tp in candidates:
                if self.legal(tp, donor, receiver):
                    return tp, receiver
        return None

    def leader_cost(self, tp: TopicPartition, donor: int) -> int:
        """Which of a donor's replicas to move first. A moved replica takes its place in the
        list, so moving a partition the donor leads moves the leadership too: welcome while
        the donor leads more than its share (a single-replica partition first, whose
        leadership nothing else could move), else followers first."""
        replicas = self.assignment[tp]
        leads = replicas[0] == donor
        if self.leaders[donor] > self.leader_share:
            return 0 if leads and len(replicas) == 1 else 1 if not leads else 2
        return 0 if not leads else 1 if len(replicas) > 1 else 2

    def drain(self, movable: set[TopicPartition]) -> list[str]:
        """Replicas on brokers that may not hold any go to brokers below their target, the
        replicas with the fewest such places first, each to the one missing the most (a greedy
        b-matching: sending a replica where it overshoots would cost a second move later)."""
        problems = []
        goal = targets(self.counts, self.eligible)
        outside = sorted(set(self.on) - set(self.eligible))
        pending = [(tp, donor) for donor in outside for tp in sorted(self.on[donor])]
        stuck: dict[int, list[str]] = {}
        while pending:

            def places(item: tuple[TopicPartition, int]) -> list[int]:
                tp, donor = item
                return [b for b in self.eligible
                        if self.counts[b] < goal[b] and self.legal(tp, donor, b)]  # fmt: skip

            pending.sort(key=lambda item: (len(places(item)), item))
            tp, donor = pending.pop(0)
            if tp not in movable:
                stuck.setdefault(donor, []).append(str(tp))
                continue
            options = places((tp, donor)) or [
                b for b in self.receivers() if self.legal(tp, donor, b)
            ]
            if not options:
                stuck.setdefault(donor, []).append(str(tp))
                continue
            receiver = min(options, key=lambda b: (self.counts[b] - goal[b], b))
            self.move(tp, donor, receiver)
        for donor, kept in sorted(stuck.items()):
            problems.append(f"broker {donor} keeps {', '.join(kept)}: no legal move")
        return problems

    def rack_excess(self, tp: TopicPartition) -> list[int]:
        """Replicas beyond what their rack may hold, from the fullest broker down."""
        replicas = self.assignment[tp]
        limit = max_per_rack(len(replicas), self.rack_count)
        by_rack: dict[str | None, list[int]] = {}
        for b in replicas:
            by_rack.setdefault(self.model.rack_of(b), []).append(b)
        excess = []
        for members in by_rack.values():
            ranked = sorted(members, key=lambda b: (-self.counts[b], b))
            excess.extend(ranked[: max(0, len(members) - limit)])
        return excess

    def fix_racks(self, movable: set[TopicPartition]) -> list[str]:
        """Rack awareness is a hard goal: a partition with more replicas in a rack than allowed
        (a start that ignored racks) moves the extra ones to the emptiest brokers that can
        take them."""
        if not self.racked:
            return []
        problems = []
        for tp in sorted(movable):
            for donor in self.rack_excess(tp):
                for receiver in self.receivers():
                    if self.legal(tp, donor, receiver):
                        self.move(tp, donor, receiver)
                        break
                else:
                    problems.append(f"{tp} keeps two replicas in rack {self.model.rack_of(donor)}")
        return problems

    def balance(self, movable: set[TopicPartition]) -> list[str]:
        while True:
            donors = sorted(self.eligible, key=lambda b: (-self.counts[b], b))
            low = min(self.counts[b] for b in self.eligible)
            if self.counts[donors[0]] - low <= 1:
                return []
            for donor in donors:
                most = self.counts[donor] - 2
                receivers = [b for b in self.receivers() if self.counts[b] <= most]
                found = self.first_move(donor, receivers, movable) if receivers else None
                if found is not None:
                    self.move(found[0], donor, found[1])
                    break
            else:
                return ["replica counts spread by more than one: no legal move narrows them"]

    # -- leaders ------------------------------------------------------------------------------

    def balance_leaders(self, movable: set[TopicPartition]) -> None:
        """Leadership shifts along the shortest chain of partitions from a broker leading too
        many to one leading at least two fewer: each partition on the chain makes the next
        broker its preferred leader, so only the chain's ends change counts (an augmenting
        path: greedy single swaps can stall where a chain through a third broker exists)."""
        leaders = self.leaders
        for b in self.eligible:
            leaders.setdefault(b, 0)
        while True:
            led: dict[int, list[TopicPartition]] = {}
            for tp, replicas in sorted(self.assignment.items()):
                if replicas and tp in movable:
                    led.setdefault(replicas[0], []).append(tp)
            for donor in sorted(leaders, key=lambda b: (-leaders[b], b)):
                chain = self.leader_chain(donor, led, leaders)
                if chain:
                    for tp, receiver in chain:
                        replicas = self.assignment[tp]
                        position = replicas.index(receiver)
                        replicas[0], replicas[position] = replicas[position], replicas[0]
                    leaders[donor] -= 1
                    leaders[chain[-1][1]] += 1
                    break
            else:
                return

    def leader_chain(
        self, donor: int, led: dict[int, list[TopicPartition]], leaders: Counter[int]
    ) -> list[tuple[TopicPartition, int]]:
        """Breadth first from `donor` over "leads a partition where b is a follower"."""
        came_from: dict[int, tuple[int, TopicPartition]] = {}
        frontier = [donor]
        seen = {donor}
        while frontier:
            following = []
            for a in frontier:
                for tp in led.get(a, ()):
                    for b in self.assignment[tp][1:]:
                        if b in seen:
                            continue
                        seen.add(b)
                        came_from[b] = (a, tp)
                        if leaders[b] <= leaders[donor] - 2:
                            chain = []
                            while b != donor:
                                a, tp = came_from[b]
                                chain.append((tp, b))
                                b = a
                            return chain[::-1]
                        following.append(b)
            frontier = following
        return []
