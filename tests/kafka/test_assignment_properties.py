"""Hypothesis properties of the vectorised assignment, with the plain-loop port as oracle."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_assignment
from kafka_topic_operator.kafka.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    create_new_partitions_assignment,
    new_partitions_start_index,
)


class Fixed:
    def __init__(self, start: int, shift: int) -> None:
        self.values = [start, shift]

    def next_int(self, bound: int) -> int:
        return self.values.pop(0) % bound


@st.composite
def clusters(draw: st.DrawFn, racks: bool) -> tuple[list[BrokerMetadata], int, int, int, int, int]:
    ids = sorted(draw(st.sets(st.integers(0, 60), min_size=1, max_size=14)))
    if racks:
        names = draw(st.lists(st.sampled_from("abcde"), min_size=len(ids), max_size=len(ids)))
        brokers = [BrokerMetadata(b, r) for b, r in zip(ids, names, strict=True)]
    else:
        brokers = [BrokerMetadata(b) for b in ids]
    rf = draw(st.integers(1, len(ids)))
    partitions = draw(st.integers(1, 80))
    start = draw(st.integers(0, 40))
    shift = draw(st.integers(0, 40))
    start_pid = draw(st.integers(-1, 50))
    return brokers, partitions, rf, start, shift, start_pid


@settings(max_examples=300, deadline=None)
@given(clusters(racks=False))
def test_rack_unaware_equals_the_plain_loop(
    case: tuple[list[BrokerMetadata], int, int, int, int, int],
) -> None:
    brokers, partitions, rf, start, shift, start_pid = case
    n = len(brokers)
    got = assign_replicas_to_brokers(brokers, partitions, rf, -1, start_pid, Fixed(start, shift))
    expected = reference_assignment.assign_rack_unaware(
        [b.id for b in brokers], partitions, rf, start % n, shift % n, start_pid
    )
    assert got == expected


@settings(max_examples=300, deadline=None)
@given(clusters(racks=True))
def test_rack_aware_equals_the_plain_loop(
    case: tuple[list[BrokerMetadata], int, int, int, int, int],
) -> None:
    brokers, partitions, rf, start, shift, start_pid = case
    n = len(brokers)
    got = assign_replicas_to_brokers(brokers, partitions, rf, -1, start_pid, Fixed(start, shift))
    expected = reference_assignment.assign_rack_aware(
        {b.id: b.rack or "" for b in brokers}, partitions, rf, start % n, shift % n, start_pid
    )
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(clusters(racks=True))
def test_no_broker_twice_and_every_rack_covered(
    case: tuple[list[BrokerMetadata], int, int, int, int, int],
) -> None:
    brokers, partitions, rf, start, _, start_pid = case
    rack = {b.id: b.rack for b in brokers}
    n_racks = len(set(rack.values()))
    got = assign_replicas_to_brokers(brokers, partitions, rf, start % len(brokers), start_pid)
    for replicas in got.values():
        assert len(set(replicas)) == rf
        assert len({rack[b] for b in replicas}) == min(rf, n_racks)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.integers(1, 3), st.integers(0, 11), st.booleans())
def test_even_leaders_and_replicas_when_partitions_divide_evenly(
    n: int, multiple: int, rf_seed: int, start: int, with_racks: bool
) -> None:
    # Kafka's tests expect exact evenness for nP a multiple of n and (with racks) equal racks.
    racks = 3 if with_racks and n % 3 == 0 else 0
    brokers = [BrokerMetadata(b, f"r{b % racks}" if racks else None) for b in range(n)]
    rf = min(n, rf_seed if not racks else min(rf_seed, racks))
    got = assign_replicas_to_brokers(brokers, n * multiple, rf, start % n, 0)
    leaders = Counter(r[0] for r in got.values())
    replicas = Counter(b for r in got.values() for b in r)
    assert set(leaders.values()) == {multiple}
    assert set(replicas.values()) == {multiple * rf}


@settings(max_examples=200, deadline=None)
@given(st.sets(st.integers(0, 30), min_size=1, max_size=10), st.data(), st.integers(1, 20))
def test_expansion_rule(ids: set[int], data: st.DataObject, extra: int) -> None:
    brokers = [BrokerMetadata(b) for b in sorted(ids)]
    rf = data.draw(st.integers(1, len(brokers)))
    existing_count = data.draw(st.integers(1, 20))
    partition0 = data.draw(st.permutations(sorted(ids)))[:rf]
    existing = {p: partition0 for p in range(existing_count)}
    new = create_new_partitions_assignment("t", existing, brokers, existing_count + extra)
    start = new_partitions_start_index(partition0, brokers)
    assert sorted(new) == list(range(existing_count, existing_count + extra))
    expected = reference_assignment.assign_rack_unaware(
        [b.id for b in brokers], extra, rf, start, start, existing_count
    )
    assert new == expected


@pytest.mark.parametrize(
    ("head", "index"),
    [(1, 0), (3, 1), (4, 2), (7, 3), (0, 0), (8, 0)],  # none >= 8: indexWhere's -1, max'd to 0
)
def test_new_partitions_start_at_the_first_broker_not_below_partition_0s_leader(
    head: int, index: int
) -> None:
    # AdminZkClient.createNewPartitionsAssignment:
    # math.max(0, allBrokers.indexWhere(_.id >= existingAssignmentPartition0.head))
    brokers = [BrokerMetadata(b) for b in (1, 3, 5, 7)]
    assert new_partitions_start_index([head, 5], brokers) == index
