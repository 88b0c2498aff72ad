"""`kto run`: the KafkaTopic operator (kopf), optionally with the controller in the same process.

Against a real ZooKeeper-mode Kafka cluster (`--zookeeper`) the operator only writes the admin
znodes Kafka's tools write (topics, configs, deletion markers, reassignments);
`--embedded-controller` also runs this project's Kafka-compatible controller, for the standalone
dev cluster. Against a KRaft cluster (`--bootstrap-servers`) it speaks Kafka's Admin API.
"""

from __future__ import annotations

import argparse
import logging
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from kafka_topic_operator.clusters.cluster import Cluster
from kafka_topic_operator.clusters.connect import (
    ClusterFlags,
    ZooKeeperFlags,
    add_cluster_arguments,
    cluster_flags,
    connect,
)
from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
from kafka_topic_operator.k8s.kubeclient import credentials_problem
from kafka_topic_operator.kafka.errors import ClusterUnavailableError
from kafka_topic_operator.process.argparsing import (
    UsageError,
    add_log_level_argument,
    parsed_by,
    positive_float,
)
from kafka_topic_operator.process.gc_tuning import tune_garbage_collector
from kafka_topic_operator.process.log_format import process_logging
from kafka_topic_operator.rebalance.engines import defaults
from kafka_topic_operator.rebalance.spec import EngineType

log = logging.getLogger(__name__)

EXIT_USAGE = 2
EXIT_FAILURE = 1
GIL_SWITCH_INTERVAL = 0.001  # seconds (Python's default: 0.005)


def _selector(text: str) -> dict[str, str]:
    """`key=value[,key=value...]`, as kubectl's equality-based label selectors."""
    selector: dict[str, str] = {}
    for term in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = term.partition("=")
        if not sep or not key or "!" in key:
            raise argparse.ArgumentTypeError(
                f"invalid selector term {term!r}: expected key=value[,key=value...]"
            )
        selector[key.strip()] = value.strip().lstrip("=")
    return selector


