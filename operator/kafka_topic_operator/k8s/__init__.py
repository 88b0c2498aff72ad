"""Kubernetes: the KafkaTopic handlers (kopf) and `kto run`."""
