"""Each reference program's log and what the cluster holds after it, as a History for
emulator/history.py, plus the checks a History does not express. A run's verdict is a
list of broken promises (empty: a pass) and the history report to print.

- producer: every record sent is acknowledged, and each acknowledged record is in the
  topic exactly once, at the offset its acknowledgement named, in the order it was sent
  within its partition (inputs: the records sent, in send order per partition; one
  ``committed`` attempt of every acknowledged id; outputs: what a reader finds);
- consumer: every record of the topic processed at least once, the first processings
  of a partition in offset order, and no commit ever ahead of processing: when a commit
  of offset O for partition P was about to be sent, every record of P below O had been
  processed (inputs: the topic; outputs: each record's first processing);
- ctp: exactly-once as emulator/history.py checks it (inputs: the input topic;
  attempts: the program's transactions and outcomes; outputs: a read_committed reader
  of the output topic, each record naming its input id and attempt).
"""

from __future__ import annotations

from dataclasses import dataclass

from client_tests.reference_programs.log import ProgramLog
from emulator.history import Attempt, History, InputRecord, OutputRecord, Report, check


@dataclass
class Verdict:
    problems: list[str]
    report: Report
    log: ProgramLog

    def text(self) -> str:
        notes = "\n  ".join(self.log.notes[-20:])
        return "\n".join([*self.problems, self.report.text(),
                          f"the program's notes (last 20):\n  {notes}" if notes else ""])


def producer(values: list[str], partitions: int, log: ProgramLog,
             found: list[tuple[bytes, int, int]]) -> Verdict:
    inputs = [InputRecord(v, i % partitions, i // partitions) for i, v in enumerate(values)]
    acked = {v: (p, o) for v, p, o in log.acked}
    outputs = [OutputRecord(v.decode(), "acks", p, o) for v, p, o in found]
    history = History(inputs, [Attempt("acks", "committed", tuple(acked))], outputs)
    report = check(history)
    problems = [f"{v.kind}: {v.detail}" for v in report.violations[:10]]
    if log.failed:
        problems.append(f"{len(log.failed)} record(s) not acknowledged, e.g. {log.failed[:3]}")
    missing = [v for v in values if v not in acked and v not in dict(log.failed)]
    if missing:
        problems.append(f"{len(missing)} record(s) with no delivery report, e.g. {missing[:3]}")
    at = {v.decode(): (p, o) for v, p, o in found}
    wrong = [(v, po, at.get(v)) for v, po in acked.items() if v in at and at[v] != po]
    if wrong:
        problems.append(f"{len(wrong)} record(s) acknowledged at another offset than where "
                        f"they are (value, acknowledged, found): {wrong[:3]}")
    return Verdict(problems, report, log)


def consumer(log: ProgramLog, found: list[tuple[bytes, int, int]]) -> Verdict:
    inputs = [InputRecord(v.decode(), p, o) for v, p, o in found]
    firsts: dict[str, tuple[int, int]] = {}
    per_partition: dict[int, int] = {}
    done: dict[int, set[int]] = {}
    ahead: list[str] = []
    for e in log.events:
        if e[0] == "p":
            _, member, p, o, v = e
            done.setdefault(p, set()).add(o)
            if v not in firsts:
                firsts[v] = (p, per_partition.get(p, 0))
                per_partition[p] = per_partition.get(p, 0) + 1
        else:
            _, member, p, o = e
            have = done.get(p, set())
            gaps = [x for x in range(o) if x not in have]
            if gaps:
                ahead.append(f"{member} committed offset {o} of partition {p} with "
                             f"{len(gaps)} record(s) below it unprocessed (first: offset "
                             f"{gaps[0]})")
    outputs = [OutputRecord(v, "consumer", p, k) for v, (p, k) in firsts.items()]
    history = History(inputs, [Attempt("consumer", "unknown")], outputs)
    report = check(history)
    problems = [f"{v.kind}: {v.detail}" for v in report.violations[:10]] + ahead[:10]
    return Verdict(problems, report, log)


def ctp(log: ProgramLog, inputs_found: list[tuple[bytes, int, int]],
        outputs_found: list[tuple[bytes, int, int]]) -> Verdict:
    inputs = [InputRecord(v.decode(), p, o) for v, p, o in inputs_found]
    outputs = []
    for v, p, o in outputs_found:
        rid, _, aid = v.decode().partition("|")
        outputs.append(OutputRecord(rid, aid, p, o))
    history = History(inputs, list(log.attempts), outputs)
    report = check(history)
    problems = [f"{v.kind}: {v.detail}" for v in report.violations[:10]]
    if not any(a.outcome == "committed" for a in log.attempts):
        problems.append("no transaction committed")
    return Verdict(problems, report, log)
