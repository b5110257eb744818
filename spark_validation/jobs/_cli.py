"""Shared ``main`` for the job scripts: an emulator, a SparkSession, a work folder."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any


def main(run: Callable[..., Any], description: str, needs_cluster: bool = False) -> int:
    """Parse ``--bootstrap-servers``; start an in-process emulator when it is absent.

    Jobs that drive faults (``needs_cluster``) need the in-process ``Cluster`` object
    to stop and start brokers, so they always start their own.
    """
    ap = argparse.ArgumentParser(description=description)
    if not needs_cluster:
        ap.add_argument("--bootstrap-servers", help="a running emulator (default: start one)")
    args = ap.parse_args()
    from emulator import Cluster
    from spark_validation.session import build_session

    spark = build_session(app_name=run.__module__)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="spark-job-") as work:
        bootstrap = getattr(args, "bootstrap_servers", None)
        if bootstrap and not needs_cluster:
            summary = run(spark, bootstrap, work)
        else:
            with Cluster(brokers=3, port=0) as cluster:
                summary = run(spark, cluster, work)
    print(json.dumps(summary, indent=2, default=str))
    print(f"OK in {time.monotonic() - t0:.1f}s")
    spark.stop()
    return 0


def bootstrap_of(target: Any) -> str:
    """A job's target is a bootstrap string or an ``emulator.Cluster``."""
    return target if isinstance(target, str) else target.bootstrap_servers


if __name__ == "__main__":
    sys.exit("run a job module, e.g. python -m spark_validation.jobs.stream_subscribe")
