"""The dev broker: registers in /brokers/ids like a ZooKeeper-mode Kafka broker (KafkaServer),
answers the controller's requests from its ZooKeeper queue, expands ISRs as a leader, and asks
the controller for a controlled shutdown before it leaves.

Threads: kazoo's watch callbacks only wake the single worker thread, which re-reads the queue and
the live brokers and does all the work in order; `shutdown` runs on the caller's thread while the
worker keeps answering requests, because the controller moves leaderships during it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from kafka_topic_operator.broker_channel import (
    CONTROLLED_SHUTDOWN_PATH,
    REQUEST_PREFIX,
    SHUTTING_DOWN_PATH,
    ControlledShutdownRequest,
    ControlledShutdownResult,
    Errors,
    Request,
    Response,
    UpdateMetadataResponse,
    controlled_shutdown_path,
    decode_controlled_shutdown,
    decode_request,
    decode_request_header,
    encode_controlled_shutdown,
    encode_metadata_leaders,
    encode_response,
    error_response,
    metadata_path,
    pack,
    requests_path,
    response_prefix,
    responses_path,
    shutting_down_path,
)
from kafka_topic_operator.kafka.brokers import BrokerInfo, EndPoint, SecurityProtocol
from kafka_topic_operator.kafka.ids import generate_uuid_as_base64
from kafka_topic_operator.kafka.leader_and_isr import LeaderIsrAndControllerEpoch
from kafka_topic_operator.kafka.topic_partition import TopicPartition
from kafka_topic_operator.zk import znodes
from kafka_topic_operator.zk.client import (
    BadVersionError,
    Create,
    Delete,
    NodeExistsError,
    NoNodeError,
    TransactionFailed,
    ZkClient,
    ZkConnectionError,
    ZkCredentials,
)
from kafka_topic_operator.zk.znodes import ZNodeDataError
from kto_dev.devbroker.fetches import Fetches
from kto_dev.devbroker.log_dirs import LogDir
from kto_dev.devbroker.replica_manager import IsrExpansion, ReplicaManager

log = logging.getLogger(__name__)

_ISR_WRITE_ATTEMPTS: Final = 5
_WORKER_RETRY_BACKOFF: Final = 0.5
# The status file is a view for people and tests: rewritten once requests pause for STATUS_QUIET
# seconds (at the latest STATUS_MAX_STALE after a change), at most every STATUS_INTERVAL, and
# less often when writing it takes long.
STATUS_INTERVAL: Final = 0.5
STATUS_QUIET: Final = 0.2
STATUS_MAX_STALE: Final = 5.0
_LOGGED_PARTITIONS: Final = 10


class BrokerRegistrationError(RuntimeError):
    """Another live session holds this broker id's registration."""


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """The dev broker's settings; defaults are Kafka's (`zookeeper.session.timeout.ms` 18000,
    `controlled.shutdown.*`, `request.timeout.ms` 30000 as the wait for the controller)."""

    zookeeper: str
    broker_id: int
    log_dir: Path
    rack: str | None = None
    host: str = "localhost"
    port: int = 9092
    session_timeout: float = 18.0
    controlled_shutdown_enable: bool = True
    controlled_shutdown_max_retries: int = 3
    controlled_shutdown_retry_backoff: float = 5.0
    controlled_shutdown_timeout: float = 30.0
    credentials: ZkCredentials | None = None


