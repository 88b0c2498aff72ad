"""The `kto` command: `main` dispatches each subcommand to the layer that owns it; `describe`
(what a cluster holds) and `plan` (a rebalance plan) read a cluster of either kind through
`clusters.connect`, so they live above it."""

from kafka_topic_operator.cli.main import main

__all__ = ["main"]
