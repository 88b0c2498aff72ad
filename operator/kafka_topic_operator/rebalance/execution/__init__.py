"""Carrying out an approved plan: the KafkaRebalance's states, each next step decided from what the
cluster shows, and the executor that writes it."""
