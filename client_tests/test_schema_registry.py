"""The built-in schema registry through real clients: confluent-kafka's
SchemaRegistryClient and its Avro, JSON Schema and Protobuf serializers producing and
consuming through the emulator, plain REST calls in the form the Java client sends
them (its content type, its paths), the ``_schemas`` topic as Confluent writes it, and
a restart on the same ``--data-dir`` serving the same ids (docs/schema-registry.md).
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from emulator import Cluster
from wire.records import decode_records

pytestmark = pytest.mark.emulator_only
JAVA_CTYPE = "application/vnd.schemaregistry.v1+json"

USER_V1 = {"type": "record", "name": "User", "namespace": "com.example", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": "int"}]}
USER_V2 = {**USER_V1, "fields": [*USER_V1["fields"],
                                 {"name": "email", "type": ["null", "string"],
                                  "default": None}]}
USER_V3_BAD = {**USER_V2, "fields": [*USER_V2["fields"], {"name": "phone", "type": "string"}]}
USER_BAD = {**USER_V1, "fields": [*USER_V1["fields"], {"name": "email", "type": "string"}]}


@pytest.fixture
def registry() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0, schema_registry_port=0) as c:
        yield c


def rest(url: str, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None, raw: bytes | None = None
         ) -> tuple[int, Any]:
    """One call as the Java client makes it (RestService: its content type and Accept)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None
                                        else None)
    req = urllib.request.Request(url + path, data=data, method=method, headers={
        "Content-Type": JAVA_CTYPE, "Accept": "application/vnd.schemaregistry.v1+json, "
        "application/vnd.schemaregistry+json, application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as e:
        text, status = e.read().decode(), e.code
    try:
        return status, json.loads(text)
    except json.JSONDecodeError:
        return status, text


def roundtrip(c: Cluster, topic: str, ser: Any, de: Any, values: list[Any]) -> list[Any]:
    p = Producer({"bootstrap.servers": c.bootstrap_servers})
    for v in values:
        p.produce(topic, value=ser(v, SerializationContext(topic, MessageField.VALUE)))
    assert p.flush(10) == 0
    cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": f"g-{topic}",
                     "auto.offset.reset": "earliest"})
    cons.subscribe([topic])
    out = []
    try:
        for _ in range(200):
            m = cons.poll(0.2)
            if m is None or m.error():
                if len(out) == len(values):
                    break
                continue
            out.append(de(m.value(), SerializationContext(topic, MessageField.VALUE)))
            if len(out) == len(values):
                break
    finally:
        cons.close()
    return out


# ---- confluent-kafka's serializers ------------------------------------------------------
def test_avro_serializer_roundtrip_and_evolution(registry: Cluster) -> None:
    client = SchemaRegistryClient({"url": registry.schema_registry_url})
    ser = AvroSerializer(client, json.dumps(USER_V1))
    de = AvroDeserializer(client)
    got = roundtrip(registry, "users", ser, de, [{"name": "ann", "age": 3},
                                                 {"name": "bob", "age": 4}])
    assert got == [{"name": "ann", "age": 3}, {"name": "bob", "age": 4}]
    latest = client.get_latest_version("users-value")
    assert latest.version == 1 and latest.schema_id == 1
    # A compatible change (a field with a default) is a new version with a new id ...
    ser2 = AvroSerializer(client, json.dumps(USER_V2))
    got = roundtrip(registry, "users", ser2, de, [{"name": "cy", "age": 5, "email": "c@x"}])
    assert got[-1] == {"name": "cy", "age": 5, "email": "c@x"}
    assert client.get_versions("users-value") == [1, 2]
    # ... an incompatible one is refused with 409, as the real registry refuses it.
    with pytest.raises(SchemaRegistryError) as e:
        client.register_schema("users-value", Schema(json.dumps(USER_V3_BAD), "AVRO"))
    assert e.value.http_status_code == 409 and e.value.error_code == 409
    assert "READER_FIELD_MISSING_DEFAULT_VALUE" in e.value.error_message


