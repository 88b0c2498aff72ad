"""A KafkaRebalance's states and what moves it between them (pure), in Strimzi's vocabulary.

    PendingProposal -> ProposalReady -> (approve) -> Rebalancing -> Ready
                                                          \\-> (stop) -> Stopped

The state is the type of the resource's one condition whose status is "True". The annotation
`kto.dev/rebalance` asks for a change (approve, stop, refresh); each state accepts the ones
Strimzi's does, and any other is refused with a warning and removed. A change of spec, or
`refresh`, plans again; `kto.dev/rebalance-auto-approval: "true"` approves every proposal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

ANNOTATION = "kto.dev/rebalance"
AUTO_APPROVAL = "kto.dev/rebalance-auto-approval"


class State(StrEnum):
    PENDING_PROPOSAL = "PendingProposal"
    PROPOSAL_READY = "ProposalReady"
    REBALANCING = "Rebalancing"
    READY = "Ready"
    STOPPED = "Stopped"
    NOT_READY = "NotReady"


class Ask(StrEnum):
    APPROVE = "approve"
    STOP = "stop"
    REFRESH = "refresh"


ACCEPTED: Mapping[State, frozenset[Ask]] = {
    State.PENDING_PROPOSAL: frozenset({Ask.STOP, Ask.REFRESH}),
    State.PROPOSAL_READY: frozenset({Ask.APPROVE, Ask.REFRESH}),
    State.REBALANCING: frozenset({Ask.STOP, Ask.REFRESH}),
    State.READY: frozenset({Ask.REFRESH}),
    State.STOPPED: frozenset({Ask.REFRESH}),
    State.NOT_READY: frozenset({Ask.REFRESH}),
}


@dataclass(frozen=True, slots=True)
class Decision:
    state: State
    clear_annotation: bool = False
    warning: str | None = None  # said as a Kubernetes event


def current_state(status: Mapping[str, Any] | None) -> State | None:
    for condition in (status or {}).get("conditions") or []:
        if condition.get("status") == "True":
            try:
                return State(condition.get("type"))
            except ValueError:
                continue
    return None


def decide(
    state: State | None,
    annotations: Mapping[str, str],
    *,
    spec_changed: bool,
) -> Decision:
    """The state to be in now, before any work: a new resource, a changed spec or `refresh`
    plan (again); `approve` starts the proposal shown; `stop` stops; anything else waits."""
    asked = annotations.get(ANNOTATION)
    if state is None:
        return Decision(State.PENDING_PROPOSAL, clear_annotation=asked is not None)
    if asked is not None:
        try:
            ask = Ask(asked.strip())
        except ValueError:
            return Decision(state, True, f"unknown {ANNOTATION} annotation '{asked}': use one "
                            "of approve, stop, refresh")  # fmt: skip
        if ask not in ACCEPTED[state]:
            accepted = ", ".join(sorted(ACCEPTED[state]))
            return Decision(state, True, f"'{ask}' does nothing in state {state} (accepted: "
                            f"{accepted})")  # fmt: skip
        target = {
            Ask.APPROVE: State.REBALANCING,
            Ask.STOP: State.STOPPED,
            Ask.REFRESH: State.PENDING_PROPOSAL,
        }[ask]
        return Decision(target, clear_annotation=True)
    if spec_changed and state is not State.REBALANCING:
        return Decision(State.PENDING_PROPOSAL)
    if state is State.PROPOSAL_READY and auto_approved(annotations):
        return Decision(State.REBALANCING)
    return Decision(state)


def auto_approved(annotations: Mapping[str, str]) -> bool:
    return annotations.get(AUTO_APPROVAL, "").strip().lower() == "true"


# kstatus' abnormal-true conditions beside the state's own: Reconciling while the operator
# plans or moves replicas, Stalled while nothing happens until someone changes the spec or the
# cluster. ProposalReady waits on a person, so neither: a GitOps tool's wait ends there.
RECONCILING_STATES = frozenset({State.PENDING_PROPOSAL, State.REBALANCING})
STALLED_STATES = frozenset({State.NOT_READY})


def conditions(state: State, reason: str, message: str, now: str) -> list[dict[str, str]]:
    """The state's condition first (the printer column and `current_state` read it), then
    Reconciling or Stalled when the state calls for one."""
    kinds = [str(state)]
    if state in RECONCILING_STATES:
        kinds.append("Reconciling")
    elif state in STALLED_STATES:
        kinds.append("Stalled")
    return [
        {"type": kind, "status": "True", "reason": reason, "message": message,
         "lastTransitionTime": now}
        for kind in kinds
    ]  # fmt: skip
