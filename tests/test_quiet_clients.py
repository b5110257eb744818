"""The root conftest.py routes librdkafka's log lines to the ``librdkafka`` logger, so
that a passing run prints no ``FAIL`` lines (they show with a failing test's log)."""

from __future__ import annotations

import logging
import socket

import pytest
from confluent_kafka import Producer


def test_librdkafka_logs_go_to_the_logger_not_stderr(capfd: pytest.CaptureFixture[str],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    caplog.set_level(logging.DEBUG, logger="librdkafka")
    p = Producer({"bootstrap.servers": f"127.0.0.1:{port}"})
    for _ in range(10):
        p.poll(0.2)
        if caplog.records:
            break
    del p
    assert any("Connection refused" in r.getMessage() for r in caplog.records), caplog.text
    assert "FAIL" not in capfd.readouterr().err
