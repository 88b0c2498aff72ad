"""The store's complexity properties and the watch hubs: indexed listing, per-resource and
per-namespace fan-out, and the bounded event ring."""

from __future__ import annotations

import pytest

from kube_api_emulator import Cluster
from kube_api_emulator.errors import ApiError
from kube_api_emulator.store import Store
from kube_api_emulator.watch import Watcher

from .helpers import topic


def configmap(name: str, namespace: str) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": {"k": "v"}}


def make_namespaces(cluster: Cluster, *names: str) -> None:
    info = cluster.info("", "v1", "namespaces")
    for name in names:
        cluster.create(info, None, {"metadata": {"name": name}})


def test_listing_one_namespace_visits_only_its_objects(cluster: Cluster) -> None:
    make_namespaces(cluster, "big", "small")
    topics = cluster.info("kto.dev", "v1", "kafkatopics")
    cms = cluster.info("", "v1", "configmaps")
    for i in range(200):
        cluster.create(topics, "big", topic(f"t{i}", namespace="big"))
        cluster.create(cms, "small", configmap(f"c{i}", "small"))
    for i in range(3):
        cluster.create(topics, "small", topic(f"s{i}", namespace="small"))
    before = cluster.store.visits
    listed = cluster.list_objects(topics, "small")
    assert [o["metadata"]["name"] for o in listed.items] == ["s0", "s1", "s2"]
    assert cluster.store.visits - before == 3


def test_name_field_selector_is_a_lookup_not_a_scan(cluster: Cluster) -> None:
    topics = cluster.info("kto.dev", "v1", "kafkatopics")
    for i in range(100):
        cluster.create(topics, "default", topic(f"t{i}"))
    before = cluster.store.visits
    found = cluster.list_objects(topics, None, field_selector="metadata.name=t42")
    assert [o["metadata"]["name"] for o in found.items] == ["t42"]
    assert cluster.store.visits - before == 1


def test_paginated_list_visits_one_page(cluster: Cluster) -> None:
    topics = cluster.info("kto.dev", "v1", "kafkatopics")
    for i in range(100):
        cluster.create(topics, "default", topic(f"t{i:03d}"))
    before = cluster.store.visits
    page = cluster.list_objects(topics, "default", limit=10)
    assert cluster.store.visits - before == 10
    assert page.remaining == 90
    assert page.continue_token


def test_every_write_gets_a_higher_resource_version(cluster: Cluster) -> None:
    cms = cluster.info("", "v1", "configmaps")
    created = cluster.create(cms, "default", configmap("a", "default")).obj
    patched = cluster.patch(
        cms, "default", "a", "application/merge-patch+json", {"data": {"k": "w"}}
    ).obj
    deleted = cluster.delete(cms, "default", "a").obj
    versions = [int(o["metadata"]["resourceVersion"]) for o in (created, patched, deleted)]
    assert versions == sorted(versions)
    assert len(set(versions)) == 3
    assert int(deleted["metadata"]["resourceVersion"]) == cluster.store.rv


def test_writes_only_reach_watchers_of_their_resource_and_namespace(cluster: Cluster) -> None:
    make_namespaces(cluster, "other")
    topics = cluster.info("kto.dev", "v1", "kafkatopics")
    cms = cluster.info("", "v1", "configmaps")
    topic_watch = cluster.open_watch(topics, None, resource_version=str(cluster.store.rv))
    cm_default = cluster.open_watch(cms, "default", resource_version=str(cluster.store.rv))
    cm_all = cluster.open_watch(cms, None, resource_version=str(cluster.store.rv))
    cluster.create(cms, "other", configmap("x", "other"))
    cluster.create(cms, "default", configmap("y", "default"))
    assert topic_watch.queue.qsize() == 0
    assert [item[1]["metadata"]["name"] for item in drain(cm_default)] == ["y"]
    assert [item[1]["metadata"]["name"] for item in drain(cm_all)] == ["x", "y"]
    hub = cluster.store.hub(cms.storage)
    assert hub.watcher_count() == 2
    cluster.close_watch(cms, cm_all)
    assert hub.watcher_count() == 1


def drain(watcher: Watcher) -> list[tuple[str, dict[str, object]]]:
    items = []
    while not watcher.queue.empty():
        item = watcher.queue.get_nowait()
        assert item is not None
        items.append(item)
    return items


def test_label_selector_watch_sees_transitions_as_added_and_deleted(cluster: Cluster) -> None:
    cms = cluster.info("", "v1", "configmaps")
    watcher = cluster.open_watch(
        cms, "default", label_selector="team=a", resource_version=str(cluster.store.rv)
    )
    cluster.create(cms, "default", configmap("c", "default"))
    merge = "application/merge-patch+json"
    cluster.patch(cms, "default", "c", merge, {"metadata": {"labels": {"team": "a"}}})
    cluster.patch(cms, "default", "c", merge, {"data": {"k": "2"}})
    cluster.patch(cms, "default", "c", merge, {"metadata": {"labels": {"team": "b"}}})
    cluster.delete(cms, "default", "c")
    assert [kind for kind, _ in drain(watcher)] == ["ADDED", "MODIFIED", "DELETED"]


def test_resuming_replays_the_ring_and_too_old_is_gone() -> None:
    cluster = Cluster(ring_capacity=5)
    cms = cluster.info("", "v1", "configmaps")
    start = cluster.store.rv
    for i in range(8):
        cluster.create(cms, "default", configmap(f"c{i}", "default"))
    recent = cluster.store.rv - 3
    watcher = cluster.open_watch(cms, "default", resource_version=str(recent))
    assert [o["metadata"]["name"] for _, o in drain(watcher)] == ["c5", "c6", "c7"]
    with pytest.raises(ApiError) as info:
        cluster.open_watch(cms, "default", resource_version=str(start))
    assert info.value.code == 410
    assert info.value.message.startswith(f"too old resource version: {start} (")


def test_watch_from_zero_starts_with_the_current_state(cluster: Cluster) -> None:
    cms = cluster.info("", "v1", "configmaps")
    cluster.create(cms, "default", configmap("a", "default"))
    watcher = cluster.open_watch(cms, "default", resource_version="0")
    assert [(k, o["metadata"]["name"]) for k, o in drain(watcher)] == [("ADDED", "a")]
    initial = cluster.open_watch(cms, "default", send_initial_events=True, bookmarks=True)
    kinds = drain(initial)
    assert [k for k, _ in kinds] == ["ADDED", "BOOKMARK"]
    assert kinds[1][1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_store_keeps_no_history() -> None:
    store = Store()
    obj = {"metadata": {"name": "a", "namespace": "n", "uid": "u"}}
    store.put("g/r", obj, None)
    for i in range(5):
        new = {"metadata": {"name": "a", "namespace": "n", "uid": "u"}, "v": i}
        store.put("g/r", new, store.get("g/r", "n", "a"))
    assert store.count("g/r") == 1
    assert store.get("g/r", "n", "a") == {
        "metadata": {"name": "a", "namespace": "n", "uid": "u", "resourceVersion": "6"},
        "v": 4,
    }
