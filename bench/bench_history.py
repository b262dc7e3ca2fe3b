"""Benchmark `priors history`: a whole process on a reference-shaped ledger with many runs.

    python bench/bench_history.py [--size 20k] [--runs 1000] [--reps 3]

Generates the ledger with bench/gen_ledger.py (in a temporary folder; --runs spreads the
priors evenly over exactly that many runs), byte-compiles priors/ as an install would, runs
`python -m priors history` --reps times as a whole process (history reads the ledger itself,
never the fold cache: every call is cold) and prints the median wall time and the median CPU
time (user + system, which a loaded machine inflates less) against the target: under 1 s at
20k priors over 1,000 runs. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="20k")
    ap.add_argument("--runs", default="1000")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached, not compiled per call
    compileall.compile_dir(str(REPO / "priors"), quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "t"
        subprocess.run([sys.executable, str(HERE / "gen_ledger.py"), a.size, str(target), "--runs", a.runs],
                       check=True, stdout=subprocess.DEVNULL, env=env)
        walls, cpus = [], []
        for _ in range(a.reps):
            before = os.times()
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "priors", "history"], cwd=str(target), check=True,
                           stdout=subprocess.DEVNULL, env=env)
            walls.append(time.perf_counter() - t0)
            after = os.times()
            cpus.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"priors history at {a.size} priors over {a.runs} runs: wall {wall:.2f} s · CPU {cpu:.2f} s "
          f"(median of {a.reps}; load average {os.getloadavg()[0]:.1f})")
    print(f"  target (20k priors over 1,000 runs) under 1 s: {'met' if cpu < 1 else 'missed'} (CPU) · "
          f"{'met' if wall < 1 else 'missed'} (wall)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
