"""The verbs' object lifecycle rules, exercised without HTTP."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from kube_api_emulator import Cluster
from kube_api_emulator.errors import ApiError
from kube_api_emulator.resources import ResourceInfo

from .helpers import topic, topic_crd

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
SMP = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


def topics(cluster: Cluster, version: str = "v1") -> ResourceInfo:
    return cluster.info("kto.dev", version, "kafkatopics")


def crds(cluster: Cluster) -> ResourceInfo:
    return cluster.info("apiextensions.k8s.io", "v1", "customresourcedefinitions")


def cms(cluster: Cluster) -> ResourceInfo:
    return cluster.info("", "v1", "configmaps")


def fails(code: int, fn: Any, *args: Any, **kwargs: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args, **kwargs)
    assert info.value.code == code, info.value.status()
    return info.value


# -- create ----------------------------------------------------------------------------------------


def test_create_stamps_server_fields_and_defaults(cluster: Cluster) -> None:
    body = topic("orders")
    body["metadata"]["uid"] = "client-chosen"
    obj = cluster.create(topics(cluster), "default", body).obj
    meta = obj["metadata"]
    assert meta["uid"] != "client-chosen"
    assert meta["generation"] == 1
    assert meta["creationTimestamp"].endswith("Z")
    assert meta["resourceVersion"] == str(cluster.store.rv)
    assert obj["spec"] == {"partitions": 3, "replicas": 1}


def test_creation_timestamp_is_never_behind_the_wall_clock(cluster: Cluster) -> None:
    # Just after a second begins, when a coarse clock would still show the previous one.
    for n in range(3):
        before = datetime.datetime.now(datetime.UTC)
        while datetime.datetime.now(datetime.UTC).second == before.second:
            pass
        seen = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        obj = cluster.create(topics(cluster), "default", topic(f"t{n}")).obj
        assert obj["metadata"]["creationTimestamp"] >= seen


def test_create_twice_is_already_exists(cluster: Cluster) -> None:
    cluster.create(topics(cluster), "default", topic("orders"))
    err = fails(409, cluster.create, topics(cluster), "default", topic("orders"))
    assert err.reason == "AlreadyExists"
    assert err.message == 'kafkatopics.kto.dev "orders" already exists'


def test_generate_name(cluster: Cluster) -> None:
    body = {"metadata": {"generateName": "evt-"}, "reason": "X"}
    events = cluster.info("", "v1", "events")
    names = {cluster.create(events, "default", body).obj["metadata"]["name"] for _ in range(20)}
    assert len(names) == 20
    assert all(n.startswith("evt-") and len(n) == 9 for n in names)


def test_create_in_a_missing_namespace_is_not_found(cluster: Cluster) -> None:
    err = fails(404, cluster.create, topics(cluster), "nope", topic("t", namespace="nope"))
    assert err.message == 'namespaces "nope" not found'


def test_invalid_names_are_rejected(cluster: Cluster) -> None:
    err = fails(422, cluster.create, cms(cluster), "default", {"metadata": {"name": "Bad_Name"}})
    assert err.message.startswith(
        'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase '
        "RFC 1123 subdomain"
    )
    err = fails(422, cluster.create, cms(cluster), "default", {"metadata": {}})
    assert err.details["causes"] == [
        {
            "reason": "FieldValueRequired",
            "message": "Required value: name or generateName is required",
            "field": "metadata.name",
        }
    ]


def test_schema_violation_is_invalid_with_apiserver_message(cluster: Cluster) -> None:
    err = fails(422, cluster.create, topics(cluster), "default", topic("t", partitions=0))
    assert err.message == (
        'KafkaTopic.kto.dev "t" is invalid: spec.partitions: Invalid value: 0: spec.partitions '
        "in body should be greater than or equal to 1"
    )
    assert err.details["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: spec.partitions in body should be greater than or "
            "equal to 1",
            "field": "spec.partitions",
        }
    ]


def test_type_errors_block_cel_rules(cluster: Cluster) -> None:
    cluster.create(topics(cluster), "default", topic("t"))
    err = fails(
        422, cluster.patch, topics(cluster), "default", "t", MERGE, {"spec": {"partitions": "x"}}
    )
    assert [c["field"] for c in err.details["causes"]] == ["spec.partitions", "<nil>"]
    assert err.details["causes"][1]["message"].endswith(
        "some validation rules were not checked because the object was invalid; correct the "
        "existing errors to complete validation"
    )


def test_unknown_fields_strict_warn_and_ignore(cluster: Cluster) -> None:
    body = topic("t", bogus=1)
    err = fails(400, cluster.create, topics(cluster), "default", body, field_validation="Strict")
    assert err.message == (
        'KafkaTopic in version "v1" cannot be handled as a KafkaTopic: strict decoding error: '
        'unknown field "spec.bogus"'
    )
    warned = cluster.create(topics(cluster), "default", body, field_validation="Warn")
    assert warned.warnings == ['unknown field "spec.bogus"']
    assert "bogus" not in warned.obj["spec"]
    ignored = cluster.create(
        topics(cluster), "default", topic("u", bogus=1), field_validation="Ignore"
    )
    assert ignored.warnings == []


def test_dry_run_persists_nothing(cluster: Cluster) -> None:
    rv = cluster.store.rv
    result = cluster.create(topics(cluster), "default", topic("t"), dry_run=True)
    assert result.obj["spec"]["replicas"] == 1
    assert cluster.store.rv == rv
    fails(404, cluster.get, topics(cluster), "default", "t")


# -- update, generation, status --------------------------------------------------------------------


def test_update_with_stale_resource_version_conflicts(cluster: Cluster) -> None:
    obj = cluster.create(topics(cluster), "default", topic("t")).obj
    fresh = cluster.patch(topics(cluster), "default", "t", MERGE, {"spec": {"partitions": 4}}).obj
    err = fails(409, cluster.update, topics(cluster), "default", "t", obj)
    assert err.reason == "Conflict"
    assert err.message.startswith('Operation cannot be fulfilled on kafkatopics.kto.dev "t": ')
    fresh["spec"]["partitions"] = 5
    assert cluster.update(topics(cluster), "default", "t", fresh).obj["spec"]["partitions"] == 5


def test_custom_resource_update_needs_a_resource_version(cluster: Cluster) -> None:
    cluster.create(topics(cluster), "default", topic("t"))
    err = fails(422, cluster.update, topics(cluster), "default", "t", topic("t", partitions=4))
    assert "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update" in (
        err.message
    )
    configmap = {"metadata": {"name": "c"}, "data": {"a": "1"}}
    cluster.create(cms(cluster), "default", configmap)
    configmap["data"] = {"a": "2"}
    assert cluster.update(cms(cluster), "default", "c", configmap).obj["data"] == {"a": "2"}


def test_generation_counts_spec_changes_only(cluster: Cluster) -> None:
    info = topics(cluster)
    cluster.create(info, "default", topic("t"))
    labelled = cluster.patch(info, "default", "t", MERGE, {"metadata": {"labels": {"a": "b"}}})
    assert labelled.obj["metadata"]["generation"] == 1
    grown = cluster.patch(info, "default", "t", MERGE, {"spec": {"partitions": 6}})
    assert grown.obj["metadata"]["generation"] == 2
    status = cluster.patch(info, "default", "t", MERGE, {"status": {"x": 1}}, subresource="status")
    assert status.obj["metadata"]["generation"] == 2
    assert status.obj["status"] == {"x": 1}


def test_no_op_write_keeps_the_resource_version(cluster: Cluster) -> None:
    info = topics(cluster)
    rv = cluster.create(info, "default", topic("t")).obj["metadata"]["resourceVersion"]
    same = cluster.patch(info, "default", "t", MERGE, {"spec": {"partitions": 3}}).obj
    assert same["metadata"]["resourceVersion"] == rv


def test_status_subresource_separates_status_from_the_rest(cluster: Cluster) -> None:
    info = topics(cluster)
    body = topic("t")
    body["status"] = {"ignored": True}
    created = cluster.create(info, "default", body).obj
    assert "status" not in created
    main = cluster.patch(
        info, "default", "t", MERGE, {"status": {"x": 1}, "spec": {"partitions": 4}}
    )
    assert "status" not in main.obj
    assert main.obj["spec"]["partitions"] == 4
    status = cluster.patch(
        info,
        "default",
        "t",
        MERGE,
        {"status": {"x": 1}, "spec": {"partitions": 9}},
        subresource="status",
    )
    assert status.obj["status"] == {"x": 1}
    assert status.obj["spec"]["partitions"] == 4


def test_cel_transition_rules_guard_updates(cluster: Cluster) -> None:
    info = topics(cluster)
    cluster.create(info, "default", topic("t", partitions=3, topicName="orders"))
    err = fails(422, cluster.patch, info, "default", "t", MERGE, {"spec": {"partitions": 2}})
    assert err.message == (
        'KafkaTopic.kto.dev "t" is invalid: spec.partitions: Invalid value: "integer": partitions '
        "cannot be decreased"
    )
    err = fails(422, cluster.patch, info, "default", "t", MERGE, {"spec": {"topicName": "x"}})
    assert 'spec.topicName: Invalid value: "string": topicName is immutable' in err.message


# -- patch formats ---------------------------------------------------------------------------------


def test_json_patch_with_resource_version_test_like_kopf(cluster: Cluster) -> None:
    info = topics(cluster)
    rv = cluster.create(info, "default", topic("t")).obj["metadata"]["resourceVersion"]
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/metadata/finalizers", "value": ["kto.dev/f"]},
    ]
    done = cluster.patch(info, "default", "t", JSON_PATCH, ops).obj
    assert done["metadata"]["finalizers"] == ["kto.dev/f"]
    err = fails(422, cluster.patch, info, "default", "t", JSON_PATCH, ops)
    assert err.reason == "Invalid"


def test_merge_patch_with_stale_resource_version_conflicts(cluster: Cluster) -> None:
    info = topics(cluster)
    rv = cluster.create(info, "default", topic("t")).obj["metadata"]["resourceVersion"]
    cluster.patch(info, "default", "t", MERGE, {"spec": {"partitions": 4}})
    fails(
        409,
        cluster.patch,
        info,
        "default",
        "t",
        MERGE,
        {"metadata": {"resourceVersion": rv}, "spec": {"partitions": 5}},
    )


def test_strategic_merge_patch_is_for_built_ins_only(cluster: Cluster) -> None:
    cluster.create(topics(cluster), "default", topic("t"))
    err = fails(415, cluster.patch, topics(cluster), "default", "t", SMP, {"spec": {}})
    assert err.reason == "UnsupportedMediaType"
    deployments = cluster.info("apps", "v1", "deployments")
    container = {"name": "app", "image": "a:1"}
    deploy = {
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [container, {"name": "b", "image": "b"}]}}},
    }
    cluster.create(deployments, "default", deploy)
    out = cluster.patch(
        deployments,
        "default",
        "d",
        SMP,
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "a:2"}]}}}},
    )
    assert out.obj["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "a:2"},
        {"name": "b", "image": "b"},
    ]
    assert out.obj["metadata"]["generation"] == 2
    assert out.obj["spec"]["replicas"] == 1


def test_server_side_apply_creates_then_merges(cluster: Cluster) -> None:
    info = topics(cluster)
    created = cluster.patch(info, "default", "t", APPLY, topic("t", partitions=2))
    assert created.created
    assert created.obj["spec"] == {"partitions": 2, "replicas": 1}
    merged = cluster.patch(info, "default", "t", APPLY, topic("t", partitions=4, config={"a": 1}))
    assert merged.obj["spec"] == {"partitions": 4, "replicas": 1, "config": {"a": 1}}
    fails(400, cluster.patch, info, "default", "t", APPLY, {"spec": {}})


# -- delete, finalizers, cascades -----------------------------------------------------------------


def test_finalizers_hold_deletion_until_removed(cluster: Cluster) -> None:
    info = topics(cluster)
    body = topic("t")
    body["metadata"]["finalizers"] = ["kto.dev/f"]
    cluster.create(info, "default", body)
    pending = cluster.delete(info, "default", "t")
    assert not pending.finished
    assert pending.obj["metadata"]["deletionTimestamp"]
    assert pending.obj["metadata"]["generation"] == 2
    again = cluster.delete(info, "default", "t")
    assert not again.finished
    err = fails(
        422,
        cluster.patch,
        info,
        "default",
        "t",
        MERGE,
        {"metadata": {"finalizers": ["kto.dev/f", "kto.dev/g"]}},
    )
    assert "no new finalizers can be added if the object is being deleted" in err.message
    watcher = cluster.open_watch(info, "default", resource_version=str(cluster.store.rv))
    gone = cluster.patch(
        info, "default", "t", JSON_PATCH, [{"op": "remove", "path": "/metadata/finalizers"}]
    )
    assert gone.obj["metadata"]["deletionTimestamp"]
    fails(404, cluster.get, info, "default", "t")
    assert watcher.queue.get_nowait() == ("DELETED", gone.obj)


def test_delete_preconditions(cluster: Cluster) -> None:
    cluster.create(cms(cluster), "default", {"metadata": {"name": "c"}})
    err = fails(409, cluster.delete, cms(cluster), "default", "c", {"preconditions": {"uid": "x"}})
    assert "the UID in the precondition (x) does not match the UID in record" in err.message


def test_namespace_deletion_cascades_and_waits_for_finalizers(cluster: Cluster) -> None:
    namespaces = cluster.info("", "v1", "namespaces")
    cluster.create(namespaces, None, {"metadata": {"name": "team"}})
    cluster.create(cms(cluster), "team", {"metadata": {"name": "plain"}})
    held = topic("held", namespace="team")
    held["metadata"]["finalizers"] = ["kto.dev/f"]
    cluster.create(topics(cluster), "team", held)
    result = cluster.delete(namespaces, None, "team")
    assert not result.finished
    assert result.obj["status"]["phase"] == "Terminating"
    fails(404, cluster.get, cms(cluster), "team", "plain")
    err = fails(403, cluster.create, cms(cluster), "team", {"metadata": {"name": "new"}})
    assert "because it is being terminated" in err.message
    cluster.patch(topics(cluster), "team", "held", MERGE, {"metadata": {"finalizers": None}})
    fails(404, cluster.get, namespaces, None, "team")


def test_owner_references_are_garbage_collected(cluster: Cluster) -> None:
    owner = cluster.create(topics(cluster), "default", topic("owner")).obj
    ref = {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaTopic",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    cluster.create(
        cms(cluster), "default", {"metadata": {"name": "child", "ownerReferences": [ref]}}
    )
    cluster.create(
        cms(cluster), "default", {"metadata": {"name": "orphan", "ownerReferences": [ref]}}
    )
    other = cluster.create(topics(cluster), "default", topic("second")).obj
    both = [ref, {**ref, "name": "second", "uid": other["metadata"]["uid"]}]
    cluster.create(
        cms(cluster), "default", {"metadata": {"name": "shared", "ownerReferences": both}}
    )
    cluster.patch(cms(cluster), "default", "orphan", MERGE, {"metadata": {"finalizers": ["x/y"]}})
    cluster.delete(topics(cluster), "default", "owner")
    fails(404, cluster.get, cms(cluster), "default", "child")
    shared = cluster.get(cms(cluster), "default", "shared")
    assert [r["name"] for r in shared["metadata"]["ownerReferences"]] == ["second"]
    assert cluster.get(cms(cluster), "default", "orphan")["metadata"]["deletionTimestamp"]


def test_orphan_propagation_keeps_dependents(cluster: Cluster) -> None:
    owner = cluster.create(topics(cluster), "default", topic("owner")).obj
    ref = {
        "apiVersion": "kto.dev/v1",
        "kind": "KafkaTopic",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    cluster.create(
        cms(cluster), "default", {"metadata": {"name": "child", "ownerReferences": [ref]}}
    )
    cluster.delete(topics(cluster), "default", "owner", {"propagationPolicy": "Orphan"})
    assert "ownerReferences" not in cluster.get(cms(cluster), "default", "child")["metadata"]


def job_with_pod(cluster: Cluster, name: str = "plan") -> None:
    """A Job and the pod its controller would create for it (no controller runs here)."""
    job = cluster.create(cluster.info("batch", "v1", "jobs"), "default",
                         {"metadata": {"name": name}, "spec": {}}).obj  # fmt: skip
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": name,
           "uid": job["metadata"]["uid"], "controller": True}  # fmt: skip
    pod = {"metadata": {"name": f"{name}-x1", "ownerReferences": [ref]}, "spec": {}}
    cluster.create(cluster.info("", "v1", "pods"), "default", pod)


def pod_names(cluster: Cluster) -> list[str]:
    pods = cluster.list_objects(cluster.info("", "v1", "pods"), "default").items
    return [p["metadata"]["name"] for p in pods]


@pytest.mark.parametrize(
    ("options", "pods"),
    [
        (None, ["plan-x1"]),  # batch/v1's default: the pods are orphaned
        ({}, ["plan-x1"]),
        ({"orphanDependents": True}, ["plan-x1"]),
        ({"propagationPolicy": "Orphan"}, ["plan-x1"]),
        ({"orphanDependents": False}, []),
        ({"propagationPolicy": "Background"}, []),  # what kubectl delete asks for
    ],
)
def test_deleting_a_job_orphans_its_pods_unless_asked_otherwise(
    cluster: Cluster, options: dict[str, Any] | None, pods: list[str]
) -> None:
    job_with_pod(cluster)
    cluster.delete(cluster.info("batch", "v1", "jobs"), "default", "plan", options)
    assert pod_names(cluster) == pods
    if pods:
        (pod,) = cluster.list_objects(cluster.info("", "v1", "pods"), "default").items
        assert "ownerReferences" not in pod["metadata"]


def test_a_job_collected_with_its_owner_takes_its_pods_along(cluster: Cluster) -> None:
    """The garbage collector deletes dependents in the background, whatever their default."""
    owner = cluster.create(topics(cluster), "default", topic("owner")).obj
    ref = {"apiVersion": "kto.dev/v1", "kind": "KafkaTopic", "name": "owner",
           "uid": owner["metadata"]["uid"]}  # fmt: skip
    job_with_pod(cluster)
    jobs = cluster.info("batch", "v1", "jobs")
    cluster.patch(jobs, "default", "plan", MERGE, {"metadata": {"ownerReferences": [ref]}})
    cluster.delete(topics(cluster), "default", "owner")
    fails(404, cluster.get, jobs, "default", "plan")
    assert pod_names(cluster) == []


def test_delete_collection_by_label(cluster: Cluster) -> None:
    for name, team in (("a", "x"), ("b", "y"), ("c", "x")):
        cluster.create(
            cms(cluster), "default", {"metadata": {"name": name, "labels": {"team": team}}}
        )
    deleted = cluster.delete_collection(cms(cluster), "default", label_selector="team=x")
    assert sorted(o["metadata"]["name"] for o in deleted) == ["a", "c"]
    assert [o["metadata"]["name"] for o in cluster.list_objects(cms(cluster), "default").items] == [
        "b"
    ]


# -- CRDs ------------------------------------------------------------------------------------------


def test_crd_status_and_registration(cluster: Cluster) -> None:
    crd = cluster.get(crds(cluster), None, "kafkatopics.kto.dev")
    conditions = {c["type"]: c for c in crd["status"]["conditions"]}
    assert conditions["Established"]["status"] == "True"
    assert conditions["NamesAccepted"]["reason"] == "NoConflicts"
    assert crd["status"]["acceptedNames"]["shortNames"] == ["kt"]
    assert crd["status"]["storedVersions"] == ["v1"]
    assert "customresourcecleanup.apiextensions.k8s.io" in crd["metadata"]["finalizers"]
    info = topics(cluster)
    assert info.namespaced and info.has_status and info.short_names == ("kt",)


def test_crd_validation_errors(cluster: Cluster) -> None:
    bad = topic_crd()
    bad["metadata"]["name"] = "wrong.kto.dev"
    err = fails(422, cluster.create, crds(cluster), None, bad)
    assert (
        'metadata.name: Invalid value: "wrong.kto.dev": must be spec.names.plural+"."+spec.group'
        in (err.message)
    )
    rules = topic_crd()
    spec = rules["spec"]
    spec["names"] = {"plural": "others", "kind": "Other"}
    rules["metadata"]["name"] = "others.kto.dev"
    schema = spec["versions"][0]["schema"]["openAPIV3Schema"]
    schema["x-kubernetes-validations"] = [{"rule": "self.spec >"}]
    err = fails(422, cluster.create, crds(cluster), None, rules)
    assert "compilation failed" in err.message


def test_crd_deletion_removes_instances_then_the_resource(cluster: Cluster) -> None:
    cluster.create(topics(cluster), "default", topic("plain"))
    held = topic("held")
    held["metadata"]["finalizers"] = ["kto.dev/f"]
    cluster.create(topics(cluster), "default", held)
    result = cluster.delete(crds(cluster), None, "kafkatopics.kto.dev")
    assert not result.finished
    fails(405, cluster.create, topics(cluster), "default", topic("new"))
    cluster.patch(topics(cluster), "default", "held", MERGE, {"metadata": {"finalizers": None}})
    fails(404, cluster.get, crds(cluster), None, "kafkatopics.kto.dev")
    assert cluster.registry.get("kto.dev", "v1", "kafkatopics") is None


def test_multiple_versions_share_storage(cluster: Cluster) -> None:
    crd = cluster.get(crds(cluster), None, "kafkatopics.kto.dev")
    beta = {**crd["spec"]["versions"][0], "name": "v1beta1", "storage": False}
    crd = {**crd, "spec": {**crd["spec"], "versions": [*crd["spec"]["versions"], beta]}}
    cluster.update(crds(cluster), None, "kafkatopics.kto.dev", crd)
    cluster.create(topics(cluster), "default", topic("t"))
    seen = cluster.get(topics(cluster, "v1beta1"), "default", "t")
    assert seen["apiVersion"] == "kto.dev/v1beta1"
    assert cluster.store.get("kto.dev/kafkatopics", "default", "t")["apiVersion"] == "kto.dev/v1"
    assert cluster.registry.versions("kto.dev") == ["v1", "v1beta1"]


# -- list ------------------------------------------------------------------------------------------


def test_pagination_walks_every_object_once(cluster: Cluster) -> None:
    for i in range(25):
        cluster.create(topics(cluster), "default", topic(f"t{i:02d}"))
    names: list[str] = []
    token = ""
    pages = 0
    while True:
        page = cluster.list_objects(topics(cluster), "default", limit=10, continue_token=token)
        names += [o["metadata"]["name"] for o in page.items]
        pages += 1
        token = page.continue_token
        if not token:
            break
    assert pages == 3
    assert names == [f"t{i:02d}" for i in range(25)]
    fails(400, cluster.list_objects, topics(cluster), "default", limit=1, continue_token="%%%")


def test_field_selectors_on_custom_resources_are_limited(cluster: Cluster) -> None:
    err = fails(
        400, cluster.list_objects, topics(cluster), "default", field_selector="spec.partitions=3"
    )
    assert err.message.endswith("field label not supported: spec.partitions")


def test_a_config_map_holds_at_most_one_mebibyte(cluster: Cluster) -> None:
    limit = 1024 * 1024
    body = {"metadata": {"name": "plan"}, "data": {"a": "x" * (limit - 10), "b": "é" * 5}}
    stored = cluster.create(cms(cluster), "default", body).obj  # 1 MiB exactly: é is 2 bytes
    err = fails(422, cluster.create, cms(cluster), "default",
                {"metadata": {"name": "big"}, "data": {"a": "x" * limit, "b": "y"}})  # fmt: skip
    assert err.status()["message"] == (
        'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes'
    )
    grown = {**stored, "binaryData": {"c": "AAAA"}}  # 3 more bytes, once decoded
    fails(422, cluster.update, cms(cluster), "default", "plan", grown)
