"""One object per kind of Kafka cluster the operator reaches (`cluster.Cluster`): a ZooKeeper-mode
cluster through its ZooKeeper (`zookeeper_mode`), a KRaft cluster through its brokers' Admin API
(`kraft`). Each owns its clients and hands out what the rest needs: the reconciler's topic
backend, the status follower, the health check, snapshots (`kto describe`, `kto plan`) and the
rebalance cluster. `connect` turns the command line's flags into one of them."""
