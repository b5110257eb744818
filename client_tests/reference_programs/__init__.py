"""Correct Kafka client programs in several clients, checked over the wire by the
history checker (emulator/history.py) under ``--fidelity adversarial``.

Per client (confluent-kafka/librdkafka, kafka-python, aiokafka, Kafka's Java client):
an idempotent acks=all producer, a transactional consume-transform-produce reading
read_committed, and a group consumer (cooperative where the client has it) that commits
after processing. README.md here says what each promises and how it is checked;
client_tests/test_reference_programs.py runs a sample of seeds, ``python -m
client_tests.reference_programs.survey`` (the nightly job, .ci/adversary-nightly) runs
100 each.
"""
