"""`kto controller`: run the Kafka-compatible controller until SIGTERM or SIGINT.

It competes for `/controller`; while another instance holds it, it waits as a standby. On a signal
it resigns (deleting `/controller` if it holds it) so a standby takes over at once. Usage errors
exit with 2, a ZooKeeper that cannot be reached with 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from kafka_topic_operator.controller.kafka_controller import ControllerConfig, KafkaController
from kafka_topic_operator.process.argparsing import (
    RaisingParser,
    UsageError,
    add_log_level_argument,
    boolean,
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
    zookeeper_tls,
)

EXIT_FAILURE = 1
EXIT_USAGE = 2


def _percentage(text: str) -> int:
    value = non_negative_int(text)
    if value > 100:
        raise argparse.ArgumentTypeError(f"{value} is more than 100")
    return value


def build_parser(prog: str = "kto controller") -> argparse.ArgumentParser:
    parser = RaisingParser(
        prog=prog,
        description="Run the controller: it elects itself through /controller and drives "
        "partition and replica states, leader elections, topic deletion and reassignment as "
        "Kafka's ZooKeeper-mode controller does. Start several for standbys.",
    )
    parser.add_argument("--zookeeper", required=True, metavar="HOST:PORT[/CHROOT]")
    parser.add_argument(
        "--id", default=0, type=non_negative_int, help="the id written in /controller (0)"
    )
    parser.add_argument(
        "--delete-topic-enable",
        default=True,
        type=boolean,
        metavar="true|false",
        help="delete.topic.enable (true); false removes deletion markers and keeps topics",
    )
    parser.add_argument(
        "--unclean-leader-election-enable",
        default=False,
        type=boolean,
        metavar="true|false",
        help="unclean.leader.election.enable when a topic does not set it (false)",
    )
    parser.add_argument(
        "--auto-leader-rebalance-enable",
        default=True,
        type=boolean,
        metavar="true|false",
        help="auto.leader.rebalance.enable (true)",
    )
    parser.add_argument(
        "--leader-imbalance-check-interval-seconds",
        default=300.0,
        type=positive_float,
        metavar="SECONDS",
        help="leader.imbalance.check.interval.seconds (300)",
    )
    parser.add_argument(
        "--leader-imbalance-per-broker-percentage",
        default=10,
        type=_percentage,
        metavar="PERCENT",
        help="leader.imbalance.per.broker.percentage (10)",
    )
    parser.add_argument(
        "--session-timeout",
        default=18.0,
        type=positive_float,
        metavar="SECONDS",
        help="ZooKeeper session timeout (18, Kafka's default)",
    )
    add_zookeeper_auth_arguments(parser, acl=True)
    add_log_level_argument(parser)
    return parser


def config_from_args(args: argparse.Namespace) -> ControllerConfig:
    credentials = zookeeper_credentials(args)
    return ControllerConfig(
        zookeeper=args.zookeeper,
        broker_id=args.id,
        delete_topic_enable=args.delete_topic_enable,
        unclean_leader_election_enable=args.unclean_leader_election_enable,
        auto_leader_rebalance_enable=args.auto_leader_rebalance_enable,
        leader_imbalance_check_interval=args.leader_imbalance_check_interval_seconds,
        leader_imbalance_per_broker_percentage=args.leader_imbalance_per_broker_percentage,
        session_timeout=args.session_timeout,
        credentials=credentials,
        secure_acls=args.zookeeper_set_acl,
        tls=zookeeper_tls(args),
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        config = config_from_args(args)
    except UsageError as e:  # zookeeper_credentials reports unreadable or malformed files too
        print(f"kto controller: {e}", file=sys.stderr)
        return EXIT_USAGE
    tune_garbage_collector()
    with process_logging(args.log_level):
        return _run(KafkaController(config))


def _run(controller: KafkaController) -> int:
    with termination_requested() as stop:
        try:
            controller.start()
        except ZkConnectionError as e:
            print(f"kto controller: {e}", file=sys.stderr)
            return EXIT_FAILURE
        print(
            f"kto controller: {controller.broker_id} started against {controller.config.zookeeper}",
            file=sys.stderr,
            flush=True,
        )
        stop.wait()
        controller.stop()
        return 0
