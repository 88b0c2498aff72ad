"""The KafkaRebalance states and annotations (pure), as Strimzi's KafkaRebalance accepts them."""

from __future__ import annotations

import pytest

from kafka_topic_operator.k8s.rebalance_resource import merge_patch
from kafka_topic_operator.rebalance.execution.workflow import (
    ACCEPTED,
    ANNOTATION,
    AUTO_APPROVAL,
    Ask,
    Decision,
    State,
    current_state,
    decide,
)


def test_a_new_resource_plans() -> None:
    assert decide(None, {}, spec_changed=False) == Decision(State.PENDING_PROPOSAL)
    assert decide(None, {ANNOTATION: "approve"}, spec_changed=False) == Decision(
        State.PENDING_PROPOSAL, clear_annotation=True
    )


@pytest.mark.parametrize("state", list(State))
@pytest.mark.parametrize("ask", list(Ask))
def test_each_state_accepts_what_strimzi_accepts(state: State, ask: Ask) -> None:
    decision = decide(state, {ANNOTATION: str(ask)}, spec_changed=False)
    assert decision.clear_annotation
    if ask in ACCEPTED[state]:
        target = {Ask.APPROVE: State.REBALANCING, Ask.STOP: State.STOPPED,
                  Ask.REFRESH: State.PENDING_PROPOSAL}[ask]  # fmt: skip
        assert decision == Decision(target, clear_annotation=True)
    else:
        assert decision.state is state
        assert decision.warning is not None and decision.warning.startswith(f"'{ask}' does nothing")


def test_the_accepted_annotations_are_strimzis() -> None:
    assert ACCEPTED[State.PENDING_PROPOSAL] == {Ask.STOP, Ask.REFRESH}
    assert ACCEPTED[State.PROPOSAL_READY] == {Ask.APPROVE, Ask.REFRESH}
    assert ACCEPTED[State.REBALANCING] == {Ask.STOP, Ask.REFRESH}
    for state in (State.READY, State.STOPPED, State.NOT_READY):
        assert ACCEPTED[state] == {Ask.REFRESH}


def test_an_unknown_annotation_is_refused_with_a_warning() -> None:
    decision = decide(State.READY, {ANNOTATION: "go"}, spec_changed=False)
    assert decision == Decision(
        State.READY,
        True,
        "unknown kto.dev/rebalance annotation 'go': use one of approve, stop, refresh",
    )


def test_a_changed_spec_plans_again_except_while_rebalancing() -> None:
    for state in (State.PROPOSAL_READY, State.READY, State.STOPPED, State.NOT_READY):
        assert decide(state, {}, spec_changed=True) == Decision(State.PENDING_PROPOSAL)
    assert decide(State.REBALANCING, {}, spec_changed=True) == Decision(State.REBALANCING)


def test_auto_approval_approves_a_ready_proposal() -> None:
    assert decide(State.PROPOSAL_READY, {AUTO_APPROVAL: "true"}, spec_changed=False) == Decision(
        State.REBALANCING
    )
    assert decide(State.PROPOSAL_READY, {AUTO_APPROVAL: "false"}, spec_changed=False) == Decision(
        State.PROPOSAL_READY
    )


def test_the_state_is_the_true_condition() -> None:
    assert current_state(None) is None
    conditions = [{"type": "Ready", "status": "False"}, {"type": "Stopped", "status": "True"}]
    assert current_state({"conditions": conditions}) is State.STOPPED
    assert current_state({"conditions": [{"type": "Other", "status": "True"}]}) is None


def test_status_is_written_as_a_merge_patch_that_drops_what_is_gone() -> None:
    old = {"a": 1, "result": {"moves": 3, "unbalanced": ["x"]}, "progress": {"done": 1}}
    new = {"a": 1, "result": {"moves": 4}}
    assert merge_patch(old, new) == {"progress": None, "result": {"moves": 4, "unbalanced": None}}
