"""The Kubernetes API client the operator's own calls use (kopf keeps its own): credentials as
kopf finds them, in-cluster first, else the kubeconfig."""

from __future__ import annotations

import os
import threading
from typing import Any

_lock = threading.Lock()
_loaded = False


def api_client(connections: int | None = None) -> Any:
    """A new `kubernetes.client.ApiClient` with the configuration loaded once per process;
    `connections`: how many threads use it at once (the client keeps four by default)."""
    import kubernetes

    _load()
    if connections is None:
        return kubernetes.client.ApiClient()
    configuration = kubernetes.client.Configuration.get_default_copy()
    configuration.connection_pool_maxsize = connections
    return kubernetes.client.ApiClient(configuration)


def credentials_problem() -> str | None:
    """Why no Kubernetes credentials can be found, if none can (checked once at start-up, so
    that `kto run` fails at once instead of retrying forever)."""
    import kubernetes

    try:
        _load()
    except kubernetes.config.ConfigException as e:
        return (
            f"no Kubernetes credentials: not in a pod with a service account, and no usable "
            f"kubeconfig (KUBECONFIG or ~/.kube/config): {e}"
        )
    return None


def _load() -> None:
    global _loaded
    import kubernetes

    config: Any = kubernetes.config
    with _lock:
        if not _loaded:
            try:
                config.load_incluster_config()
            except config.ConfigException:
                # KUBECONFIG read now: the client's own default froze it when it was imported.
                config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))
            _loaded = True
