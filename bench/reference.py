"""Ours against the reference Node keeper, as whole processes on the same prepared trees.

Used by `python bench/run_bench.py --reference PATH/priors.mjs` (the reference is not part
of this repository: see docs/reliability.md, "Running"). For each size, each comparison
runs our keeper and then the reference, each on its own fresh copy of the same tree,
alternately --reps times, so both see the same load; the table gives the medians and
ours / reference for wall and CPU time (user + system: what a loaded machine inflates
least), and the peak RSS of both.

If the reference refuses or crashes on a tree, its cell says so (exit code and the first
line it printed) instead of a time: a comparison it cannot run is a finding, not a gap.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Sequence, Tuple

Copier = Callable[[Path, str], Path]


class Sample(NamedTuple):
    """One timed process: wall and CPU seconds, peak RSS in KiB, exit code, what it printed."""

    wall: float
    cpu: float
    rss: int
    code: int
    text: str


class Result(NamedTuple):
    """Medians over the repetitions, or why there are none."""

    wall: float
    cpu: float
    rss: int
    failure: str


def node_command(script: Path) -> List[str]:
    """`node SCRIPT`, or ValueError with the reason (a usage error): the comparison needs both."""
    if not script.is_file():
        raise ValueError(f"--reference {script}: no such file")
    node = shutil.which("node")
    if node is None:
        raise ValueError("--reference needs `node` (Node >= 18) on PATH")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
    try:
        major = int(version.lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if major < 18:
        raise ValueError(f"--reference needs Node >= 18, found {version or 'unknown'}")
    return [node, str(script.resolve())]


def describe(cmd: Sequence[str]) -> str:
    """Node's version and the script's hash: which reference the figures belong to."""
    version = subprocess.run([cmd[0], "--version"], capture_output=True, text=True).stdout.strip()
    digest = hashlib.sha256(Path(cmd[1]).read_bytes()).hexdigest()[:12]
    return f"node {version} · {Path(cmd[1]).name} sha256 {digest}"


def run_once(cmd: Sequence[str], cwd: Path, env: Dict[str, str]) -> Sample:
    """Run one process to its end; its own rusage (wait4) gives CPU time and peak RSS.

    What it printed is read only when it failed: reading large answers would raise this
    process's own peak RSS, which is a floor under every later child's (see rss_floor)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(list(cmd), cwd=str(cwd), env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        if hasattr(os, "wait4"):
            _pid, status, usage = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t0
            code, cpu, rss = os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime, usage.ru_maxrss
            p.returncode = code
        else:  # pragma: no cover - Windows: no per-child rusage
            code = p.wait()
            wall = cpu = time.perf_counter() - t0
            rss = 0
        text = ""
        if code != 0:
            out.seek(0)
            err.seek(0)
            text = (out.read(4096) + b"\n" + err.read(4096)).decode("utf-8", "replace")
        return Sample(wall, cpu, rss, code, text)


def failure_of(s: Sample) -> str:
    first = next((ln.strip() for ln in s.text.splitlines() if ln.strip()), "")
    kind = "refused" if s.code == 1 else "usage error" if s.code == 2 else "crashed"
    return f"{kind} (exit {s.code}{': ' + first[:80] if first else ''})"


def summarize(samples: List[Sample]) -> Result:
    return Result(statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples),
                  max(s.rss for s in samples), "")


class Comparison(NamedTuple):
    """One row: our command and the reference's, each started in a fresh copy of `tree`."""

    name: str
    tree: Path
    ours: List[str]
    ref: List[str]
    ok: Tuple[int, ...] = (0,)  # our exit codes that are a whole answer


def comparisons(idle: Path, clone: Path, run: str, prior: str) -> List[Comparison]:
    """The verbs that exist in both keepers with the same meaning, on the runner's prepared trees.

    `idle` has the fold cache and PRIORS.md as a user's last write left them; `clone` is that
    tree without .priors/cache/, as a fresh git clone has it (cache/ is gitignored). The
    reference never caches: either tree is the same to it."""
    scopes = ["--scopes", "bench-scopes.json"]
    return [
        Comparison("(a) first status in a fresh clone", clone, ["status"], ["status"]),
        Comparison("(b) status", idle, ["status"], ["status"]),
        Comparison("(b) relevant", idle, ["relevant", "--ns", "web", *scopes],
                   ["relevant", "--ns", "web", *scopes, "--run", run]),
        Comparison("(b) decide", idle, ["decide", prior, "keep"], ["decide", prior, "keep"]),
        Comparison("(b) status --calls", idle, ["status", "--calls"], ["status", "--calls"]),
        Comparison("(b) render", idle, ["render"], ["render"]),
        Comparison("(b) redact", idle, ["redact", prior, "--because", "bench"], ["redact", prior, "--because", "bench"]),
        Comparison("(b) hash --text (start-up)", idle, ["hash", "--text", "some text"], ["hash", "--text", "some text"]),
        # (the bench ledger holds lines today's door refuses — its generator's repeated directions — so verify
        # answers with their problems, exit 1: a whole answer, timed as one)
        Comparison("(c) verify --no-git vs status", idle, ["verify", "--no-git"], ["status"], (0, 1)),
    ]


