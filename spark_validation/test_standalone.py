"""The streaming-through-faults job and the example pipeline on a Spark standalone cluster
(a master and two worker JVMs from the installed PySpark, spark_validation/standalone.py),
against the in-process emulator, and both again against the emulator in its Docker
container advertised on this host's address (check_docker.py): the Kafka consumers
and producers run in executor JVMs of their own that reach the brokers themselves. Run
as a separate pytest process (a process holds one SparkContext; this run's ``spark``
fixture is local[2]); its conftest fails unless both executors register."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_faults_job_example_pipeline_and_docker_emulator_on_a_standalone_cluster() -> None:
    env = {**os.environ, "SPARK_VALIDATION_CLUSTER": "standalone",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", "-p",
         "no:xdist", str(ROOT / "spark_validation" / "test_faults.py"),
         str(ROOT / "spark_validation" / "test_example_pipeline.py"),
         str(ROOT / "spark_validation" / "check_docker.py")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-6000:]
    assert "standalone cluster spark://127.0.0.1:" in out, out[-3000:]
    assert "executors ['0', '1']" in out and "3 passed" in out, out[-3000:]
