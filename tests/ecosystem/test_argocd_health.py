"""Argo CD's health checks for KafkaTopic and KafkaRebalance (examples/gitops/argocd/health), run
by a real Lua 5.1 (lupa's; Argo CD runs gopher-lua, a Lua 5.1) on every status the operator's
end-to-end tests captured (tests/ecosystem/captured), in Argo CD's sandbox: the base library,
table and os.time only (no useOpenLibs). "Now" is the test's, never the wall clock's."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from lupa import lua51

ROOT = Path(__file__).resolve().parents[2]
ARGOCD = ROOT / "examples" / "gitops" / "argocd"
CAPTURED = Path(__file__).parent / "captured"
SCRIPTS = {"KafkaTopic": ARGOCD / "health" / "kafkatopic.lua",
           "KafkaRebalance": ARGOCD / "health" / "kafkarebalance.lua"}  # fmt: skip
SNIPPET = ARGOCD / "argocd-cm-health.yaml"
# The health statuses Argo CD accepts from a script (anything else becomes Unknown).
ARGO_STATUSES = {"Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"}
# The captures' times (status_captures.FIXED_TIME), and the threshold kafkatopic.lua names.
CAPTURED_AT = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
THRESHOLD = 600

# What Argo CD must show for each capture, a minute after it was taken. A capture without an
# expectation, or an expectation without a capture, fails the test.
EXPECTED = {
    "kafkatopic-Created": "Healthy",
    "kafkatopic-Reconciling": "Progressing",
    "kafkatopic-ReassignmentInProgress": "Progressing",
    "kafkatopic-BrokersUnavailable": "Progressing",
    "kafkatopic-DeletionInProgress": "Progressing",
    "kafkatopic-ZooKeeperUnavailable": "Progressing",
    "kafkatopic-KafkaUnavailable": "Progressing",
    "kafkatopic-DeletionIneligible": "Progressing",  # a minute into the wait
    "kafkatopic-InvalidSpec": "Degraded",
    "kafkatopic-Conflict": "Degraded",
    "kafkatopic-NotSupported": "Degraded",
    "kafkatopic-UnreadableZNode": "Degraded",
    "kafkatopic-PartitionsOffline": "Degraded",
    "kafkatopic-DeletionDisabled": "Degraded",
    "kafkatopic-ReconciliationPaused": "Suspended",
    "kafkatopic-Unmanaged": "Suspended",
    "kafkarebalance-PendingProposal-Planning": "Progressing",
    "kafkarebalance-Rebalancing-Rebalancing": "Progressing",
    "kafkarebalance-ProposalReady-ProposalReady": "Suspended",
    "kafkarebalance-Stopped-Stopped": "Suspended",
    "kafkarebalance-Ready-RebalanceComplete": "Healthy",
    "kafkarebalance-NotReady-CannotPlan": "Degraded",
    "kafkarebalance-NotReady-ProposalFailed": "Degraded",
}


def epoch(when: datetime.datetime) -> int:
    return int(when.timestamp())


def rfc3339(seconds: int) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def captured(name: str) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((CAPTURED / f"{name}.json").read_text())
    return found


def to_lua(lua: Any, value: Any) -> Any:
    """A JSON value as Argo CD hands it to Lua: objects and arrays as tables (arrays from 1),
    null as nil."""
    if isinstance(value, dict):
        table = lua.table()
        for key, item in value.items():
            if item is not None:
                table[key] = to_lua(lua, item)
        return table
    if isinstance(value, list):
        table = lua.table()
        for index, item in enumerate(value, start=1):
            table[index] = to_lua(lua, item)
        return table
    return value


SANDBOX = """
local now = ...
-- What Argo CD opens for a health script: base, table, package and an os with time and date
-- only. Strings get no methods (gopher-lua sets the string metatable with the string library).
debug.setmetatable("", nil)
string, math, io, debug, coroutine = nil, nil, nil, nil, nil
os = {
  time = function(t)
    assert(t == nil, "os.time with a table reads the controller's local time zone")
    return now
  end,
  date = function() error("os.date formats in the controller's local time zone") end,
}
"""


def health(obj: dict[str, Any], now: int = epoch(CAPTURED_AT) + 60) -> tuple[str, str]:
    """(status, message) the resource's script returns for `obj` at `now` (epoch seconds)."""
    lua = lua51.LuaRuntime()
    lua.execute(SANDBOX, now)
    lua.globals().obj = to_lua(lua, obj)
    result = lua.execute(SCRIPTS[obj["kind"]].read_text())
    status, message = result["status"], result["message"]
    assert status in ARGO_STATUSES and isinstance(message, str), (status, message)
    return status, message


def first_condition(obj: dict[str, Any]) -> dict[str, Any]:
    """Ready for a KafkaTopic, the state's condition for a KafkaRebalance: both come first."""
    condition: dict[str, Any] = obj["status"]["conditions"][0]
    return condition


