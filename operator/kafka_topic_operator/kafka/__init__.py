"""Kafka's topic semantics as pure functions: names, configs, assignment, states, elections,
reassignment, deletion rules and the clients' view of partitions. No I/O lives here."""
