"""The streaming-through-faults job and the example pipeline against the emulator in its
Docker container, advertised on this host's own address (not localhost): the Kafka
consumers and producers of Spark reach the brokers through the ports the container
publishes, the faults go through the container's HTTP control plane.

Not named test_*: test_standalone.py runs it (by path) on the standalone cluster, where
the executors are JVMs of their own, the case that matters; run alone,
``pytest spark_validation/check_docker.py`` runs it in local[2] (about a minute).
"""

from __future__ import annotations

from spark_validation import example_pipeline as ex
from spark_validation import kafka_util as ku
from spark_validation.jobs import stream_through_faults


def test_faults_job_and_example_pipeline_with_the_emulator_in_docker(spark, docker_cluster,
                                                                      work):
    address = docker_cluster.address
    assert not address.startswith("127.") and address != "localhost", address
    # Clients are sent to the address the brokers advertise: the host's.
    brokers = ku.advertised_brokers(docker_cluster.bootstrap_servers)
    assert brokers and all(b.startswith(f"{address}:") for b in brokers), brokers
    s = stream_through_faults.run(spark, docker_cluster, work)
    assert s["partitions"] == [0, 1, 2, 3]
    assert s["steps"]["reassign"]["leader_after"] != s["steps"]["reassign"]["leader_before"]
    assert s["steps"]["crash"]["leader_while_down"] != s["steps"]["crash"]["crashed"]
    # The example pipeline on the same container, after the faults: the windows as in
    # test_example_pipeline.py.
    p = ex.run(spark, docker_cluster, work)
    on_time, kept, _, _ = ex.waves()
    assert p["windows"] == len(ex.expected(on_time + kept))
    assert p["views"] == len(on_time) + len(kept)
