"""Capture request frames from real clients into tests/golden/frames.json.

Run by hand when adding clients or versions: ``python tests/golden/capture.py``.
Each entry keeps the client, API key, version and the request frame as hex; the
golden test decodes each with our codec and re-encodes it byte for byte.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess

from emulator import Cluster

OUT = pathlib.Path(__file__).with_name("frames.json")


def main() -> None:
    captured: dict[tuple[str, int, int], str] = {}
    current = {"client": ""}

    def observe(broker: int, key: int, version: int, frame: bytes, resp: bytes | None) -> None:
        captured.setdefault((current["client"], key, version), frame.hex())

    with Cluster(3, port=0) as c:
        c.server.frame_observers.append(observe)
        c.create_topic("golden", 2, 3)
        b = c.bootstrap_servers

        current["client"] = "confluent-kafka"
        from confluent_kafka import Consumer, Producer, TopicPartition

        p = Producer({"bootstrap.servers": b, "compression.type": "lz4"})
        p.produce("golden", key=b"k", value=b"v", headers=[("h", b"1")])
        p.flush(10)
        cons = Consumer({"bootstrap.servers": b, "group.id": "golden",
                         "auto.offset.reset": "earliest"})
        cons.subscribe(["golden"])
        for _ in range(10):
            cons.poll(0.5)
        cons.commit(asynchronous=False)
        cons.get_watermark_offsets(TopicPartition("golden", 0), timeout=5)
        cons.close()
        tp = Producer({"bootstrap.servers": b, "transactional.id": "golden-tx"})
        tp.init_transactions(10)
        tp.begin_transaction()
        tp.produce("golden", b"tx")
        tp.commit_transaction(10)

        current["client"] = "kafka-python"
        from kafka import KafkaConsumer, KafkaProducer

        kp = KafkaProducer(bootstrap_servers=b)
        kp.send("golden", b"v", partition=1).get(10)
        kp.close()
        kc = KafkaConsumer("golden", bootstrap_servers=b, group_id="golden-kp",
                           auto_offset_reset="earliest", consumer_timeout_ms=3000)
        list(kc)
        kc.commit()
        kc.close()
        from kafka.admin import KafkaAdminClient, NewTopic

        ka = KafkaAdminClient(bootstrap_servers=b)
        ka.create_topics([NewTopic("golden-admin", 1, 1)])
        ka.describe_topics(["golden-admin"])
        ka.delete_topics(["golden-admin"])
        ka.close()

        current["client"] = "aiokafka"
        from aiokafka import AIOKafkaProducer

        async def aio() -> None:
            ap = AIOKafkaProducer(bootstrap_servers=b)
            await ap.start()
            await ap.send_and_wait("golden", b"v")
            await ap.stop()

        asyncio.run(aio())

        current["client"] = "kcat"
        subprocess.run(["kcat", "-b", b, "-L"], capture_output=True, timeout=30, check=False)
    entries = [
        {"client": cl, "api_key": k, "api_version": v, "frame": hx}
        for (cl, k, v), hx in sorted(captured.items())
    ]
    OUT.write_text(json.dumps(entries, indent=1) + "\n")
    print(f"captured {len(entries)} frames into {OUT}")


if __name__ == "__main__":
    main()