class DevBroker:
    """One broker. `start()`, then `shutdown()`; `status()` is what it last wrote to disk."""

    def __init__(self, config: BrokerConfig, *, log_dir: LogDir | None = None) -> None:
        self.config = config
        self.log_dir = log_dir or LogDir(config.log_dir)
        self.replica_manager = ReplicaManager(config.broker_id, self.log_dir)
        self._zk = ZkClient(
            config.zookeeper,
            session_timeout=config.session_timeout,
            credentials=config.credentials,
        )
        self._prefix = f"[KafkaServer id={config.broker_id}] "
        self._wake = threading.Event()
        self._stop_worker = threading.Event()
        self._interrupted = threading.Event()
        self._answer_changed: threading.Event | None = None
        self._session_lost = False
        # Set when the registered brokers may have changed (and at first): list them again and
        # look at every partition for ISR expansions, not only the ones requests changed.
        self._brokers_changed = True
        self._live_brokers: set[int] = set()
        self._fetches = Fetches(self._zk, config.broker_id, self._wake.set)
        self._closing = False
        self._worker: threading.Thread | None = None
        # Held by the worker for a whole pass and by anyone writing the status file: the
        # replica manager's tables change only under it.
        self._lock = threading.RLock()
        self._status_lock = threading.Lock()
        self._status: dict[str, object] = {}
        self._status_due = 0.0  # monotonic time before which pending writes wait
        self._status_pending = False  # a change since the last write
        self._metadata_pending = False  # an UpdateMetadata applied since the last publication
        self._pending_since = 0.0
        self._last_change = 0.0
        self._state = "starting"
        self.cluster_id: str | None = None

    # ---- lifecycle --------------------------------------------------------------------------

    @property
    def broker_id(self) -> int:
        return self.config.broker_id

    @property
    def broker_epoch(self) -> int:
        return self.replica_manager.broker_epoch

    @property
    def zk(self) -> ZkClient:
        return self._zk

    def start(self) -> None:
        """Connects, prepares ZooKeeper and the log directory, registers, starts the worker.

        Raises ZkConnectionError, BrokerRegistrationError, or the log directory's
        InconsistentBrokerIdException / InconsistentClusterIdException / OSError.
        """
        # zookeeper.connection.timeout.ms defaults to the session timeout.
        self._zk.start(timeout=self.config.session_timeout)
        try:
            for path in znodes.PERSISTENT_ZK_PATHS:
                self._zk.ensure_path(path)
            # The queue exists before the registration, so a controller that sees the broker
            # can always write to it.
            for path in (
                requests_path(self.broker_id),
                responses_path(self.broker_id),
                CONTROLLED_SHUTDOWN_PATH,
                SHUTTING_DOWN_PATH,
            ):
                self._zk.ensure_path(path)
            self.cluster_id = self._cluster_id()
            self.log_dir.open(self.broker_id, self.cluster_id)
            # Before the registration: the operator then reads this broker's metadata here
            # (none known yet) instead of asking a Kafka listener it does not have.
            self._publish_metadata()
            self._fetches.clear()
            self._register()
        except BaseException:
            self._zk.stop()
            raise
        self._zk.add_state_listener(self._on_state)
        self._state = "running"
        self._write_status()
        self._worker = threading.Thread(
            target=self._run, name=f"kto-broker-{self.broker_id}", daemon=True
        )
        self._worker.start()
        self._wake.set()

    def shutdown(self, *, controlled: bool = True) -> bool:
        """Controlled shutdown (if enabled and asked for), then leaves: the session closes and the
        registration vanishes. Returns whether the controlled shutdown succeeded."""
        succeeded = False
        if controlled and self.config.controlled_shutdown_enable and self._worker is not None:
            self._state = "shutting_down"
            self._write_status()
            log.info("%sStarting controlled shutdown", self._prefix)
            self._mark_shutting_down()
            succeeded = self._controlled_shutdown()
            if not succeeded:
                log.warning(
                    "%sProceeding to do an unclean shutdown as all the controlled shutdown "
                    "attempts failed",
                    self._prefix,
                )
        self._closing = True
        self._stop_worker.set()
        self._wake.set()
        if self._worker is not None and self._worker is not threading.current_thread():
            # A worker stuck on an unreachable ZooKeeper is a daemon: closing the client ends it.
            self._worker.join(timeout=self.config.session_timeout)
        self._zk.stop()
        self._state = "stopped"
        self._write_status()
        log.info("%sshut down completed", self._prefix)
        return succeeded

    def interrupt_shutdown(self) -> None:
        """Stops waiting for the controller: the shutdown goes on without it."""
        self._interrupted.set()
        waiting = self._answer_changed
        if waiting is not None:
            waiting.set()

    def status(self) -> dict[str, object]:
        with self._status_lock:
            return dict(self._status)

    # ---- ZooKeeper setup --------------------------------------------------------------------

    def _cluster_id(self) -> str:
        """KafkaServer.getOrGenerateClusterId: read /cluster/id, or create it if absent."""
        path = znodes.CLUSTER_ID_PATH
        while True:
            node = self._zk.get(path)
            if node is not None:
                return znodes.decode_cluster_id(path, node.data)
            with contextlib.suppress(NodeExistsError):  # another broker won: read its id
                self._zk.create(
                    path, znodes.encode_cluster_id(generate_uuid_as_base64()), makepath=True
                )

    def _register(self) -> None:
        """KafkaZkClient.registerBroker: a checked ephemeral create; the epoch is its czxid."""
        config = self.config
        info = BrokerInfo(
            id=config.broker_id,
            endpoints=(
                EndPoint("PLAINTEXT", config.host, config.port, SecurityProtocol.PLAINTEXT),
            ),
            rack=config.rack,
            jmx_port=-1,
            timestamp=int(time.time() * 1000),
        )
        path = znodes.broker_path(config.broker_id)
        data = znodes.encode_broker(info, version=5)
        while True:
            # NodeExists: ours (a retried create) or another session's; the owner says which.
            with contextlib.suppress(NodeExistsError):
                self._zk.create(path, data, ephemeral=True)
            node = self._zk.get(path)
            if node is None:
                continue  # the other owner's session just ended
            session = self._zk.session_id
            if node.ephemeral_owner != session:
                raise BrokerRegistrationError(
                    f"Error while creating ephemeral at {path}, node already exists and owner "
                    f"'{node.ephemeral_owner}' does not match current session '{session}'"
                )
            break
        self.replica_manager.broker_epoch = node.czxid
        log.info(
            "%sRegistered broker %d at path %s with addresses: %s, czxid (broker epoch): %d",
            self._prefix,
            config.broker_id,
            path,
            ",".join(e.connection_string for e in info.endpoints),
            node.czxid,
        )

    def _on_state(self, state: str) -> None:
        # Runs on kazoo's thread: only note it and wake the worker.
        if state == "LOST" and not self._closing:
            self._session_lost = True
        self._wake.set()

    # ---- the worker -------------------------------------------------------------------------

    def _signal(self, _event: object = None) -> None:
        self._wake.set()

    def _run(self) -> None:
        while True:
            # A throttled status write is due: wake for it even if nothing else happens.
            due = self._status_write_due() - time.monotonic() if self._status_pending else None
            self._wake.wait(None if due is None else max(due, 0.0))
            self._wake.clear()
            if self._stop_worker.is_set():
                return
            try:
                self._work()
            except Exception:
                if self._stop_worker.is_set():
                    return
                log.exception("%sError in the request worker; retrying", self._prefix)
                self._stop_worker.wait(_WORKER_RETRY_BACKOFF)
                self._wake.set()

    def _work(self) -> None:
        with self._lock:
            if self._session_lost:
                # Kafka re-registers on a new session, with a new broker epoch.
                self._session_lost = False
                self._brokers_changed = True  # a new session has none of the old watches
                self._register()
                self._write_status_locked()
            self._process_requests()
            self._expand_isr()
            if self._status_pending and time.monotonic() >= self._status_write_due():
                self._write_status_locked()

    # ---- requests ---------------------------------------------------------------------------

    def _process_requests(self) -> None:
        queue = requests_path(self.broker_id)
        names = self._zk.children(queue, watch=self._signal) or []
        # sorted: ten-digit sequence numbers sort in creation order
        paths = [f"{queue}/{name}" for name in names if name.startswith(REQUEST_PREFIX)]
        answered: list[tuple[str, int, Response | None]] = []
        for node in self._zk.get_many(paths):
            if self._stop_worker.is_set():
                break
            if node is not None:
                answered.append((node.path, node.version, self._answer(node.path, node.data)))
        if not answered:
            return
        # Following before answering, as Kafka's replica fetchers start before its response;
        # only LeaderAndIsr and StopReplica change it (UpdateMetadata comes in floods).
        if any(not isinstance(r, UpdateMetadataResponse) for _, _, r in answered):
            self._fetches.publish(self.replica_manager.following())
        self._status_changed()
        if any(isinstance(r, UpdateMetadataResponse) for _, _, r in answered):
            self._metadata_pending = True
        # Each answer and its dequeue in one transaction: a crash never answers twice or loses
        # one. The transactions are pipelined, in queue order.
        transactions: list[list[Create | Delete]] = []
        for path, version, response in answered:
            ops: list[Create | Delete] = [Delete(path, version)]
            if response is not None:
                answer = pack(encode_response(response))
                ops.insert(0, Create(response_prefix(self.broker_id), answer, sequence=True))
            transactions.append(ops)
        for (path, _, _), outcome in zip(answered, self._zk.multi_many(transactions), strict=True):
            if isinstance(outcome, TransactionFailed):
                log.warning("%sCould not answer %s: %s", self._prefix, path, outcome)

    def _answer(self, path: str, data: bytes) -> Response | None:
        try:
            request = decode_request(path, data)
        except ZNodeDataError as e:
            try:
                header = decode_request_header(path, data)
            except ZNodeDataError:
                log.error("%sDropping unreadable request: %s", self._prefix, e)
                return None
            log.error("%sAnswering INVALID_REQUEST: %s", self._prefix, e)
            return error_response(header, Errors.INVALID_REQUEST)
        try:
            response = self.replica_manager.handle(request)
        except Exception:
            log.exception("%sUnexpected error handling %s", self._prefix, path)
            response = request.error_response(Errors.UNKNOWN_SERVER_ERROR)
        log.info("%s", self._describe(request, response))
        return response

    def _describe(self, request: Request, response: Response) -> str:
        partitions = [f"{s.topic}-{s.partition}" for s in request.partition_states]
        shown = ", ".join(partitions[:_LOGGED_PARTITIONS])
        if len(partitions) > _LOGGED_PARTITIONS:
            shown += f", ... {len(partitions) - _LOGGED_PARTITIONS} more"
        outcome = str(response.error)
        partition_errors = (
            () if isinstance(response, UpdateMetadataResponse) else response.partition_errors
        )
        failed = [
            f"{pe.topic}-{pe.partition}: {pe.error}"
            for pe in partition_errors
            if pe.error != Errors.NONE
        ]
        if failed:
            outcome += " (" + ", ".join(failed[:_LOGGED_PARTITIONS])
            more = len(failed) - _LOGGED_PARTITIONS
            outcome += f", ... {more} more)" if more > 0 else ")"
        return (
            f"[Broker id={self.broker_id}] Handled {request.TYPE} request correlation id "
            f"{request.correlation_id} from controller {request.controller_id} epoch "
            f"{request.controller_epoch} for {len(partitions)} partitions [{shown}]: {outcome}"
        )

    # ---- ISR expansion ----------------------------------------------------------------------

    def _on_brokers_change(self, _event: object = None) -> None:
        self._brokers_changed = True
        self._wake.set()

    def _expand_isr(self) -> None:
        manager = self.replica_manager
        among: set[TopicPartition] | None = manager.changed
        manager.changed = set()
        expanded: list[TopicPartition] = []
        try:
            if self._brokers_changed:
                # Cleared before listing: a change during the listing sets it again.
                self._brokers_changed = False
                names = self._zk.children(znodes.BROKER_IDS_PATH, watch=self._on_brokers_change)
                leaving = self._zk.children(SHUTTING_DOWN_PATH, watch=self._on_brokers_change)
                # KafkaController.processAlterPartition refuses brokers in controlled shutdown
                # as new ISR members (KIP-841): only the others are eligible.
                self._live_brokers = {
                    int(n) for n in names or [] if n.isascii() and n.isdigit()
                } - {int(n) for n in leaving or [] if n.isascii() and n.isdigit()}
                among = None
            touched = self._fetches.read(self._live_brokers)
            if among is not None:
                among |= touched
            fetchers = self._fetches.fetchers
            for expansion in manager.isr_expansions(self._live_brokers, fetchers, among):
                if self._write_isr(expansion):
                    expanded.append(expansion.topic_partition)
                else:
                    manager.changed.add(expansion.topic_partition)  # next time
        except BaseException:
            # ZooKeeper out of reach: look at everything again on the next pass.
            self._brokers_changed = True
            raise
        if expanded:
            self._status_changed()
            # ZkIsrManager batches these for up to 5 s; a dev broker tells the controller at once.
            self._zk.create(
                znodes.isr_change_path(), znodes.encode_isr_change(expanded), sequence=True
            )

    def _write_isr(self, expansion: IsrExpansion) -> bool:
        """Partition.expandIsr through ZkIsrManager: a write conditional on the partition epoch;
        on BADVERSION, re-read and go on only while still leader in the same leader epoch."""
        tp = expansion.topic_partition
        path = znodes.topic_partition_state_path(tp)
        state = expansion.state
        leader_epoch = state.leader_and_isr.leader_epoch
        old_isr = ",".join(map(str, self.replica_manager.partitions[tp].isr))
        for _ in range(_ISR_WRITE_ATTEMPTS):
            lai = state.leader_and_isr
            try:
                version = self._zk.set(
                    path, znodes.encode_partition_state(state), version=lai.partition_epoch
                )
            except NoNodeError:
                log.info("%sNo state znode for %s: not expanding its ISR", self._prefix, tp)
                return False
            except BadVersionError:
                node = self._zk.get(path)
                if node is None:
                    return False
                try:
                    current = znodes.decode_partition_state(path, node.data, node.version)
                except ZNodeDataError as e:
                    log.warning("%sCannot expand the ISR of %s: %s", self._prefix, tp, e)
                    return False
                now = current.leader_and_isr
                if (
                    now.leader,
                    now.leader_epoch,
                    now.isr,
                    current.controller_epoch,
                ) == (lai.leader, lai.leader_epoch, lai.isr, state.controller_epoch):
                    # ReplicationUtils.checkLeaderAndIsrZkData: our write already landed.
                    self.replica_manager.isr_updated(tp, now.isr, node.version)
                    return True
                if now.leader != self.broker_id or now.leader_epoch != leader_epoch:
                    log.info(
                        "%sNot expanding the ISR of %s: its state moved to leader %d epoch %d",
                        self._prefix,
                        tp,
                        now.leader,
                        now.leader_epoch,
                    )
                    return False
                if not self.replica_manager.leads(tp, leader_epoch):
                    return False
                isr = now.isr + tuple(r for r in expansion.added if r not in now.isr)
                self.replica_manager.isr_updated(tp, now.isr, node.version)
                if isr == now.isr:
                    return False
                state = LeaderIsrAndControllerEpoch(
                    now._replace(isr=isr, partition_epoch=node.version),
                    self.replica_manager.controller_epoch,
                )
                continue
            self.replica_manager.isr_updated(tp, lai.isr, version)
            log.info(
                "%sISR of %s expanded from %s to %s, partition epoch %d",
                self._prefix,
                tp,
                old_isr,
                ",".join(map(str, lai.isr)),
                version,
            )
            return True
        return False

    # ---- controlled shutdown ----------------------------------------------------------------

    def _mark_shutting_down(self) -> None:
        """Ephemeral, so it leaves with the session; a broker that comes back is eligible."""
        with contextlib.suppress(NodeExistsError):
            self._zk.create(shutting_down_path(self.broker_id), b"", ephemeral=True)

    def _controlled_shutdown(self) -> bool:
        """KafkaServer.controlledShutdown: up to `controlled.shutdown.max.retries` attempts,
        `controlled.shutdown.retry.backoff.ms` apart."""
        remaining_retries = self.config.controlled_shutdown_max_retries
        succeeded = False
        while not succeeded and remaining_retries > 0 and not self._interrupted.is_set():
            remaining_retries -= 1
            if not self._zk.exists(znodes.CONTROLLER_PATH):
                log.info("%sNo controller present (%s)", self._prefix, znodes.CONTROLLER_PATH)
            else:
                result = self._ask_controller()
                if result is None:
                    log.warning(
                        "%sError during controlled shutdown, possibly because leader movement "
                        "took longer than the configured %.1f s to answer",
                        self._prefix,
                        self.config.controlled_shutdown_timeout,
                    )
                elif result.succeeded:
                    succeeded = True
                    log.info("%sControlled shutdown succeeded", self._prefix)
                else:
                    log.info(
                        "%sRemaining partitions to move: %s",
                        self._prefix,
                        ",".join(map(str, result.remaining_partitions)),
                    )
                    log.info("%sError from controller: %s", self._prefix, result.error)
            if not succeeded and remaining_retries > 0:
                self._interrupted.wait(self.config.controlled_shutdown_retry_backoff)
                log.warning(
                    "%sRetrying controlled shutdown after the previous attempt failed...",
                    self._prefix,
                )
        return succeeded

    def _ask_controller(self) -> ControlledShutdownResult | None:
        """One attempt: write the request znode and wait for the controller's answer in it
        (or for the controller to delete it, which means nothing is left to move)."""
        path = controlled_shutdown_path(self.broker_id)
        request = ControlledShutdownRequest(self.broker_id, self.broker_epoch)
        changed = threading.Event()
        self._answer_changed = changed
        self._zk.delete(path)  # a leftover of an earlier attempt of ours
        self._zk.create(path, encode_controlled_shutdown(request), ephemeral=True)
        deadline = time.monotonic() + self.config.controlled_shutdown_timeout
        try:
            while True:
                changed.clear()
                node = self._zk.get(path, watch=lambda _event: changed.set())
                if node is None:
                    return ControlledShutdownResult(Errors.NONE)
                try:
                    answer = decode_controlled_shutdown(path, node.data).result
                except ZNodeDataError as e:
                    log.warning("%sUnreadable controlled shutdown answer: %s", self._prefix, e)
                    return ControlledShutdownResult(Errors.UNKNOWN_SERVER_ERROR)
                if answer is not None:
                    return answer
                left = deadline - time.monotonic()
                if left <= 0 or self._interrupted.is_set():
                    return None
                changed.wait(left)
        finally:
            self._answer_changed = None
            self._zk.delete(path)

    # ---- status -----------------------------------------------------------------------------

    def _write_status(self) -> None:
        # Bounded: a worker stuck on an unreachable ZooKeeper must not hang a shutdown.
        if not self._lock.acquire(timeout=self.config.session_timeout):
            log.warning("%sStatus not written: the request worker is busy", self._prefix)
            return
        try:
            self._write_status_locked()
        finally:
            self._lock.release()

    def _publish_metadata(self) -> None:
        """The metadata cache's leaders, where the operator reads what a client asking this
        broker would be told (a dev broker has no Kafka listener); with the status, so a
        burst of UpdateMetadata requests is one write."""
        self._metadata_pending = False
        path = metadata_path(self.broker_id)
        data = encode_metadata_leaders(self.replica_manager.metadata.leaders())
        try:
            try:
                self._zk.set(path, data)
            except NoNodeError:
                self._zk.create(path, data, makepath=True)
        except (ZkConnectionError, NodeExistsError) as e:
            self._metadata_pending = True  # written with the next status
            log.warning("%sCannot publish the metadata at %s: %s", self._prefix, path, e)

    def _status_changed(self) -> None:
        """Requests changed what the status shows: the worker writes it once they pause."""
        now = time.monotonic()
        if not self._status_pending:
            self._status_pending = True
            self._pending_since = now
        self._last_change = now

    def _status_write_due(self) -> float:
        """When a pending write is due: once requests pause for STATUS_QUIET (a burst of
        requests is one write, not one per request), or at the latest STATUS_MAX_STALE after
        the first change; never sooner than the last write's STATUS_INTERVAL (or 49 times its
        duration: rebuilding the status of thousands of partitions takes a while)."""
        settled = min(self._last_change + STATUS_QUIET, self._pending_since + STATUS_MAX_STALE)
        return max(self._status_due, settled)

    def _write_status_locked(self) -> None:
        began = time.monotonic()
        self._status_pending = False
        if self._metadata_pending:
            self._publish_metadata()
        status = self.replica_manager.to_json()
        try:
            logs = [f"{tp.topic}-{tp.partition}" for tp in self.log_dir.logs()]
        except OSError:
            logs = []
        status.update(
            {
                "version": 1,
                "state": self._state,
                "cluster_id": self.cluster_id,
                "rack": self.config.rack,
                "endpoints": [f"PLAINTEXT://{self.config.host}:{self.config.port}"],
                "logs": logs,
                "updated_ms": int(time.time() * 1000),
            }
        )
        with self._status_lock:
            self._status = status
        try:
            self.log_dir.write_status(status)
        except OSError as e:
            log.warning("%sCannot write %s: %s", self._prefix, self.log_dir.status_path, e)
        # Writing the status of thousands of partitions takes a while: spend at most a fiftieth
        # of the time on it (it was a quarter of a broker's CPU in a burst of 1,000 new topics).
        ended = time.monotonic()
        self._status_due = ended + max(STATUS_INTERVAL, 49 * (ended - began))
