"""The collector held off during a controller event, and what a failover built kept out of it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from kafka_topic_operator.process.gc_tuning import collections_deferred, freeze_long_lived


@pytest.fixture
def collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_no_collection_runs_during_a_deferred_burst_and_they_resume_after(collector: None) -> None:
    gc.enable()
    with collections_deferred():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collections_deferred():
        raise RuntimeError("an event failed")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(collector: None) -> None:
    gc.disable()
    with collections_deferred():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_what_exists_when_frozen_is_left_out_of_collections(collector: None) -> None:
    context = [{"partition": p} for p in range(1000)]
    before = gc.get_freeze_count()
    freeze_long_lived()
    assert gc.get_freeze_count() >= before + len(context)
