"""A Spark standalone cluster on this machine: one master and two worker JVMs started
from the installed PySpark's ``spark-class``, so executors are JVMs of their own that
reach the brokers themselves (not threads of the driver, as in local mode).

    with StandaloneCluster(workers=2) as url:          # spark://127.0.0.1:PORT
        spark = build_session(master=url, conf=STANDALONE_CONF)

``SPARK_VALIDATION_CLUSTER=standalone`` makes spark_validation's ``spark`` fixture run
every job this way (conftest.py); test_standalone.py runs the streaming-through-faults
job and the example pipeline so in CI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from client_tests.kafka_cluster import PortReservations

# Two executors of one core each, small heaps: a 2-core machine shared with the brokers.
STANDALONE_CONF: dict[str, str] = {
    "spark.cores.max": "2",
    "spark.executor.cores": "1",
    "spark.executor.memory": "768m",
    "spark.driver.memory": "1g",
}


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


class StandaloneCluster:
    """Master + ``workers`` Worker JVMs, stopped (by pid) on exit."""

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g",
                 timeout_s: float = 120.0) -> None:
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.timeout_s = timeout_s
        self.procs: list[subprocess.Popen] = []
        self.dir = Path(tempfile.mkdtemp(prefix="spark-standalone-"))
        self.url = ""
        # below the ephemeral range and reserved across the suite's processes: a port
        # the kernel picked could be another connection's before the JVM binds it
        self.ports = PortReservations()

    def _spawn(self, name: str, *args: str) -> Path:
        home = spark_home()
        env = {**os.environ, "SPARK_HOME": home, "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": sys.executable,
               "SPARK_LOG_DIR": str(self.dir), "SPARK_WORKER_DIR": str(self.dir / "work")}
        log = self.dir / f"{name}.log"
        with open(log, "wb") as out:
            self.procs.append(subprocess.Popen(
                [os.path.join(home, "bin", "spark-class"), *args], env=env, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True))
        return log

    def _wait_log(self, log: Path, text: str, what: str) -> None:
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if text in log.read_text(errors="replace"):
                return
            for p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{what}: a Spark JVM exited with {p.returncode}; "
                                       f"log {log}:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        raise RuntimeError(f"{what}: not seen in {self.timeout_s:g}s; log {log}:\n"
                           f"{log.read_text(errors='replace')[-3000:]}")

    def start(self) -> str:
        port = self.ports.take()
        master = self._spawn("master", "org.apache.spark.deploy.master.Master",
                             "--host", "127.0.0.1", "--port", str(port),
                             "--webui-port", str(self.ports.take()))
        self.url = f"spark://127.0.0.1:{port}"
        self._wait_log(master, "I have been elected leader", "the Spark master")
        for i in range(self.workers):
            log = self._spawn(f"worker-{i}", "org.apache.spark.deploy.worker.Worker",
                              "--host", "127.0.0.1", "--cores", str(self.cores),
                              "--memory", self.memory, "--webui-port", str(self.ports.take()),
                              "--work-dir", str(self.dir / f"work-{i}"), self.url)
            self._wait_log(log, "Successfully registered with master", f"Spark worker {i}")
        return self.url

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs.clear()
        self.ports.release()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_for_executors(spark, count: int, timeout_s: float = 120.0) -> list[str]:
    """The executors' ids (SparkContext.getExecutorIds: the driver is not one) once
    ``count`` have registered."""
    deadline = time.monotonic() + timeout_s
    while True:
        ids = spark.sparkContext._jsc.sc().getExecutorIds()
        executors = [str(ids.apply(i)) for i in range(ids.size())]
        if len(executors) >= count:
            return sorted(executors)
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {executors} of {count} executors registered")
        time.sleep(0.5)
