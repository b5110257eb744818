"""A Kafka protocol-compatible broker emulator: N virtual brokers in one process.

``emulator.Cluster`` runs one in-process; ``kafka-emulator`` runs one from the
command line. See README.md.
"""

from emulator.runtime import Cluster

__all__ = ["Cluster"]
__version__ = "0.1.0"
