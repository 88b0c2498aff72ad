"""`kto dev-broker`: run one dev broker until SIGTERM or SIGINT, then shut down under control.

A second signal during the controlled shutdown stops waiting for the controller. Startup errors
are one line on stderr with exit status 1; usage errors exit with 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from kafka_topic_operator.process.argparsing import (
    RaisingParser,
    UsageError,
    add_log_level_argument,
    non_negative_int,
    positive_float,
)
from kafka_topic_operator.process.gc_tuning import tune_garbage_collector
from kafka_topic_operator.process.log_format import process_logging
from kafka_topic_operator.process.signals import termination_requested
from kafka_topic_operator.zk.client import ZkConnectionError
from kafka_topic_operator.zk.credential_flags import (
    add_zookeeper_auth_arguments,
    zookeeper_credentials,
)
from kafka_topic_operator.zk.znodes import ZNodeDataError
from kto_dev.devbroker.broker import (
    BrokerConfig,
    BrokerRegistrationError,
    DevBroker,
)
from kto_dev.devbroker.log_dirs import (
    InconsistentBrokerIdException,
    InconsistentClusterIdException,
)

EXIT_FAILURE = 1
EXIT_USAGE = 2


def build_parser(prog: str = "kto dev-broker") -> argparse.ArgumentParser:
    parser = RaisingParser(
        prog=prog,
        description="Run a dev broker: it registers in ZooKeeper as a Kafka broker and answers "
        "the controller's LeaderAndIsr, UpdateMetadata and StopReplica requests.",
    )
    parser.add_argument("--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]")
    parser.add_argument("--id", required=True, type=non_negative_int, help="the broker id")
    parser.add_argument("--log-dir", required=True, type=Path, metavar="DIR")
    parser.add_argument("--rack", default=None)
    parser.add_argument("--host", default="localhost", help="advertised host (localhost)")
    parser.add_argument("--port", default=9092, type=non_negative_int, help="(9092)")
    parser.add_argument(
        "--session-timeout",
        default=18.0,
        type=positive_float,
        metavar="SECONDS",
        help="ZooKeeper session timeout (18, Kafka's default)",
    )
    parser.add_argument(
        "--controlled-shutdown-timeout",
        default=30.0,
        type=positive_float,
        metavar="SECONDS",
        help="how long each attempt waits for the controller's answer (30)",
    )
    parser.add_argument(
        "--controlled-shutdown-max-retries", default=3, type=non_negative_int, metavar="N"
    )
    parser.add_argument(
        "--controlled-shutdown-retry-backoff-ms", default=5000, type=non_negative_int, metavar="MS"
    )
    parser.add_argument(
        "--no-controlled-shutdown",
        action="store_true",
        help="leave without asking the controller (controlled.shutdown.enable=false)",
    )
    add_zookeeper_auth_arguments(parser, acl=False)
    add_log_level_argument(parser)
    return parser


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    credentials = zookeeper_credentials(args)
    return BrokerConfig(
        zookeeper=args.zookeeper,
        broker_id=args.id,
        log_dir=args.log_dir,
        rack=args.rack,
        host=args.host,
        port=args.port,
        session_timeout=args.session_timeout,
        controlled_shutdown_enable=not args.no_controlled_shutdown,
        controlled_shutdown_max_retries=args.controlled_shutdown_max_retries,
        controlled_shutdown_retry_backoff=args.controlled_shutdown_retry_backoff_ms / 1000,
        controlled_shutdown_timeout=args.controlled_shutdown_timeout,
        credentials=credentials,
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        config = config_from_args(args)
    except UsageError as e:  # zookeeper_credentials reports unreadable or malformed files too
        print(f"kto dev-broker: {e}", file=sys.stderr)
        return EXIT_USAGE

    tune_garbage_collector()
    with process_logging(args.log_level, "kto_dev"):
        return _run(DevBroker(config))


def _run(broker: DevBroker) -> int:
    with termination_requested(again=broker.interrupt_shutdown) as stop:
        try:
            broker.start()
        except (
            BrokerRegistrationError,
            ZkConnectionError,
            InconsistentBrokerIdException,
            InconsistentClusterIdException,
            ZNodeDataError,
            OSError,
        ) as e:
            print(f"kto dev-broker: {e}", file=sys.stderr)
            return EXIT_FAILURE
        print(
            f"kto dev-broker: broker {broker.broker_id} registered with epoch "
            f"{broker.broker_epoch}; log dir {broker.log_dir.path}",
            file=sys.stderr,
            flush=True,
        )
        stop.wait()
        broker.shutdown(controlled=True)
        return 0