def test_lupa_runs_lua_5_1() -> None:
    assert lua51.LuaRuntime().lua_version == (5, 1)


def test_every_capture_has_an_expectation_and_every_expectation_a_capture() -> None:
    names = {p.stem for p in CAPTURED.glob("*.json")}
    assert sorted(names - EXPECTED.keys()) == [], "captured, but no expected Argo CD health"
    assert sorted(EXPECTED.keys() - names) == [], "expected, but no end-to-end test captured it"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_capture_has_the_expected_health_and_the_operators_reason_and_message(
    name: str,
) -> None:
    if not (CAPTURED / f"{name}.json").is_file():
        pytest.fail(f"no capture {name}.json")
    obj = captured(name)
    status, message = health(obj)
    assert status == EXPECTED[name], message
    condition = first_condition(obj)
    assert message.startswith(f"{condition['reason']}: {condition['message']}"), message


def test_the_messages_say_what_happens_next() -> None:
    _, message = health(captured("kafkarebalance-ProposalReady-ProposalReady"))
    assert message.endswith(
        "; approve it with: kubectl annotate kafkarebalance even-out kto.dev/rebalance=approve "
        "-n default"
    ), message
    _, message = health(captured("kafkarebalance-Stopped-Stopped"))
    assert message.endswith("kubectl annotate kafkarebalance paced kto.dev/rebalance=refresh "
                            "-n default"), message  # fmt: skip
    obj = captured("kafkarebalance-Rebalancing-Rebalancing")
    _, message = health(obj)
    assert message.endswith(
        " (partitions 0 done, 1 in flight, 11 remaining; leader elections 0 done, 6 remaining)"
    ), message
    obj["status"]["progress"]["estimatedSecondsLeft"] = 42.5
    assert health(obj)[1].endswith("6 remaining; about 42.5 s left)")
    for name, what in (("ZooKeeperUnavailable", "ZooKeeper"), ("KafkaUnavailable", "Kafka")):
        _, message = health(captured(f"kafkatopic-{name}"))
        assert message.endswith(f" (an outage: the operator waits for {what} to answer and "
                                "reconciles the topic then)"), message  # fmt: skip


def ineligible_since(when: str | None) -> dict[str, Any]:
    obj = captured("kafkatopic-DeletionIneligible")
    for condition in obj["status"]["conditions"]:
        condition["lastTransitionTime"] = when
    return obj


@pytest.mark.parametrize(
    "since",
    [
        CAPTURED_AT,
        datetime.datetime(2026, 12, 31, 23, 55, 0, tzinfo=datetime.UTC),  # into the next year
        datetime.datetime(2028, 2, 29, 23, 59, 30, tzinfo=datetime.UTC),  # a leap day
        datetime.datetime(2100, 2, 28, 23, 58, 0, tzinfo=datetime.UTC),  # 2100 is no leap year
        datetime.datetime(2100, 3, 1, 0, 4, 0, tzinfo=datetime.UTC),
        datetime.datetime(2026, 3, 29, 0, 55, 0, tzinfo=datetime.UTC),  # a DST change in Europe
    ],
    ids=str,
)
def test_a_deletion_waiting_on_offline_brokers_is_degraded_after_the_threshold(
    since: datetime.datetime,
) -> None:
    obj = ineligible_since(rfc3339(epoch(since)))
    status, message = health(obj, now=epoch(since) + THRESHOLD - 1)
    assert status == "Progressing"
    assert message.endswith("(Degraded if still waiting after 10 min)"), message
    for later in (THRESHOLD, THRESHOLD + 1, 30 * 24 * 3600):
        status, message = health(obj, now=epoch(since) + later)
        assert status == "Degraded"
        assert message.endswith("(waiting for more than 10 min)"), message


def test_the_threshold_holds_to_the_second_at_any_time() -> None:
    """The script writes the cutoff as Kubernetes writes times, with calendar arithmetic of its
    own: right to the second, whatever the year, month, day or hour."""
    start, end = epoch(datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)), 4_102_444_800  # 2100
    for since in range(start, end, 9_876_543):  # about 400 times, each at another time of day
        obj = ineligible_since(rfc3339(since))
        assert health(obj, now=since + THRESHOLD - 1)[0] == "Progressing", rfc3339(since)
        assert health(obj, now=since + THRESHOLD)[0] == "Degraded", rfc3339(since)


def test_the_threshold_is_one_named_local_of_the_script() -> None:
    script = SCRIPTS["KafkaTopic"].read_text()
    found = re.findall(r"^local DELETION_INELIGIBLE_DEGRADED_AFTER_SECONDS = (\d+)$", script,
                       flags=re.MULTILINE)  # fmt: skip
    assert found == [str(THRESHOLD)]


