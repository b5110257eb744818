"""Start-to-ready times of each way in: in-process, command line, container.

"Ready" is the first answered ApiVersions request on the first broker's port, the
moment a client could start working. Figures are printed, never asserted.

    python bench/start_to_ready.py               # in-process and command line
    python bench/start_to_ready.py --container   # also docker and testcontainers
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from emulator.blocking_client import BlockingConnection  # noqa: E402


def api_versions_answered(host: str, port: int, deadline: float) -> None:
    """Retry until one ApiVersions round trip succeeds."""
    while True:
        try:
            with BlockingConnection.connect(host, port, "bench", timeout=2) as c:
                if c.call(18, 0, {})["error_code"] == 0:
                    return
        except (OSError, ValueError):  # ValueError: not a Kafka answer (yet)
            pass
        if time.monotonic() > deadline:
            raise TimeoutError(f"{host}:{port} never answered ApiVersions")
        time.sleep(0.005)


def free_port_block(n: int) -> int:
    from emulator.containers import free_port_block as block

    return block(n)


def in_process() -> tuple[float, float]:
    from emulator import Cluster

    t0 = time.perf_counter()
    c = Cluster(3, port=0).start()
    listening = time.perf_counter() - t0
    host, port = c.bootstrap_servers.split(",")[0].split(":")
    api_versions_answered(host, int(port), time.monotonic() + 30)
    ready = time.perf_counter() - t0
    c.stop()
    return listening, ready


def command_line() -> tuple[float, float]:
    port = free_port_block(3)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    printed = time.perf_counter() - t0
    assert "kafka-emulator ready" in line, line
    api_versions_answered("127.0.0.1", port, time.monotonic() + 30)
    ready = time.perf_counter() - t0
    proc.terminate()
    proc.wait(10)
    return printed, ready


def docker_run(image: str) -> tuple[float, ...]:
    """docker create, docker start, ready line: creating copies the image's files on
    the vfs storage driver, so it is reported apart from the emulator's own start."""
    port = free_port_block(3)
    t0 = time.perf_counter()
    cid = subprocess.run(
        ["docker", "create", "-e", f"KAFKA_EMULATOR_PORT={port}",
         "-p", f"{port}-{port + 2}:{port}-{port + 2}", image],
        check=True, capture_output=True, text=True).stdout.strip()
    created = time.perf_counter() - t0
    try:
        subprocess.run(["docker", "start", cid], check=True, capture_output=True)
        t1 = time.perf_counter()
        while "kafka-emulator ready" not in subprocess.run(
                ["docker", "logs", cid], capture_output=True, text=True).stdout:
            time.sleep(0.02)
        printed = time.perf_counter() - t0
        api_versions_answered("127.0.0.1", port, time.monotonic() + 60)
        now = time.perf_counter()
        return created, printed, now - t0, now - t1
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True)


def testcontainers_start(image: str) -> tuple[float, float]:
    from testcontainers.core.config import testcontainers_config

    from emulator.containers import KafkaEmulatorContainer

    testcontainers_config.ryuk_disabled = True
    t0 = time.perf_counter()
    with KafkaEmulatorContainer(image, brokers=3) as kafka:
        started = time.perf_counter() - t0
        host, port = kafka.get_bootstrap_server().split(",")[0].split(":")
        api_versions_answered(host, int(port), time.monotonic() + 60)
        return started, time.perf_counter() - t0


def report(name: str, labels: list[str], fn: Callable[[], tuple[float, ...]],
           runs: int) -> None:
    fn()  # warm-up: imports, page cache
    samples = [fn() for _ in range(runs)]
    for i, label in enumerate(labels):
        values = [s[i] for s in samples]
        print(f"{name:<16} {label:<34} median {statistics.median(values) * 1000:8.1f} ms"
              f"  min {min(values) * 1000:8.1f}  max {max(values) * 1000:8.1f}  (n={runs})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--container", action="store_true", help="also measure the image")
    ap.add_argument("--image", default=os.environ.get("KAFKA_EMULATOR_IMAGE",
                                                      "kafka-emulator:latest"))
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    answered = "first ApiVersions answered"
    report("in-process", ["start() returned", answered], in_process, args.runs * 3)
    report("command line", ["ready line printed", answered], command_line, args.runs)
    if args.container:
        runs = max(3, args.runs // 2)
        report("docker", ["container created", "ready line in logs", answered,
                          "of which docker start to answered"],
               lambda: docker_run(args.image), runs)
        report("testcontainers", ["start() returned", answered],
               lambda: testcontainers_start(args.image), runs)


if __name__ == "__main__":
    main()
