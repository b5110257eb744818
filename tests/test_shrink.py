"""Shrinking a failing adversarial run (emulator/faults/shrink.py): ddmin against fake
predicates, the flaky-run verdicts, and the fault schedule's adversary section
(emulator/faults/schedule.py) that carries a shrunk run to a cluster."""

from __future__ import annotations

import json
import random

import pytest

from emulator.faults import FaultSchedule, ScheduleError
from emulator.faults.adversary import Injected
from emulator.faults.schedule import AdversaryFault
from emulator.faults.shrink import ddmin, judge, shrink
from emulator.runtime import Cluster

IDS = [1, 2, 3]


def _needs(*cause: int):
    """A predicate that fails when every one of ``cause`` is in the candidate."""
    calls: list[tuple[int, ...]] = []

    def fails(candidate: tuple[int, ...]) -> bool:
        calls.append(candidate)
        return set(cause) <= set(candidate)
    return fails, calls


@pytest.mark.parametrize("cause", [(7,), (3, 17), (0, 19), (2, 9, 14), (5, 6, 7, 8)])
def test_ddmin_finds_the_faults_a_failure_needs(cause: tuple[int, ...]) -> None:
    items = tuple(range(20))
    fails, calls = _needs(*cause)
    assert ddmin(items, fails) == tuple(sorted(cause))
    assert len(calls) == len(set(calls))  # each candidate asked once
    assert all(list(c) == sorted(c) for c in calls)  # the record's order is kept
    assert len(calls) < 80, len(calls)  # far fewer than the 2**20 subsets


def test_ddmin_result_is_one_minimal_for_an_arbitrary_monotone_failure() -> None:
    rng = random.Random(4)
    for _ in range(50):
        items = tuple(range(rng.randint(1, 30)))
        # fails when any one of several alternative causes is fully present
        causes = [set(rng.sample(items, rng.randint(1, min(3, len(items)))))
                  for _ in range(rng.randint(1, 3))]

        def fails(c: tuple[int, ...], causes: list[set[int]] = causes) -> bool:
            return any(cause <= set(c) for cause in causes)
        out = ddmin(items, fails)
        assert fails(out)
        for i in range(len(out)):  # removing any one fault makes it pass
            assert not fails(out[:i] + out[i + 1:]), (items, causes, out)


def test_ddmin_of_one_fault_asks_nothing() -> None:
    fails, calls = _needs(1)
    assert ddmin((1,), fails) == (1,)
    assert calls == []


def test_judge_stops_at_the_first_failure_and_passes_after_every_run() -> None:
    outcomes = iter([False, True, False])
    assert judge(lambda: next(outcomes), 3) == (True, 2)
    assert judge(lambda: False, 4) == (False, 4)
    with pytest.raises(ValueError):
        judge(lambda: True, 0)


def test_shrink_with_a_flaky_check_keeps_what_a_run_needed() -> None:
    """The cause fails only every other run (a client's timing): judged by up to 3 runs
    a candidate with the cause still counts as failing, and the result is the cause."""
    runs = [0]

    def run(candidate: tuple[int, ...]) -> bool:
        runs[0] += 1
        return {4, 11} <= set(candidate) and runs[0] % 2 == 0
    heard: list[tuple[int, bool, int]] = []
    result = shrink(tuple(range(16)), run, runs=3, confirm=4,
                    on_test=lambda c, failed, used: heard.append((len(c), failed, used)))
    assert result.faults == (4, 11)
    assert result.cause_found and not result.empty_fails
    assert heard[0] == (0, False, 3)  # the empty set first: it must pass
    assert heard[1][:2] == (16, True)  # then the whole record: it must fail again
    assert result.replays == runs[0] == sum(u for *_, u in heard) + 4
    assert result.confirmed.count(True) == 2  # every other run
    assert "16 faults shrunk to 2" in result.summary()


def test_shrink_says_when_the_faults_are_not_the_cause() -> None:
    always = shrink(tuple(range(5)), lambda c: True, runs=2, confirm=2)
    assert always.empty_fails and not always.cause_found and always.faults == ()
    assert always.replays == 1
    assert "no adversary fault" in always.summary()
    never = shrink(tuple(range(5)), lambda c: False, runs=2, confirm=2)
    assert not never.full_fails and not never.cause_found
    assert never.replays == 4  # the empty set and the record, 2 runs each
    assert "does not replay" in never.summary()


