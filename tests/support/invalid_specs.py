"""Invalid KafkaTopic specs and the precise InvalidSpec message each must get (a corpus shared
by the pure tests and the ZooKeeper tests that check nothing is written)."""

from __future__ import annotations

from typing import Any

BASE: dict[str, Any] = {"partitions": 3, "replicas": 2}

INVALID: list[tuple[str, dict[str, Any], str]] = [
    # counts
    ("orders", {"partitions": 3}, "spec: partitions and replicas are required unless "
     "replicaAssignment is given"),
    ("orders", {"replicas": 3}, "spec: partitions and replicas are required"),
    ("orders", {}, "spec: partitions and replicas are required"),
    ("orders", {"partitions": 0, "replicas": 1}, "spec.partitions: Input should be greater than "
     "or equal to 1"),
    ("orders", {"partitions": -4, "replicas": 1}, "spec.partitions: Input should be greater"),
    ("orders", {"partitions": 2**31, "replicas": 1}, "spec.partitions: Input should be less than "
     "or equal to 2147483647"),
    ("orders", {"partitions": 1, "replicas": 0}, "spec.replicas: Input should be greater than or "
     "equal to 1"),
    ("orders", {"partitions": 1, "replicas": 32768}, "spec.replicas: Input should be less than or "
     "equal to 32767"),
    ("orders", {"partitions": "3", "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": 3.5, "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": True, "replicas": 1}, "spec.partitions: Input should be a valid "
     "integer"),
    ("orders", {"partitions": 1, "replicas": None}, "spec: partitions and replicas are required"),
    ("orders", {**BASE, "color": "red"}, "spec.color: Extra inputs are not permitted"),
    # names
    ("orders", {**BASE, "topicName": "a b"}, "spec.topicName: Topic name is invalid: 'a b' "
     "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"),
    ("orders", {**BASE, "topicName": ""}, "spec.topicName: Topic name is invalid: the empty "
     "string is not allowed"),
    ("orders", {**BASE, "topicName": "."}, "spec.topicName: Topic name is invalid: '.' is not "
     "allowed"),
    ("orders", {**BASE, "topicName": ".."}, "spec.topicName: Topic name is invalid: '..' is not "
     "allowed"),
    ("orders", {**BASE, "topicName": "t" * 250}, "the max allowed length 249"),
    ("orders", {**BASE, "topicName": "caf\u00e9"}, "contains one or more characters other than"),
    ("orders", {**BASE, "topicName": "a/b"}, "contains one or more characters other than"),
    ("orders", {**BASE, "topicName": 7}, "spec.topicName: Input should be a valid string"),
    ("x" * 250, BASE, "metadata.name: Topic name is invalid: the length of"),
    # placement
    ("orders", {"replicaAssignment": []}, "spec.replicaAssignment: at least one partition is "
     "required"),
    ("orders", {"replicaAssignment": [[]]}, "spec.replicaAssignment: Cannot have replication "
     "factor of 0 for partition id 0."),
    ("orders", {"replicaAssignment": [[1, 1]]}, "spec.replicaAssignment: Duplicate brokers not "
     "allowed in replica assignment: 1, 1 for partition id 0."),
    ("orders", {"replicaAssignment": [[1, 2], [3, 3]]}, "Duplicate brokers not allowed in "
     "replica assignment: 3, 3 for partition id 1."),
    ("orders", {"replicaAssignment": [[1, 2], [3]]}, "spec.replicaAssignment: Inconsistent "
     "replication factor between partitions, partition 0 has 2 while partitions [1] have "
     "replication factors [1], respectively."),
    ("orders", {"replicaAssignment": [[1, 2]], "replicas": 3}, "partition 0 has 3 while "
     "partitions [0] have replication factors [2]"),
    ("orders", {"replicaAssignment": [[1, 2]], "partitions": 2}, "spec.replicaAssignment: 1 "
     "partitions listed but spec.partitions is 2"),
    ("orders", {"replicaAssignment": [[-1]]}, "spec.replicaAssignment: Broker ids must be "
     "non-negative, partition id 0 has -1."),
    ("orders", {"replicaAssignment": [["1"]]}, "spec.replicaAssignment.0.0: Input should be a "
     "valid integer"),
    ("orders", {"replicaAssignment": [1, 2]}, "spec.replicaAssignment.0: Input should be a valid "
     "list"),
    ("orders", {"replicaAssignment": "1:2,2:3"}, "spec.replicaAssignment: Input should be a valid "
     "list"),
    # modes
    ("orders", {**BASE, "rackAwareMode": "Maybe"}, "spec.rackAwareMode: Input should be "
     "'Enforced', 'Safe' or 'Disabled'"),
    ("orders", {**BASE, "rackAwareMode": "enforced"}, "spec.rackAwareMode: Input should be"),
    ("orders", {**BASE, "deletionPolicy": "Orphan"}, "spec.deletionPolicy: Input should be "
     "'Delete' or 'Retain'"),
    # configs, with Kafka's own messages
    ("orders", {**BASE, "config": {"retention.mss": 1}}, "spec.config: Unknown topic config "
     "name: retention.mss (did you mean retention.ms?)"),
    ("orders", {**BASE, "config": {"cleanup.polcy": "delete"}}, "spec.config: Unknown topic "
     "config name: cleanup.polcy (did you mean cleanup.policy?)"),
    ("orders", {**BASE, "config": {"retention.ms": "abc"}}, "spec.config: Invalid value abc for "
     "configuration retention.ms: Not a number of type LONG"),
    ("orders", {**BASE, "config": {"retention.ms": True}}, "spec.config: Invalid value true for "
     "configuration retention.ms: Expected value to be a 64-bit integer, but it was a "
     "java.lang.Boolean"),
    ("orders", {**BASE, "config": {"retention.ms": 1.5}}, "spec.config.retention.ms: a config "
     "value must be a string, an integer or a boolean, not a number with a fraction"),
    ("orders", {**BASE, "config": {"retention.ms": None}}, "spec.config.retention.ms: a config "
     "value must be a string, an integer or a boolean, not null"),
    ("orders", {**BASE, "config": {"cleanup.policy": ["compact"]}}, "not a list"),
    ("orders", {**BASE, "config": {"cleanup.policy": "zap"}}, "spec.config: Invalid value zap "
     "for configuration cleanup.policy: String must be one of: compact, delete"),
    ("orders", {**BASE, "config": {"min.insync.replicas": 0}}, "spec.config: Invalid value 0 for "
     "configuration min.insync.replicas: Value must be at least 1"),
    ("orders", {**BASE, "config": {"unclean.leader.election.enable": "yes"}}, "Invalid value yes "
     "for configuration unclean.leader.election.enable: Expected value to be either true or "
     "false"),
    ("orders", {**BASE, "config": {"compression.type": "brotli"}}, "Invalid value brotli for "
     "configuration compression.type: String must be one of: uncompressed, zstd, lz4, snappy, "
     "gzip, producer"),
    ("orders", {**BASE, "config": {"max.message.bytes": -1}}, "Invalid value -1 for "
     "configuration max.message.bytes: Value must be at least 0"),
    ("orders", {**BASE, "config": {"segment.bytes": 10}}, "Invalid value 10 for configuration "
     "segment.bytes: Value must be at least 14"),
    ("orders", {**BASE, "config": "retention.ms=1"}, "spec.config: Input should be a valid "
     "dictionary"),
    # more configs, each with Kafka's validator message
    ("t", {**BASE, "config": {"retention.bytes": "lots"}}, "Invalid value lots for configuration "
     "retention.bytes: Not a number of type LONG"),
    ("t", {**BASE, "config": {"segment.ms": 0}}, "Invalid value 0 for configuration segment.ms: "
     "Value must be at least 1"),
    ("t", {**BASE, "config": {"segment.index.bytes": 3}}, "Invalid value 3 for configuration "
     "segment.index.bytes: Value must be at least 4"),
    ("t", {**BASE, "config": {"flush.messages": 0}}, "Invalid value 0 for configuration "
     "flush.messages: Value must be at least 1"),
    ("t", {**BASE, "config": {"flush.ms": -1}}, "Invalid value -1 for configuration flush.ms: "
     "Value must be at least 0"),
    ("t", {**BASE, "config": {"min.cleanable.dirty.ratio": "2"}}, "Invalid value 2.0 for "
     "configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("t", {**BASE, "config": {"message.timestamp.type": "Now"}}, "Invalid value Now for "
     "configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime"),
    ("t", {**BASE, "config": {"message.downconversion.enable": "maybe"}}, "Invalid value maybe "
     "for configuration message.downconversion.enable: Expected value to be either true or "
     "false"),
    ("t", {**BASE, "config": {"preallocate": 1}}, "Invalid value 1 for configuration "
     "preallocate: Expected value to be either true or false"),
    ("t", {**BASE, "config": {"index.interval.bytes": -5}}, "Invalid value -5 for configuration "
     "index.interval.bytes: Value must be at least 0"),
    ("t", {**BASE, "config": {"delete.retention.ms": -1}}, "Invalid value -1 for configuration "
     "delete.retention.ms: Value must be at least 0"),
    ("t", {**BASE, "config": {"file.delete.delay.ms": -1}}, "Invalid value -1 for configuration "
     "file.delete.delay.ms: Value must be at least 0"),
    ("t", {**BASE, "config": {"max.compaction.lag.ms": 0}}, "Invalid value 0 for configuration "
     "max.compaction.lag.ms: Value must be at least 1"),
    ("t", {**BASE, "config": {"min.compaction.lag.ms": -1}}, "Invalid value -1 for "
     "configuration min.compaction.lag.ms: Value must be at least 0"),
    ("t", {**BASE, "config": {"segment.jitter.ms": -1}}, "Invalid value -1 for configuration "
     "segment.jitter.ms: Value must be at least 0"),
    ("t", {**BASE, "config": {"local.retention.ms": -3}}, "Invalid value -3 for configuration "
     "local.retention.ms: Value must be at least -2"),
    ("t", {**BASE, "config": {"local.retention.bytes": -3}}, "Invalid value -3 for "
     "configuration local.retention.bytes: Value must be at least -2"),
    ("t", {**BASE, "config": {"remote.storage.enable": "on"}}, "Invalid value on for "
     "configuration remote.storage.enable: Expected value to be either true or false"),
    ("t", {**BASE, "config": {"cleanup.policy": "compact,zap"}}, "Invalid value zap for "
     "configuration cleanup.policy: String must be one of: compact, delete"),
    ("t", {**BASE, "config": {"compression.type": ""}}, "Invalid value  for configuration "
     "compression.type: String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("t", {**BASE, "config": {"follower.replication.throttled.replicas": "x"}}, "Invalid value "
     "[x] for configuration follower.replication.throttled.replicas: "
     "follower.replication.throttled.replicas must be the literal '*' or a "
     "list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:"
     "[brokerId],..."),
    ("t", {**BASE, "config": {"leader.replication.throttled.replicas": "0-1"}}, "Invalid value "
     "[0-1] for configuration leader.replication.throttled.replicas: "
     "leader.replication.throttled.replicas must be the literal '*'"),
    ("t", {**BASE, "config": {"message.timestamp.difference.max.ms": -1}}, "Invalid value -1 for "
     "configuration message.timestamp.difference.max.ms: Value must be at least 0"),
    ("t", {**BASE, "config": {"min.insync.replicas": "one"}}, "Invalid value one for "
     "configuration min.insync.replicas: Not a number of type INT"),
    ("t", {**BASE, "config": {"max.message.bytes": "1MB"}}, "Invalid value 1MB for "
     "configuration max.message.bytes: Not a number of type INT"),
    ("t", {**BASE, "config": {"retention.ms": -2}}, "Invalid value -2 for configuration "
     "retention.ms: Value must be at least -1"),
    ("t", {**BASE, "config": {"segment.bytes": "2GB"}}, "Invalid value 2GB for configuration "
     "segment.bytes: Not a number of type INT"),
    ("t", {**BASE, "config": {"message.format.version": "3.7"}}, "Invalid value 3.7 for "
     "configuration message.format.version: Version 3.7 is not a valid version"),
    ("t", {**BASE, "config": {"unclean.leader.election.enable": 1}}, "Invalid value 1 for "
     "configuration unclean.leader.election.enable: Expected value to be either true or false"),
    ("t", {**BASE, "config": {"": 1}}, "spec.config: Unknown topic config name: "),
    ("t", {**BASE, "config": {"retention.ms": {"value": 1}}}, "spec.config.retention.ms: a config "
     "value must be a string, an integer or a boolean, not an object"),
    ("t", {**BASE, "config": None}, "spec.config: Input should be a valid dictionary"),
    # more types and placements
    ("t", {"replicaAssignment": [[1.5]]}, "spec.replicaAssignment.0.0: Input should be a valid "
     "integer"),
    ("t", {"replicaAssignment": [[True]]}, "spec.replicaAssignment.0.0: Input should be a valid "
     "integer"),
    ("t", {"replicaAssignment": [[1, None]]}, "spec.replicaAssignment.0.1: Input should be a "
     "valid integer"),
    ("t", {"partitions": None, "replicas": 1}, "spec: partitions and replicas are required"),
    ("t", {"partitions": 1, "replicas": "3"}, "spec.replicas: Input should be a valid integer"),
    ("t", {"partitions": 1, "replicas": 2.0}, "spec.replicas: Input should be a valid integer"),
    ("t", {**BASE, "topicName": "a" * 249 + "b"}, "is longer than the max allowed length 249"),
    ("t", {**BASE, "topicName": "orders topic"}, "spec.topicName: Topic name is invalid: 'orders "
     "topic' contains one or more characters other than ASCII alphanumerics"),
    ("t", {**BASE, "topicName": "orders\n"}, "contains one or more characters other than ASCII"),
    ("t", {**BASE, "rackAwareMode": None}, "spec.rackAwareMode: Input should be 'Enforced', "
     "'Safe' or 'Disabled'"),
    ("t", {**BASE, "deletionPolicy": "delete"}, "spec.deletionPolicy: Input should be 'Delete' or "
     "'Retain'"),
    ("t", {"partitions": 1, "replicas": 2, "replicaAssignment": [[0]]}, "spec.replicaAssignment: "
     "Inconsistent replication factor between partitions, partition 0 has 2 while partitions [0] "
     "have replication factors [1], respectively."),
    ("t", {"replicaAssignment": [[0, 1], [1, 0], [0]]}, "partition 0 has 2 while partitions [2] "
     "have replication factors [1], respectively."),
]  # fmt: skip
