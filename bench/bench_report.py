"""Benchmark `priors report`: the page of a reference-shaped ledger, its wall and CPU time and its size.

    python bench/bench_report.py [--size 10k] [--reps 3]

Generates the ledger with bench/gen_ledger.py (in a temporary folder), runs
`python -m priors report -o report.html` --reps times as a whole process, and prints the
median wall time, the median CPU time (user + system, which a loaded machine does not
inflate) and the page's size against the targets: under 1 s and under 5 MB at 10k priors.
Not part of the test suite.
"""

from __future__ import annotations

import argparse
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
    ap.add_argument("--size", default="10k")
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "t"
        subprocess.run([sys.executable, str(HERE / "gen_ledger.py"), a.size, str(target)], check=True,
                       stdout=subprocess.DEVNULL, env=env)
        subprocess.run([sys.executable, "-m", "priors", "render"], cwd=str(target), check=True,
                       stdout=subprocess.DEVNULL, env=env)  # the fold cache warm, as after any write
        walls, cpus = [], []
        for _ in range(a.reps):
            before = os.times()
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "priors", "report", "-o", "report.html"], cwd=str(target),
                           check=True, stdout=subprocess.DEVNULL, env=env)
            walls.append(time.perf_counter() - t0)
            after = os.times()
            cpus.append((after.children_user - before.children_user) + (after.children_system - before.children_system))
        size = (target / "report.html").stat().st_size
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(f"priors report at {a.size} priors: wall {wall:.2f} s · CPU {cpu:.2f} s · {size / 1e6:.2f} MB")
    print(f"  target under 1 s: {'met' if cpu < 1 else 'missed'} (CPU) · {'met' if wall < 1 else 'missed'} (wall)")
    print(f"  target under 5 MB: {'met' if size < 5e6 else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
