"""The Kafka-compatible controller: election, event queue, context and state machines over ZK."""