def compare_pair(c: Comparison, ours_prefix: List[str], node: List[str], env: Dict[str, str], reps: int,
                 copy: Copier) -> Tuple[Result, Result]:
    """Ours, then the reference, each on a fresh copy — `reps` times; a reference failure stops its row."""
    ours: List[Sample] = []
    ref: List[Sample] = []
    failure = ""
    for _ in range(reps):
        s = run_once(ours_prefix + c.ours, copy(c.tree, "ref-ours"), env)
        if s.code not in c.ok:
            raise SystemExit(f"bench: priors {' '.join(c.ours)} exited {s.code}: {s.text[:300]}")
        ours.append(s)
        if not failure:
            r = run_once(node + c.ref, copy(c.tree, "ref-node"), env)
            if r.code != 0:
                failure = failure_of(r)
            else:
                ref.append(r)
    return summarize(ours), (Result(0.0, 0.0, 0, failure) if failure else summarize(ref))


def ledger_note(ledger: Path) -> str:
    """What of the ledger the reference does not fold: record types it skips, verdicts it does not know.

    Streamed line by line, so this process stays small (children's peak RSS counts from its image)."""
    skipped: Dict[str, int] = {}
    unknown: Dict[str, int] = {}
    known = {"fixed", "still-open", "stale", "challenged", "obsolete-proposed"}
    with open(ledger, "rb") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            t = rec.get("t")
            if t not in ("prior", "event"):
                skipped[str(t)] = skipped.get(str(t), 0) + 1
            elif t == "event" and rec.get("action") == "disposition" and rec.get("to") not in known:
                unknown[str(rec.get("to"))] = unknown.get(str(rec.get("to")), 0) + 1
    parts = ", ".join(f"t={k}: {v}" for k, v in sorted(skipped.items())) or "none"
    verdicts = ", ".join(f"{k}: {v}" for k, v in sorted(unknown.items())) or "none"
    return (f"lines the reference skips (it folds only t=prior/event): {parts}; "
            f"dispositions with verdicts it does not know (it keeps them as a status it never counts): {verdicts}")


def compare(idle: Path, env: Dict[str, str], run: str, prior: str, size: str, reps: int, node: List[str],
            copy: Copier, rows: Dict[str, List[str]]) -> str:
    """Add one size's row to each comparison in `rows`; return the note on what the reference skipped.

    `run` is the run id our `relevant` opens on `idle` (the reference opens the same), `prior` a
    live prior for decide and redact."""
    clone = copy(idle, f"{size}-fresh-clone")
    shutil.rmtree(str(clone / ".priors" / "cache"), ignore_errors=True)
    ours_prefix = [sys.executable, "-m", "priors"]
    for c in comparisons(idle, clone, run, prior):
        ours, ref = compare_pair(c, ours_prefix, node, env, reps, copy)
        rows.setdefault(c.name, []).append(row(c.name, size, ours, ref))
        print(f"  vs reference: {rows[c.name][-1]}", file=sys.stderr)
    return ledger_note(idle / ".priors" / "ledger.jsonl")


def row(name: str, size: str, ours: Result, ref: Result) -> str:
    mine = f"{ours.wall:.3f} ({ours.cpu:.3f})"
    if ref.failure:
        return f"| {name} | {size} | {mine} | {ref.failure} | — | — | {ours.rss / 1024:.0f} / — |"
    theirs = f"{ref.wall:.3f} ({ref.cpu:.3f})"
    return (f"| {name} | {size} | {mine} | {theirs} | {ours.wall / ref.wall:.2f} | {ours.cpu / ref.cpu:.2f} | "
            f"{ours.rss / 1024:.0f} / {ref.rss / 1024:.0f} |")


def rss_floor_mb() -> float:
    """This runner's own peak RSS: a child started by fork/vfork reports at least it (Linux
    carries the parent's high-water mark into the child's across exec), so smaller peaks
    in the table are this floor, not the child's own."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: no rusage, no RSS column either
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def table(node: List[str], reps: int, rows: Dict[str, List[str]], notes: Dict[str, str]) -> List[str]:
    """The ratio table as Markdown lines (comparisons in order, sizes ascending), with its legend."""
    lines = ["", f"Against the reference keeper ({describe(node)}), median of {reps}, each run on a fresh copy,",
             "ours and the reference alternately. (a) ours finds no .priors/cache/ (a fresh clone; it builds it),",
             "the reference never caches; (b) ours with the cache and PRIORS.md a previous write left; (c) our",
             "full check of the ledger against the reference's status on the same ledger."]
    floor = rss_floor_mb()
    if floor:
        lines.append(f"A peak RSS at or below {floor:.0f} MB (this runner's own peak) may be the runner's, not the child's.")
    lines += ["", "| comparison | size | ours wall (CPU) s | reference wall (CPU) s | ours/ref wall | ours/ref CPU "
                  "| peak RSS MB ours / ref |", "|---|---|---|---|---|---|---|"]
    for group in rows.values():
        lines += group
    lines += [""] + [f"{size}: {note}" for size, note in notes.items()]
    return lines
