"""The `kto` command line: the KafkaTopic operator (run), rebalance plans (plan), the dev cluster,
what a cluster holds (describe), and previews of Kafka's placement rules (assign, partition-for,
consumers).

Every error is one line on stderr, never a traceback: exit status 2 for bad input (flags, a
chroot or topic that does not exist, a cluster no plan can balance), 1 when something could not
be reached or started (ZooKeeper, a broker, the dev cluster).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points

from kafka_topic_operator import __version__
from kafka_topic_operator.cli import describe
from kafka_topic_operator.kafka.errors import KafkaError
from kafka_topic_operator.previews import assign, consumers, partition_for
from kafka_topic_operator.process.argparsing import RaisingParser, UsageError

EXIT_USAGE = 2
EXIT_FAILURE = 1
# Commands the development tools (a distribution of their own, not in the operator's image)
# provide under this entry-point group: the dev cluster and the stand-in broker.
DEVELOPMENT_COMMANDS = ("dev-broker", "dev-cluster")
ENTRY_POINT_GROUP = "kto.commands"
COMMANDS = (
    "assign",
    "partition-for",
    "consumers",
    "describe",
    "dev-broker",
    "controller",
    "run",
    "dev-cluster",
    "plan",
)


def build_parser() -> argparse.ArgumentParser:
    parser = RaisingParser(prog="kto", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=RaisingParser)
    for command in (assign, partition_for, consumers, describe):
        command.add_command(commands)

    commands.add_parser(
        "controller",
        help="run the Kafka-compatible controller; see kto controller --help",
        add_help=False,
    )
    commands.add_parser(
        "dev-cluster",
        help="start, stop or inspect the standalone dev cluster; see kto dev-cluster --help",
        add_help=False,
    )
    commands.add_parser(
        "plan",
        help="a rebalance plan (reassignment JSON and HTML report); see kto plan --help",
        add_help=False,
    )
    commands.add_parser(
        "run",
        help="run the KafkaTopic operator; see kto run --help",
        add_help=False,
    )
    commands.add_parser(
        "dev-broker",
        help="run a dev broker (a stand-in Kafka broker); see kto dev-broker --help",
        add_help=False,
    )
    return parser


def _development_command(name: str, argv: list[str]) -> int:
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    if not found:
        print(
            f"kto {name}: error: this needs kto's development tools, which the operator's image "
            "leaves out; in a clone of the project, `make setup` installs them",
            file=sys.stderr,
        )
        return EXIT_FAILURE
    command: Callable[[list[str]], int] = next(iter(found)).load()
    return command(argv)


def main(argv: Sequence[str] | None = None) -> int:
    # The ZooKeeper client's connection chatter never reaches the terminal of a short command;
    # the long-running ones (run, controller, dev-broker) log its warnings in their own format.
    logging.getLogger("kazoo").addHandler(logging.NullHandler())
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if not words:
        parser.print_help()
        return 0
    command = f"kto {words[0]}" if words and words[0] in COMMANDS else "kto"
    if words and words[0] in DEVELOPMENT_COMMANDS:
        return _development_command(words[0], words[1:])
    if words and words[0] == "run":
        from kafka_topic_operator.k8s.cli import main as run_operator

        return run_operator(words[1:])
    if words and words[0] == "plan":
        from kafka_topic_operator.cli.plan import main as plan

        return plan(words[1:])
    if words and words[0] == "controller":
        from kafka_topic_operator.controller.cli import main as controller

        return controller(words[1:])
    try:
        args = parser.parse_args(words)
        run: Callable[[argparse.Namespace], None] = args.run
        run(args)
    except UsageError as e:
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KafkaError as e:
        print(f"{command}: {e.kafka_name}: {e.message}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as e:
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0
    except RuntimeError as e:  # ZooKeeper unreachable and the like
        print(f"{command}: error: {e}", file=sys.stderr)
        return EXIT_FAILURE
    return 0