# ---- the schedule's adversary section -------------------------------------------------

SHRUNK = {
    "seed": 3, "fidelity": "adversarial",
    "adversary": [
        {"client_id": "", "broker": 2, "api": "-", "n": 0, "kind": "stale_metadata"},
        {"client_id": "rdkafka", "broker": 1, "api": "Produce", "n": 4,
         "kind": "lost_response", "detail": "the request applied, its response lost"},
        {"client_id": "tx-1", "broker": -1, "api": "EndTxn", "n": 2, "kind": "slow_markers"},
    ]}


def test_an_adversary_section_parses_to_the_script_the_adversary_takes() -> None:
    s = FaultSchedule.parse(json.dumps(SHRUNK), IDS, at_start=True)
    assert (s.seed, s.fidelity, s.steps) == (3, "adversarial", [])
    assert [f.kind for f in s.adversary or ()] == ["stale_metadata", "lost_response",
                                                   "slow_markers"]
    assert s.script == frozenset({("", 2, "-", 0, "stale_metadata"),
                                  ("rdkafka", 1, "Produce", 4, "lost_response"),
                                  ("tx-1", -1, "EndTxn", 2, "slow_markers")})
    # written and read back: the same schedule, one fault per line
    text = s.to_json()
    assert text.count("\n") >= 5
    again = FaultSchedule.parse(text, IDS, at_start=True)
    assert (again.seed, again.adversary, again.fidelity) == (s.seed, s.adversary, s.fidelity)
    # an empty section: adversarial with no fault at all (the shrinker's baseline)
    empty = FaultSchedule.parse('{"seed": 5, "adversary": []}', IDS, at_start=True)
    assert empty.script == frozenset() and empty.fidelity == "adversarial"
    # timed steps and an adversary section together
    both = FaultSchedule.parse(json.dumps({**SHRUNK, "faults": [
        {"at_ms": 100, "op": "stop_broker", "broker": 2}]}), IDS, at_start=True)
    assert len(both.steps) == 1 and len(both.adversary or ()) == 3
    assert FaultSchedule.parse(both.to_json(), IDS, at_start=True).steps == both.steps


def test_every_problem_of_an_adversary_section_is_named_with_its_index() -> None:
    bad = {"seed": 1, "fidelity": "kafka", "adversary": [
        {"client_id": "c", "broker": 9, "api": "Produce", "n": 1, "kind": "lost_response"},
        {"client_id": "c", "broker": 1, "api": "Produc", "n": -1, "kind": "explode"},
        {"client_id": "c", "broker": 1, "api": "Fetch", "kind": "session_evicted", "extra": 1},
        "lost_response",
        {"client_id": "c", "broker": 1, "api": "Fetch", "n": 3, "kind": "session_evicted"},
        {"client_id": "c", "broker": 1, "api": "Fetch", "n": 3, "kind": "session_evicted"},
        {"client_id": "", "broker": 1, "api": "Metadata", "n": 2, "kind": "stale_metadata"},
    ]}
    with pytest.raises(ScheduleError) as e:
        FaultSchedule.parse(json.dumps(bad), IDS, at_start=True)
    problems = e.value.problems
    text = "\n".join(problems)
    assert "fidelity: a schedule can only ask for 'adversarial'" in text
    assert "adversary[0]: broker must be one of [1, 2, 3]" in text
    assert "adversary[1]: kind must be one of" in text
    assert "adversary[1]: api must be an API name" in text
    assert "adversary[1]: n must be a non-negative integer" in text
    assert "adversary[2]: missing n" in text and "adversary[2]: unknown field(s) ['extra']" \
        in text
    assert "adversary[3]: a fault is a JSON object" in text
    assert "adversary[5]: the same fault as adversary[4]" in text
    assert "adversary[6]: a stale_metadata setting has api '-' and n 0" in text
    assert not any(p.startswith("adversary[4]") for p in problems)
    assert len(problems) == 10, problems
    with pytest.raises(ScheduleError) as e:  # missing fields are said once each
        FaultSchedule.parse('{"adversary": [{"kind": "kick"}]}', IDS, at_start=True)
    assert e.value.problems == ["adversary[0]: missing client_id, broker, api, n"]
    with pytest.raises(ScheduleError, match="adversary must be a list"):
        FaultSchedule.parse('{"adversary": {}}', IDS, at_start=True)


