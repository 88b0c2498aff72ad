"""The emulator over HTTP: discovery, Status errors, lists, watch streams, tables, the kubernetes
client, and the process entry point with its state file."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from kube_api_emulator import ApiServer

from .helpers import CRD_PATH, ROOT, TOPICS, Http, topic, topic_crd

pytestmark = pytest.mark.e2e


def test_discovery_lists_core_and_custom_resources(http_crd: Http) -> None:
    http = http_crd
    code, version = http.get("/version")
    assert code == 200
    assert (version["major"], version["minor"]) == ("1", "33")
    _, core = http.get("/api")
    assert core["versions"] == ["v1"]
    _, v1 = http.get("/api/v1")
    names = {r["name"]: r for r in v1["resources"]}
    for needed in ("namespaces", "events", "configmaps", "secrets", "pods", "namespaces/status"):
        assert needed in names
    assert names["namespaces"]["namespaced"] is False
    assert names["configmaps"]["shortNames"] == ["cm"]
    _, groups = http.get("/apis")
    group_names = [g["name"] for g in groups["groups"]]
    for needed in (
        "apps",
        "batch",
        "rbac.authorization.k8s.io",
        "policy",
        "networking.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "apiextensions.k8s.io",
        "kto.dev",
    ):
        assert needed in group_names
    _, kto = http.get("/apis/kto.dev/v1")
    entries = {r["name"]: r for r in kto["resources"]}
    assert entries["kafkatopics"] == {
        "name": "kafkatopics",
        "singularName": "kafkatopic",
        "namespaced": True,
        "kind": "KafkaTopic",
        "verbs": [
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ],
        "shortNames": ["kt"],
        "categories": ["kto"],
    }
    assert entries["kafkatopics/status"]["verbs"] == ["get", "patch", "update"]
    code, group = http.get("/apis/kto.dev")
    assert group["preferredVersion"] == {"groupVersion": "kto.dev/v1", "version": "v1"}


def test_every_error_is_a_status(http_crd: Http) -> None:
    http = http_crd
    code, body = http.get("/apis/nothing.io/v1/things")
    assert code == 404
    assert body["kind"] == "Status"
    assert body["message"] == "the server could not find the requested resource"
    code, body = http.get(f"{TOPICS}/missing")
    assert (code, body["reason"], body["message"]) == (
        404,
        "NotFound",
        'kafkatopics.kto.dev "missing" not found',
    )
    assert http.post(TOPICS, topic("t"))[0] == 201
    code, body = http.post(TOPICS, topic("t"))
    assert (code, body["reason"]) == (409, "AlreadyExists")
    code, body = http.post(TOPICS, topic("u", partitions=0))
    assert (code, body["reason"], body["apiVersion"]) == (422, "Invalid", "v1")
    code, body, _ = http.request("POST", TOPICS, raw=b"{not json")
    assert (code, body["reason"]) == (400, "BadRequest")
    code, body, _ = http.request("PUT", "/api/v1/namespaces/default/configmaps", {})
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    code, body, _ = http.request(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        raw=b"\x6b\x38\x73\x00",
        content_type="application/vnd.kubernetes.protobuf",
    )
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")


def test_lists_carry_kind_and_api_version(http_crd: Http) -> None:
    http = http_crd
    http.post(TOPICS, topic("a"))
    _, listed = http.get(TOPICS)
    assert (listed["kind"], listed["apiVersion"]) == ("KafkaTopicList", "kto.dev/v1")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    _, everywhere = http.get("/apis/kto.dev/v1/kafkatopics")
    assert len(everywhere["items"]) == 1
    _, cms = http.get("/api/v1/configmaps")
    assert cms["kind"] == "ConfigMapList"


def test_warnings_for_unknown_fields(http_crd: Http) -> None:
    code, created, headers = http_crd.request("POST", TOPICS, topic("t", bogus=1))
    assert code == 201
    assert "bogus" not in created["spec"]
    assert headers.get_all("Warning") == ['299 - "unknown field \\"spec.bogus\\""']


def test_tables_for_kubectl(http_crd: Http) -> None:
    http = http_crd
    http.post(TOPICS, topic("t", partitions=7))
    http.patch(
        f"{TOPICS}/t/status",
        {"status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        "application/merge-patch+json",
    )
    _, table = http.get(TOPICS, accept="application/json;as=Table;v=v1;g=meta.k8s.io")
    assert table["kind"] == "Table"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Partitions", "Ready", "Age"]
    (row,) = table["rows"]
    assert row["cells"][:3] == ["t", 7, "True"]
    assert re.fullmatch(r"\d+s", row["cells"][3])
    assert row["object"]["kind"] == "PartialObjectMetadata"


def test_patch_content_types(http_crd: Http) -> None:
    http = http_crd
    _, created = http.post(TOPICS, topic("t"))
    rv = created["metadata"]["resourceVersion"]
    code, body = http.patch(
        f"{TOPICS}/t",
        [
            {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
            {"op": "replace", "path": "/spec/partitions", "value": 5},
        ],
        "application/json-patch+json",
    )
    assert (code, body["spec"]["partitions"]) == (200, 5)
    code, body = http.patch(f"{TOPICS}/t", {"spec": {}}, "application/strategic-merge-patch+json")
    assert code == 415
    yaml_body = (
        b"apiVersion: kto.dev/v1\nkind: KafkaTopic\nmetadata:\n  name: s\nspec:\n  partitions: 2\n"
    )
    code, body, _ = http.request(
        "PATCH",
        f"{TOPICS}/s?fieldManager=test",
        raw=yaml_body,
        content_type="application/apply-patch+yaml",
    )
    assert (code, body["spec"]["partitions"]) == (201, 2)
    code, body = http.delete(f"{TOPICS}/s")
    # A finished deletion of a custom resource answers a Status naming it, as kube-apiserver does.
    assert (code, body["status"], body["details"]["name"]) == (200, "Success", "s")


def test_delete_with_finalizer_answers_202(http_crd: Http) -> None:
    http = http_crd
    body = topic("t")
    body["metadata"]["finalizers"] = ["kto.dev/f"]
    http.post(TOPICS, body)
    code, pending = http.delete(f"{TOPICS}/t", {"propagationPolicy": "Foreground"})
    assert code == 202
    assert pending["metadata"]["deletionTimestamp"]


def test_watch_streams_events_in_order_and_resumes(http_crd: Http) -> None:
    http = http_crd
    _, listed = http.get(TOPICS)
    start = listed["metadata"]["resourceVersion"]
    http.post(TOPICS, topic("t"))
    http.patch(f"{TOPICS}/t", {"spec": {"partitions": 4}}, "application/merge-patch+json")
    http.delete(f"{TOPICS}/t")
    events = http.watch(f"{TOPICS}?watch=true&resourceVersion={start}&timeoutSeconds=1")
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and versions[0] > int(start)
    resumed = http.watch(f"{TOPICS}?watch=1&resourceVersion={versions[0]}&timeoutSeconds=1")
    assert [e["type"] for e in resumed] == ["MODIFIED", "DELETED"]


def test_watch_bookmarks_and_initial_events(http_crd: Http) -> None:
    http = http_crd
    http.post(TOPICS, topic("t"))
    events = http.watch(
        f"{TOPICS}?watch=true&allowWatchBookmarks=true&sendInitialEvents=true"
        "&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"
    )
    assert events[0]["type"] == "ADDED"
    assert events[1]["type"] == "BOOKMARK"
    assert events[1]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    # The server sends periodic bookmarks (every 0.2 s in these tests) on a quiet stream.
    assert sum(1 for e in events if e["type"] == "BOOKMARK") >= 2
    assert {e["object"]["kind"] for e in events} == {"KafkaTopic"}


def test_watch_too_old_is_an_error_event(tmp_path: Path) -> None:
    with ApiServer(ring_capacity=3) as api:
        http = Http(api.url)
        http.post(CRD_PATH, topic_crd())
        for i in range(6):
            http.post(TOPICS, topic(f"t{i}"))
        events = http.watch(f"{TOPICS}?watch=true&resourceVersion=2&timeoutSeconds=1")
    assert len(events) == 1
    assert events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith("too old resource version: 2 (")


def test_watch_delivers_events_while_open(http_crd: Http, api: ApiServer) -> None:
    http = http_crd
    seen: list[str] = []
    opened = threading.Event()

    def reader() -> None:
        url = f"{api.url}{TOPICS}?watch=true&timeoutSeconds=10"
        with urllib.request.urlopen(url, timeout=30) as resp:
            opened.set()
            for line in resp:
                event = json.loads(line)
                seen.append(f"{event['type']} {event['object']['metadata']['name']}")
                if event["type"] == "DELETED":
                    return

    thread = threading.Thread(target=reader)
    thread.start()
    assert opened.wait(10)
    # The stream is open: wait until its watcher is subscribed before writing.
    hub = api.call(api.cluster.store.hub, "kto.dev/kafkatopics")
    while api.call(hub.watcher_count) == 0:
        threading.Event().wait(0.01)
    http.post(TOPICS, topic("live"))
    http.delete(f"{TOPICS}/live")
    thread.join(30)
    assert seen == ["ADDED live", "DELETED live"]


def test_kubernetes_client_round_trip(api: ApiServer, tmp_path: Path) -> None:
    from kubernetes import client, config

    config.load_kube_config(config_file=str(api.write_kubeconfig(tmp_path / "kubeconfig")))
    ext = client.ApiextensionsV1Api()
    ext.create_custom_resource_definition(topic_crd())
    objects = client.CustomObjectsApi()
    objects.create_namespaced_custom_object("kto.dev", "v1", "default", "kafkatopics", topic("t"))
    objects.patch_namespaced_custom_object_status(
        "kto.dev", "v1", "default", "kafkatopics", "t", {"status": {"phase": "Ready"}}
    )
    got = objects.get_namespaced_custom_object("kto.dev", "v1", "default", "kafkatopics", "t")
    assert got["status"] == {"phase": "Ready"}
    core = client.CoreV1Api()
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team")))
    core.create_namespaced_config_map(
        "team", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"), data={"a": "b"})
    )
    maps = core.list_namespaced_config_map("team")
    assert [m.metadata.name for m in maps.items] == ["c"]
    with pytest.raises(client.ApiException) as info:
        core.read_namespaced_config_map("missing", "team")
    assert info.value.status == 404
    names = [n.metadata.name for n in core.list_namespace().items]
    assert {"default", "kube-system", "team"} <= set(names)


def run_entry_point(port_file: Path, state: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kube_api_emulator",
            "--port",
            "0",
            "--state-file",
            str(state),
            "--kubeconfig",
            str(port_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
    assert match, line
    return proc, match.group(1)


def stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    if proc.stdout is not None:
        proc.stdout.close()


def test_entry_point_keeps_state_across_restarts(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    proc, url = run_entry_point(tmp_path / "kubeconfig", state)
    try:
        http = Http(url)
        assert http.post(CRD_PATH, topic_crd())[0] == 201
        _, created = http.post(TOPICS, topic("kept"))
    finally:
        stop(proc)
    assert proc.returncode == 0
    assert json.loads(state.read_text())["format"] == 1
    proc, url = run_entry_point(tmp_path / "kubeconfig", state)
    try:
        http = Http(url)
        code, kept = http.get(f"{TOPICS}/kept")
        assert code == 200
        assert kept["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        assert kept["metadata"]["uid"] == created["metadata"]["uid"]
        _, newer = http.post(TOPICS, topic("newer"))
        assert int(newer["metadata"]["resourceVersion"]) > int(
            created["metadata"]["resourceVersion"]
        )
        # No history survives a restart: resuming from before it is "too old".
        old_rv = int(created["metadata"]["resourceVersion"]) - 1
        events = http.watch(f"{TOPICS}?watch=true&resourceVersion={old_rv}&timeoutSeconds=1")
        assert events[0]["object"]["code"] == 410
    finally:
        stop(proc)


def test_thread_server_saves_state_on_stop(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    with ApiServer(state_file=state) as api:
        Http(api.url).post("/api/v1/namespaces", {"metadata": {"name": "kept"}})
    with ApiServer(state_file=state) as api:
        code, ns = Http(api.url).get("/api/v1/namespaces/kept")
    assert code == 200
    assert ns["status"]["phase"] == "Active"


def test_delete_collection_over_http(http: Http) -> None:
    for name, team in (("a", "x"), ("b", "y"), ("c", "x")):
        body = {"metadata": {"name": name, "labels": {"team": team}}, "data": {}}
        assert http.post("/api/v1/namespaces/default/configmaps", body)[0] == 201
    code, deleted = http.delete("/api/v1/namespaces/default/configmaps?labelSelector=team%3Dx")
    assert code == 200
    assert deleted["kind"] == "ConfigMapList"
    assert sorted(o["metadata"]["name"] for o in deleted["items"]) == ["a", "c"]
    _, left = http.get("/api/v1/namespaces/default/configmaps")
    assert [o["metadata"]["name"] for o in left["items"]] == ["b"]
    code, kept = http.delete("/api/v1/namespaces/default/configmaps/b", {"dryRun": ["All"]})
    assert (code, kept["metadata"]["name"]) == (200, "b")
    assert http.get("/api/v1/namespaces/default/configmaps/b")[0] == 200