def test_json_serializer_roundtrip_and_refusal(registry: Cluster) -> None:
    client = SchemaRegistryClient({"url": registry.schema_registry_url})
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order",
              "type": "object", "properties": {"id": {"type": "integer"},
                                               "item": {"type": "string"}},
              "required": ["id"]}
    ser = JSONSerializer(json.dumps(schema), client)
    de = JSONDeserializer(None, schema_registry_client=client)
    got = roundtrip(registry, "orders", ser, de, [{"id": 1, "item": "pen"}, {"id": 2}])
    assert got == [{"id": 1, "item": "pen"}, {"id": 2}]
    narrowed = {**schema, "properties": {**schema["properties"],
                                         "id": {"type": "integer", "maximum": 10}}}
    with pytest.raises(SchemaRegistryError) as e:
        client.register_schema("orders-value", Schema(json.dumps(narrowed), "JSON"))
    assert e.value.error_code == 409 and "MAXIMUM_ADDED" in e.value.error_message
    assert client.get_latest_version("orders-value").schema.schema_type == "JSON"


def _proto_module(tmp_path: Path, name: str, text: str) -> Any:
    """Compile ``text`` (and the .proto files beside it) with grpcio-tools' protoc and
    import the generated module."""
    (tmp_path / f"{name}.proto").write_text(text)
    subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{tmp_path}",
                    f"--python_out={tmp_path}",
                    *sorted(p.name for p in tmp_path.glob("*.proto"))], check=True)
    sys.path.insert(0, str(tmp_path))
    try:
        return __import__(f"{name}_pb2")
    finally:
        sys.path.remove(str(tmp_path))


def test_protobuf_serializer_roundtrip_and_refusal(registry: Cluster, tmp_path: Path) -> None:
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer,
        ProtobufSerializer,
    )

    mod = _proto_module(tmp_path, "sr_payment", textwrap.dedent("""\
        syntax = "proto3";
        package shop;
        import "google/protobuf/timestamp.proto";
        message Payment {
          string id = 1;
          double amount = 2;
          google.protobuf.Timestamp at = 3;
          map<string, string> tags = 4;
          oneof method { string card = 5; string iban = 6; }
          enum Kind { UNKNOWN = 0; SALE = 1; }
          Kind kind = 7;
        }
        """))
    client = SchemaRegistryClient({"url": registry.schema_registry_url})
    ser = ProtobufSerializer(mod.Payment, client, {"use.deprecated.format": False})
    de = ProtobufDeserializer(mod.Payment, {"use.deprecated.format": False})
    msg = mod.Payment(id="p1", amount=9.5, tags={"a": "b"}, card="4111", kind=1)
    got = roundtrip(registry, "payments", ser, de, [msg])
    assert got == [msg]
    # Registered as a base64 descriptor by the Python client, served as .proto text,
    # and as the descriptor again with format=serialized.
    latest = client.get_latest_version("payments-value")
    assert "message Payment" in latest.schema.schema_str
    assert "oneof method" in latest.schema.schema_str
    status, body = rest(registry.schema_registry_url, "GET",
                        f"/schemas/ids/{latest.schema_id}?format=serialized")
    assert status == 200 and base64.b64decode(body["schema"])
    # The same schema as text (how the Java client sends it) has the same id.
    status, body = rest(registry.schema_registry_url, "POST", "/subjects/payments-value",
                        {"schemaType": "PROTOBUF", "schema": latest.schema.schema_str})
    assert status == 200 and body["id"] == latest.schema_id
    changed = latest.schema.schema_str.replace("double amount = 2;", "string amount = 2;")
    with pytest.raises(SchemaRegistryError) as e:
        client.register_schema("payments-value", Schema(changed, "PROTOBUF"))
    assert e.value.error_code == 409 and "FIELD_SCALAR_KIND_CHANGED" in e.value.error_message