def _engines(text: str) -> frozenset[EngineType]:
    """`local,kubernetes,sparkApplication`, or some of them."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    try:
        return frozenset(EngineType(n) for n in names)
    except ValueError:
        known = ", ".join(e.value for e in EngineType)
        raise argparse.ArgumentTypeError(f"engines are among {known}: got {text!r}") from None


def build_parser(prog: str = "kto run") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run the KafkaTopic operator: KafkaTopic resources become Kafka topics, "
        "with status that says what Kafka did. The cluster is reached through its ZooKeeper "
        "(--zookeeper, ZooKeeper mode) or its brokers (--bootstrap-servers, KRaft).",
    )
    parser.add_argument(
        "--namespace",
        action="append",
        default=[],
        metavar="NS",
        help="watch this namespace (repeatable); all namespaces when none is given",
    )
    parser.add_argument(
        "--selector",
        type=_selector,
        default={},
        metavar="KEY=VALUE[,...]",
        help="only KafkaTopics with these labels, so several operators can share a cluster",
    )
    parser.add_argument(
        "--embedded-controller",
        action="store_true",
        help="also run the Kafka-compatible controller (the standalone dev cluster)",
    )
    parser.add_argument("--controller-id", type=int, default=0, metavar="N")
    parser.add_argument(
        "--liveness",
        default="http://0.0.0.0:8080/healthz",
        metavar="URL",
        help="kopf's liveness endpoint; it stays healthy while ZooKeeper is unreachable "
        "(a restart would not bring ZooKeeper back): readiness says that ('' turns it off)",
    )
    parser.add_argument(
        "--readiness",
        default="",
        metavar="URL",
        help="a readiness endpoint, for example http://0.0.0.0:8081/readyz: 200 while "
        "ZooKeeper answers, 503 while it does not (default: none)",
    )
    parser.add_argument(
        "--drift-interval",
        type=positive_float,
        default=60.0,
        metavar="SECONDS",
        help="how often a resource whose topic is not as declared (blocked, in conflict, "
        "paused) is retried (60). A settled topic's znodes are watched instead: a change made "
        "behind the operator's back is reverted or reported at once. On KRaft, also how often "
        "the followed topics' configs are read, at the most",
    )
    parser.add_argument(
        "--no-rebalance",
        dest="rebalance",
        action="store_false",
        help="leave KafkaRebalance resources alone",
    )
    parser.add_argument(
        "--rebalance-engines",
        type=_engines,
        default=frozenset(EngineType),
        metavar="ENGINE[,ENGINE...]",
        help="the planning engines KafkaRebalances may use (default: all): local runs Spark in "
        "this process and needs pyspark and Java; kubernetes and sparkApplication create a Job "
        "or a SparkApplication; a KafkaRebalance naming another one is NotReady",
    )
    parser.add_argument(
        "--planner-image",
        metavar="IMAGE",
        help="the image of the kubernetes and sparkApplication engines' pods (the Dockerfile's "
        "spark target) for KafkaRebalances that set no spec.engine.image",
    )
    parser.add_argument(
        "--planner-service-account",
        metavar="NAME",
        help="the service account of those pods (it creates Spark's driver and executor pods) "
        "for KafkaRebalances that set no spec.engine.serviceAccountName",
    )
    parser.add_argument(
        "--planner-work-dir",
        type=parsed_by(defaults.parse_work_dir),
        metavar="PATH",
        help="the spec.engine.workDir of KafkaRebalances that set none: where this process and "
        "the planner's pods share a volume",
    )
    parser.add_argument(
        "--planner-volume",
        type=parsed_by(defaults.parse_claim),
        metavar="NAMESPACE/CLAIM",
        help="the spec.engine.volume of KafkaRebalances in NAMESPACE that set none and use the "
        "--planner-work-dir (a claim serves only its own namespace)",
    )
    parser.add_argument(
        "--planner-executor-cpu-request",
        type=parsed_by(defaults.parse_cpu),
        metavar="CPU",
        help="the spec.engine.executorCpuRequest of KafkaRebalances that set none (250m, 0.5, 2)",
    )
    parser.add_argument(
        "--planner-driver-cpu-request",
        type=parsed_by(defaults.parse_cpu),
        metavar="CPU",
        help="the spec.engine.driverCpuRequest of KafkaRebalances that set none",
    )
    parser.add_argument(
        "--log-dirs",
        type=Path,
        nargs="+",
        default=(),
        metavar="DIR",
        help="brokers' log directories readable from here (the dev cluster's brokers'): the "
        "partition sizes of KafkaRebalances that set no spec.partitionSizes",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        default=9090,
        metavar="PORT",
        help="serve Prometheus metrics on this port at /metrics (0: off)",
    )
    parser.add_argument(
        "--peering",
        metavar="NAME",
        help="kopf peering name: replicas elect one active operator (default: standalone)",
    )
    parser.add_argument(
        "--peering-priority",
        type=int,
        metavar="N",
        help="this replica's priority in the peering; the highest is active. Default: random, "
        "so that replicas started alike never tie (kopf pauses all replicas of equal priority)",
    )
    parser.add_argument("--session-timeout", type=positive_float, default=18.0, metavar="SECONDS")
    parser.add_argument(
        "--zookeeper-retry-seconds",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="how long a reconcile waits for ZooKeeper before reporting ZooKeeperUnavailable",
    )
    add_cluster_arguments(parser, zookeeper_acl=True)
    add_log_level_argument(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        flags = cluster_flags(
            args,
            zookeeper_only={"--embedded-controller": args.embedded_controller},
        )
    except UsageError as e:  # unreadable or malformed credential files too
        print(f"kto run: {e}", file=sys.stderr)
        return EXIT_USAGE
    problem = credentials_problem()
    if problem is not None:
        print(f"kto run: {problem}", file=sys.stderr)
        return EXIT_FAILURE
    tune_garbage_collector()
    with process_logging(args.log_level, "kopf"):
        try:
            cluster = connect(
                flags,
                timeout=args.session_timeout,
                session_timeout=args.session_timeout,
                retry_deadline=args.zookeeper_retry_seconds,
                config_interval=args.drift_interval,
            )
        except ClusterUnavailableError as e:  # the operator says why it cannot start
            print(f"kto run: {e}", file=sys.stderr)
            return EXIT_FAILURE
        controller = _embedded_controller(flags, args)
        try:
            return _run_kopf(cluster, args)
        finally:
            if controller is not None:
                controller.stop()
            cluster.close()


def _embedded_controller(flags: ClusterFlags, args: argparse.Namespace) -> KafkaController | None:
    """This project's controller in the operator's process, with `--embedded-controller`
    (which `cluster_flags` takes with ZooKeeper only)."""
    if not args.embedded_controller or not isinstance(flags, ZooKeeperFlags):
        return None
    controller = KafkaController(
        ControllerConfig(
            zookeeper=flags.hosts,
            broker_id=args.controller_id,
            session_timeout=args.session_timeout,
            credentials=flags.credentials,
            secure_acls=flags.secure_acls,
        )
    )
    controller.start()
    return controller


def _run_kopf(cluster: Cluster, args: argparse.Namespace) -> int:
    import kopf

    from kafka_topic_operator.k8s import (
        handlers,
        operator_lifecycle,  # noqa: F401  (registers its handlers)
        registration,
        waiting,
    )

    waiting.install()

    # What the handlers share, handed to kopf as the operator's memo (each handler's `memo`).
    memo = kopf.Memo()
    if args.rebalance:
        from kafka_topic_operator.k8s import rebalance_handlers  # noqa: F401  (registers its daemon)
        from kafka_topic_operator.k8s.rebalance_planning import Settings

        memo.rebalance = Settings(
            engines=args.rebalance_engines,
            planner=defaults.PlannerDefaults(
                image=args.planner_image,
                service_account_name=args.planner_service_account,
                work_dir=args.planner_work_dir,
                volume=args.planner_volume,
                executor_cpu_request=args.planner_executor_cpu_request,
                driver_cpu_request=args.planner_driver_cpu_request,
            ),
            log_dirs=tuple(args.log_dirs),
        )
    rt = memo.runtime = handlers.Runtime(
        cluster=cluster,
        selector=args.selector,
        namespaces=tuple(args.namespace or ()),
        readiness=args.readiness or None,
        retry_seconds=args.zookeeper_retry_seconds,
    )
    registration.register(args.selector, args.drift_interval)
    if args.metrics_port:
        from prometheus_client import start_http_server

        from kafka_topic_operator.k8s.metrics import REGISTRY

        start_http_server(args.metrics_port, registry=REGISTRY)
    priority = args.peering_priority
    if args.peering is not None and priority is None:
        priority = random.SystemRandom().randint(1, 2**31 - 1)
        log.info("peering %s with priority %d", args.peering, priority)
    # A thread waiting on the API or on Kafka takes the GIL back only at the next switch, while
    # kopf's loop works through a burst of events: the status writers, each waiting on a socket
    # several times a write, waited mostly for the GIL at Python's 5 ms.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL)
    rt.start()
    try:
        kopf.run(
            standalone=args.peering is None,
            peering_name=args.peering,
            priority=priority,
            clusterwide=not args.namespace,
            namespaces=args.namespace,
            liveness_endpoint=args.liveness or None,
            memo=memo,
        )
    finally:
        rt.stop()
    return 0
