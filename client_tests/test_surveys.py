"""What the adversarial surveys share (client_tests/surveys.py): a run in a process of
its own gives its result back, is killed when it hangs, and counts as failed when it
ends without a result; with ``--jobs 1`` the runs happen in this process, each when its
result is asked for, in that order."""

from __future__ import annotations

import argparse
import os
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from client_tests import surveys

# Not run with --target kafka: it starts no cluster (the surveys' own machinery).
pytestmark = pytest.mark.emulator_only

ROOT = Path(__file__).resolve().parent.parent

# A survey whose runs are told by their --task word what to do.
FAKE_SURVEY = textwrap.dedent("""
    import argparse, sys, time
    from client_tests import surveys

    ap = argparse.ArgumentParser()
    surveys.add_options(ap, ("WHAT",))
    (what,) = ap.parse_args().task
    if what == "hang":
        time.sleep(120)
    if what == "crash":
        print("the client fell over", file=sys.stderr)
        sys.exit(3)
    print("a client's chatter on stdout")
    surveys.print_result(([f"broke {what}"], [f"unsound {what}"]))
""")


@pytest.fixture
def fake_survey(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "fake_survey.py").write_text(FAKE_SURVEY)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT)]))
    return "fake_survey"


def test_a_run_in_its_own_process_gives_its_result(fake_survey: str) -> None:
    assert surveys.in_process(fake_survey, ["once"], 60) == (["broke once"], ["unsound once"])


def test_a_hung_run_is_killed_and_failed(fake_survey: str) -> None:
    t0 = time.monotonic()
    assert surveys.in_process(fake_survey, ["hang"], 2) == (
        ["error: hung, killed after 2 s"],
        [],
    )
    assert time.monotonic() - t0 < 30


def test_a_run_without_a_result_failed(
    fake_survey: str, capsys: pytest.CaptureFixture[str]
) -> None:
    problems, unsound = surveys.in_process(fake_survey, ["crash"], 60)
    assert problems == [
        "error: the run's process exited 3 without a result: the client fell over\n"
    ]
    assert unsound == []
    assert "the client fell over" in capsys.readouterr().err  # passed on, as with --jobs 1


def _args(jobs: int) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    surveys.add_options(ap, ("WHAT",))
    return ap.parse_args(["--jobs", str(jobs), "--timeout", "60"])


def test_with_one_job_the_runs_happen_here_when_asked_in_order() -> None:
    made: list[str] = []

    def local(task: Sequence[str]) -> surveys.Result:
        made.append(task[0])
        return [task[0]], []

    runs = surveys.Runs("unused", _args(1), local)
    assert not runs.parallel
    first = runs.later(lambda: runs.run("a"))
    second = runs.later(lambda: runs.run("b"))
    assert made == []  # nothing run before its result is asked for
    assert first.result() == (["a"], [])
    assert second.result() == (["b"], [])
    assert made == ["a", "b"]
    runs.close()


def test_with_jobs_each_run_has_a_process_of_its_own(fake_survey: str) -> None:
    def local(task: Sequence[str]) -> surveys.Result:
        raise AssertionError("a run in the survey's own process")

    runs = surveys.Runs(fake_survey, _args(2), local)
    assert runs.parallel
    pending = [runs.later(lambda w=w: runs.run(w)) for w in ("x", "y", "z")]
    assert [p.result() for p in pending] == [
        (["broke x"], ["unsound x"]),
        (["broke y"], ["unsound y"]),
        (["broke z"], ["unsound z"]),
    ]
    runs.close()
