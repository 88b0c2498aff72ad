"""The gauges folded from per-resource records match a recount of the records."""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from kafka_topic_operator.k8s.metrics import REGISTRY, WAITING_REASONS, ResourceStates

REASONS = ["Created", "Reconciling", "DeletionIneligible", "DeletionDisabled", "Conflict"]
RESOURCES = [f"default/t{i}" for i in range(4)]

operations = st.lists(
    st.one_of(
        st.tuples(st.just("record"), st.sampled_from(RESOURCES), st.sampled_from(REASONS),
                  st.integers(0, 5)),
        st.tuples(st.just("forget"), st.sampled_from(RESOURCES), st.none(), st.none()),
    ),
    max_size=30,
)  # fmt: skip


def gauge(name: str, labels: dict[str, str] | None = None) -> float | None:
    return REGISTRY.get_sample_value(name, labels or {})


@given(operations)
def test_gauges_match_a_recount(ops: list[tuple[str, str, str | None, int | None]]) -> None:
    states = ResourceStates()
    last: dict[str, tuple[str, int]] = {}
    for op, resource, reason, offline in ops:
        if op == "record":
            assert reason is not None and offline is not None
            states.record(resource, reason, offline)
            last[resource] = (reason, offline)
        else:
            states.forget(resource)
            last.pop(resource, None)
    by_reason = Counter(reason for reason, _ in last.values())
    for reason in {reason for _, _, reason, _ in ops if reason is not None}:
        assert gauge("kto_topics", {"reason": reason}) == by_reason[reason]
    if ops:
        assert gauge("kto_offline_partitions") == sum(offline for _, offline in last.values())
        waiting = sum(1 for reason, _ in last.values() if reason in WAITING_REASONS)
        assert gauge("kto_deletions_waiting") == waiting
