"""The Spark operator's webhook configurations for a webhook server on the API server's host:
the chart's webhooks, by URL on localhost, limited to the watched namespaces."""

from __future__ import annotations

from kto_dev.spark_operator import webhooks


def test_the_chart_webhooks_are_registered_by_url_on_localhost() -> None:
    mutating, validating = webhooks.configurations("so", 9443, ["a", "b"])
    assert (mutating["kind"], validating["kind"]) == (
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")  # fmt: skip
    assert mutating["metadata"]["name"] == validating["metadata"]["name"] == "so"
    urls = {h["name"]: h["clientConfig"]["url"] for h in mutating["webhooks"]}
    assert urls == {
        "mutate--v1-pod.sparkoperator.k8s.io": "https://localhost:9443/mutate--v1-pod",
        "mutate-sparkoperator-k8s-io-v1beta2-sparkapplication.sparkoperator.k8s.io":
            "https://localhost:9443/mutate-sparkoperator-k8s-io-v1beta2-sparkapplication",
        "mutate-sparkoperator-k8s-io-v1beta2-scheduledsparkapplication.sparkoperator.k8s.io":
            "https://localhost:9443/mutate-sparkoperator-k8s-io-v1beta2-scheduledsparkapplication",
    }  # fmt: skip
    paths = [h["clientConfig"]["url"].split("9443")[1] for h in validating["webhooks"]]
    assert paths == [
        "/validate-sparkoperator-k8s-io-v1beta2-sparkapplication",
        "/validate-sparkoperator-k8s-io-v1beta2-scheduledsparkapplication",
    ]


def test_only_the_pods_the_controller_launches_in_the_watched_namespaces_are_mutated() -> None:
    mutating, _ = webhooks.configurations("so", 9443, ["a", "b"])
    pods = mutating["webhooks"][0]
    assert pods["rules"] == [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                              "operations": ["CREATE"]}]  # fmt: skip
    assert pods["objectSelector"] == {
        "matchLabels": {"sparkoperator.k8s.io/launched-by-spark-operator": "true"}}  # fmt: skip
    for hook in mutating["webhooks"]:
        assert hook["failurePolicy"] == "Fail"
        (expression,) = hook["namespaceSelector"]["matchExpressions"]
        assert expression["values"] == ["a", "b"]
    everywhere, _ = webhooks.configurations("so", 9443, [])
    assert all("namespaceSelector" not in h for h in everywhere["webhooks"])


def test_the_api_server_calls_the_webhook_once_every_ca_bundle_is_set() -> None:
    mutating, _ = webhooks.configurations("so", 9443, [])
    assert not webhooks.ca_bundles_set(mutating)
    for hook in mutating["webhooks"][:-1]:
        hook["clientConfig"]["caBundle"] = "Q0E="
    assert not webhooks.ca_bundles_set(mutating)
    mutating["webhooks"][-1]["clientConfig"]["caBundle"] = "Q0E="
    assert webhooks.ca_bundles_set(mutating)
    assert not webhooks.ca_bundles_set({"webhooks": []})
