"""Security, sans I/O: listeners, SASL mechanisms, SCRAM credentials, ACLs, the authorizer.

Nothing here touches a socket or a file. SASL mechanisms are small state machines
fed the client's bytes and answering bytes (emulator/security/sasl.py); the
authorizer is a pure function over the ACL store (emulator/security/acl.py). TLS
lives in emulator/server/tls.py: the domain only ever sees a principal such as
``User:alice``. Stores are plain dataclasses and dicts, easy to serialize.
"""
