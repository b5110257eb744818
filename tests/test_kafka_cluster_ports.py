"""The ports client_tests/kafka_cluster.py plans for Kafka's JVMs: below the kernel's
ephemeral range (no bind to 0 and no outgoing connection can take one before the JVM
binds it), never one port twice across this machine's test processes, released at stop,
and a reservation whose process is gone taken back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from client_tests.kafka_cluster import (
    JVM_PORT_RANGE,
    RESERVED,
    _take_back_if_stale,
    release_port,
    reserve_port,
)


def _ephemeral_low() -> int:
    return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])


def test_reserved_ports_are_below_the_ephemeral_range_and_never_twice() -> None:
    ports = [reserve_port() for _ in range(200)]
    try:
        assert len(set(ports)) == len(ports)
        assert all(JVM_PORT_RANGE[0] <= p < JVM_PORT_RANGE[1] < _ephemeral_low() for p in ports)
        assert all((RESERVED / str(p)).read_text() == str(os.getpid()) for p in ports)
    finally:
        for p in ports:
            release_port(p)
    assert not any((RESERVED / str(p)).exists() for p in ports)


def test_another_process_never_gets_a_reserved_port() -> None:
    mine = [reserve_port() for _ in range(300)]
    try:
        code = ("from client_tests.kafka_cluster import reserve_port, release_port\n"
                "ps = [reserve_port() for _ in range(300)]\n"
                "print(' '.join(map(str, ps)))\n"
                "[release_port(p) for p in ps]\n")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, timeout=60).stdout.split()
        assert len(out) == 300 and not set(map(int, out)) & set(mine)
    finally:
        for p in mine:
            release_port(p)


def test_a_reservation_of_a_process_gone_is_taken_back() -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    port = reserve_port()
    mark = RESERVED / str(port)
    try:
        _take_back_if_stale(mark)  # this process's own: kept
        assert mark.read_text() == str(os.getpid())
        mark.write_text(gone)
        _take_back_if_stale(mark)
        assert not mark.exists()
    finally:
        release_port(port)
