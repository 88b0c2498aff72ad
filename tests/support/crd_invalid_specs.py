"""The CRD tests' tables of invalid specs (tests/crds/), shared with the differential test that
sends each through kubectl to the API emulator and to a real kube-apiserver
(tests/kube_apiserver/test_differential.py)."""

from __future__ import annotations

from typing import Any

# KafkaTopic specs crds/kafkatopics.yaml refuses, and a part of the message each gets.
TOPIC_CRD_INVALID: list[tuple[dict[str, Any], str]] = [
    ({"partitions": 0, "replicas": 1}, "spec.partitions: Invalid value: 0: spec.partitions in "
     "body should be greater than or equal to 1"),
    ({"partitions": 1, "replicas": 0}, "should be greater than or equal to 1"),
    ({"partitions": 1, "replicas": 32768}, "should be less than or equal to 32767"),
    ({"partitions": 1}, "partitions and replicas are required unless replicaAssignment is "
     "given"),
    ({"partitions": 1, "replicas": 1, "topicName": "bad name"}, "spec.topicName in body "
     "should match '^[a-zA-Z0-9._-]+$'"),
    ({"partitions": 1, "replicas": 1, "topicName": ".."}, 'topic name cannot be "." or ".."'),
    ({"partitions": 1, "replicas": 1, "topicName": "x" * 250}, "may not be more than 249"),
    ({"partitions": 1, "replicas": 1, "rackAwareMode": "Sometimes"}, 'supported values: '
     '"Enforced", "Safe", "Disabled"'),
    ({"partitions": 1, "replicas": 1, "deletionPolicy": "Orphan"}, 'supported values: '
     '"Delete", "Retain"'),
    ({"partitions": 2, "replicaAssignment": [[1]]}, "replicaAssignment must have one entry "
     "per partition"),
    ({"replicas": 2, "replicaAssignment": [[1, 2], [1]]}, "every replicaAssignment entry "
     "must list `replicas` brokers"),
    ({"replicaAssignment": [[-1]]}, "should be greater than or equal to 0"),
    ({"replicaAssignment": [[]]}, "should have at least 1 items"),
    ({"partitions": "3", "replicas": 1}, 'spec.partitions: Invalid value: "string": '
     'spec.partitions in body must be of type integer: "string"'),
]  # fmt: skip

# The cross-field (CEL) rules: where the API server reports each and with what message; the model
# reports the same message at the same place.
REBALANCE_CRD_RULES: list[tuple[dict[str, Any], str, str]] = [
    ({"mode": "add-brokers"}, "spec",
     "brokers is required when mode is add-brokers or remove-brokers"),
    ({"mode": "remove-brokers"}, "spec",
     "brokers is required when mode is add-brokers or remove-brokers"),
    ({"brokers": [1]}, "spec",
     "brokers is only for add-brokers and remove-brokers: a full rebalance uses every broker"),
    ({"goals": ["RackAware", "ReplicaCapacity"]}, "spec",
     "maxReplicasPerBroker is required when goals include ReplicaCapacity"),
    ({"maxReplicasPerBroker": 100}, "spec",
     "maxReplicasPerBroker is only used by the ReplicaCapacity goal: add it to goals"),
    ({"engine": {"type": "kubernetes", "workDir": "/w", "master": "local[2]"}}, "spec.engine",
     "master is only used by the local engine"),
    ({"engine": {"volume": "plans"}}, "spec.engine",
     "volume is only mounted by the kubernetes and sparkApplication engines"),
    ({"engine": {"type": "kubernetes", "workDir": "plans", "volume": "plans"}}, "spec.engine",
     "workDir must be an absolute path when volume is set: the volume is mounted there"),
]  # fmt: skip

# KafkaRebalance specs crds/kafkarebalances.yaml refuses by its schema (enums and bounds), and a
# part of the message each gets.
REBALANCE_CRD_INVALID: list[tuple[dict[str, Any], str]] = [
    ({"mode": "rolling"}, 'spec.mode: Unsupported value: "rolling": supported values: '
     '"full", "add-brokers", "remove-brokers"'),
    ({"goals": ["CpuUsageDistribution"]}, 'spec.goals[0]: Unsupported value: '
     '"CpuUsageDistribution": supported values: "RackAware", "ReplicaCapacity", '
     '"ReplicaDistribution", "LeaderDistribution", "TopicReplicaDistribution", '
     '"DiskUsageDistribution"'),
    ({"goals": []}, "spec.goals in body should have at least 1 items"),
    ({"goals": ["RackAware", "LeaderDistribution", "RackAware"]},
     'spec.goals[2]: Duplicate value: "RackAware"'),
    ({"mode": "add-brokers", "brokers": [1, 2, 1]}, "spec.brokers[2]: Duplicate value: 1"),
    ({"mode": "add-brokers", "brokers": []}, "spec.brokers in body should have at least 1 "
     "items"),
    ({"mode": "add-brokers", "brokers": [-1]}, "spec.brokers[0] in body should be greater "
     "than or equal to 0"),
    ({"mode": "add-brokers", "brokers": [2147483648]}, "spec.brokers[0] in body should be "
     "less than or equal to 2147483647"),
    ({"goals": ["ReplicaCapacity"], "maxReplicasPerBroker": 0},
     "spec.maxReplicasPerBroker in body should be greater than or equal to 1"),
    ({"excludedTopics": ""}, "spec.excludedTopics in body should be at least 1 chars long"),
    ({"maxPartitionMovements": 0}, "spec.maxPartitionMovements in body should be greater "
     "than or equal to 1"),
    ({"concurrentPartitionMovementsPerBroker": 0}, "spec.concurrentPartitionMovementsPerBroker"
     " in body should be greater than or equal to 1"),
    ({"concurrentLeaderMovements": 0}, "spec.concurrentLeaderMovements in body should be "
     "greater than or equal to 1"),
    ({"replicationThrottle": -1}, "spec.replicationThrottle in body should be greater than "
     "or equal to 0"),
    ({"replicationThrottle": "10MB"}, "spec.replicationThrottle in body must be of type "
     'integer: "string"'),
    ({"engine": {"type": "spark"}}, 'spec.engine.type: Unsupported value: "spark": supported '
     'values: "local", "kubernetes", "sparkApplication"'),
    ({"engine": {"executors": 0}}, "spec.engine.executors in body should be greater than or "
     "equal to 1"),
    ({"engine": {"executorCores": 0}}, "spec.engine.executorCores in body should be greater "
     "than or equal to 1"),
    ({"engine": {"executorMemory": "2G"}}, "spec.engine.executorMemory in body should match"),
    ({"engine": {"driverMemory": "2048"}}, "spec.engine.driverMemory in body should match"),
    ({"engine": {"master": "yarn"}}, "spec.engine.master in body should match"),
    ({"engine": {"master": "local[0]"}}, "spec.engine.master in body should match"),
    ({"engine": {"serviceAccountName": "Spark_Driver"}}, "spec.engine.serviceAccountName in "
     "body should match"),
    ({"engine": {"type": "kubernetes", "workDir": "/w", "volume": "x" * 254}},
     "spec.engine.volume: Too long: may not be more than 253 bytes"),
    ({"partitionSizes": {}}, "spec.partitionSizes.configMap: Required value"),
    ({"partitionSizes": {"configMap": "Sizes"}}, "spec.partitionSizes.configMap in body "
     "should match"),
    ({"partitionSizes": {"configMap": "sizes", "key": "a/b"}}, "spec.partitionSizes.key in "
     "body should match"),
]  # fmt: skip
