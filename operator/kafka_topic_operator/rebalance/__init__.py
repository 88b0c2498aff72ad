"""Cluster-wide rebalancing: the cluster model, the exact lower bounds on moves, the goals and
the planners (pure), ahead of the Spark job and the KafkaRebalance resource."""
