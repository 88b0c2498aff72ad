"""The gauges folded from per-resource records match a recount of the records."""

from __future__ import annotations

import datetime
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.k8s.metrics import (
    REGISTRY,
    WAITING_REASONS,
    RebalanceStates,
    ResourceStates,
)

REASONS = ["Created", "Reconciling", "DeletionIneligible", "DeletionDisabled", "Conflict"]
RESOURCES = [f"default/t{i}" for i in range(4)]

operations = st.lists(
    st.one_of(
        st.tuples(st.just("record"), st.sampled_from(RESOURCES), st.sampled_from(REASONS),
                  st.integers(0, 5), st.integers(0, 5)),
        st.tuples(st.just("forget"), st.sampled_from(RESOURCES), st.none(), st.none(), st.none()),
    ),
    max_size=30,
)  # fmt: skip


def gauge(name: str, labels: dict[str, str] | None = None) -> float | None:
    return REGISTRY.get_sample_value(name, labels or {})


@given(operations)
def test_gauges_match_a_recount(
    ops: list[tuple[str, str, str | None, int | None, int | None]],
) -> None:
    states = ResourceStates()
    last: dict[str, tuple[str, int, int]] = {}
    for op, resource, reason, offline, under in ops:
        if op == "record":
            assert reason is not None and offline is not None and under is not None
            states.record(resource, reason, offline, under)
            last[resource] = (reason, offline, under)
        else:
            states.forget(resource)
            last.pop(resource, None)
    by_reason = Counter(reason for reason, _, _ in last.values())
    for reason in {reason for _, _, reason, _, _ in ops if reason is not None}:
        assert gauge("kto_topics", {"reason": reason}) == by_reason[reason]
    if ops:
        assert gauge("kto_offline_partitions") == sum(o for _, o, _ in last.values())
        assert gauge("kto_under_replicated_partitions") == sum(u for _, _, u in last.values())
        waiting = sum(1 for reason, _, _ in last.values() if reason in WAITING_REASONS)
        assert gauge("kto_deletions_waiting") == waiting


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_longest_wait_is_the_oldest_deletion_still_waiting() -> None:
    clock = Clock()
    states = ResourceStates(clock)
    assert states.longest_wait() == 0
    states.record("ns/a", "DeletionIneligible", 0)
    clock.now += 30
    states.record("ns/b", "DeletionIneligible", 0)
    clock.now += 10
    # Recorded again while it still waits (each reconcile records): it keeps its start.
    states.record("ns/a", "DeletionIneligible", 0)
    assert states.longest_wait() == 40
    states.record("ns/a", "DeletionDisabled", 0)  # still waiting, for another reason
    assert states.longest_wait() == 40
    states.forget("ns/a")  # its deletion finished
    assert states.longest_wait() == 10
    states.record("ns/b", "Created", 0)  # no longer waiting
    assert states.longest_wait() == 0


def test_a_deletion_waits_since_its_deletion_timestamp_across_operator_restarts() -> None:
    clock = Clock()
    states = ResourceStates(clock)  # a restarted operator: it never saw the deletion begin
    clock.now = datetime.datetime(2026, 1, 1, 1, tzinfo=datetime.UTC).timestamp()
    states.record("ns/a", "DeletionIneligible", 0, deletion_timestamp="2026-01-01T00:00:00Z")
    assert states.longest_wait() == 3600
    states.record("ns/b", "DeletionIneligible", 0, deletion_timestamp="not a time")
    assert states.longest_wait() == 3600  # b counts from now


def test_the_exported_longest_wait_follows_the_operators_records() -> None:
    from kafka_topic_operator.k8s import metrics

    metrics.STATES.record("metrics-test/waiting", "DeletionIneligible", 0)
    try:
        value = gauge("kto_deletion_wait_seconds_max")
        assert value is not None and 0 <= value < 60
    finally:
        metrics.STATES.forget("metrics-test/waiting")


def progress(done: int, in_flight: int, remaining: int) -> dict[str, object]:
    return {"progress": {"partitionsDone": done, "partitionsInFlight": in_flight,
                         "partitionsRemaining": remaining, "batch": 1}}  # fmt: skip


def test_rebalances_are_counted_by_state_with_progress_while_rebalancing() -> None:
    states = RebalanceStates()
    plan = {"optimizationResult": {"replicaMoves": 12, "leaderMoves": 3}}
    states.record("ns", "spread", "PendingProposal", {})
    states.record("ns", "drain", "ProposalReady", plan)
    assert gauge("kto_rebalances", {"state": "PendingProposal"}) == 1
    assert gauge("kto_rebalances", {"state": "ProposalReady"}) == 1
    moves = {"namespace": "ns", "name": "drain"}
    assert gauge("kto_rebalance_plan_moves", {**moves, "kind": "replica"}) == 12
    assert gauge("kto_rebalance_plan_moves", {**moves, "kind": "leader"}) == 3

    states.record("ns", "drain", "Rebalancing", {**plan, **progress(4, 2, 6)})
    assert gauge("kto_rebalances", {"state": "ProposalReady"}) == 0
    assert gauge("kto_rebalances", {"state": "Rebalancing"}) == 1
    assert gauge("kto_rebalance_partitions", {**moves, "phase": "done"}) == 4
    assert gauge("kto_rebalance_partitions", {**moves, "phase": "in_flight"}) == 2
    assert gauge("kto_rebalance_partitions", {**moves, "phase": "remaining"}) == 6

    # Progress is shown while it rebalances only: a finished one has no remaining moves.
    states.record("ns", "drain", "Ready", plan)
    assert gauge("kto_rebalance_partitions", {**moves, "phase": "remaining"}) is None
    assert gauge("kto_rebalances", {"state": "Ready"}) == 1

    states.forget("ns", "drain")
    states.forget("ns", "spread")
    assert gauge("kto_rebalances", {"state": "Ready"}) == 0
    assert gauge("kto_rebalances", {"state": "PendingProposal"}) == 0
    assert gauge("kto_rebalance_plan_moves", {**moves, "kind": "replica"}) is None
