"""Kafka's ZooKeeper layout: znode paths and JSON codecs (`znodes`), and later the kazoo facade."""
