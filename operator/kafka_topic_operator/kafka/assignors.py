"""Consumer partition assignors for one topic and a fresh group, as the Java client computes them:
``RangeAssignor``, ``RoundRobinAssignor`` and ``AbstractStickyAssignor``'s constrained path (used by
``StickyAssignor`` and ``CooperativeStickyAssignor``), Kafka 3.6 clients.

"Fresh" means no member owns a partition yet and no member has a ``group.instance.id``, so every
member subscribes to the same single topic and Kafka's ordering falls back to the member id.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, Literal

from kafka_topic_operator.kafka.java import INT_MAX

__all__ = [
    "ASSIGNORS",
    "ConsumerAssignor",
    "CooperativeStickyAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Strategy",
    "assign",
    "member_order",
    "members_by_count",
]

Strategy = Literal["range", "roundrobin", "sticky", "cooperative-sticky"]


def _java_string_key(value: str) -> bytes:
    """Sort key with Java's ``String.compareTo`` order: UTF-16 code units, not code points.

    Big-endian UTF-16 bytes compare exactly as the code units do, and a prefix sorts first in
    both; the orders differ from Python's for characters above U+FFFF versus U+E000..U+FFFF.
    """
    return value.encode("utf-16-be", "surrogatepass")


def _check_members(members: Sequence[str]) -> None:
    if isinstance(members, str):
        raise TypeError("members must be a sequence of member ids, not a single string")
    if not members:
        raise ValueError("at least one member is required")
    seen: set[str] = set()
    for index, member in enumerate(members):
        if not member:
            raise ValueError(f"member id at index {index} is empty")
        if member in seen:
            raise ValueError(f"duplicate member id {member!r}")
        seen.add(member)


def _check_num_partitions(num_partitions: int) -> None:
    if not 1 <= num_partitions <= INT_MAX:
        raise ValueError(f"num_partitions must be between 1 and {INT_MAX}, got {num_partitions}")


def member_order(members: Sequence[str]) -> list[str]:
    """The order Kafka's assignors walk the members in.

    ``AbstractPartitionAssignor.MemberInfo.compareTo`` puts members with a ``group.instance.id``
    first, ordered by it, then the rest by member id; the sticky assignor sorts member ids. With no
    instance ids both are member ids in Java string order, so ``consumer-10`` precedes
    ``consumer-2``.
    """
    _check_members(members)
    return sorted(members, key=_java_string_key)


def members_by_count(count: int) -> list[str]:
    """``count`` member ids ``consumer-0`` … ``consumer-<count-1>``, in numeric order."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    return [f"consumer-{i}" for i in range(count)]


class ConsumerAssignor(ABC):
    """One of the Java client's assignors, restricted to a single topic and a fresh group."""

    name: ClassVar[str]

    def assign(self, num_partitions: int, members: Sequence[str]) -> dict[str, list[int]]:
        """Partitions ``0..num_partitions-1`` per member: every member present, keys in
        ``member_order``, each member's partitions in the order Kafka hands them out."""
        _check_num_partitions(num_partitions)
        ordered = member_order(members)
        return self._assign(num_partitions, ordered)

    @abstractmethod
    def _assign(self, num_partitions: int, ordered: list[str]) -> dict[str, list[int]]: ...


class RangeAssignor(ConsumerAssignor):
    """``RangeAssignor`` without racks: contiguous ranges in member order, the first
    ``P % C`` members taking one extra partition each."""

    name = "range"

    def _assign(self, num_partitions: int, ordered: list[str]) -> dict[str, list[int]]:
        per_consumer, with_extra = divmod(num_partitions, len(ordered))
        assignment: dict[str, list[int]] = {member: [] for member in ordered}
        next_partition = 0
        for member in ordered:
            if next_partition == num_partitions:
                break
            # maxAssignable: the quota, plus one while members owed an extra partition remain.
            take = per_consumer + (1 if with_extra > 0 else 0)
            assignment[member] = list(range(next_partition, next_partition + take))
            next_partition += take
            if take > per_consumer:
                with_extra -= 1
        return assignment


