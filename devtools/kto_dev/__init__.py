"""kto's development tools: the dev cluster (`cluster`, `kto dev-cluster`), `make demo` (`demo`),
the stand-in brokers of the digital twin (`devbroker`, `kto dev-broker`), and the launchers of
a real ZooKeeper (`zookeeper_server`) and real Apache Kafka (`apache_kafka`) that the dev cluster
and the tests share. Not part of the operator's image."""
