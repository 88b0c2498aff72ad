"""Entry point: `python -m kube_api_emulator --port N [--state-file F]`."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
from pathlib import Path

from .server import serve
from .watch import DEFAULT_RING_CAPACITY


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m kube_api_emulator",
        description="A Kubernetes API server emulator on 127.0.0.1 (plain HTTP).",
    )
    parser.add_argument("--port", type=int, default=8001, help="port to listen on (0: any)")
    parser.add_argument("--state-file", type=Path, help="JSON snapshot: loaded, saved on exit")
    parser.add_argument("--kubeconfig", type=Path, help="write a kubeconfig for this server")
    parser.add_argument(
        "--watch-history",
        type=int,
        default=DEFAULT_RING_CAPACITY,
        help="events kept per resource for watches resuming from a resourceVersion",
    )
    parser.add_argument("--bookmark-interval", type=float, default=60.0)
    args = parser.parse_args(argv)
    # The store and its watch rings live as long as the server: with CPython's default
    # thresholds, collections scanning them again and again took 40% of its time while 10,000
    # resources were created. What startup made is frozen out of them, and young ones run less.
    gc.freeze()
    gc.set_threshold(50_000, *gc.get_threshold()[1:])
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    asyncio.run(
        serve(
            args.port,
            state_file=args.state_file,
            kubeconfig_path=args.kubeconfig,
            ring_capacity=args.watch_history,
            bookmark_interval=args.bookmark_interval,
        )
    )


if __name__ == "__main__":
    main()
