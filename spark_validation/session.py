"""A SparkSession with Spark's Kafka connector on its classpath, sized for 2 cores.

    from spark_validation.session import build_session
    spark = build_session()              # local[2], connector jars via spark.jars

The jars come from the Maven cache folder (fetch_jars.py fetches them on first use),
never from Ivy. The PySpark release must be the connector's (versions.py): a mismatch
fails here, before the JVM starts, instead of deep inside a query.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from spark_validation import fetch_jars, versions

# What a small test machine wants: two worker threads, two shuffle partitions instead
# of 200 (one task each is plenty for test data), no web UI to bind a port.
DEFAULT_CONF: dict[str, str] = {
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "2g",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.forceDeleteTempCheckpointLocation": "true",
    # Stopped queries must not wait long for their executors' Kafka consumers.
    "spark.sql.streaming.stopTimeout": "30s",
    "spark.driver.host": "127.0.0.1",
    # Sink producers are cached per parameters; each test's emulator is gone when the
    # test ends, so idle ones are closed soon instead of reconnecting for 10 minutes.
    "spark.kafka.producer.cache.timeout": "20s",
    "spark.kafka.producer.cache.evictorThreadRunInterval": "5s",
}


def build_session(app_name: str = "kafka-emulator-spark", master: str = "local[2]",
                  conf: dict[str, str] | None = None) -> Any:
    """Get or create the process's SparkSession with the connector jars loaded."""
    versions.check_pyspark()
    jars = fetch_jars.connector_jars()
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", _python())
    # Without it Spark looks up the machine's outward address, and on hosts whose
    # reverse DNS does not answer that costs tens of seconds per session (measured:
    # 66 s to the first query instead of 21 s). The emulator is on loopback anyway.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {
        **DEFAULT_CONF,
        "spark.jars": ",".join(str(j) for j in jars),
        "spark.sql.warehouse.dir": os.path.join(tempfile.gettempdir(), "spark-warehouse"),
        **(conf or {}),
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("SPARK_LOG_LEVEL", "WARN"))
    return spark


def _python() -> str:
    import sys

    return sys.executable
