"""kafka-topic-operator: Kafka topics as Kubernetes resources, faithful to Kafka's controller."""

__version__ = "0.1.0"