# ---- REST, as the Java client calls it ----------------------------------------------------
def test_rest_register_lookup_ids_and_versions(registry: Cluster) -> None:
    url = registry.schema_registry_url
    s1 = {"schema": json.dumps(USER_V1)}
    assert rest(url, "GET", "/subjects") == (200, [])
    assert rest(url, "POST", "/subjects/a-value/versions", s1) == (200, {"id": 1})
    # the same schema: the same id and no new version, in this subject and another
    assert rest(url, "POST", "/subjects/a-value/versions", s1) == (200, {"id": 1})
    assert rest(url, "POST", "/subjects/b-value/versions", s1) == (200, {"id": 1})
    # whitespace, key order or a full name for a namespace do not make another schema:
    # the canonical form is Avro's Java Schema.toString(), as Confluent compares
    spaced = {"schema": json.dumps(USER_V1, indent=4)}
    assert rest(url, "POST", "/subjects/a-value/versions", spaced) == (200, {"id": 1})
    respelled = {"fields": [{"type": "string", "name": "name"}, {"type": "int", "name": "age"}],
                 "name": "com.example.User", "type": "record"}
    assert rest(url, "POST", "/subjects/a-value/versions",
                {"schema": json.dumps(respelled)}) == (200, {"id": 1})
    assert rest(url, "GET", "/subjects/a-value/versions") == (200, [1])
    assert rest(url, "POST", "/subjects/a-value/versions",
                {"schema": json.dumps(USER_V2)}) == (200, {"id": 2})
    assert rest(url, "GET", "/subjects/a-value/versions") == (200, [1, 2])
    status, v = rest(url, "GET", "/subjects/a-value/versions/latest")
    assert status == 200 and (v["version"], v["id"], v["subject"]) == (2, 2, "a-value")
    assert "schemaType" not in v  # Avro: left out, as Confluent does
    assert rest(url, "GET", "/subjects/a-value/versions/1/schema")[1] == USER_V1
    assert rest(url, "GET", "/schemas/ids/1/schema")[1] == USER_V1
    assert rest(url, "GET", "/schemas/ids/1/subjects") == (200, ["a-value", "b-value"])
    assert rest(url, "GET", "/schemas/ids/1/versions") == (200, [
        {"subject": "a-value", "version": 1}, {"subject": "b-value", "version": 1}])
    assert sorted(rest(url, "GET", "/schemas/types")[1]) == ["AVRO", "JSON", "PROTOBUF"]
    status, found = rest(url, "POST", "/subjects/a-value", s1)
    assert status == 200 and (found["id"], found["version"]) == (1, 1)
    assert rest(url, "GET", "/schemas?subjectPrefix=b")[1][0]["subject"] == "b-value"
    # Confluent's error codes and bodies
    assert rest(url, "GET", "/schemas/ids/99") == (
        404, {"error_code": 40403, "message": "Schema 99 not found"})
    assert rest(url, "GET", "/subjects/nope/versions")[1]["error_code"] == 40401
    assert rest(url, "GET", "/subjects/a-value/versions/7")[1]["error_code"] == 40402
    assert rest(url, "GET", "/subjects/a-value/versions/0")[1]["error_code"] == 42202
    assert rest(url, "GET", "/subjects/a-value/versions/x")[0] == 422
    assert rest(url, "POST", "/subjects/a-value",
                {"schema": json.dumps({**USER_V1, "name": "Other"})})[1]["error_code"] == 40403
    assert rest(url, "POST", "/subjects/nope", s1)[1]["error_code"] == 40401
    status, body = rest(url, "POST", "/subjects/c/versions", {"schema": "{\"type\": \"nope\"}"})
    assert (status, body["error_code"]) == (422, 42201)
    status, body = rest(url, "POST", "/subjects/c/versions", {"schema": "not json"})
    assert (status, body["error_code"]) == (422, 42201)