def test_a_running_cluster_refuses_an_adversary_section() -> None:
    """POST /faults/schedule and Cluster.run_fault_schedule parse without at_start: a
    running cluster's fidelity and seed are fixed, so the section would be ignored."""
    with pytest.raises(ScheduleError, match="when a cluster starts"):
        FaultSchedule.parse(json.dumps(SHRUNK), IDS)
    # the timed steps alone still run on a running cluster, in both forms
    lines = '{"seed": 7}\n{"at_ms": 0, "op": "pause_follower", "broker": 3}\n'
    assert len(FaultSchedule.parse(lines, IDS).steps) == 1
    doc = '{"seed": 7, "faults": [{"at_ms": 0, "op": "clear"}]}'
    assert FaultSchedule.parse(doc, IDS).adversary is None


def test_a_record_becomes_a_schedule_in_its_order_each_fault_once() -> None:
    record = [
        Injected(1, 3, 2, "p", "Produce", 4, "lost_response", "lost"),
        Injected(0, 3, 1, "", "-", 0, "stale_metadata", "broker 1 late"),
        Injected(2, 3, 2, "p", "Produce", 4, "lost_response", "lost"),
    ]
    s = FaultSchedule.from_record(3, record)
    assert [f.key() for f in s.adversary or ()] == [("", 1, "-", 0, "stale_metadata"),
                                                    ("p", 2, "Produce", 4, "lost_response")]
    assert s.adversary and s.adversary[1].detail == "lost"
    assert "Produce #4 from 'p' to broker 2" in s.adversary[1].describe()
    shrunk = s.with_adversary(s.adversary[1:], comment="one")
    assert shrunk.script == frozenset({("p", 2, "Produce", 4, "lost_response")})
    assert json.loads(shrunk.to_json())["comment"] == "one"


# ---- the cluster from a schedule ------------------------------------------------------

def test_a_cluster_from_an_adversary_schedule_is_adversarial_under_its_seed() -> None:
    c = Cluster(fault_schedule=json.dumps(SHRUNK))
    assert c.fidelity == "adversarial" and c.state.fidelity.seed == 3
    assert Cluster(fault_schedule=json.dumps(SHRUNK), seed=3,
                   fidelity="adversarial").state.fidelity.seed == 3
    with pytest.raises(ValueError, match="needs fidelity 'adversarial', not 'kafka'"):
        Cluster(fault_schedule=json.dumps(SHRUNK), fidelity="kafka")
    with pytest.raises(ValueError, match="replays seed 3, not 4"):
        Cluster(fault_schedule=json.dumps(SHRUNK), seed=4)
    with pytest.raises(ScheduleError, match=r"adversary\[0\]"):
        Cluster(fault_schedule='{"adversary": [{"kind": "lost_response"}]}')
    # a plain schedule leaves the fidelity alone
    plain = Cluster(fault_schedule='{"faults": [{"at_ms": 0, "op": "clear"}]}')
    assert plain.fidelity == "fast" and plain.fault_schedule is not None


def test_the_started_cluster_hands_the_script_to_its_adversary() -> None:
    """The lead's replay hook (Adversary.script): the cluster's adversary gets exactly
    the schedule's keys, and the empty section is an empty script, not None."""
    with Cluster(fault_schedule=json.dumps(SHRUNK)) as c:
        assert c.adversary is not None
        assert c.adversary.script == FaultSchedule.parse(
            json.dumps(SHRUNK), IDS, at_start=True).script
    with Cluster(fault_schedule='{"seed": 1, "adversary": []}') as c:
        assert c.adversary is not None and c.adversary.script == frozenset()
        assert c.adversary.record == []  # no start setting either
    with Cluster(fidelity="adversarial", seed=1) as c:
        assert c.adversary is not None and c.adversary.script is None


