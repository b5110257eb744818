"""One PySpark: the test extra pins the release spark_validation/versions.py names.

Its Kafka connector must be the same release, and only some releases resolve from Maven
Central (see versions.py). With a looser pin in pyproject.toml, ``pip install -e
.[test]`` installed the newest PySpark and scripts/setup.d/40-spark.sh downgraded it on
every fresh machine: two installs of 300 MB for one.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from spark_validation.versions import DEFAULT_PYSPARK_REQUIREMENT

ROOT = Path(__file__).resolve().parent.parent


def test_the_test_extra_pins_the_pyspark_of_spark_validation_versions() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = [r for r in project["optional-dependencies"]["test"] if r.startswith("pyspark")]
    assert pins == [DEFAULT_PYSPARK_REQUIREMENT]


def test_the_clients_extra_holds_the_readme_quick_start_libraries() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    names = {r.split(">")[0].split("=")[0].split("<")[0] for r in extras["clients"]}
    assert names == {"kafka-python", "aiokafka", "confluent-kafka"}
    own = [r for r in extras["test"] if r.startswith("kafka-emulator[")]
    assert own and "clients" in own[0][len("kafka-emulator["):-1].split(","), extras["test"]
    readme = (ROOT / "README.md").read_text()
    assert "pip install -e .[clients]" in readme