def test_rest_delete_soft_and_permanent(registry: Cluster) -> None:
    url = registry.schema_registry_url
    rest(url, "POST", "/subjects/d/versions", {"schema": json.dumps(USER_V1)})
    rest(url, "POST", "/subjects/d/versions", {"schema": json.dumps(USER_V2)})
    assert rest(url, "DELETE", "/subjects/d/versions/1?permanent=true")[1]["error_code"] == \
        40407
    assert rest(url, "DELETE", "/subjects/d/versions/1") == (200, 1)
    assert rest(url, "DELETE", "/subjects/d/versions/1")[1]["error_code"] == 40406
    assert rest(url, "GET", "/subjects/d/versions") == (200, [2])
    assert rest(url, "GET", "/subjects/d/versions?deleted=true") == (200, [1, 2])
    assert rest(url, "GET", "/subjects/d/versions/1?deleted=true")[0] == 200
    assert rest(url, "DELETE", "/subjects/d?permanent=true")[1]["error_code"] == 40405
    assert rest(url, "DELETE", "/subjects/d") == (200, [2])
    assert rest(url, "DELETE", "/subjects/d")[1]["error_code"] == 40404
    assert rest(url, "GET", "/subjects") == (200, [])
    assert rest(url, "GET", "/subjects?deleted=true") == (200, ["d"])
    # a soft-deleted schema is still found by id: consumers of old records read on
    assert rest(url, "GET", "/schemas/ids/1")[0] == 200
    assert rest(url, "DELETE", "/subjects/d?permanent=true") == (200, [1, 2])
    assert rest(url, "GET", "/schemas/ids/1")[1]["error_code"] == 40403
    assert rest(url, "DELETE", "/subjects/d")[1]["error_code"] == 40401
    # ids are never reused: a new schema after the deletion gets a new one
    assert rest(url, "POST", "/subjects/e/versions",
                {"schema": json.dumps(USER_BAD)}) == (200, {"id": 3})


