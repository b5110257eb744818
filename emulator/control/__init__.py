"""The control surface: what a person or a test may ask of a running cluster, and what
they see of it.

- ``operations``: the table of every operation (name, fields, validation, HTTP
  route, command-line name) and the writes that are not faults;
- ``handle``: the fault methods the pytest handle (``Cluster``) and the testcontainers
  module share (``pause_follower(3)``, ``inject_error(...)``...), each one operation;
- ``metrics``: GET /cluster's JSON and GET /metrics' Prometheus text;
- ``console``: the web console's and ``kafka-emulator top``'s snapshot.

Sans I/O, above the domain (emulator.cluster, emulator.faults) and below the server:
the HTTP control plane (emulator.server.control) and the runtime (emulator.runtime)
run what it describes.
"""
