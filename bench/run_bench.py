"""Benchmark the keeper: every verb as a whole process, on reference-shaped ledgers.

    python bench/run_bench.py [--sizes 1k,10k,100k] [--reps 5] [--quick] [--no-cache] [--out FILE]

For each size a deterministic ledger is generated (bench/gen_ledger.py; kept in
bench/.work/ between runs). Each measurement starts from a fresh copy of the prepared
tree and runs `python -m priors ...` as its own process; the table shows the median wall
time of --reps runs and the largest peak RSS seen (from wait4's rusage). "warm" rows use
the fold cache and PRIORS.md as a user would have them after any earlier write; "cold" rows
disable the cache (PRIORS_NO_CACHE=1): every call folds the whole ledger and renders the
whole table. The typical run is relevant, 50 dispositions, 20 proposals, commit —
with one process per call (single) and with the batch forms (batch).
--quick: sizes 1k,10k and 3 reps — a CI-friendly smoke run (not part of the test suite).
--reference PATH/priors.mjs: also time the reference Node keeper on the same trees and print
ours / reference (bench/reference.py; needs Node >= 18).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work"
RUNS = WORK / f"runs-{os.getpid()}"  # this runner's copies: two runners in one checkout never share them
sys.path.insert(0, str(REPO))


def size_arg(text: str) -> int:
    text = text.strip().lower()
    return int(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


def label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def env_for(cache: bool) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONIOENCODING"] = "utf-8"
    env.pop("PRIORS_CACHE_MIN_BYTES", None)
    env.pop("PRIORS_CACHE_REFRESH_BYTES", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode cached (see compile_package)
    if cache:
        env.pop("PRIORS_NO_CACHE", None)
    else:
        env["PRIORS_NO_CACHE"] = "1"
    return env


CPU: Dict[str, float] = {"last": 0.0}  # CPU seconds (user + system) of the last timed process


def timed(argv: List[str], cwd: Path, env: Dict[str, str], cmd: Optional[List[str]] = None) -> Tuple[float, int, int, str]:
    """(wall seconds, peak RSS in KiB, exit code, stdout) of one `python -m priors` process."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd or [sys.executable, "-m", "priors", *argv], cwd=str(cwd), env=env, stdout=out,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        if hasattr(os, "wait4"):
            _pid, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            p.returncode = os.waitstatus_to_exitcode(status)
            rss = usage.ru_maxrss
            CPU["last"] = usage.ru_utime + usage.ru_stime
        else:  # pragma: no cover - Windows: no per-child rusage
            p.wait()
            wall, rss = time.perf_counter() - t0, 0
        out.seek(0)
        return wall, rss, p.returncode, out.read().decode("utf-8", "replace")


def compile_package() -> None:
    """Byte-compile priors/ first, as `pip install` does: otherwise a PYTHONDONTWRITEBYTECODE
    environment makes every timed process compile the package from source again (~30 ms)."""
    import compileall

    compileall.compile_dir(str(REPO / "priors"), quiet=1)


