"""Spark jobs against the emulator. Each module is a runnable script and backs a test.

    python -m spark_validation.jobs.<name>                       # its own emulator
    python -m spark_validation.jobs.<name> --bootstrap-servers 127.0.0.1:9092

Each has ``run(spark, cluster_or_bootstrap, workdir)`` that runs the scenario, checks
the outcome (raising AssertionError with the evidence when it is wrong) and returns a
summary; the tests call the same ``run``.
"""
