"""Benchmark `priors ingest-sarif`: a 5,000-result SARIF log ingested into a ledger of 10k priors.

    python bench/bench_sarif.py [--priors N] [--results M] [--keep DIR]

Builds a scratch target: a generated ledger of N priors (bench/gen_ledger.py), a `src/` tree of
M/10 Python files with ten functions each, and a SARIF log with one result inside every function.
Then times, each as a whole process (`python -m priors`): the first ingest (M new findings), the
same log again (M old findings carried, nothing new) and a log where a tenth of the results are
gone and as many are new (fixed and new). Prints wall and CPU time per step. Not a test: a figure for
docs/sarif.md. The snapshot of `src/` is part of each timed call, as it is for a user.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def sarif(results: List[Dict[str, Any]]) -> str:
    return json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "ruff", "rules": [
        {"id": "F841"}]}}, "results": results}]})


def result(file: str, line: int, name: str) -> Dict[str, Any]:
    return {"ruleId": "F841", "level": "error", "message": {"text": f"Local variable `{name}` is assigned to but never used"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": file}, "region": {"startLine": line}}}]}


def build(root: Path, priors: int, results: int) -> List[Dict[str, Any]]:
    sys.path.insert(0, str(HERE))
    from gen_ledger import generate  # type: ignore[import-not-found]

    generate(priors, root)
    out = []
    files = max(1, results // 10)
    for i in range(files):
        lines = []
        for j in range(10):
            lines += [f"def f{j}(x):", f"    unused_{j} = x", "    return 0", ""]
            out.append(result(f"src/m{i:04d}.py", 4 * j + 2, f"unused_{j}"))
        (root / "src").mkdir(exist_ok=True)
        (root / "src" / f"m{i:04d}.py").write_text("\n".join(lines), encoding="utf-8")
    return out[:results]


def _child_cpu() -> float:
    try:
        import resource
    except ImportError:  # Windows: wall time only
        return 0.0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(root: Path, *args: str) -> Tuple[float, float]:
    """(wall seconds, CPU seconds) of one whole `priors` process."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cpu, t = _child_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "priors", *args], cwd=str(root), env=env,
                          capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"priors {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return took, _child_cpu() - cpu


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--priors", type=int, default=10000)
    ap.add_argument("--results", type=int, default=5000)
    ap.add_argument("--keep", help="build the scratch target here and keep it")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(a.keep) if a.keep else Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        res = build(root, a.priors, a.results)
        (root / "one.sarif").write_text(sarif(res), encoding="utf-8")
        tenth = max(1, len(res) // 10)
        moved = res[tenth:] + [result(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                                      r["locations"][0]["physicalLocation"]["region"]["startLine"] + 1, "other")
                               for r in res[:tenth]]
        (root / "two.sarif").write_text(sarif(moved), encoding="utf-8")
        steps = [("first ingest (all new)", "one.sarif"), ("same log again (all carried)", "one.sarif"),
                 (f"{tenth} fixed, {tenth} new", "two.sarif")]
        print(f"ingest-sarif: {len(res)} results into a ledger of {a.priors} priors (+ snapshot of src/)")
        print(f"  {'step':<32} {'wall':>7} {'CPU':>7}")
        for label, name in steps:
            wall, cpu = timed(root, "ingest-sarif", name, "--ns", "ruff", "--snapshot", "src")
            print(f"  {label:<32} {wall:6.2f}s {cpu:6.2f}s")
        wall, cpu = timed(root, "export", "--sarif", "-o", "out.sarif")
        print(f"  {'export --sarif':<32} {wall:6.2f}s {cpu:6.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
