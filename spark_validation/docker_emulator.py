"""The emulator in its Docker container, advertised on an address of this host, as the
``cluster`` of a Spark job.

    with DockerEmulator() as cluster:            # kafka-emulator:latest, 3 brokers
        stream_through_faults.run(spark, cluster, work)

Production-like: the brokers run in a container and advertise the host's own address
(not localhost, not the container's), so the executors of a Spark standalone cluster,
JVMs of their own, reach them through the ports the container publishes on every host
interface, as executors on other machines would. The address is the one this host
routes outward from (``host_address()``) unless ``SPARK_VALIDATION_ADVERTISED_HOST``
names one.

What a job may use is what a remote cluster offers: ``bootstrap_servers``,
``broker_ids`` and ``stop_broker``/``start_broker`` (through the container's HTTP
control plane); partition state comes from Metadata (kafka_util.partition_state).

Needs a Docker engine and the image, which scripts/setup.d/50-docker.sh provides (it
is the one place that starts dockerd); without them this fails and says so.
"""

from __future__ import annotations

import os
import socket
from typing import Any

IMAGE = os.environ.get("KAFKA_EMULATOR_IMAGE", "kafka-emulator:latest")
SETUP = "scripts/setup.d/50-docker.sh"


def host_address() -> str:
    """This host's outward IPv4 address (the source address of its default route; no
    packet is sent), falling back to the Docker bridge's gateway address.

    Routing is asked for two documentation addresses: one may be this host's own subnet's
    broadcast address (a CI machine had 192.0.2.2/24, where connecting to 192.0.2.255
    fails without SO_BROADCAST)."""
    explicit = os.environ.get("SPARK_VALIDATION_ADVERTISED_HOST")
    if explicit:
        return explicit
    for probe in ("198.51.100.1", "192.0.2.1"):  # TEST-NET-2/-1: routing only
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect((probe, 9))
                addr = s.getsockname()[0]
            except OSError:
                continue
        if addr and not addr.startswith(("127.", "0.")):
            return addr
    import ipaddress

    import docker

    config = docker.from_env().networks.get("bridge").attrs["IPAM"]["Config"][0]
    if config.get("Gateway"):
        return config["Gateway"]
    # Newer engines leave Gateway out of the default bridge's IPAM: the bridge (docker0)
    # holds the subnet's first address.
    return str(next(ipaddress.ip_network(config["Subnet"]).hosts()))


def check_docker() -> None:
    """Fail with the reason (never skip) when the engine or the image is missing."""
    import docker

    try:
        client = docker.from_env()
        client.ping()
    except Exception as e:  # noqa: BLE001 - any failure means the same thing here
        raise RuntimeError(f"no Docker engine answers ({e}); run {SETUP} "
                           "(the project's scripts start dockerd, tests never do)") from e
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound as e:
        raise RuntimeError(f"image {IMAGE} is missing; run {SETUP} to build it") from e


class DockerEmulator:
    """A 3-broker emulator container with the small interface the Spark jobs use."""

    def __init__(self, brokers: int = 3, image: str = IMAGE,
                 config: dict[str, str] | None = None) -> None:
        from testcontainers.core.config import testcontainers_config

        from emulator.containers import KafkaEmulatorContainer

        # Ryuk, testcontainers' reaper, is an image pulled from a registry, and none is
        # reachable here; __exit__ removes the container instead.
        testcontainers_config.ryuk_disabled = True
        check_docker()
        self.address = host_address()
        self.container = KafkaEmulatorContainer(image, brokers=brokers, config=config,
                                                advertised_host=self.address)
        self.broker_ids = list(range(1, brokers + 1))
        self.bootstrap_servers = ""

    def stop_broker(self, broker_id: int, controlled: bool = False) -> Any:
        return self.container.stop_broker(broker_id, controlled=controlled)

    def start_broker(self, broker_id: int) -> Any:
        return self.container.start_broker(broker_id)

    def __enter__(self) -> DockerEmulator:
        self.container.start()
        self.bootstrap_servers = self.container.get_bootstrap_server()
        return self

    def __exit__(self, *exc: object) -> None:
        self.container.stop()
