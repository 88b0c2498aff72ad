"""ReplicaAssignment against ControllerContextTest.testReassignTo (reference §6.1)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.kafka.reassignment import ReplicaAssignment


def test_reassign_to_moves_through_the_union_target_first() -> None:
    original = ReplicaAssignment.of([1, 2, 3])
    moving = original.reassign_to([4, 5, 6])
    assert moving == ReplicaAssignment.of([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3])
    assert moving.is_being_reassigned
    assert moving.origin_replicas == (1, 2, 3)
    assert moving.target_replicas == (4, 5, 6)


def test_reassigning_a_reassignment_keeps_the_origin() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    assert moving.reassign_to([7, 8, 9]) == ReplicaAssignment.of(
        [7, 8, 9, 1, 2, 3], [7, 8, 9], [1, 2, 3]
    )


def test_reassigning_back_to_the_origin_restores_it() -> None:
    original = ReplicaAssignment.of([1, 2, 3])
    assert original.reassign_to([4, 5, 6]).reassign_to([1, 2, 3]) == original
    assert not original.is_being_reassigned


def test_overlapping_target_adds_and_removes_only_the_difference() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([3, 4, 1])
    assert moving == ReplicaAssignment.of([3, 4, 1, 2], [4], [2])


def test_remove_replica_drops_it_everywhere() -> None:
    moving = ReplicaAssignment.of([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3])
    assert moving.remove_replica(5) == ReplicaAssignment.of([4, 6, 1, 2, 3], [4, 6], [1, 2, 3])
    assert moving.remove_replica(2) == ReplicaAssignment.of([4, 5, 6, 1, 3], [4, 5, 6], [1, 3])


def test_string_form_matches_kafka() -> None:
    moving = ReplicaAssignment.of([1, 2, 3]).reassign_to([4, 5, 6])
    assert str(moving) == (
        "ReplicaAssignment(replicas=4,5,6,1,2,3, addingReplicas=4,5,6, removingReplicas=1,2,3)"
    )


replica_lists = st.lists(st.integers(0, 20), min_size=1, max_size=6, unique=True)


@given(replica_lists, replica_lists)
def test_origin_and_target_are_recovered(origin: list[int], target: list[int]) -> None:
    moving = ReplicaAssignment.of(origin).reassign_to(target)
    # As in Kafka, the target keeps its order; the origin keeps its members (the union is
    # target-first, so shared replicas take the target's order).
    assert moving.target_replicas == tuple(target)
    assert sorted(moving.origin_replicas) == sorted(origin)
    assert set(moving.replicas) == set(origin) | set(target)
    assert set(moving.adding_replicas).isdisjoint(origin)
    assert set(moving.removing_replicas).isdisjoint(target)
