"""Build an error response for any API from its request.

Used when a fault injects an error code for a request and when a handler fails
with our own bug: the client gets a well-formed response carrying the code on
every partition it asked about (or at the top level), never a broken frame.
"""

from __future__ import annotations

from wire.messages import RESPONSES
from wire.schema import Array, Struct


def _mirror(key: int, req: dict, code: int) -> dict | None:
    if key == 0:  # Produce
        return {"responses": [
            {"name": t["name"], "topic_id": t.get("topic_id"), "partition_responses": [
                {"index": p["index"], "error_code": code, "base_offset": -1}
                for p in t["partition_data"]]}
            for t in req["topic_data"]]}
    if key == 1:  # Fetch
        return {"responses": [
            {"topic": t.get("topic", ""), "topic_id": t.get("topic_id"), "partitions": [
                {"partition_index": p["partition"], "error_code": code, "high_watermark": -1,
                 "records": b""} for p in t["partitions"]]}
            for t in req["topics"]]}
    if key == 2:  # ListOffsets
        return {"topics": [{"name": t["name"], "partitions": [
            {"partition_index": p["partition_index"], "error_code": code}
            for p in t["partitions"]]} for t in req["topics"]]}
    return None


def _fill(struct: Struct, code: int, message: str | None) -> dict:
    out: dict = {}
    for f in struct.fields:
        if f.name == "error_code":
            out["error_code"] = code
        elif f.name == "error_message" and message is not None:
            out["error_message"] = message
    return out


def error_response(key: int, version: int, req: dict, code: int, message: str | None = None) -> dict:
    body = _mirror(key, req, code)
    if body is not None:
        return body
    msg = RESPONSES[key].msg
    body = _fill(msg.struct, code, message)
    if "error_code" not in body:
        # Per-item errors only: mirror the first array of the request with the code.
        for f in msg.struct.fields:
            if isinstance(f.type, Array) and isinstance(f.type.item, Struct):
                src = next((v for v in req.values() if isinstance(v, list)), [])
                body[f.name] = [dict(_fill(f.type.item, code, message), **{
                    k: v for k, v in (x.items() if isinstance(x, dict) else [])
                    if k in {g.name for g in f.type.item.fields} and not isinstance(v, list)})
                    for x in src]
                break
    return body