def test_rest_config_mode_and_compatibility_endpoint(registry: Cluster) -> None:
    url = registry.schema_registry_url
    assert rest(url, "GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert rest(url, "PUT", "/config", {"compatibility": "bogus"})[1]["error_code"] == 42203
    assert rest(url, "GET", "/config/s")[1]["error_code"] == 40408
    assert rest(url, "GET", "/config/s?defaultToGlobal=true") == (
        200, {"compatibilityLevel": "BACKWARD"})
    rest(url, "POST", "/subjects/s/versions", {"schema": json.dumps(USER_V1)})
    body = {"schema": json.dumps(USER_BAD)}
    status, out = rest(url, "POST", "/compatibility/subjects/s/versions/latest?verbose=true",
                       body)
    assert status == 200 and out["is_compatible"] is False
    assert any("READER_FIELD_MISSING_DEFAULT_VALUE" in m for m in out["messages"])
    assert any("{compatibility: 'BACKWARD'}" == m for m in out["messages"])
    assert rest(url, "POST", "/compatibility/subjects/s/versions", body) == (
        200, {"is_compatible": False})
    assert rest(url, "PUT", "/config/s", {"compatibility": "NONE"}) == (
        200, {"compatibility": "NONE"})
    assert rest(url, "POST", "/compatibility/subjects/s/versions/latest", body)[1] == {
        "is_compatible": True}
    assert rest(url, "POST", "/subjects/s/versions", body) == (200, {"id": 2})
    assert rest(url, "DELETE", "/config/s") == (200, {"compatibilityLevel": "NONE"})
    assert rest(url, "GET", "/config/s")[1]["error_code"] == 40408
    # modes
    assert rest(url, "GET", "/mode") == (200, {"mode": "READWRITE"})
    assert rest(url, "PUT", "/mode", {"mode": "SOMETIMES"})[1]["error_code"] == 42204
    assert rest(url, "PUT", "/mode/s", {"mode": "READONLY"}) == (200, {"mode": "READONLY"})
    status, out = rest(url, "POST", "/subjects/s/versions", {"schema": json.dumps(USER_V2)})
    assert (status, out["error_code"]) == (422, 42205)
    assert rest(url, "DELETE", "/mode/s") == (200, {"mode": "READONLY"})
    assert rest(url, "GET", "/mode/s")[1]["error_code"] == 40409
    assert rest(url, "PUT", "/mode", {"mode": "IMPORT"})[1]["error_code"] == 42205
    assert rest(url, "PUT", "/mode?force=true", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    # IMPORT: ids and versions as given (a migration from another registry)
    imported = {"schema": json.dumps({"type": "string"}), "id": 100, "version": 7}
    assert rest(url, "POST", "/subjects/imp/versions", imported) == (200, {"id": 100})
    assert rest(url, "GET", "/subjects/imp/versions") == (200, [7])
    rest(url, "PUT", "/mode", {"mode": "READWRITE"})
    status, out = rest(url, "POST", "/subjects/x/versions",
                       {"schema": json.dumps({"type": "long"}), "id": 5})
    assert (status, out["error_code"]) == (422, 42205)
    # the next id continues after the largest seen
    assert rest(url, "POST", "/subjects/y/versions",
                {"schema": json.dumps({"type": "long"})}) == (200, {"id": 101})


def test_rest_references_and_normalize(registry: Cluster) -> None:
    url = registry.schema_registry_url
    address = {"type": "record", "name": "Address", "namespace": "com.example",
               "fields": [{"name": "city", "type": "string"}]}
    person = {"type": "record", "name": "Person", "namespace": "com.example",
              "fields": [{"name": "home", "type": "com.example.Address"}]}
    assert rest(url, "POST", "/subjects/address/versions",
                {"schema": json.dumps(address)}) == (200, {"id": 1})
    refs = [{"name": "com.example.Address", "subject": "address", "version": 1}]
    assert rest(url, "POST", "/subjects/person/versions",
                {"schema": json.dumps(person)})[1]["error_code"] == 42201
    assert rest(url, "POST", "/subjects/person/versions",
                {"schema": json.dumps(person), "references": refs}) == (200, {"id": 2})
    status, v = rest(url, "GET", "/subjects/person/versions/1")
    assert v["references"] == refs
    assert rest(url, "GET", "/subjects/address/versions/1/referencedby") == (200, [2])
    assert rest(url, "DELETE", "/subjects/address/versions/1")[1]["error_code"] == 42206
    # normalize: another spelling of a registered schema is found and not re-registered
    respelled = {"type": "record", "name": "com.example.Address",
                 "fields": [{"type": "string", "name": "city"}]}
    assert rest(url, "POST", "/subjects/address?normalize=true",
                {"schema": json.dumps(respelled)})[1]["id"] == 1
    # protobuf with an import registered as a reference
    dep = 'syntax = "proto3";\npackage geo;\nmessage Point { double x = 1; double y = 2; }\n'
    assert rest(url, "POST", "/subjects/point/versions",
                {"schemaType": "PROTOBUF", "schema": dep})[0] == 200
    main = ('syntax = "proto3";\npackage geo;\nimport "geo/point.proto";\n'
            'message Route { repeated geo.Point points = 1; }\n')
    status, out = rest(url, "POST", "/subjects/route/versions", {
        "schemaType": "PROTOBUF", "schema": main,
        "references": [{"name": "geo/point.proto", "subject": "point", "version": 1}]})
    assert status == 200, out


def test_http_hygiene(registry: Cluster) -> None:
    url = registry.schema_registry_url
    assert registry.schema_registry.host == "127.0.0.1"  # loopback unless asked
    status, out = rest(url, "POST", "/subjects/s/versions", raw=b"{not json")
    assert status == 400 and out["error_code"] == 400 and "Traceback" not in str(out)
    status, out = rest(url, "POST", "/subjects/s/versions", raw=b"[1, 2]")
    assert status == 400
    status, out = rest(url, "POST", "/subjects/s/versions", raw=b"x" * (9 << 20))
    assert status == 413
    status, out = rest(url, "POST", "/subjects/s/versions", {"schema": "{}"},
                       headers={"Content-Type": "text/plain"})
    assert status == 415
    status, out = rest(url, "GET", "/subjects", headers={"Origin": "http://evil.example"})
    assert status == 403
    assert rest(url, "GET", "/no/such/path")[0] == 404
    assert rest(url, "PATCH", "/subjects")[0] == 405


def test_basic_auth_as_the_clients_send_it() -> None:
    with Cluster(brokers=1, port=0, schema_registry_port=0,
                 schema_registry_users={"sr": "secret"}) as c:
        url = c.schema_registry_url
        assert rest(url, "GET", "/subjects")[0] == 401
        good = SchemaRegistryClient({"url": url, "basic.auth.user.info": "sr:secret"})
        assert good.get_subjects() == []
        bad = SchemaRegistryClient({"url": url, "basic.auth.user.info": "sr:wrong"})
        with pytest.raises(SchemaRegistryError) as e:
            bad.get_subjects()
        assert e.value.http_status_code == 401


def _schemas_records(c: Cluster) -> list[tuple[Any, Any]]:
    def read() -> list[tuple[Any, Any]]:
        p = c.state.topics["_schemas"].partitions[0]
        out = []
        for data, *_ in p.leader_log.batches_from(0, 1 << 40):
            for r in decode_records(data):
                out.append((json.loads(r.key), None if r.value is None
                            else json.loads(r.value)))
        return out
    return c.call(read)


def test_state_is_the_schemas_topic_and_survives_a_restart(tmp_path: Path) -> None:
    d = str(tmp_path / "data")
    with Cluster(brokers=3, port=0, data_dir=d, schema_registry_port=0) as c:
        url = c.schema_registry_url
        rest(url, "POST", "/subjects/k/versions", {"schema": json.dumps(USER_V1)})
        rest(url, "POST", "/subjects/k/versions", {"schema": json.dumps(USER_V2)})
        rest(url, "PUT", "/config/k", {"compatibility": "FULL"})
        rest(url, "DELETE", "/subjects/k/versions/1")
        t = c.state.topics["_schemas"]
        assert t.configs.get("cleanup.policy") == "compact" and len(t.partitions) == 1
        # answered only once committed: the high watermark is past every record
        p = t.partitions[0]
        assert len(p.replicas) == 3
        assert c.call(lambda: p.high_watermark) == c.call(lambda: p.leader_log.log_end_offset)
        records = _schemas_records(c)
        assert records[0] == (
            {"keytype": "SCHEMA", "subject": "k", "version": 1, "magic": 1},
            {"subject": "k", "version": 1, "id": 1, "references": [],
             "schema": json.dumps(USER_V1, separators=(",", ":")), "deleted": False})
        assert ({"keytype": "CONFIG", "subject": "k", "magic": 0},
                {"compatibilityLevel": "FULL"}) in records
        # a client sees the topic and its records
        cons = Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": "sr-reader",
                         "auto.offset.reset": "earliest"})
        cons.subscribe(["_schemas"])
        seen = []
        for _ in range(100):
            m = cons.poll(0.2)
            if m is not None and not m.error():
                seen.append(json.loads(m.key()))
            if len(seen) == len(records):
                break
        cons.close()
        assert seen == [k for k, _ in records]
    with Cluster(brokers=3, port=0, data_dir=d, schema_registry_port=0) as c:
        url = c.schema_registry_url
        assert rest(url, "GET", "/subjects/k/versions") == (200, [2])
        assert rest(url, "GET", "/subjects/k/versions?deleted=true") == (200, [1, 2])
        assert rest(url, "GET", "/config/k") == (200, {"compatibilityLevel": "FULL"})
        assert rest(url, "GET", "/schemas/ids/2")[1]["schema"] == json.dumps(
            USER_V2, separators=(",", ":"))
        # the same schema keeps its id; a new one continues after the largest
        assert rest(url, "POST", "/subjects/other/versions",
                    {"schema": json.dumps(USER_V2)}) == (200, {"id": 2})
        assert rest(url, "POST", "/subjects/other2/versions",
                    {"schema": json.dumps({"type": "string"})}) == (200, {"id": 3})


