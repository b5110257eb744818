"""Deliberately wrong Kafka client programs, each beside its corrected twin.

README.md in this directory tells each bug as an application developer meets it;
client_tests/test_wrong_clients.py shows that each wrong program passes on
``--fidelity fast``, fails under ``--fidelity adversarial`` within a few seeds, and that
its twin passes under every seed tried (docs/fidelity-wrong-clients.md has the seeds).
"""
