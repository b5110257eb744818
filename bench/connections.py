"""Scale (docs/scale.md): many client connections on a cluster with many partitions.

One emulator process (3 brokers, replication factor 3) gets ``--partitions`` partitions
(100,000 by default, in topics of 100), then ``--connections`` client connections (2,000
by default, spread over the brokers). Each connection sends ApiVersions, then for
``--seconds`` one small request a second (Metadata for one topic, as a client refreshing
its own topics does), all driven by one selector loop in this process. Meanwhile a
confluent-kafka producer measures acks=all latency on its own topic.

Prints: topic-creation time, RSS after creation and with every connection open (and the
bytes each connection costs), the requests answered and their p50/p99/max latency, the
acks=all p50/p99 under that load, and whether any connection was refused or dropped.
Asserts nothing (the machine is shared; figures are noisy).

    python bench/connections.py [--partitions 100000] [--connections 2000] [--seconds 20]
"""

from __future__ import annotations

import argparse
import os
import random
import selectors
import socket
import statistics
import sys
import threading
import time
from collections.abc import Iterator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import compare  # noqa: E402
import scale  # noqa: E402

from wire.connection import ClientConnection  # noqa: E402


class Client:
    """One raw connection: at most one request in flight, answers read incrementally."""

    def __init__(self, addr: tuple[str, int], index: int) -> None:
        self.sock = socket.create_connection(addr, timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock.setblocking(False)
        self.index = index
        self.protocol = ClientConnection(f"conn-{index}")
        self.sent_at = self.answered_at = 0.0
        self.in_flight = False

    def send(self, key: int, version: int, body: dict) -> None:
        frame = self.protocol.send_request(key, version, body)
        self.sent_at = time.perf_counter()
        self.in_flight = True
        self.sock.sendall(frame)  # small frames: the socket buffer takes them whole

    def read(self) -> tuple[dict | None, bool]:
        """(a whole response's body or None, whether the peer closed); ``answered_at``
        is when its last bytes came, before it was decoded."""
        try:
            chunk = self.sock.recv(1 << 16)
        except BlockingIOError:
            return None, False
        except OSError:
            return None, True
        if not chunk:
            return None, True
        self.protocol.receive_data(chunk)
        if not self.protocol.frame_waiting():
            return None, False
        self.answered_at = time.perf_counter()
        resp = self.protocol.next_response()
        return (resp.body if resp is not None else None), False


def drive(clients: list[Client], topics: list[str], seconds: float) -> dict[str, float]:
    """ApiVersions on every connection, then one Metadata(one topic) a second each."""
    sel = selectors.DefaultSelector()
    for c in clients:
        sel.register(c.sock, selectors.EVENT_READ, c)
    lats: list[float] = []
    closed = errors = 0

    def answers(timeout: float) -> Iterator[tuple[Client, dict]]:
        """The whole answers that arrived within ``timeout``; closed connections counted
        and dropped."""
        nonlocal closed
        for key, _ in sel.select(timeout):
            c = key.data
            body, gone = c.read()
            if gone:
                closed += 1
                c.in_flight = False
                sel.unregister(c.sock)
                c.sock.close()
            elif body is not None:
                c.in_flight = False
                yield c, body

    for c in clients:
        c.send(18, 3, {"client_software_name": "bench", "client_software_version": "1"})
    t0 = time.perf_counter()
    while any(c.in_flight for c in clients) and time.perf_counter() - t0 < 60:
        for _ in answers(1.0):
            pass
    handshake_s = time.perf_counter() - t0
    rng = random.Random(1)
    next_send = {c.index: time.perf_counter() + rng.random() for c in clients}
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        now = time.perf_counter()
        for c in clients:
            if not c.in_flight and next_send[c.index] <= now and c.sock.fileno() >= 0:
                try:
                    c.send(3, 12, {"topics": [{"topic_id": bytes(16),
                                               "name": rng.choice(topics)}],
                                   "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})
                except OSError:
                    closed += 1
                    continue
                next_send[c.index] = now + 1.0
        for c, body in answers(0.01):
            lats.append(c.answered_at - c.sent_at)
            if body["topics"][0]["error_code"] != 0:
                errors += 1
    sel.close()
    lats.sort()
    return {"handshake_s": handshake_s, "answered": len(lats),
            "p50_ms": statistics.median(lats) * 1000 if lats else float("nan"),
            "p99_ms": lats[int(len(lats) * 0.99)] * 1000 if lats else float("nan"),
            "max_ms": lats[-1] * 1000 if lats else float("nan"),
            "closed": closed, "errors": errors}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--connections", type=int, default=2_000)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()

    s = compare.start_emulator(3)
    try:
        plan = scale.topic_plan(args.partitions)
        time.sleep(1)
        rss0 = compare.rss_mb(s.pids)
        create_s = scale.create(s, plan)
        scale.wait_leaders(s, plan)
        time.sleep(1)
        rss1 = compare.rss_mb(s.pids)
        addrs = []
        for hp in s.bootstrap.split(","):
            host, port = hp.rsplit(":", 1)
            addrs.append((host, int(port)))
        clients = [Client(addrs[i % len(addrs)], i) for i in range(args.connections)]
        compare.create_topics(s, [("conn-lat", 1)])
        latency: dict[str, float] = {}

        def measure_latency() -> None:
            time.sleep(3)  # let the request load start
            latency["p50"], latency["p99"] = compare.latency(s, "conn-lat", 1000, 100)

        t = threading.Thread(target=measure_latency)
        t.start()
        with compare.PeakRss(s.pids) as peak:
            got = drive(clients, [name for name, _ in plan], args.seconds)
            rss2 = compare.rss_mb(s.pids)
        t.join()
        for c in clients:
            c.sock.close()
        load = os.getloadavg()[0]
        rows = [
            ("partitions", f"{args.partitions:,} (RF 3, 3 brokers, one process)"),
            ("topic creation", f"{create_s:.2f} s"),
            ("RSS: empty / created / with connections (peak)",
             f"{rss0:.0f} / {rss1:.0f} / {rss2:.0f} ({peak.peak:.0f}) MB"),
            ("bytes per idle partition", f"{(rss1 - rss0) * (1 << 20) / args.partitions:,.0f}"),
            ("connections", f"{args.connections:,}; ApiVersions on all answered in "
                            f"{got['handshake_s']:.2f} s"),
            ("bytes per connection", f"{(rss2 - rss1) * (1 << 20) / args.connections:,.0f}"),
            ("Metadata(one topic) requests answered", f"{got['answered']:,} in "
                                                      f"{args.seconds:.0f} s"),
            ("their latency p50 / p99 / max", f"{got['p50_ms']:.1f} / {got['p99_ms']:.1f} / "
                                              f"{got['max_ms']:.1f} ms"),
            ("acks=all p50 / p99 under that load",
             f"{latency.get('p50', float('nan')):.2f} / {latency.get('p99', float('nan')):.2f}"
             " ms"),
            ("connections closed by the server / error answers",
             f"{got['closed']} / {got['errors']}"),
            ("load average (1 min) at the end", f"{load:.1f}"),
        ]
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k:<{width}}  {v}")
    finally:
        s.stop()


if __name__ == "__main__":
    main()
