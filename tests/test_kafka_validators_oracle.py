"""The broker configs' checks against Kafka's own ConfigDef (conformance/
KafkaConfigValidators.java over the broker's jars, which scripts/setup.d/32-kafka-server.sh
fetches): the emulator's verdict on the cases of tests/test_kafka_validators.py and on an
invalid value of every kind for every validated key is Kafka's, word for word, and
emulator/cluster/kafka_validators.py is still what the generator makes of the jars.
"""

from __future__ import annotations

import pytest
from test_kafka_validators import CASES, verdict

from conformance import gen_kafka_validators
from emulator.cluster import kafka_validators
from emulator.cluster.configs import BROKER_CONFIGS, DOUBLE

pytestmark = pytest.mark.kafka_oracle


def _invalid_values() -> list[tuple[str, str]]:
    """An invalid value of every kind for every validated broker key the emulator knows:
    past each bound, not a number, none of the values (and in the wrong case), a list's
    duplicate, empty item, and emptiness, an empty string."""
    out: list[tuple[str, str]] = []
    for key, d in sorted(BROKER_CONFIGS.items()):
        c = d.check
        if c is None:
            continue
        step: float = 0.5 if d.type == DOUBLE else 1
        if c.at_least is not None:
            out.append(
                (key, str(float(c.at_least) - step if d.type == DOUBLE else int(c.at_least) - 1))
            )
        if c.at_most is not None:
            out.append(
                (key, str(float(c.at_most) + step if d.type == DOUBLE else int(c.at_most) + 1))
            )
        if c.at_least is not None or c.at_most is not None or c.gzip_level:
            out += [(key, "x"), (key, "1_0")]
        if c.gzip_level:
            out += [(key, "0"), (key, "10"), (key, "-1"), (key, "9")]
        if c.one_of:
            first = c.one_of[0]
            out += [(key, "nope"), (key, first.swapcase()), (key, f" {first} ")]
            if c.is_list:
                out.append((key, f"{first},nope"))
        if c.is_list:
            out += [(key, "a,a"), (key, "a,,b"), (key, ""), (key, " , ")]
        if c.non_empty:
            out += [(key, ""), (key, " ")]
    return out


def test_every_validated_key_answers_as_kafkas_configdef() -> None:
    cases = [(k, v) for k, v, _ in CASES if k in BROKER_CONFIGS] + _invalid_values()
    assert len(cases) > 600
    theirs = gen_kafka_validators.kafka_verdicts(cases)
    differ = [
        f"{k}={v!r}: Kafka {t!r}, ours {verdict(k, v)!r}"
        for (k, v), t in zip(cases, theirs, strict=True)
        if t != verdict(k, v)
    ]
    assert differ == [], f"{len(differ)} of {len(cases)} differ:\n" + "\n".join(differ[:20])


def test_the_validators_table_is_what_the_generator_makes_of_kafkas_jars() -> None:
    made: dict[str, object] = {}
    exec(
        gen_kafka_validators.render(
            gen_kafka_validators.dump(kafka_validators.KAFKA_VERSION),
            kafka_validators.KAFKA_VERSION,
        ),
        made,
    )
    for table in ("RANGE", "ONE_OF", "LIST", "NON_EMPTY", "OTHER"):
        assert made[table] == getattr(kafka_validators, table), table
