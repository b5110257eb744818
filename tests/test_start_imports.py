"""What a plain start imports: only what the configuration uses (docs/scale.md, start-up).

A default PLAINTEXT cluster started as ``kafka-emulator`` starts it must not load TLS
(cryptography's x509), the adversary, the fidelity table, the schema registry, the
control plane, the crc32c package (whose ``__init__`` reads the installed distributions)
or google-re2 (for regex subscriptions only); each is imported where it is used, and is
still there when asked for. The start's speed itself is measured by bench/start.py,
never here; this holds the imports that decide it.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from emulator import runtime
from emulator.faults import adversary

# Runs a cluster as the command does (serve() up to the ready line, the refusals it
# names included), then reports the modules loaded (json imported after); the arguments
# are the command's.
PROBE = """
import asyncio, sys
from emulator import cli
args = cli.build_parser().parse_args(sys.argv[1:])
async def go():
    from emulator.runtime import Cluster
    cli.refusals()
    c = Cluster(args.brokers, port=0, security=cli.security_config(args, {}),
                fidelity=args.fidelity, control_port=args.control_port)
    await c.start_async()
    loaded = sorted(sys.modules)
    await c.stop_async()
    return loaded
loaded = asyncio.run(go())
import json
print(json.dumps(loaded))
"""

LAZY = [
    "cryptography",
    "emulator.server.tls",
    "emulator.faults.adversary",
    "emulator.schema_registry",
    "emulator.server.schema_registry",
    "emulator.server.control",
    "emulator.control.console",
    "crc32c",
    "h11",
    "re2",
    "emulator.fidelity.differences",  # the table (read for --fidelity kafka's configs)
    "emulator.faults.schedule",  # only with --fault-schedule or one posted
    # the stdlib modules of rare paths: member ids (uuid imports platform), the
    # heap trim of a data dir (ctypes), the produce check worker (pickle), SCRAM
    "uuid",
    "ctypes",
    "pickle",
    "hashlib",
    "hmac",
    # the data dir's store (only StorageError is named, for the refusal) and json
    # (the data dir's files, OAUTHBEARER's tokens, the control plane)
    "emulator.storage.store",
    "json",
    # a Range's message for a large double (--config checks; 0.35 MB of RSS)
    "decimal",
]


def loaded(*args: str) -> set[str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.splitlines()[-1]))


def test_a_plaintext_start_leaves_the_optional_parts_unimported() -> None:
    mods = loaded()
    assert "emulator.server.app" in mods  # the probe did start a cluster
    assert sorted(m for m in LAZY if m in mods) == []


@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (["--fidelity", "adversarial"], "emulator.faults.adversary"),
        (["--fidelity", "kafka"], "emulator.fidelity.differences"),
        (["--listeners", "SSL://127.0.0.1:0"], "cryptography"),
        (["--control-port", "0"], "emulator.server.control"),
    ],
)
def test_what_a_configuration_uses_is_imported_when_it_starts(args: list[str], needs: str) -> None:
    assert needs in loaded(*args)


def test_the_adversary_scale_variable_is_the_adversarys() -> None:
    """runtime names it without importing the adversary."""
    assert runtime.ADVERSARY_SCALE_ENV == adversary.SCALE_ENV


def test_importing_the_package_does_not_start_the_runtime() -> None:
    code = "import sys, emulator.cli; print('emulator.runtime' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr
    from emulator import Cluster  # still the way in

    assert Cluster is runtime.Cluster
