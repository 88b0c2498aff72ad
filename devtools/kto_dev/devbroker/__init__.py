"""The dev broker: a stand-in for a ZooKeeper-mode Kafka broker that registers in /brokers/ids,
answers the controller's requests with real partition directories, and shuts down under control."""