class RoundRobinAssignor(ConsumerAssignor):
    """``RoundRobinAssignor``: partitions in order dealt to the sorted members in a cycle."""

    name = "roundrobin"

    def _assign(self, num_partitions: int, ordered: list[str]) -> dict[str, list[int]]:
        assignment: dict[str, list[int]] = {member: [] for member in ordered}
        # Every member subscribes to the one topic, so the circular iterator never skips anyone.
        for partition in range(num_partitions):
            assignment[ordered[partition % len(ordered)]].append(partition)
        return assignment


class StickyAssignor(ConsumerAssignor):
    """``AbstractStickyAssignor`` via ``ConstrainedAssignmentBuilder`` (all subscriptions equal)
    with nothing owned and no racks: ``assignOwnedPartitions`` then ``assignRoundRobin``.

    For a fresh single-topic group this lands on the same result as ``RoundRobinAssignor``; it is
    kept as its own walk of Kafka's quotas so the equivalence is checked, not assumed.
    """

    name = "sticky"

    def _assign(self, num_partitions: int, ordered: list[str]) -> dict[str, list[int]]:
        members = len(ordered)
        min_quota = num_partitions // members
        max_quota = -(-num_partitions // members)
        expected_over_min = num_partitions % members
        current_over_min = 0
        assignment: dict[str, list[int]] = {member: [] for member in ordered}

        # assignOwnedPartitions with nothing owned: below minQuota means "unfilled, under min";
        # when minQuota is 0 every member holds exactly minQuota and may still take one more.
        # Kafka sorts both lists by member id afterwards; `ordered` already is.
        under_min: list[str] = []
        exactly_min: deque[str] = deque()
        for member in ordered:
            if min_quota > 0:
                under_min.append(member)
            elif current_over_min < expected_over_min:
                exactly_min.append(member)

        # assignRoundRobin: an iterator over under_min (restarted when exhausted) that drops a
        # member on reaching minQuota and queues it for a possible extra partition.
        cursor = 0
        for partition in range(num_partitions):
            if cursor < len(under_min):
                member = under_min[cursor]
                cursor += 1
            elif not under_min and not exactly_min:
                # Kafka throws IllegalStateException here; the quotas make it unreachable.
                raise AssertionError("No more unfilled consumers to be assigned.")
            elif not under_min:
                member = exactly_min.popleft()
            else:
                member = under_min[0]
                cursor = 1
            assigned = assignment[member]
            assigned.append(partition)
            if len(assigned) == min_quota:
                # Only members from under_min can land on minQuota: those queued hold it already.
                cursor -= 1
                del under_min[cursor]
                exactly_min.append(member)
            elif len(assigned) == max_quota:
                current_over_min += 1

        # verifyUnfilledMembers: every member left below minQuota would be an assignor bug.
        if under_min or current_over_min != expected_over_min:
            raise AssertionError("sticky assignment did not reach the expected quotas")
        return assignment


class CooperativeStickyAssignor(StickyAssignor):
    """``CooperativeStickyAssignor``: the sticky result minus partitions still owned elsewhere,
    of which a fresh group has none."""

    name = "cooperative-sticky"


ASSIGNORS: Mapping[str, ConsumerAssignor] = MappingProxyType(
    {
        assignor.name: assignor
        for assignor in (
            RangeAssignor(),
            RoundRobinAssignor(),
            StickyAssignor(),
            CooperativeStickyAssignor(),
        )
    }
)


def assign(strategy: Strategy, num_partitions: int, members: Sequence[str]) -> dict[str, list[int]]:
    """Who consumes which partitions of one ``num_partitions`` topic under ``strategy``
    (``partition.assignment.strategy``'s assignor name): every member is a key, even with no
    partitions, in ``member_order``."""
    assignor = ASSIGNORS.get(strategy)
    if assignor is None:
        raise ValueError(
            f"unknown assignment strategy {strategy!r}; expected one of: {', '.join(ASSIGNORS)}"
        )
    return assignor.assign(num_partitions, members)
