"""An in-process Kubernetes API server emulator that kopf, the kubernetes client and kubectl
work against: indexed store, watches, CRDs with structural schemas and CEL rules, finalizers.

No kube-apiserver can run where this project is developed and tested, so this stands in for one
in end-to-end tests, benchmarks and the embedded dev cluster.
"""

from __future__ import annotations

from .cluster import Cluster
from .server import ApiServer, kubeconfig, serve, write_kubeconfig

__all__ = ["ApiServer", "Cluster", "kubeconfig", "serve", "write_kubeconfig"]
