"""TopicReplicaDistribution and DiskUsageDistribution in the reference planner: their rules, their
guarantees on random small clusters (hypothesis), and how well they do on grown clusters.

Guarantees checked on every cluster: the hard goals hold, no broker's replica count changes from
what the count balance reached, excluded topics stay, the plan is deterministic, neither goal
leaves any broker (or topic on a broker) further from its band than the goal found it, a later
goal never undoes an earlier one, and a goal that stops short says so, and stops only when no
single legal swap would help (checked by brute force, independently of the planner)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from swap_goals_testing import (
    Sizes,
    grown_with_sizes,
    helps,
    loads,
    met,
    no_further,
    one_swap_away,
    rack_legal,
    topic_misses,
)

from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.rebalance.algorithms.goals import DISK_USAGE_DISTRIBUTION as DISK
from kafka_topic_operator.rebalance.algorithms.goals import TOPIC_REPLICA_DISTRIBUTION as TOPICS
from kafka_topic_operator.rebalance.algorithms.goals import (
    disk_amounts,
    disk_balanced,
    disk_band,
    disk_load_ok,
    topic_band,
    topic_count_ok,
)
from kafka_topic_operator.rebalance.algorithms.model import ClusterModel
from kto_dev.yardsticks.reference_planner import Plan, PlanRequest, plan

# The rules


def test_a_topics_band_is_the_floor_and_ceiling_of_its_share() -> None:
    assert topic_band(12, 4) == (3, 3)
    assert topic_band(13, 4) == (3, 4)
    assert topic_band(2, 5) == (0, 1)


@pytest.mark.parametrize(
    ("count", "change", "ok"),
    [
        (3, 1, True), (4, 1, False), (3, -1, False),  # band 3-4: never out of it
        (6, -1, True), (6, 1, False),  # above it: only down
        (1, 1, True), (1, -1, False),  # below it: only up
    ],
)  # fmt: skip
def test_a_topic_count_never_leaves_its_band_nor_goes_further_out(
    count: int, change: int, ok: bool
) -> None:
    assert topic_count_ok(count, change, (3, 4)) is ok


def test_the_disk_band_is_cruise_controls_and_a_broker_never_goes_further_out() -> None:
    assert disk_band(1000, 4) == pytest.approx((227.5, 272.5))  # 250 +- 9%
    assert disk_load_ok(260, 10, 1000, 4)  # 270: in the band
    assert not disk_load_ok(260, 20, 1000, 4)  # 280: out of it
    assert disk_load_ok(300, -10, 1000, 4)  # out, but nearer the mean
    assert not disk_load_ok(300, 10, 1000, 4)
    assert disk_load_ok(300, -90, 1000, 4)  # 210: out the other side, but nearer
    assert not disk_load_ok(300, -110, 1000, 4)  # 190: further from the mean than 300
    assert disk_balanced({0: 250, 1: 272, 2: 228, 3: 250}, range(4))
    assert not disk_balanced({0: 250, 1: 273, 2: 227, 3: 250}, range(4))


def test_disk_amounts_bring_brokers_just_inside_the_band() -> None:
    # Mean 100, band 91-109, aimed at 95.5-104.5 (half the tolerance inside it).
    assert disk_amounts({0: 150, 1: 100, 2: 50, 3: 100}, range(4), range(4)) == ({0: 45}, {2: 45})
    # Broker 0 must give 25, broker 3 can take 15: the other 10 go to the in-band brokers
    # below the mean, the lightest first, never past the mean.
    assert disk_amounts({0: 130, 1: 95, 2: 95, 3: 80}, range(4), range(4)) == (
        {0: 25},
        {1: 5, 2: 5, 3: 15},
    )
    # Only the brokers allowed to move (add-brokers: the new ones) are given amounts.
    assert disk_amounts({0: 150, 1: 100, 2: 50, 3: 100}, range(4), [1, 2]) == ({}, {2: 45})


# Random clusters


@st.composite
def cases(
    draw: st.DrawFn,
) -> tuple[ClusterModel, tuple[int, ...], Sizes, tuple[str, ...], str | None]:
    """A cluster on the first `old` brokers, planned over all of them or with one drained;
    racks or not; partition sizes; the swap goals in either order; an excluded topic or none."""
    brokers = draw(st.integers(2, 7))
    old = draw(st.integers(1, brokers))
    assignment: dict[TopicPartition, tuple[int, ...]] = {}
    for t in range(draw(st.integers(1, 5))):
        rf = draw(st.integers(1, min(3, old)))
        for p in range(draw(st.integers(1, 8))):
            assignment[TopicPartition(f"t{t}", p)] = tuple(draw(st.permutations(range(old)))[:rf])
    racks = {b: f"r{b % 3}" for b in range(brokers)} if draw(st.booleans()) else {}
    eligible = tuple(range(brokers))
    widest = max(len(r) for r in assignment.values())
    if draw(st.booleans()) and brokers - 1 >= max(widest, 2):
        drained = draw(st.sampled_from(eligible))
        eligible = tuple(b for b in eligible if b != drained)
    sizes = {tp: draw(st.integers(0, 1000)) for tp in sorted(assignment)}
    goals = draw(st.sampled_from([(TOPICS,), (DISK,), (TOPICS, DISK), (DISK, TOPICS)]))
    excluded = draw(st.sampled_from([None, "t0", "t[12]"]))
    return ClusterModel(assignment, racks), eligible, sizes, goals, excluded


Case = tuple[ClusterModel, tuple[int, ...], Sizes, tuple[str, ...], str | None]


def planned(case: Case, goals: tuple[str, ...]) -> Plan:
    model, eligible, sizes, _, excluded = case
    return plan(
        PlanRequest(model, eligible, excluded_topics=excluded, swap_goals=goals, sizes=sizes)
    )


def says(result: Plan, goal: str) -> bool:
    """Whether the plan says the goal was not met."""
    start = "topic replica counts" if goal == TOPICS else "bytes per broker"
    return any(u.startswith(start) for u in result.unbalanced)


@settings(max_examples=150, deadline=None)
@given(cases())
def test_the_swap_goals_keep_every_guarantee(case: Case) -> None:
    model, eligible, sizes, goals, excluded = case
    base = planned(case, ())  # the counts balanced, before any swap goal
    result = planned(case, goals)
    after = result.assignment
    assert planned(case, goals) == result  # deterministic
    # The hard goals, replication factors, excluded topics, and the count balance exactly.
    assert after.keys() == model.assignment.keys()
    for tp, replicas in after.items():
        assert len(replicas) == len(model.assignment[tp]) == len(set(replicas))
        if excluded is not None and re.fullmatch(excluded, tp.topic):
            assert replicas == model.assignment[tp]
        if model.racks and rack_legal(model, base.assignment[tp], eligible):
            assert rack_legal(model, replicas, eligible)
    assert model.replica_counts(after) == model.replica_counts(base.assignment)
    for i, goal in enumerate(goals):
        found = planned(case, goals[:i]).assignment  # what the goals before it left
        # Nothing further from its band, neither by this goal nor by the later ones.
        assert no_further(goal, found, after, sizes, eligible)
        # Said unmet exactly when it ended its turn unmet.
        own_turn = planned(case, goals[: i + 1]).assignment
        assert says(result, goal) == (not met(goal, own_turn, sizes, eligible))
    # The last goal stops only when no single legal swap would help it.
    last = goals[-1]
    if not met(last, after, sizes, eligible):
        for option in one_swap_away(model, after, eligible, excluded):
            assert not helps(last, goals[:-1], after, option, sizes, eligible)


# Grown clusters


def test_on_grown_clusters_topics_spread_evenly_and_disks_balance() -> None:
    topics_met = disks_met = 0
    for seed in range(40):
        model, brokers, sizes = grown_with_sizes(seed)
        base = plan(PlanRequest(model, brokers))
        result = plan(PlanRequest(model, brokers, swap_goals=(TOPICS, DISK), sizes=sizes))
        assert model.replica_counts(result.assignment) == model.replica_counts(base.assignment)
        topics_met += not any(topic_misses(result.assignment, brokers).values())
        disks_met += disk_balanced(loads(result.assignment, sizes, brokers), brokers)
        assert not [u for u in result.unbalanced if u in base.unbalanced or "leader" in u]
    assert topics_met == 40
    assert disks_met >= 38  # two clusters hold too few replicas per broker to split finer


def test_disk_balance_alone_moves_few_extra_replicas() -> None:
    extra, bound = 0, 0
    for seed in range(40):
        model, brokers, sizes = grown_with_sizes(seed)
        base = plan(PlanRequest(model, brokers))
        result = plan(PlanRequest(model, brokers, swap_goals=(DISK,), sizes=sizes))
        assert disk_balanced(loads(result.assignment, sizes, brokers), brokers), seed
        extra += result.replica_moves - base.replica_moves
        bound += base.replica_lower_bound
    assert extra <= 0.15 * bound  # swaps: at most 15% more moves than the counts alone


def test_a_swap_evens_bytes_when_the_counts_are_already_even() -> None:
    # Two brokers of two replicas each: 100 + 100 against 10 + 10. One swap gives 110 each.
    t = [TopicPartition("t", p) for p in range(4)]
    model = ClusterModel({t[0]: (0,), t[1]: (0,), t[2]: (1,), t[3]: (1,)})
    sizes = {t[0]: 100, t[1]: 100, t[2]: 10, t[3]: 10}
    result = plan(PlanRequest(model, (0, 1), swap_goals=(DISK,), sizes=sizes))
    assert result.unbalanced == ()
    assert loads(result.assignment, sizes, (0, 1)) == {0: 110, 1: 110}
    assert result.replica_moves == 2


def test_disk_balance_without_sizes_is_refused() -> None:
    model = ClusterModel({TopicPartition("t", 0): (0,)})
    with pytest.raises(ValueError, match="DiskUsageDistribution needs partition sizes"):
        plan(PlanRequest(model, (0, 1), swap_goals=(DISK,)))


def test_a_disk_route_may_pass_its_quota_but_never_carry_a_broker_past_the_mean() -> None:
    from kafka_topic_operator.rebalance.spark.swaps import disk_routes

    # Mean 80: broker 0 must give 46 (to 83.6), broker 1 take 46; either may go 4 further.
    loads = {0: 130, 1: 30}
    assert disk_routes(loads, (0, 1), {0: 46}, {1: 46}) == [(0, 1, 46, 50)]
    # Two routes from broker 0 share its slack.
    loads = {0: 200, 1: 50, 2: 50}
    give, take = disk_amounts(loads, (0, 1, 2), (0, 1, 2))
    routes = disk_routes(loads, (0, 1, 2), give, take)
    assert sum(limit for x, _, _, limit in routes if x == 0) <= 200 - 100