def test_a_wait_whose_start_is_not_written_as_kubernetes_writes_it_is_not_hidden() -> None:
    for when in ("2026-01-01T00:00:00.5Z", "2026-01-01T01:00:00+01:00", None):
        status, _ = health(ineligible_since(when), now=epoch(CAPTURED_AT) + 60)
        assert status == "Degraded", when


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_a_resource_the_operator_has_not_reconciled_yet_is_progressing(kind: str) -> None:
    metadata = {"name": "new", "namespace": "default", "generation": 1}
    bare = {"apiVersion": "kto.dev/v1", "kind": kind, "metadata": metadata, "spec": {}}
    assert health(bare)[0] == "Progressing"
    assert health({**bare, "status": {}})[0] == "Progressing"
    assert health({**bare, "status": {"conditions": []}})[0] == "Progressing"


@pytest.mark.parametrize(
    "name",
    [
        "kafkatopic-Created",
        "kafkatopic-InvalidSpec",
        "kafkatopic-ReconciliationPaused",
        "kafkarebalance-Ready-RebalanceComplete",
        "kafkarebalance-NotReady-CannotPlan",
        "kafkarebalance-Stopped-Stopped",
    ],
)
def test_a_spec_the_operator_has_not_seen_yet_is_progressing(name: str) -> None:
    obj = captured(name)
    assert obj["status"]["observedGeneration"] == obj["metadata"]["generation"]
    obj["metadata"]["generation"] += 1
    status, message = health(obj)
    assert status == "Progressing"
    assert f"generation {obj['metadata']['generation']}" in message, message


def test_replicas_moving_finish_before_a_changed_spec_is_planned() -> None:
    obj = captured("kafkarebalance-Rebalancing-Rebalancing")
    obj["metadata"]["generation"] += 1
    status, message = health(obj)
    assert status == "Progressing" and "in flight" in message, message


def test_an_asked_change_or_auto_approval_is_progressing() -> None:
    obj = captured("kafkarebalance-ProposalReady-ProposalReady")
    obj["metadata"]["annotations"] = {"kto.dev/rebalance": "approve"}
    assert health(obj) == (
        "Progressing",
        "kto.dev/rebalance=approve asked: waiting for the operator to act on it",
    )
    obj["metadata"]["annotations"] = {"kto.dev/rebalance-auto-approval": "true"}
    status, message = health(obj)
    assert status == "Progressing" and "kto.dev/rebalance-auto-approval" in message


def test_a_topic_being_deleted_for_another_reason_is_progressing() -> None:
    obj = captured("kafkatopic-Created")
    obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status, message = health(obj)
    assert (status, message) == ("Progressing", "Being deleted (Created: The topic is as declared)")


def test_a_reason_the_script_does_not_know_follows_the_kstatus_conditions() -> None:
    obj = captured("kafkatopic-Reconciling")
    conditions = obj["status"]["conditions"]
    for condition in conditions:
        condition["reason"] = "SomethingNew"
    assert health(obj)[0] == "Progressing"  # Reconciling True
    conditions[1]["type"] = "Stalled"
    assert health(obj)[0] == "Degraded"
    del conditions[1]
    assert health(obj)[0] == "Degraded"  # Ready False, nothing said
    conditions[0]["status"] = "Unknown"
    assert health(obj)[0] == "Progressing"


def test_the_argocd_cm_snippet_inlines_the_scripts_under_the_keys_argo_cd_reads() -> None:
    (snippet,) = [d for d in yaml.safe_load_all(SNIPPET.read_text()) if d]
    assert (snippet["apiVersion"], snippet["kind"]) == ("v1", "ConfigMap")
    metadata = snippet["metadata"]
    assert (metadata["name"], metadata["namespace"]) == ("argocd-cm", "argocd")
    crds = {
        crd["spec"]["names"]["kind"]: crd["spec"]["group"]
        for crd in (yaml.safe_load(p.read_text()) for p in (ROOT / "crds").glob("*.yaml"))
    }
    keys = {}
    for key, script in snippet["data"].items():
        # As Argo CD splits it: resource.customizations.<type>.<group>_<kind>.
        prefix, customizations, kind_of, group_kind = key.split(".", 3)
        assert (prefix, customizations, kind_of) == ("resource", "customizations", "health")
        group, kind = group_kind.split("_")
        assert crds.get(kind) == group, key
        keys[kind] = script
    assert keys.keys() == SCRIPTS.keys()
    for kind, path in SCRIPTS.items():
        # Byte for byte: the files are the source, the snippet carries them as they are.
        assert keys[kind] == path.read_text(), (
            f"{SNIPPET.relative_to(ROOT)} does not carry {path.relative_to(ROOT)} as it is: "
            "paste the file there again, indented by four spaces"
        )