def test_leader_move_keeps_the_registry(registry: Cluster) -> None:
    url = registry.schema_registry_url
    rest(url, "POST", "/subjects/m/versions", {"schema": json.dumps(USER_V1)})
    leader = registry.call(lambda: registry.state.topics["_schemas"].partitions[0].leader)
    registry.stop_broker(leader)
    assert rest(url, "GET", "/subjects/m/versions") == (200, [1])
    assert rest(url, "POST", "/subjects/m/versions",
                {"schema": json.dumps(USER_V2)}) == (200, {"id": 2})
    registry.start_broker(leader)
    assert rest(url, "GET", "/schemas/ids/2")[0] == 200


def test_cli_serves_the_registry(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--brokers", "1", "--port", "0",
         "--schema-registry-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        assert proc.stdout is not None
        line = ""
        for line in proc.stdout:
            if "ready" in line:
                break
        assert "schema-registry http://127.0.0.1:" in line, line
        url = line.split("schema-registry ")[1].split()[0]
        assert rest(url, "GET", "/subjects") == (200, [])
    finally:
        proc.terminate()
        proc.wait(15)


def test_pytest_plugin_fixture(kafka_schema_registry: str, kafka_cluster: Cluster) -> None:
    assert kafka_schema_registry == kafka_cluster.schema_registry_url
    client = SchemaRegistryClient({"url": kafka_schema_registry})
    assert client.register_schema("f", Schema(json.dumps(USER_V1), "AVRO")) == 1


def test_protobuf_serializer_registers_imports_as_references(registry: Cluster,
                                                             tmp_path: Path) -> None:
    """A message importing another .proto: the Python serializer registers the import
    as a subject of its own and the message with a reference to it."""
    from confluent_kafka.schema_registry.protobuf import (
        ProtobufDeserializer,
        ProtobufSerializer,
    )

    (tmp_path / "sr_money.proto").write_text(
        'syntax = "proto3";\npackage fin;\nmessage Money { string currency = 1; '
        'int64 units = 2; }\n')
    mod = _proto_module(tmp_path, "sr_invoice", textwrap.dedent("""\
        syntax = "proto3";
        package fin;
        import "sr_money.proto";
        message Invoice { string id = 1; repeated Money lines = 2; }
        """))
    client = SchemaRegistryClient({"url": registry.schema_registry_url})
    ser = ProtobufSerializer(mod.Invoice, client, {"use.deprecated.format": False})
    de = ProtobufDeserializer(mod.Invoice, {"use.deprecated.format": False})
    msg = mod.Invoice(id="i1")
    line = msg.lines.add()
    line.currency, line.units = "EUR", 12
    assert roundtrip(registry, "invoices", ser, de, [msg]) == [msg]
    assert sorted(client.get_subjects()) == ["invoices-value", "sr_money.proto"]
    latest = client.get_latest_version("invoices-value")
    assert [(r.name, r.subject, r.version) for r in latest.schema.references] == [
        ("sr_money.proto", "sr_money.proto", 1)]
    assert 'import "sr_money.proto";' in latest.schema.schema_str
    status, ids = rest(registry.schema_registry_url, "GET",
                       "/subjects/sr_money.proto/versions/1/referencedby")
    assert (status, ids) == (200, [latest.schema_id])


def test_odd_requests_get_4xx_never_500(registry: Cluster) -> None:
    url = registry.schema_registry_url
    rest(url, "POST", "/subjects/s/versions", {"schema": json.dumps(USER_V1)})
    odd: list[tuple[str, str, Any]] = [
        ("GET", "/schemas/ids/abc", None), ("GET", "/schemas/ids/-1", None),
        ("GET", "/schemas/ids/99999999999999999999", None),
        ("GET", "/subjects/s/versions/99999999999", None),
        ("GET", "/subjects/s/versions/-2", None), ("GET", "/subjects/%2F%2E%2E/versions", None),
        ("GET", "/subjects/s%2Fslash/versions", None), ("POST", "/subjects/s/versions", 5),
        ("POST", "/subjects/s/versions", {"schema": 5}),
        ("POST", "/subjects/s/versions", {"schema": "{}", "references": [None]}),
        ("POST", "/subjects/s/versions", {"schema": "{}", "references": "x"}),
        ("POST", "/subjects/s/versions", {"schema": "{}", "schemaType": ["AVRO"]}),
        ("POST", "/subjects/s/versions", {"schema": json.dumps(USER_V1), "id": "x"}),
        ("POST", "/subjects/s/versions", {"schema": json.dumps(USER_V1), "version": 1.5}),
        ("POST", "/subjects/s", []), ("PUT", "/config", {"compatibility": None}),
        ("PUT", "/config/s", "BACKWARD"), ("PUT", "/mode", {"mode": 1}),
        ("DELETE", "/mode", None), ("DELETE", "/subjects/s/versions/x", None),
        ("POST", "/compatibility/subjects/s/versions/abc", {"schema": "{}"}),
        ("POST", "/compatibility/subjects/nope/versions/latest", {"schema": '"int"'}),
        ("GET", "/subjects/s/versions/1/referencedby/extra", None),
    ]
    for method, path, body in odd:
        status, out = rest(url, method, path, body)
        assert 400 <= status < 500, (method, path, body, status, out)
        assert isinstance(out, dict) and isinstance(out.get("error_code"), int), out
    assert rest(url, "GET", "/subjects?deleted=maybe&subjectPrefix=%ZZ") == (200, [])
    # a subject name with a slash, as the clients encode it
    assert rest(url, "POST", "/subjects/a%2Fb/versions",
                {"schema": json.dumps(USER_V1)}) == (200, {"id": 1})
    assert rest(url, "GET", "/subjects")[1] == ["a/b", "s"]


def test_compaction_keeps_the_view(registry: Cluster) -> None:
    """_schemas is compacted like any compacted topic: after the cleaner ran, fewer
    records hold the same registry (a fresh reader of the topic builds the same view)."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource

    from emulator.schema_registry.store import SchemaStore

    c, url = registry, registry.schema_registry_url
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    res = ConfigResource("topic", "_schemas", incremental_configs=[
        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
        for k, v in {"segment.ms": "1", "min.cleanable.dirty.ratio": "0.01"}.items()])
    for f in admin.incremental_alter_configs([res]).values():
        f.result(10)
    for i in range(40):  # one key, overwritten forty times
        rest(url, "PUT", "/config/s", {"compatibility": ("NONE", "FULL")[i % 2]})
    rest(url, "POST", "/subjects/s/versions", {"schema": json.dumps(USER_V1)})
    rest(url, "POST", "/subjects/t/versions", {"schema": json.dumps(USER_V2)})
    rest(url, "DELETE", "/subjects/t")
    rest(url, "DELETE", "/subjects/t?permanent=true")
    for _ in range(40):
        rest(url, "PUT", "/config/s", {"compatibility": "BACKWARD"})
    written = len(_schemas_records(c))
    for _ in range(10):
        c.call(c.state.run_cleaner)
    kept = _schemas_records(c)
    assert len(kept) < written / 2, (len(kept), written)

    def fresh_view() -> tuple[Any, Any]:
        store = SchemaStore(c.state)
        while store.catch_up():
            pass
        live = registry.schema_registry.registry
        return ((store.registry.subjects, store.registry.config, store.registry.max_id),
                (live.subjects, live.config, live.max_id))
    fresh, live = c.call(fresh_view)
    assert fresh == live
    assert rest(url, "GET", "/config/s") == (200, {"compatibilityLevel": "BACKWARD"})
    assert rest(url, "GET", "/subjects?deleted=true") == (200, ["s"])
    # t's id 2 is gone with its records, and still not handed out again
    assert rest(url, "POST", "/subjects/u/versions",
                {"schema": json.dumps({"type": "string"})}) == (200, {"id": 3})


def test_serializer_without_auto_register_looks_up_and_uses_latest(registry: Cluster) -> None:
    """auto.register.schemas=False looks the schema up (POST /subjects/{s}); an unknown
    schema fails there; use.latest.version serializes with the subject's latest."""
    client = SchemaRegistryClient({"url": registry.schema_registry_url})
    ctx = SerializationContext("lk", MessageField.VALUE)
    lookup = AvroSerializer(client, json.dumps(USER_V1), conf={"auto.register.schemas": False})
    with pytest.raises(SchemaRegistryError) as e:
        lookup({"name": "a", "age": 1}, ctx)
    assert e.value.error_code == 40401
    client.register_schema("lk-value", Schema(json.dumps(USER_V1), "AVRO"))
    lookup2 = AvroSerializer(client, json.dumps(USER_V1), conf={"auto.register.schemas": False})
    assert lookup2({"name": "a", "age": 1}, ctx)[1:5] == (1).to_bytes(4, "big")
    client.register_schema("lk-value", Schema(json.dumps(USER_V2), "AVRO"))
    latest = AvroSerializer(client, json.dumps(USER_V1), conf={
        "auto.register.schemas": False, "use.latest.version": True})
    data = latest({"name": "b", "age": 2, "email": "b@x"}, ctx)
    assert data[1:5] == (2).to_bytes(4, "big")
    assert AvroDeserializer(client)(data, ctx) == {"name": "b", "age": 2, "email": "b@x"}