def test_the_timed_steps_of_a_cluster_schedule_run_from_its_start() -> None:
    doc = {"seed": 0, "faults": [{"at_ms": 0, "op": "stop_broker", "broker": 2}]}
    with Cluster(fault_schedule=json.dumps(doc)) as c:
        for _ in range(200):
            if c.schedule_runner is not None and c.schedule_runner.done:
                break
            import time
            time.sleep(0.01)
        assert c.schedule_runner.done, c.schedule_runner.status()
        assert not c.state.brokers[2].alive


def test_adversary_fault_describe_says_settings_apart() -> None:
    assert AdversaryFault("", 2, "-", 0, "stale_metadata").describe() == \
        "stale_metadata: broker 2, from the start"
    assert AdversaryFault("tx", -1, "EndTxn", 3, "slow_markers").describe() == \
        "slow_markers: transaction 3 of 'tx'"


# ---- the command ------------------------------------------------------------------------

CHECK_MODULE = '''
def stale(cluster):
    """Fails whenever the seed's stale-metadata broker is stale: a cause known exactly."""
    kinds = [f.kind for f in cluster.adversary.record]
    return ["a broker's metadata was stale"] if "stale_metadata" in kinds else []
stale.cluster_options = {"brokers": 3}

def never(cluster):
    return []
'''


def test_the_command_shrinks_a_seed_writes_the_schedule_and_shrinks_it_again(
        tmp_path, monkeypatch, capsys) -> None:
    from emulator.tools.shrink import main

    (tmp_path / "shrink_check_mod.py").write_text(CHECK_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "s.json"
    assert main(["--check", "shrink_check_mod:stale", "--seed", "2", "--runs", "1",
                 "--confirm", "2", "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "seed 2, run 1: FAILED" in said and "failed 2 of 2 replays" in said, said
    assert "this fault fails the check:\n  1. stale_metadata: broker" in said, said
    schedule = FaultSchedule.parse(out.read_text(), IDS, at_start=True)
    assert schedule.seed == 2 and [f.kind for f in schedule.adversary or ()] == [
        "stale_metadata"]
    # --from: the written schedule is shrunk again (already minimal: the same)
    again = tmp_path / "again.json"
    assert main(["--check", "shrink_check_mod:stale", "--from", str(out), "--runs", "1",
                 "--confirm", "1", "--out", str(again)]) == 0
    assert FaultSchedule.parse(again.read_text(), IDS, at_start=True).script == \
        schedule.script
    # a check that never fails: nothing to shrink, exit 1, nothing written
    assert main(["--check", "shrink_check_mod:never", "--seed", "2", "--runs", "2",
                 "--out", str(tmp_path / "none.json")]) == 1
    assert "the check passed every run" in capsys.readouterr().out
    assert not (tmp_path / "none.json").exists()


@pytest.mark.parametrize("argv, message", [
    (["--check", "nomodule", "--seed", "1"], "--check expects MODULE:FUNCTION"),
    (["--check", "no_such_module_x:f", "--seed", "1"], "No module named"),
    (["--check", "json:dumps"], "give --seed N"),
    (["--check", "json:dumps", "--seed", "1", "--runs", "0"], "--runs must be 1 or more"),
])
def test_the_command_refuses_bad_usage_in_one_line(argv, message, capsys) -> None:
    from emulator.tools.shrink import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_a_shrunk_set_that_never_replays_gives_way_to_the_next_larger_one() -> None:
    """ddmin kept {3} on one lucky run, but {3} alone never fails again (a race it won
    once): the confirming replays fail none, and the set before it, which does replay,
    is what the user gets, with the summary saying so."""
    lucky = [True]

    def run(candidate: tuple[int, ...]) -> bool:
        if set(candidate) == {3} and lucky[0]:
            lucky[0] = False
            return True
        return {3, 5} <= set(candidate)
    result = shrink(tuple(range(8)), run, runs=1, confirm=2)
    assert result.faults != (3,) and {3, 5} <= set(result.faults)
    assert result.confirmed == [True, True]
    assert result.stepped_back == [1]
    assert "a set of 1 failed once" in result.summary()
