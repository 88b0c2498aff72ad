"""`make bench`: every benchmark figure of the project, each beside its anchor, in one run."""

from __future__ import annotations

import os
import platform
import time

import bench_apiserver
import bench_assignment
import bench_controller
import bench_kraft
import bench_node
import bench_operator
import bench_peers
import bench_rebalance


def main() -> None:
    print(f"# kafka-topic-operator benchmarks, {time.strftime('%Y-%m-%d %H:%M')}")
    print(
        f"# python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus; "
        "each ratio is measured in the same run"
    )
    bench_assignment.main()
    bench_apiserver.main()
    bench_controller.main()
    bench_operator.main()
    bench_operator.idle()
    bench_kraft.main()
    bench_node.main()
    bench_rebalance.main()
    bench_rebalance.goals()
    bench_rebalance.scale()
    bench_rebalance.scale(racks=5)
    bench_rebalance.scale_swaps()
    bench_peers.small_plan()


if __name__ == "__main__":
    main()
