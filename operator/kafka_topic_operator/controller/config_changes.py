"""Config change notifications as the controller's own broker follows them
(ZkNodeChangeNotificationListener with ZkConfigManager's handlers): a topic config that enables
unclean leader election, or a dynamic broker default that does, has the controller elect leaders
for offline partitions. Notifications older than 15 minutes are purged by the active controller.
"""

from __future__ import annotations

import logging
import re
import time

from kafka_topic_operator.controller.parts import ControllerManager, ControllerParts
from kafka_topic_operator.controller.zk_reads import read_topic_configs
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import Delete
from kafka_topic_operator.zk.znodes import ZNodeDataError

log = logging.getLogger(__name__)

UNCLEAN_KEY = "unclean.leader.election.enable"
BROKER_DEFAULT_ENTITY = "<default>"
"""The entity name of cluster-wide dynamic broker configs (ZooKeeperInternals.DEFAULT_STRING)."""

CONFIG_CHANGE_EXPIRATION_MS = 15 * 60 * 1000
"""ZkNodeChangeNotificationListener's changeExpirationMs: older config change notifications are
purged."""

_CHANGE_NUMBER = re.compile(r"[+-]?[0-9]+")


class ConfigChanges(ControllerManager):
    def __init__(self, parts: ControllerParts) -> None:
        super().__init__(parts)
        # ZkNodeChangeNotificationListener.lastExecutedChange: kept for the process's life, so
        # a new session or a failover reprocesses nothing.
        self.last_change = -1

    def process_config_changes(self) -> None:
        """ZkNodeChangeNotificationListener.processNotifications with ZkConfigManager's handler,
        as the controller's own broker runs them: each notification newer than the last one
        processed names an entity whose config is read; a topic config that enables unclean
        leader election has the controller elect leaders for the topic's offline partitions
        (TopicConfigHandler.processConfigChanges, processTopicUncleanLeaderElectionEnable).
        Then notifications older than 15 minutes are purged."""
        path = znodes.CONFIG_CHANGES_PATH
        names = sorted(self.zk.children(path, watch=self.watches.on_config_changes) or [])
        if not names:
            return
        now = time.time() * 1000
        prefix = znodes.CONFIG_CHANGE_PREFIX
        for name in names:
            number = name[len(prefix) :] if name.startswith(prefix) else name
            if _CHANGE_NUMBER.fullmatch(number) is None:
                # Kafka's toLong throws and the whole pass ends there, purge included.
                log.error(
                    "Error while processing notification change for path = %s: bad name %s",
                    path,
                    name,
                )
                return
            change = int(number)
            if change > self.last_change:
                self._process_config_change(f"{path}/{name}")
                self.last_change = change
        self._purge_config_changes(now, [f"{path}/{n}" for n in names])

    def _process_config_change(self, path: str) -> None:
        node = self.zk.get(path)
        if node is None:
            log.warning("read null data from %s", path)
            return
        try:
            change = znodes.decode_config_change(path, node.data)
        except znodes.ZNodeDataError as e:
            log.error("error processing change notification from %s: %s", path, e)
            return
        if change.entity_type == znodes.ConfigType.BROKER and change.entity_name in (
            str(self.broker_id),
            BROKER_DEFAULT_ENTITY,
        ):
            self.reconfigure_unclean_default()
            return
        topic = change.entity_name
        if change.entity_type != znodes.ConfigType.TOPIC or topic is None:
            return  # no other entity's config matters to the controller
        config = read_topic_configs(self.zk, [topic]).get(topic, {})
        log.info("Processing override for entityPath: %s with config: %s", change.entity_path,
                 config)  # fmt: skip
        # Scala's toBoolean: "true" in any case; anything else (or nothing) is false.
        if config.get("unclean.leader.election.enable", "").lower() == "true" and self.is_active():
            log.info("Unclean leader election has been enabled for topic %s", topic)
            self.partition_sm.trigger_online_partition_state_change(
                self.ctx.partitions_for_topic(topic)
            )

    def dynamic_unclean_default(self) -> bool:
        """`unclean.leader.election.enable` as DynamicBrokerConfig resolves it for this broker:
        its own dynamic override, else the cluster-wide `<default>`, else the static setting.
        A value that is not a boolean is refused, as Kafka refuses the update: the current
        default stays."""
        for entity in (str(self.broker_id), BROKER_DEFAULT_ENTITY):
            node = self.zk.get(znodes.config_entity_path(znodes.ConfigType.BROKER, entity))
            if node is None:
                continue
            try:
                value = znodes.decode_config(node.path, node.data).get(UNCLEAN_KEY)
            except ZNodeDataError as e:
                log.error("Cannot read dynamic broker config: %s", e)
                continue
            if value is None:
                continue
            if value.lower() not in ("true", "false"):
                log.error("Invalid value %s for configuration %s in %s", value, UNCLEAN_KEY,
                          node.path)  # fmt: skip
                return self.partition_sm.unclean_default
            return value.lower() == "true"
        return self.config.unclean_leader_election_enable

    def reconfigure_unclean_default(self) -> None:
        """DynamicLogConfig.reconfigure: turned on, the controller elects leaders for every
        offline partition (processUncleanLeaderElectionEnable)."""
        before = self.partition_sm.unclean_default
        after = self.partition_sm.unclean_default = self.dynamic_unclean_default()
        if after and not before and self.is_active():
            log.info("Unclean leader election has been enabled by default")
            self.partition_sm.trigger_online_partition_state_change()

    def _purge_config_changes(self, now: float, paths: list[str]) -> None:
        """purgeObsoleteNotifications. A notification is never changed, so its mtime is its
        creation time. Only the active controller purges here, its deletes fenced."""
        if not self.is_active():
            return
        expired = [
            node.path
            for node in self.zk.get_many(paths)
            if node is not None and now - node.mtime > CONFIG_CHANGE_EXPIRATION_MS
        ]
        for path in expired:
            log.debug("Purging change notification %s", path)
        self.writer.apply_each([Delete(p) for p in expired])  # one already gone is fine
