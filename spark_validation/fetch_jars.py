"""Fetch Spark's Kafka connector jars from Maven Central into the jars cache.

    python -m spark_validation.fetch_jars          # idempotent; prints the jar folder

Runs ``mvn dependency:copy-dependencies`` on spark_validation/pom.xml with the versions
from versions.py. Maven, not Ivy (``spark.jars.packages``): Maven Central is reached
through Maven itself here, and a plain folder of jars is easy to cache and inspect.
A ``.complete`` marker, written last, makes a half-finished copy count as absent.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from spark_validation import versions

POM = versions.HERE / "pom.xml"
MARKER = ".complete"


def jars_ready(jars_dir: Path = versions.JARS_DIR) -> bool:
    # A cache fetched before spark-avro joined the pom counts as absent.
    return (jars_dir / MARKER).exists() and any(jars_dir.glob("spark-avro_*.jar"))


def fetch(jars_dir: Path = versions.JARS_DIR, quiet: bool = True) -> Path:
    """Resolve the connector for the installed PySpark into ``jars_dir``; return it."""
    if jars_ready(jars_dir):
        return jars_dir
    mvn = shutil.which("mvn")
    if mvn is None:
        raise RuntimeError("Maven (mvn) is needed to fetch the Spark Kafka connector jars: "
                           "apt-get install maven (scripts/setup.d/40-spark.sh does it)")
    if jars_dir.exists():
        shutil.rmtree(jars_dir)
    jars_dir.mkdir(parents=True)
    cmd = [mvn, "-B", *(["-q"] if quiet else []), "-f", str(POM),
           "dependency:copy-dependencies",
           f"-Dspark.version={versions.SPARK_VERSION}",
           f"-Dscala.binary.version={versions.SCALA_BINARY_VERSION}",
           f"-DoutputDirectory={jars_dir}",
           "-DincludeScope=runtime"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(
            f"fetching {versions.CONNECTOR_COORDINATES} failed ({' '.join(cmd)}):\n"
            f"{done.stdout[-4000:]}{done.stderr[-4000:]}")
    jars = sorted(p.name for p in jars_dir.glob("*.jar"))
    connector = f"spark-sql-kafka-0-10_{versions.SCALA_BINARY_VERSION}-{versions.SPARK_VERSION}.jar"
    if connector not in jars:
        raise RuntimeError(f"{connector} missing after mvn; got {jars}")
    (jars_dir / MARKER).write_text("\n".join(jars) + "\n")
    return jars_dir


def connector_jars(jars_dir: Path | None = None) -> list[Path]:
    """The fetched jars (fetching them first if needed), in a stable order."""
    d = fetch(jars_dir or versions.JARS_DIR)
    return sorted(d.glob("*.jar"))


def main() -> int:
    d = fetch(quiet="-v" not in sys.argv)
    print(f"{versions.CONNECTOR_COORDINATES} -> {d}")
    for j in sorted(d.glob("*.jar")):
        print(f"  {j.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
