"""The one place that holds the Spark versions; everything else asks here.

The connector must be the build of the PySpark that runs it: Spark's Kafka source
uses Spark internals that change between releases, so ``spark-sql-kafka-0-10`` 4.0.1
on PySpark 4.0.4, or a _2.12 jar on a Scala 2.13 Spark, fails at run time with
NoSuchMethodError or ClassNotFoundException. So one number, ``SPARK_VERSION``, is both
the PySpark that scripts/setup.d/40-spark.sh installs and the connector that
fetch_jars.py resolves (pom.xml gets it as a property), and the Scala binary version
follows from it (3.5 is built for Scala 2.12, 4.x only for 2.13). session.py refuses
to start when the installed PySpark is any other version.

Why a pin and not "whatever pip installed": a PySpark release is useless without its
own connector and the connector's own token provider, and the Maven repository this
project's machines reach does not carry every release: PySpark 4.0.5 is on PyPI but
spark-sql-kafka-0-10_2.13:4.0.5 is not there, and for 4.0.1-4.0.4 the connector is
there but spark-token-provider-kafka-0-10 is not. 4.0.0 (kafka-clients 3.9.0) resolves
completely, and so does 3.5.7 (Scala 2.12, kafka-clients 3.4.1). Move the pin only to a
release whose whole closure ``python -m spark_validation.fetch_jars`` can fetch.

The version matrix (``MATRIX``): the newest release of each line whose whole closure
Central serves, checked 2026-11-23 by asking for each jar: 3.5.7 is the newest 3.5 with
a Scala 2.12 connector and token provider (3.5.8/3.5.9 are on PyPI, not on Central for
2.12); 4.2.0 the newest 4.x (4.2.1 and 4.3.0 are on PyPI, their connectors are not on
Central; 4.1.0/4.1.2/4.1.3 lack the token provider, 4.1.1 is complete but older).
``DEFAULT_SPARK_VERSION`` is the PySpark of the test extra and of CI; the others each
run from a venv of their own (spark_validation/venvs.py, scripts/spark_matrix).
``SPARK_VALIDATION_SPARK=3.5.7`` picks the release for everything below; the process
must then run on that release's PySpark (the venv's python), or check_pyspark fails.
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

DEFAULT_SPARK_VERSION = "4.0.0"  # the test extra's PySpark; CI runs this one
# Release -> what it is there for. The matrix script runs the Spark tests on each.
MATRIX: dict[str, str] = {
    "3.5.7": "newest Spark 3.5 on Central (Scala 2.12, kafka-clients 3.4.1)",
    "4.0.0": "the test extra's PySpark, run by CI (kafka-clients 3.9.0)",
    "4.2.0": "newest 4.x whose whole closure Central serves (kafka-clients 3.9.2)",
}
# PySpark and spark-sql-kafka-0-10: always the same release.
SPARK_VERSION = os.environ.get("SPARK_VALIDATION_SPARK", "") or DEFAULT_SPARK_VERSION


def scala_binary_version(spark_version: str) -> str:
    """Scala binary version a Spark release is built for: 3.x -> 2.12, 4.x -> 2.13."""
    major = int(spark_version.split(".")[0])
    if major == 3:
        return "2.12"
    if major == 4:
        return "2.13"
    raise RuntimeError(f"no known Scala binary version for Spark {spark_version}")


SCALA_BINARY_VERSION = scala_binary_version(SPARK_VERSION)
CONNECTOR_VERSION = SPARK_VERSION
CONNECTOR_COORDINATES = (
    f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_BINARY_VERSION}:{CONNECTOR_VERSION}")
PYSPARK_REQUIREMENT = f"pyspark=={SPARK_VERSION}"
DEFAULT_PYSPARK_REQUIREMENT = f"pyspark=={DEFAULT_SPARK_VERSION}"

HERE = Path(__file__).resolve().parent
JARS_DIR = HERE / "jars" / f"spark-{SPARK_VERSION}_{SCALA_BINARY_VERSION}"  # gitignored


def installed_pyspark() -> str | None:
    try:
        return version("pyspark")
    except PackageNotFoundError:
        return None


def check_pyspark() -> None:
    """Fail loudly unless the installed PySpark is the release the connector is for."""
    got = installed_pyspark()
    if got == SPARK_VERSION:
        return
    if SPARK_VERSION == DEFAULT_SPARK_VERSION:
        how = f"run scripts/setup.d/40-spark.sh (pip install '{PYSPARK_REQUIREMENT}')"
    else:
        how = (f"run on that release's venv: scripts/spark_matrix {SPARK_VERSION} "
               f"(or python -m spark_validation.venvs {SPARK_VERSION} and its python)")
    raise RuntimeError(
        f"PySpark {got or 'is not installed'}{' is installed' if got else ''} in "
        f"{sys.executable}, but the Kafka connector is {CONNECTOR_COORDINATES}: {how}")


if __name__ == "__main__":
    # Shell-friendly queries for scripts/setup.d/40-spark.sh.
    arg = sys.argv[1] if len(sys.argv) > 1 else ""
    if arg == "--pip-requirement":
        print(PYSPARK_REQUIREMENT)
    elif arg == "--spark-version":
        print(SPARK_VERSION)
    elif arg == "--matrix":
        print(" ".join(MATRIX))
    else:
        print(f"pyspark {SPARK_VERSION} (installed: {installed_pyspark()})  "
              f"scala {SCALA_BINARY_VERSION}  connector {CONNECTOR_COORDINATES}  "
              f"jars {JARS_DIR}")
