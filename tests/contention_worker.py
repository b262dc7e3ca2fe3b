"""One of many processes hammering one ledger (tests/test_contention.py).

    python tests/contention_worker.py ROOT WORKER_ID RESULT_FILE DEADLINE_EPOCH

Opens a run, proposes a prior with a claim unique to this worker, commits it, then makes a
human decision with a unique reason — retrying politely on refusals — and records every call
(argv, exit code, stdout, stderr) as JSON lines in RESULT_FILE. Calls run in-process through
priors.cli.main, so each worker is one process holding the lock by its own pid.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
import time
from contextlib import redirect_stderr, redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from priors.cli.main import main as priors_main


def call(root: str, log, *argv: str):
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = priors_main(["-C", root, *argv])
    except BaseException as exc:  # a crash is what the test looks for; record it, don't hide it
        code = 99
        err.write(f"Traceback (worker caught) {type(exc).__name__}: {exc}")
    rec = {"argv": list(argv), "code": code, "out": out.getvalue(), "err": err.getvalue()}
    log.write(json.dumps(rec) + "\n")
    log.flush()
    return code, out.getvalue()


def refused_code(out: str) -> str:
    try:
        return json.loads(out.splitlines()[0])["refused"]
    except (ValueError, KeyError, IndexError):
        return ""


def main() -> int:
    root, wid, result, deadline = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    rng = random.Random(wid)
    cand = os.path.join(root, f"cand-{wid}.json")
    with open(cand, "w", encoding="utf-8") as fh:
        json.dump({"type": "conclusion", "claim": f"worker {wid} finding", "scope_ref": f"w{wid}.txt",
                   "severity": "major"}, fh)
    scopes = os.path.join(root, f"scopes-{wid}.json")
    with open(scopes, "w", encoding="utf-8") as fh:
        json.dump({f"w{wid}.txt": f"{wid:012d}"}, fh)

    def pause() -> None:
        time.sleep(rng.uniform(0.005, 0.04))

    with open(result, "w", encoding="utf-8") as log:
        run = None
        while time.time() < deadline and run is None:  # open a run
            code, out = call(root, log, "relevant", "--ns", "web", "--scopes", scopes)
            if code == 0:
                run = json.loads(out)["run"]
            else:
                pause()
        staged = False
        while run and not staged and time.time() < deadline:
            code, out = call(root, log, "propose", cand, "--run", run, "--ns", "web")
            staged = code == 0
            if not staged:
                if refused_code(out) != "KEEPER_LOCKED":
                    break
                pause()
        committed = False
        while run and not committed and time.time() < deadline:
            code, out = call(root, log, "commit", "--run", run)
            committed = code == 0
            if not committed:
                pause()
        decided = False
        while not decided and time.time() < deadline:
            code, out = call(root, log, "decide", f"P-{1 + wid % 3:04d}", rng.choice(["wontfix", "keep", "accepted"]),
                             "--because", f"worker {wid} decision")
            decided = code == 0
            if not decided:
                pause()
    return 0


if __name__ == "__main__":
    sys.exit(main())
