"""The Admin API backend: a KRaft cluster (Kafka 4.x) reached through its brokers with
kafka-python, for the reconciler (`topics.backend.TopicBackend`).

Every write carries what the operator decided (explicit assignments, the whole dynamic config),
as the ZooKeeper backend writes them; Kafka's controller validates it again and answers with its
own errors, raised as the project's exceptions (`kafka.errors`) with Kafka's messages. The
cluster not answering within `timeout` (no broker reachable, requests timing out, the controller
moving) raises ClusterUnavailableError, and the next call connects afresh.

Each backend has one kafka-python client, which every thread using that backend shares; a lock
lets one call use it at a time, and is not held while `wait_for_partitions` waits. The status
follower reads through a backend of its own (`clusters.kraft`), never queued behind the
reconciler's batches; the two share a `ReadLog`, so that the follower can tell its reads from
the reconciler's.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeVar

import kafka.errors as kafka_python_errors
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.net.compat import KafkaNetClient
from kafka.structs import TopicPartition as KafkaTopicPartition

from kafka_topic_operator.kafka.errors import (
    ClusterUnavailableError,
    ReassignmentInProgressException,
)
from kafka_topic_operator.kafka.new_topic import NewTopic, within_record_limit
from kafka_topic_operator.kafka.reassignment import ReplicaAssignment
from kafka_topic_operator.kafka.snapshot import ClusterSnapshot, Expected
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.kafka_admin import errors
from kafka_topic_operator.kafka_admin.configs import (
    ConfigKind,
    alter_resources,
    describe_resources,
    own_configs,
)
from kafka_topic_operator.kafka_admin.connection import KafkaConnection
from kafka_topic_operator.kafka_admin.follow import ReadLog
from kafka_topic_operator.kafka_admin.recent_moves import RecentMoves
from kafka_topic_operator.kafka_admin.snapshot import (
    cluster_snapshot,
    dynamic_topic_config,
    listed_targets,
    reassignments_around,
    replicas_changed,
)
from kafka_topic_operator.topics.backend import TopicBackend

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT: Final = 10.0
CLIENT_ID: Final = "kafka-topic-operator"
# The client waits a little longer than the broker is told to, so that the broker's own
# timeout error, not a lost connection, says that an operation took too long.
CLIENT_MARGIN: Final = 2.0
PREFERRED: Final = 0  # ElectionType.PREFERRED
ELECTION_NOT_NEEDED: Final = 84


class KafkaAdminBackend:
    def __init__(
        self,
        connection: KafkaConnection,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        reads: ReadLog | None = None,
    ) -> None:
        """`reads`: where reads are numbered and remembered, shared with the other clients of
        the same cluster (the status follower's); a log of its own by default."""
        if timeout <= 0:
            raise ValueError(f"timeout {timeout} is not positive")
        self.connection = connection
        self.timeout = timeout
        self.reads = reads if reads is not None else ReadLog()
        self._io = threading.Lock()  # the client, one call at a time
        self._admin: Any = None
        self._closed = False
        self._moves = RecentMoves()  # under the client's lock

    # ---- TopicBackend ------------------------------------------------------------------------

    @property
    def where(self) -> str:
        return f"Kafka at {self.connection.bootstrap}"

    @property
    def unavailable_reason(self) -> str:
        return "KafkaUnavailable"

    @property
    def deletion_is_marked(self) -> bool:
        return False

    def position(self) -> int:
        """The number of reads begun (by any client sharing its `reads`): a later read has a
        higher position."""
        return self.reads.position()

    def read(
        self,
        topics: Iterable[str],
        *,
        list_topics: bool,
        expected: Expected | None = None,
        configs: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        """Six requests whatever is asked: the quorum (the active controller), the brokers,
        the reassignments in progress before and after the topics' metadata (every topic's with
        `list_topics`), and the topics' configs (but for those whose own configs are given in
        `configs`, known already: describing configs is most of a read's cost). A move this
        backend asked for or saw listed that a broker does not yet show ended reads as in
        progress (`recent_moves`). `expected` saves nothing here: Kafka answers each request in
        full."""
        del expected
        named = sorted(set(topics))
        known = dict(configs or {})
        return self._call(
            lambda admin: self._read(admin, named, list_topics, known), idempotent=True
        )

    def topic_names(self) -> list[str]:
        return sorted(self._call(lambda admin: admin.list_topics(), idempotent=True))

    def create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        """CreateTopics requests for all of them, each with its assignment and config (a topic
        id cannot be given: Kafka's controller assigns it), as few as keep each under the
        controller's record limit (`within_record_limit`). A topic whose creation timed out
        (the request, or Kafka's own REQUEST_TIMED_OUT for it) is looked for afterwards: one the
        controller committed meanwhile, with the partitions asked for, was created."""
        outcomes: dict[str, Exception | None] = {}
        lost: ClusterUnavailableError | None = None  # a request without an answer
        for batch in within_record_limit(topics):
            try:
                outcomes.update(self._create_topics(batch))
            except ClusterUnavailableError as e:
                lost = lost or e
                outcomes.update(dict.fromkeys((t.name for t in batch), e))
        timed_out = [t for t in topics if isinstance(outcomes[t.name], ClusterUnavailableError)]
        if timed_out:
            outcomes.update(self._committed(timed_out))
        if lost is not None and all(outcomes[t.name] is lost for t in topics):
            raise lost  # nothing answered, nothing found created: the cluster is away
        return outcomes

    def _create_topics(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        request = {
            t.name: {
                "assignments": {p: list(r) for p, r in sorted(t.assignment.items())},
                "configs": dict(t.config),
            }
            for t in topics
        }
        response = self._call(
            lambda admin: admin.create_topics(
                request, timeout_ms=self._operation_ms, raise_errors=False
            )
        )
        answered = {t["name"]: t for t in response.get("topics") or ()}
        outcomes: dict[str, Exception | None] = {}
        for topic in topics:
            found = answered.get(topic.name)
            if found is None:
                outcomes[topic.name] = ClusterUnavailableError(
                    f"{self.where} did not say whether it created topic '{topic.name}'"
                )
                continue
            outcomes[topic.name] = errors.from_code(
                int(found.get("error_code") or 0), found.get("error_message"), where=self.where
            )
        return outcomes

    def _committed(self, topics: Sequence[NewTopic]) -> dict[str, Exception | None]:
        """None for each of `topics` the cluster has with the partitions asked for within the
        timeout (a broker learns a committed topic a moment after the controller: it is asked
        again until then); the others keep their errors (all, if the cluster does not answer)."""
        deadline = time.monotonic() + self.timeout
        step = 0.1
        created: list[str] = []
        while True:
            try:
                described = self._call(
                    functools.partial(_describe_topics, sorted(t.name for t in topics)),
                    idempotent=True,
                )
            except ClusterUnavailableError:
                break
            partitions = {
                t["name"]: {int(p["partition_index"]) for p in t.get("partitions") or ()}
                for t in described
                if not t.get("error_code")
            }
            created = [t.name for t in topics if partitions.get(t.name) == set(t.assignment)]
            if len(created) == len(topics) or time.monotonic() + step > deadline:
                break
            time.sleep(step)  # nothing to wait on: the brokers' metadata is asked for again
            step = min(step * 2, 1.0)
        if created:
            log.info("the creation of %d topics timed out but Kafka's controller committed it: "
                     "%s", len(created), ", ".join(created[:5]))  # fmt: skip
        return dict.fromkeys(created)

    def change_config(self, topic: str, config: Mapping[str, str]) -> None:
        """One IncrementalAlterConfigs: SET what differs, DELETE the dynamic keys not in
        `config`. (What is set is read first, so a change made by someone else between the two
        requests may stay; the status follower sees it and reports it.)"""
        current = self._dynamic_config(topic)
        operations: dict[str, Any] = {k: v for k, v in config.items() if current.get(k) != v}
        operations.update({k: ("DELETE", None) for k in current if k not in config})
        resource = ConfigResource(ConfigResourceType.TOPIC, topic, operations)
        # Kafka validates the keys and values itself (raise_on_unknown would ask it first
        # which keys exist, and answer with a ValueError of kafka-python's own).
        results = self._call(
            lambda admin: admin.alter_configs([resource], raise_on_unknown=False, incremental=True)
        )
        outcome = (results.get("topic") or {}).get(topic)
        if outcome is None:
            raise ClusterUnavailableError(f"{self.where} did not answer about topic '{topic}'")
        error = errors.from_result_string(str(outcome), where=self.where)
        if error is not None:
            raise error

    def add_partitions(self, topic: str, new: Mapping[int, Sequence[int]]) -> None:
        """CreatePartitions with the new partitions' replicas, in partition order; the count is
        the highest new partition's plus one (Kafka checks the new ones follow the current)."""
        if not new:
            return
        request = {
            topic: {"count": max(new) + 1, "assignments": [list(new[p]) for p in sorted(new)]}
        }
        response = self._call(
            lambda admin: admin.create_partitions(
                request, timeout_ms=self._operation_ms, raise_errors=False
            )
        )
        for result in response.results:
            error = errors.from_code(result.error_code, result.error_message, where=self.where)
            if error is not None:
                raise error

    def reassign(
        self,
        targets: Mapping[TopicPartition, Sequence[int]],
        expected: Mapping[TopicPartition, Sequence[int]] | None = None,
    ) -> None:
        """AlterPartitionReassignments. KRaft would replace a reassignment in progress with
        the new target; like the ZooKeeper backend this refuses instead, so one is never cut
        short. With `expected`, it also refuses when a partition's replicas are no longer
        those the targets were planned from: a reassignment that ended (or began and ended)
        since they were read would otherwise be undone, or a read that caught one in the middle
        would be taken for the topic's replication factor."""
        if not targets:
            return
        asked = {KafkaTopicPartition(tp.topic, tp.partition): list(r) for tp, r in targets.items()}

        def alter(admin: Any) -> dict[Any, Any]:
            running = admin.list_partition_reassignments(list(asked), timeout_ms=self._operation_ms)
            if running:
                topics = sorted({tp.topic for tp in running})
                raise ReassignmentInProgressException(
                    f"A partition reassignment is in progress for the topic '{topics[0]}'."
                    if len(topics) == 1
                    else "There is an existing assignment running."
                )
            if expected:
                described = admin.describe_topics(sorted({tp.topic for tp in expected}))
                unfinished = self._moves.unfinished(described, (), time.monotonic())
                if changed := sorted(
                    {*replicas_changed(described, expected), *(set(unfinished) & set(expected))}
                ):
                    raise ReassignmentInProgressException(
                        f"The replicas of {', '.join(map(str, changed))} changed since they were "
                        "read: a partition reassignment ended meanwhile."
                    )
            result: dict[Any, Any] = admin.alter_partition_reassignments(
                asked, timeout_ms=self._operation_ms
            )
            self._moves.saw(
                {tp: r for tp, r in targets.items() if tp in result and result[tp] is None},
                time.monotonic(),
            )
            return result

        results = self._call(alter)
        for tp, error_type in sorted(results.items()):
            if error_type is None:
                continue
            # kafka-python keeps each partition's error code but drops Kafka's message.
            code = int(getattr(error_type, "errno", None) or -1)
            message = f"Reassigning {tp.topic}-{tp.partition}: {errors.description(code)}"
            error = errors.from_code(code, message, where=self.where)
            if error is not None:
                raise error

    def delete_topic(self, topic: str) -> None:
        response = self._call(
            lambda admin: admin.delete_topics(
                [topic], timeout_ms=self._operation_ms, raise_errors=False
            )
        )
        for result in response.get("topics") or ():
            error = errors.from_code(
                int(result.get("error_code") or 0), result.get("error_message"), where=self.where
            )
            if error is not None:
                raise error

    def topic_exists(self, topic: str) -> bool:
        described = self._call(lambda admin: admin.describe_topics([topic]), idempotent=True)
        return any(t.get("name") == topic and not t.get("error_code") for t in described)

    def deletion_requested(self, topic: str) -> bool:
        """Always False: a KRaft controller deletes a topic at once, with no pending marker."""
        return False

    def wait_for_partitions(
        self, partitions: Collection[TopicPartition], limit: float, idle: float
    ) -> bool:
        """Polls the topics' metadata (nothing can be watched) until every partition has a
        leader state, at most `limit` seconds and as long as one more appears every `idle`
        seconds."""
        missing = set(partitions)
        if not missing:
            return True
        deadline = time.monotonic() + limit
        stalled_at = time.monotonic() + idle
        step = 0.02
        while True:
            described = self._call(
                functools.partial(_describe_topics, sorted({tp.topic for tp in missing})),
                idempotent=True,
            )
            present = {
                TopicPartition(t["name"], int(p["partition_index"]))
                for t in described
                if not t.get("error_code")
                for p in t.get("partitions") or ()
            }
            if missing & present:
                missing -= present
                stalled_at = time.monotonic() + idle
            if not missing:
                return True
            now = time.monotonic()
            if now >= deadline or now >= stalled_at:
                return False
            time.sleep(min(step, deadline - now, stalled_at - now))
            step = min(step * 2, 0.25)

    # ---- beyond the protocol -----------------------------------------------------------------

    def elect_preferred(
        self, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, Exception | None]:
        """A preferred leader election for each partition: None where the preferred replica
        leads now (also where it did already), else what Kafka answered."""
        by_topic: dict[str, list[int]] = {}
        for tp in partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        if not by_topic:
            return {}
        response = self._call(
            lambda admin: admin.elect_leaders(
                PREFERRED, by_topic, timeout_ms=self._operation_ms, raise_errors=False
            )
        )
        top = errors.from_code(int(getattr(response, "error_code", 0) or 0), None, where=self.where)
        if top is not None:
            raise top
        outcomes: dict[TopicPartition, Exception | None] = {}
        for result in response.replica_election_results:
            for partition in result.partition_result:
                tp = TopicPartition(result.topic, partition.partition_id)
                code = partition.error_code
                outcomes[tp] = (
                    None
                    if code == ELECTION_NOT_NEEDED
                    else errors.from_code(code, partition.error_message, where=self.where)
                )
        return outcomes

    def list_reassignments(self) -> dict[TopicPartition, ReplicaAssignment]:
        """The reassignments in progress, as the controller has them."""
        listed = self._call(
            lambda admin: admin.list_partition_reassignments(timeout_ms=self._operation_ms),
            idempotent=True,
        )
        return {
            TopicPartition(tp.topic, tp.partition): ReplicaAssignment.of(
                r["replicas"], r["adding_replicas"], r["removing_replicas"]
            )
            for tp, r in sorted(listed.items())
        }

    def dynamic_configs(
        self, kind: ConfigKind, names: Iterable[str], keys: Collection[str]
    ) -> dict[str, dict[str, str]]:
        """Among `keys`, the configs each topic or broker (named by its id) has of its own (not
        defaults: `kafka_admin.configs`), by DescribeConfigs; kafka-python asks each broker for
        its own. A topic that does not exist has none (kafka-python drops Kafka's error)."""
        named = sorted(set(names))
        if not named:
            return {}
        resources = describe_resources(kind, named, keys)
        described = self._call(
            lambda admin: admin.describe_configs(resources, config_filter="all"), idempotent=True
        )
        found = described.get(kind) or {}
        return {name: own_configs(kind, found.get(name) or {}) for name in named}

    def alter_configs(
        self, kind: ConfigKind, changes: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        """IncrementalAlterConfigs of topics or brokers (named by their ids; kafka-python sends
        a broker's own configs to that broker): each key SET to its value, or DELETEd for None,
        every other config left as it is. Raises what Kafka answered for the first one it
        refused, by name."""
        resources = alter_resources(kind, changes)
        if not resources:
            return
        results = self._call(
            lambda admin: admin.alter_configs(resources, raise_on_unknown=False, incremental=True)
        )
        answered = results.get(kind) or {}
        for resource in resources:
            outcome = answered.get(resource.name)
            if outcome is None:
                raise ClusterUnavailableError(
                    f"{self.where} did not answer about {kind} '{resource.name}'"
                )
            error = errors.from_result_string(str(outcome), where=self.where)
            if error is not None:
                raise error

    def close(self) -> None:
        with self._io:
            self._closed = True
            self._disconnect()

    # ---- the client --------------------------------------------------------------------------

    @property
    def _operation_ms(self) -> int:
        """How long the brokers are told an operation may take."""
        return int(self.timeout * 1000)

    def _call(self, action: Callable[[Any], T], *, idempotent: bool = False) -> T:
        """`action` with the client (connected first if need be), one call at a time. What
        kafka-python raises for a cluster out of reach becomes ClusterUnavailableError, and the
        client is dropped: kafka-python keeps the broker it sends controller requests to until
        that broker answers NOT_CONTROLLER, so once that broker is gone every such request
        would fail (a KRaft broker forwards them, and a client's "controller" is whichever
        broker its first metadata named). An `idempotent` action (a read) is tried once more,
        on a new client, when a connected client failed: a broker went away."""
        with self._io:
            if self._closed:
                raise ClusterUnavailableError(f"{self.where}: the backend is closed")
            connected = self._admin is not None
            try:
                return self._attempt(action)
            except ClusterUnavailableError:
                if not (idempotent and connected) or self._closed:
                    raise
                log.debug("%s: retrying a read on a new client", self.where, exc_info=True)
                return self._attempt(action)

    def _attempt(self, action: Callable[[Any], T]) -> T:
        if self._admin is None:
            self._admin = self._connect()
        try:
            return action(self._admin)
        except (kafka_python_errors.KafkaError, RuntimeError) as e:
            mapped = errors.from_client_error(e, where=self.where)
            if isinstance(mapped, ClusterUnavailableError):
                self._disconnect()
            if mapped is e:
                raise
            raise mapped from e

    def _connect(self) -> Any:
        """A client, bootstrapped within the timeout. A KafkaAdminClient that fails to bootstrap
        raises from its constructor and leaves its network thread running: the network client
        is made through `kafka_client` to be closed then."""
        made: list[KafkaNetClient] = []

        def network_client(**configs: Any) -> KafkaNetClient:
            client = KafkaNetClient(**configs)
            made.append(client)
            return client

        timeout_ms = int(self.timeout * 1000)
        try:
            return KafkaAdminClient(
                **self.connection.client_config(),
                client_id=CLIENT_ID,
                bootstrap_timeout_ms=timeout_ms,
                request_timeout_ms=timeout_ms + int(CLIENT_MARGIN * 1000),
                # Java's admin client's: a broker back after an outage is tried again within a
                # second (kafka-python's default backs off up to 30 s).
                reconnect_backoff_max_ms=1000,
                kafka_client=network_client,
            )
        except Exception as e:
            for client in made:
                with contextlib.suppress(Exception):
                    client.close()
            if errors.is_unavailable(e):
                # kafka-python retries a refused login or handshake until its bootstrap times
                # out, and says why only in its log.
                secured = self.connection.uses_sasl or self.connection.uses_tls
                hint = " (refused credentials or certificates end so too)" if secured else ""
                raise ClusterUnavailableError(
                    f"{self.where} did not answer within {self.timeout:g} s: {e}{hint}"
                ) from e
            raise

    def _disconnect(self) -> None:
        admin, self._admin = self._admin, None
        if admin is not None:
            with contextlib.suppress(Exception):
                admin.close()

    def _read(
        self,
        admin: Any,
        named: list[str],
        list_topics: bool,
        known: Mapping[str, Mapping[str, str]] | None = None,
    ) -> ClusterSnapshot:
        """The snapshot, numbered and remembered under the client's lock, so that positions
        follow the order this client's reads were made in."""
        position = self.reads.begin()
        snapshot = self._snapshot(admin, named, list_topics, known or {})
        self.reads.remember(position, snapshot, named)
        return snapshot

    def _snapshot(
        self,
        admin: Any,
        named: list[str],
        list_topics: bool,
        known: Mapping[str, Mapping[str, str]],
    ) -> ClusterSnapshot:
        problems: list[str] = []
        try:
            quorum = admin.describe_metadata_quorum()
        except kafka_python_errors.BrokerResponseError as e:
            if errors.is_unavailable(e):
                raise
            # Not allowed to describe the quorum (DESCRIBE on the cluster): no controller known.
            quorum = None
            problems.append(f"the metadata quorum cannot be described: {e}")
        cluster = admin.describe_cluster()
        before = admin.list_partition_reassignments(timeout_ms=self._operation_ms)
        if list_topics:
            described = admin.describe_topics(None)
        elif named:
            described = admin.describe_topics(named)
        else:
            described = []
        wanted = set(named)
        present = sorted(
            t["name"] for t in described if t["name"] in wanted and not t.get("error_code")
        )
        after = admin.list_partition_reassignments(timeout_ms=self._operation_ms)
        reassignments = reassignments_around(before, after)
        # A broker that has not yet seen a move end shows its old and new replicas together.
        now = time.monotonic()
        self._moves.saw(listed_targets(reassignments), now)
        reassignments.update(self._moves.unfinished(described, reassignments, now))
        configs = self._topic_configs(admin, [t for t in present if t not in known])
        # A broker whose metadata lags the one that described the topics does not know a
        # topic just created: ask once more for those it gave nothing about.
        if late := [t for t in present if t not in known and not configs.get(t)]:
            configs.update(self._topic_configs(admin, late))
        return cluster_snapshot(
            cluster=cluster,
            topics=described,
            reassignments=reassignments,
            configs=configs,
            own_configs=known,
            quorum=quorum,
            requested=named,
            listed=list_topics,
            protocol=self.connection.security_protocol,
            problems=problems,
        )

    @staticmethod
    def _topic_configs(admin: Any, topics: Sequence[str]) -> dict[str, Any]:
        """Every config of each topic, each with its source. All of them, defaults too: a
        topic Kafka could not describe (kafka-python drops the error) is then told apart by
        having none."""
        if not topics:
            return {}
        resources = [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        described = admin.describe_configs(resources, config_filter="all")
        return dict(described.get("topic") or {})

    def _dynamic_config(self, topic: str) -> dict[str, str]:
        described = self._call(lambda admin: self._topic_configs(admin, [topic]), idempotent=True)
        return dynamic_topic_config(described.get(topic) or {})


def _describe_topics(topics: list[str], admin: Any) -> list[dict[str, Any]]:
    described: list[dict[str, Any]] = admin.describe_topics(topics)
    return described


if TYPE_CHECKING:  # mypy checks that the backend is what the reconciler takes (structurally)

    def _is_a_topic_backend(backend: KafkaAdminBackend) -> TopicBackend:
        return backend
