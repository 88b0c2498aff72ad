"""The SparkSession the planner runs in: a local one (`local[*]` by default, loopback only), or
the one spark-submit set up (the kubernetes and sparkApplication engines' drivers)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The driver on loopback: a machine whose name resolves elsewhere still works alone.
LOOPBACK = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


def session_conf(*, shuffle_partitions: int, local: bool) -> dict[str, str]:
    """The settings the planner gives its session. Never the driver's address under
    spark-submit: in cluster mode on Kubernetes it is the driver pod's, which executors reach."""
    conf = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",  # progress is the planner's to report
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.sql.session.timeZone": "UTC",
    }
    return {**conf, **LOOPBACK} if local else conf


def local_session(
    app: str,
    *,
    master: str = "local[*]",
    shuffle_partitions: int = 16,
    driver_memory: str | None = None,
) -> SparkSession:
    """A local Spark in this process (the local engine, kto plan, the tests)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app)
    for key, value in session_conf(shuffle_partitions=shuffle_partitions, local=True).items():
        builder = builder.config(key, value)
    if driver_memory:
        builder = builder.config("spark.driver.memory", driver_memory)
    return _started(builder)


def submitted_session(app: str, *, shuffle_partitions: int = 16) -> SparkSession:
    """The session of an application spark-submit launched: master, deploy mode, the driver's
    address and memory are spark-submit's (its --master and --conf, or the Spark operator's)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app)
    for key, value in session_conf(shuffle_partitions=shuffle_partitions, local=False).items():
        builder = builder.config(key, value)
    return _started(builder)


def _started(builder: SparkSession.Builder) -> SparkSession:
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
