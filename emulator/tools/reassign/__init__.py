"""``kafka-emulator reassign``: kafka-reassign-partitions, speaking only the protocol.

The same actions, options, JSON files, output lines and exit codes as Kafka 4.1's
ReassignPartitionsCommand (docs/reassignment.md, ``kafka-emulator reassign``):

    --generate --topics-to-move-json-file F --broker-list 1,2,3 [--disable-rack-aware]
    --execute  --reassignment-json-file F [--additional] [--throttle B/s]
               [--replica-alter-log-dirs-throttle B/s] [--timeout MS]
               [--disallow-replication-factor-change]
    --verify   --reassignment-json-file F [--preserve-throttles]
    --cancel   --reassignment-json-file F [--preserve-throttles] [--timeout MS]
    --list

with ``--bootstrap-server`` (or ``--bootstrap-controller`` for --cancel and
--list) and ``--command-config``. It uses our wire codec over a socket
(``emulator.tools.kafka_admin``), so it works against real Kafka as well.

Added to Kafka's output: --verify and --list end with the bytes each adding
replica has caught up (from DescribeLogDirs), with a progress bar, for reassignments in
flight. Added to Kafka's options: ``--progress`` (with --execute, --verify or --list)
keeps redrawing those bars every second until the partitions' reassignments are done
(then --verify verifies once more, clearing throttles as Kafka's would).
Differs from Kafka: errors print ``Error: <message>`` without a Java stack trace;
--generate places replicas with Kafka 4.1's StripedReplicaPlacer, which is random
in Kafka too, so proposals differ from run to run as there.

One module per role: ``json_format`` (the JSON files, the tool's errors), ``placer``
(Kafka's StripedReplicaPlacer), ``command`` (the actions, ``Tool``) and ``cli`` (the
options and ``main``).
"""

from emulator.tools.reassign.cli import main

__all__ = ["main"]
