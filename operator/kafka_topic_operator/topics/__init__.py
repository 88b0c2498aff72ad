"""KafkaTopic resources as the operator understands them: the spec parsed and checked against
Kafka's rules (pure), ahead of any I/O."""
