"""The controller's settings: the broker settings Kafka's controller reads (`delete.topic.enable`,
`unclean.leader.election.enable`, `auto.leader.rebalance.enable` and its interval and
threshold), and how it reaches ZooKeeper."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_topic_operator.zk.client import ZkCredentials
from kafka_topic_operator.zk.tls import ZkTls

FAILOVER_AUTO_REBALANCE_DELAY = 5.0
"""Kafka schedules the first automatic preferred leader election 5 s after failover."""


@dataclass(frozen=True)
class ControllerConfig:
    zookeeper: str
    broker_id: int = 0
    delete_topic_enable: bool = True
    unclean_leader_election_enable: bool = False
    auto_leader_rebalance_enable: bool = True
    leader_imbalance_check_interval: float = 300.0
    leader_imbalance_per_broker_percentage: int = 10
    first_auto_rebalance_delay: float = FAILOVER_AUTO_REBALANCE_DELAY
    session_timeout: float = 10.0
    credentials: ZkCredentials | None = None
    secure_acls: bool = False
    tls: ZkTls | None = None
