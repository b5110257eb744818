"""The TLS files a cluster generates live as long as the cluster: a directory it made
goes when it stops; a directory it was given stays (its CA is reused next time)."""

from __future__ import annotations

import os
from pathlib import Path

from emulator import Cluster


def test_generated_tls_directory_is_removed_when_the_cluster_stops() -> None:
    with Cluster(1, port=0, security={"listeners": "SSL://127.0.0.1:0"}) as cluster:
        assert cluster.tls is not None
        made = Path(cluster.tls.dir)
        assert (made / "ca.pem").exists()
    assert not made.exists()


def test_a_given_tls_directory_stays(tmp_path: Path) -> None:
    given = tmp_path / "tls"
    with Cluster(1, port=0, security={"listeners": "SSL://127.0.0.1:0",
                                      "tls_dir": str(given)}) as cluster:
        assert cluster.tls is not None and Path(cluster.tls.dir) == given
    assert sorted(os.listdir(given))[:2] == ["ca-key.pem", "ca.pem"]