def run_ok(argv: List[str], cwd: Path, env: Dict[str, str]) -> str:
    r = subprocess.run([sys.executable, "-m", "priors", *argv], cwd=str(cwd), env=env, capture_output=True,
                       text=True, encoding="utf-8")
    if r.returncode != 0:
        raise SystemExit(f"bench setup failed: priors {' '.join(argv)} → {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


# ------------------------------------------------------------------ prepared trees


def generator_stamp() -> str:
    return hashlib.sha256((HERE / "gen_ledger.py").read_bytes()).hexdigest()[:12]


def prepare(n: int) -> Path:
    """bench/.work/<n>/base: the generated tree (made once per generator version)."""
    d = WORK / label(n)
    base = d / "base"
    stamp = d / "stamp"
    if stamp.exists() and stamp.read_text() == generator_stamp() and base.is_dir():
        return base
    if d.exists():
        shutil.rmtree(str(d))
    d.mkdir(parents=True)
    # in a child process: this one stays small, as its children's peak RSS counts from its image
    out = subprocess.run([sys.executable, str(HERE / "gen_ledger.py"), str(n), str(base)], check=True,
                         capture_output=True, text=True).stdout
    (d / "info.json").write_text(out.strip().splitlines()[-1])
    stamp.write_text(generator_stamp())
    return base


def fresh_copy(src: Path, name: str) -> Path:
    """A copy of a prepared tree, flushed to disk: otherwise the first `fsync` of the timed verb
    would also pay for writing back the whole copy (ext4 commits it in the same journal transaction)."""
    dst = RUNS / name
    if dst.exists():
        shutil.rmtree(str(dst))
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(str(src), str(dst))
    if hasattr(os, "sync"):
        os.sync()
    return dst


class Stages:
    """Trees at each step of a run, prepared once per size and cache mode, copied per measurement."""

    def __init__(self, base: Path, cache: bool) -> None:
        self.env = env_for(cache)
        tag = "warm" if cache else "cold"
        self.idle = fresh_copy(base, f"{base.parent.name}-{tag}-idle")
        if cache:
            run_ok(["status"], self.idle, self.env)  # builds the fold cache, as any earlier call would
            run_ok(["render"], self.idle, self.env)  # PRIORS.md as the last write left it (with its render mark)
        else:
            shutil.rmtree(str(self.idle / ".priors" / "cache"), ignore_errors=True)
        self.opened = fresh_copy(self.idle, f"{base.parent.name}-{tag}-opened")
        rel = json.loads(run_ok(["relevant", "--ns", "web", "--scopes", "bench-scopes.json"], self.opened, self.env))
        self.run = rel["run"]
        self.pairs = [(it["id"], "fixed" if it["scopeState"] == "unchanged" else "stale")
                      for it in rel["verify"] if it["scopeState"] != "missing"]
        self.cands = sorted(str(p.relative_to(self.opened)) for p in (self.opened / "bench-cands").iterdir())
        self.disposed = fresh_copy(self.opened, f"{base.parent.name}-{tag}-disposed")
        if self.pairs:
            run_ok(["disposition", *[x for pair in self.pairs for x in pair], "--run", self.run], self.disposed,
                   self.env)
        self.staged = fresh_copy(self.disposed, f"{base.parent.name}-{tag}-staged")
        run_ok(["propose", *self.cands, "--run", self.run, "--ns", "web"], self.staged, self.env)
        self.some_prior = "P-0001"
        with open(self.idle / ".priors" / "ledger.jsonl", "rb") as fh:  # a live prior near the middle
            size = os.fstat(fh.fileno()).st_size
            fh.seek(size // 2)
            fh.readline()
            for line in fh:
                if line.startswith(b'{"born"') and b'"redacted"' not in line:
                    self.some_prior = json.loads(line)["id"]
                    break


# ------------------------------------------------------------------ measurements


def measure(stage: Path, argv: List[str], env: Dict[str, str], reps: int, name: str) -> Tuple[float, float, int]:
    walls, cpus, peak = [], [], 0
    for _ in range(reps):
        root = fresh_copy(stage, f"m-{name}")
        wall, rss, code, out = timed(argv, root, env)
        if code not in (0,):
            raise SystemExit(f"bench: priors {' '.join(argv)} exited {code}: {out[:300]}")
        walls.append(wall)
        cpus.append(CPU["last"])
        peak = max(peak, rss)
    return statistics.median(walls), statistics.median(cpus), peak


def typical_run(st: Stages, batch: bool, reps: int, name: str) -> Tuple[float, float, int]:
    walls, cpus, peak = [], [], 0
    for _ in range(reps):
        root = fresh_copy(st.idle, f"t-{name}")
        total = 0.0
        wall, rss, code, out = timed(["relevant", "--ns", "web", "--scopes", "bench-scopes.json"], root, st.env)
        assert code == 0, out
        total += wall
        cpu = CPU["last"]
        peak = max(peak, rss)
        rel = json.loads(out)
        run = rel["run"]
        pairs = [(it["id"], "fixed" if it["scopeState"] == "unchanged" else "stale")
                 for it in rel["verify"] if it["scopeState"] != "missing"]
        calls: List[List[str]] = []
        if batch:
            if pairs:
                calls.append(["disposition", *[x for p in pairs for x in p], "--run", run])
            calls.append(["propose", *st.cands, "--run", run, "--ns", "web"])
        else:
            calls += [["disposition", pid, v, "--run", run] for pid, v in pairs]
            calls += [["propose", c, "--run", run, "--ns", "web"] for c in st.cands]
        calls.append(["commit", "--run", run])
        for argv in calls:
            wall, rss, code, out = timed(argv, root, st.env)
            assert code == 0, (argv, out)
            total += wall
            cpu += CPU["last"]
            peak = max(peak, rss)
        walls.append(total)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus), peak


def import_time() -> Tuple[float, float]:
    """(sum of priors.* self import times, cumulative import of priors.commands) in ms, best of 5."""
    best_self, best_cum = float("inf"), float("inf")
    for _ in range(5):
        r = subprocess.run([sys.executable, "-X", "importtime", "-c", "import priors.cli.main, priors.cli.run_verbs"],
                           capture_output=True, text=True, env=env_for(True), cwd=str(REPO))
        own, cum = 0, 0
        for ln in r.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", ln)
            if m and m.group(4).startswith("priors"):
                own += int(m.group(1))
                if m.group(4) in ("priors.cli.run_verbs", "priors.cli.main"):
                    cum += int(m.group(2))
        best_self, best_cum = min(best_self, own / 1000), min(best_cum, cum / 1000)
    return best_self, best_cum


def verbs_for(st: Stages) -> List[Tuple[str, Path, List[str]]]:
    pid, v = st.pairs[0] if st.pairs else ("P-0001", "fixed")
    return [
        ("hash --text", st.idle, ["hash", "--text", "some text"]),
        ("status", st.idle, ["status"]),
        ("status --calls", st.idle, ["status", "--calls"]),
        ("render", st.idle, ["render"]),
        ("init (existing)", st.idle, ["init"]),
        ("relevant", st.idle, ["relevant", "--ns", "web", "--scopes", "bench-scopes.json"]),
        ("lessons --inject", st.idle, ["lessons", "--inject", "--query", "fix the flaky parser test", "--max-inject", "8"]),
        ("disposition", st.opened, ["disposition", pid, v, "--run", st.run]),
        ("propose", st.disposed, ["propose", st.cands[0], "--run", st.run, "--ns", "web"]),
        ("commit", st.staged, ["commit", "--run", st.run]),
        ("abort", st.staged, ["abort", "--run", st.run]),
        ("decide", st.idle, ["decide", st.some_prior, "keep"]),
        ("redact", st.idle, ["redact", st.some_prior, "--because", "bench"]),
    ]


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description="Time every priors verb as a whole process.")
    ap.add_argument("--sizes", default=None, help="comma-separated prior counts, e.g. 1k,10k,100k")
    ap.add_argument("--reps", type=int, default=None)
    ap.add_argument("--reps-large", type=int, default=5, help="repetitions above 10k priors (default 5)")
    ap.add_argument("--quick", action="store_true", help="1k,10k and 3 reps")
    ap.add_argument("--no-cold", action="store_true", help="skip the cache-disabled rows")
    ap.add_argument("--out", type=Path, default=None, help="also write the table here")
    ap.add_argument("--reference", type=Path, default=None, metavar="PATH",
                    help="the reference keeper's priors.mjs: also time it (node) and print ours / reference")
    a = ap.parse_args(argv)
    node: List[str] = []
    if a.reference is not None:
        from bench import reference

        try:
            node = reference.node_command(a.reference)
        except ValueError as exc:
            ap.error(str(exc))
    sizes = [size_arg(x) for x in (a.sizes or ("1k,10k" if a.quick else "1k,10k,100k")).split(",")]
    reps = a.reps or (3 if a.quick else 5)
    compile_package()
    head = (f"python {sys.version.split()[0]} · {os.cpu_count()} cores · median of {reps} ({a.reps_large} above 10k; "
            f"a typical run with single calls: {min(reps, 3)}, 1 above 10k) · "
            "wall seconds (CPU seconds, user+system) / peak RSS MB")
    lines = [head, "", "| verb | " + " | ".join(label(n) for n in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    results: Dict[str, Dict[int, str]] = {}
    order: List[str] = []
    ref_rows: Dict[str, List[str]] = {}
    ref_notes: Dict[str, str] = {}
    base_walls = sorted(timed([], REPO, env_for(True), [sys.executable, "-c", "pass"])[0] for _ in range(7))
    lines.insert(1, f"(`python -c pass` alone takes {base_walls[3]:.3f} s here: every row includes it)")
    for n in sizes:
        base = prepare(n)
        info = json.loads((base.parent / "info.json").read_text())
        print(f"[{label(n)}] {info['lines']} lines, {info['bytes'] / 1e6:.1f} MB", file=sys.stderr)
        for cache in ([True] if a.no_cold else [True, False]):
            st = Stages(base, cache)
            tag = "" if cache else " (no cache)"
            todo = verbs_for(st)
            if not cache:
                todo = [t for t in todo if t[0] in ("status", "relevant", "lessons --inject", "commit", "decide")]
            for name, stage, args in todo:
                wall, cpu, rss = measure(stage, args, st.env, reps if n <= 10000 else a.reps_large, name.replace(" ", "_"))
                key = name + tag
                if key not in results:
                    results[key] = {}
                    order.append(key)
                results[key][n] = f"{wall:.3f} ({cpu:.3f}) / {rss / 1024:.0f}"
                print(f"  {key:<28} {results[key][n]}", file=sys.stderr)
            if cache and node:
                ref_notes[label(n)] = reference.compare(st.idle, st.env, st.run, st.some_prior, label(n), reps, node,
                                                        fresh_copy, ref_rows)
            for batch in ((False, True) if cache else (True,)):
                key = f"typical run ({'batch' if batch else 'single calls'}){tag}"
                # ~72 processes per single-call run: fewer repetitions on large ledgers
                n_reps = (reps if n <= 10000 else a.reps_large) if batch else (min(reps, 3) if n <= 10000 else 1)
                wall, cpu, rss = typical_run(st, batch, n_reps, "b" if batch else "s")
                if key not in results:
                    results[key] = {}
                    order.append(key)
                results[key][n] = f"{wall:.3f} ({cpu:.3f}) / {rss / 1024:.0f}"
                print(f"  {key:<28} {results[key][n]}", file=sys.stderr)
    for key in order:
        lines.append(f"| {key} | " + " | ".join(results[key].get(n, "—") for n in sizes) + " |")
    own, cum = import_time()
    lines += ["", f"imports (-X importtime, best of 5): priors.* own {own:.1f} ms; "
                  f"priors.cli.main + priors.cli.run_verbs cumulative (with the stdlib they pull in) {cum:.1f} ms"]
    if node:
        lines += reference.table(node, reps, ref_rows, ref_notes)
    text = "\n".join(lines)
    print(text)
    if a.out:
        a.out.write_text(text + "\n", encoding="utf-8")
    shutil.rmtree(str(RUNS), ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
