"""The local SparkSession the planner runs in (`local[*]` by default): loopback only, no UI."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def local_session(
    app: str,
    *,
    master: str = "local[*]",
    shuffle_partitions: int = 16,
    driver_memory: str | None = None,
) -> SparkSession:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")  # progress is the planner's to report
        # The driver on loopback: a machine whose name resolves elsewhere still works alone.
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
    )
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
