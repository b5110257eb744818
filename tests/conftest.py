"""The emulator's logged-exception watch, also for the unit tests (emulator.testing).

A unit test runs the domain in-process; whatever it makes the emulator log as an
exception is our bug, so the test fails (opt out: ``kafka_emulator_allow_exceptions``).
"""

from emulator.pytest_plugin import kafka_emulator_logged_exceptions  # noqa: F401
