"""Every adversary fault kind proven to act: make each kind (and each half of the
dispatcher that carries it out) a no-op, one at a time, in a copy of the tree, and run
the tests that must notice. Prints one line per mutant and exits 1 if any survives.

    python3 scripts/adversary_mutants.py            # all mutants (about 6 minutes)
    python3 scripts/adversary_mutants.py kick zombie

A kind whose effect nothing checks (the first adversary's lost_response made a
no-op still wrote the record, and every test stayed green) is a kind that proves
nothing. The copy keeps the developer's tree untouched while the tests run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
A = "emulator/faults/adversary.py"
D = "emulator/server/dispatch.py"
M = "emulator/faults/model.py"
S = "emulator/faults/soundness.py"
# name, file, the code, the code made a no-op
MUTANTS = [
    ("leader_move", A, "return self._move_before(plan, req)", 'return self._note(plan, "no-op")'),
    ("leader_move_after_metadata", A,
     "plan.post = lambda result: self._move_after_metadata(plan, result)",
     "plan.post = lambda result: result"),
    ("leader_move_after_append", A,
     "plan.post = lambda result: self._after_append(plan, result, landed=True)",
     "plan.post = lambda result: result"),
    ("unreplicated_leader_move", A,
     "plan.post = lambda result: self._after_append(plan, result, landed=False)",
     "plan.post = lambda result: result"),
    ("follower_lag", A, "return self._follower_lag(plan, req)", 'return self._note(plan, "no-op")'),
    # the three coordinator kinds share _coordinator_move (the mutant below): each alone too
    ("coordinator_move_before_only", A,
     "if kind in (COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER, COORDINATOR_MOVE_OFFSET_FETCH):",
     "if kind in (COORDINATOR_MOVE_AFTER, COORDINATOR_MOVE_OFFSET_FETCH):"),
    ("coordinator_move_after_answer", A, "                move()\n                return result\n",
     "                return result\n"),
    ("coordinator_move_before_offset_fetch", A,
     "if kind in (COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER, COORDINATOR_MOVE_OFFSET_FETCH):",
     "if kind in (COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER):"),
    ("coordinator_move", A, "return self._coordinator_move(plan, req)",
     'return self._note(plan, "no-op")'),
    ("lost_response", A, "plan.drop = True", "plan.drop = False"),
    ("rebalance", A, "if not groups.classic.force_rebalance(group_id):", "if False:"),
    ("kick", A, "            plan.hold_ms = hold\n", "            plan.hold_ms = 0\n"),
    ("session_evicted", A,
     "if services.fetch_sessions.cache(plan.broker).remove(sid) is None:", "if False:"),
    ("zombie", "emulator/faults/adversary_coordinators.py",
     "err, _, _ = txns.init_producer_id(transactional_id, txn.timeout_ms)",
     "err = 0"),
    ("share_lock_expiry", A, "plan.hold_ms = hold[0]", "plan.hold_ms = 0"),
    ("slow_markers", A, "return max(normal, delay)", "return normal"),
    ("stale_metadata", A, "views.set_lag(broker, lag, STALE_JITTER_MS)",
     "views.set_lag(broker, 0, 0)"),
    ("dispatch_hold", D, "await asyncio.sleep(plan.hold_ms / 1000)", "pass"),
    ("dispatch_drop", D, "            if plan.drop:", "            if False:"),
    ("dispatch_post", D, "result = plan.post(result)", "result = result"),
    ("follower_lag_never_ends", M,
     "if any(f.until_ms is not None and now >= f.until_ms for f in self.followers):",
     "if False:"),
    ("soundness_silent", S, "self.violations.append(text)", "pass"),
    ("soundness_read_committed", S, 'self._read_committed(broker, result.get("responses"))',
     "pass"),
]
TESTS = ["tests/test_adversary.py", "client_tests/test_adversary_kinds.py",
         "client_tests/test_adversarial.py::test_a_zombie_fences_the_producer"]


def _copy_tree(dest: Path) -> None:
    """The tracked files, plus the compiled log core, as they are in the work tree."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    files += [str(p.relative_to(ROOT)) for p in (ROOT / "emulator" / "log").glob("*.so")]
    for f in files:
        src = ROOT / f
        if src.is_file() and "node_modules" not in f:
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or m[0] in names]
    survived = []
    with tempfile.TemporaryDirectory(prefix="adversary-mutants-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        for name, f, old, new in chosen:
            path = work / f
            orig = path.read_text()
            if orig.count(old) != 1:
                print(f"{name}: the code to mutate is not found once in {f}: update MUTANTS")
                return 2
            path.write_text(orig.replace(old, new))
            try:
                r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                                    "-n", "0", "-q", "-x", "--timeout=120", *TESTS],
                                   cwd=work, capture_output=True, text=True)
            finally:
                path.write_text(orig)
            # the summary's "FAILED path::test" lines, not a captured "ERROR    logger" line
            red = [tok for line in r.stdout.splitlines()
                   if line.startswith(("FAILED ", "ERROR "))
                   for tok in line.split()[1:2] if "::" in tok or tok.endswith(".py")]
            if r.returncode == 0:
                survived.append(name)
                print(f"{name}: SURVIVED (no test noticed the kind doing nothing)", flush=True)
            else:
                print(f"{name}: killed by {red[0] if red else 'a test'}", flush=True)
    print(f"{len(chosen) - len(survived)} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
