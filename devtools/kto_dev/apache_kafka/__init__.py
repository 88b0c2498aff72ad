"""Apache Kafka itself: its jars fetched through Maven, and real brokers started from them."""
