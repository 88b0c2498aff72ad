"""The `kto` command: `main` dispatches each subcommand to the layer that owns it; `describe`
(what a cluster holds, read from ZooKeeper) is the one command with no other home."""

from kafka_topic_operator.cli.main import main

__all__ = ["main"]
