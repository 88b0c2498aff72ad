"""The Spark operator's admission webhooks, as its Helm chart registers them
(charts/spark-operator-chart/templates/webhook/ in its module), for a webhook server running on
the kube-apiserver's own host.

The chart points the configurations at the webhook's Service; here the server is a host process,
so they name it by URL on localhost, a name the certificate `spark-operator webhook start`
generates always carries. The webhook fills in each configuration's caBundle itself, once it
has made its certificate authority: until then the API server cannot call it.

Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

GROUP = "sparkoperator.k8s.io"
VERSION = "v1beta2"
# The pods the controller's spark-submit creates carry this label; the webhook mutates only them.
LAUNCHED_BY = {f"{GROUP}/launched-by-spark-operator": "true"}
# The chart's default: a SparkApplication is not admitted unmutated.
FAILURE_POLICY = "Fail"
TIMEOUT_SECONDS = 10


@dataclass(frozen=True)
class Hook:
    """One webhook: controller-runtime serves `/<verb>-<group-dashed>-<version>-<kind>`."""

    verb: str  # mutate or validate
    group: str  # "" for the core group
    resource: str
    kind: str
    operations: tuple[str, ...]

    @property
    def path(self) -> str:
        return f"/{self.verb}-{self.group.replace('.', '-')}-{VERSION if self.group else 'v1'}-" \
            f"{self.kind}"  # fmt: skip

    @property
    def name(self) -> str:
        return f"{self.path[1:]}.{GROUP}"


MUTATING = (
    Hook("mutate", "", "pods", "pod", ("CREATE",)),
    Hook("mutate", GROUP, "sparkapplications", "sparkapplication", ("CREATE", "UPDATE")),
    Hook("mutate", GROUP, "scheduledsparkapplications", "scheduledsparkapplication",
         ("CREATE", "UPDATE")),
)  # fmt: skip
VALIDATING = (
    Hook("validate", GROUP, "sparkapplications", "sparkapplication", ("CREATE", "UPDATE")),
    Hook("validate", GROUP, "scheduledsparkapplications", "scheduledsparkapplication",
         ("CREATE", "UPDATE")),
)  # fmt: skip


def _webhook(hook: Hook, port: int, namespaces: list[str]) -> Obj:
    webhook: Obj = {
        "name": hook.name,
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": f"https://localhost:{port}{hook.path}"},
        "sideEffects": "NoneOnDryRun",
        "failurePolicy": FAILURE_POLICY,
        "timeoutSeconds": TIMEOUT_SECONDS,
        "rules": [{"apiGroups": [hook.group], "apiVersions": [VERSION if hook.group else "v1"],
                   "resources": [hook.resource], "operations": list(hook.operations)}],
    }  # fmt: skip
    if namespaces:  # the chart's spark.jobNamespaces: the API server asks about these alone
        webhook["namespaceSelector"] = {"matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(namespaces)}
        ]}  # fmt: skip
    if hook.resource == "pods":
        webhook["objectSelector"] = {"matchLabels": dict(LAUNCHED_BY)}
    return webhook


def configurations(name: str, port: int, namespaces: list[str]) -> list[Obj]:
    """The MutatingWebhookConfiguration and ValidatingWebhookConfiguration named `name` (what
    `webhook start --mutating-webhook-name/--validating-webhook-name` keep the caBundle of), for
    a webhook server on localhost:`port` serving `namespaces` (all when empty)."""
    api = "admissionregistration.k8s.io/v1"
    return [
        {"apiVersion": api, "kind": "MutatingWebhookConfiguration", "metadata": {"name": name},
         "webhooks": [_webhook(h, port, namespaces) for h in MUTATING]},
        {"apiVersion": api, "kind": "ValidatingWebhookConfiguration", "metadata": {"name": name},
         "webhooks": [_webhook(h, port, namespaces) for h in VALIDATING]},
    ]  # fmt: skip


def ca_bundles_set(configuration: Obj) -> bool:
    """Whether the webhook has written its authority into every webhook of a configuration."""
    hooks = configuration.get("webhooks") or []
    return bool(hooks) and all(h.get("clientConfig", {}).get("caBundle") for h in hooks)
