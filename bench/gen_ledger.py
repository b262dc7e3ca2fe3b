"""Generate a deterministic, reference-shaped ledger for benchmarks and stress tests.

    python bench/gen_ledger.py N OUT_DIR [--seed S] [--runs R] [--open-heavy] [--door]

writes OUT_DIR/.priors/{ledger.jsonl,runs/,.gitignore} holding N priors across a
few namespaces: mixed types and presets, dispositions over many committed runs
(every run block ends with its commit record), decides with and without
reasons, reversal calls, scope-missing streaks that leave priors resting, and
a few redaction tombstones. Same N, seed and R → the same bytes.

Without --runs each run adds 10–40 priors (about N / 25 runs: 802 at 20k). With
--runs R (1 ≤ R ≤ N) there are exactly R runs and the N priors are spread evenly
over them (`gen_ledger.py 20k DIR --runs 1000`: 20 a run).

The generator also writes OUT_DIR/bench-scopes.json: the scope snapshot of a
"typical run" in namespace `web` — about 50 verify items with a present scope
(half of them changed), everything else missing — and OUT_DIR/bench-cands/
with 20 candidate files whose scopes are in that snapshot.

The seals name no door, as the reference keeper's do, so `verify` holds the runs to the rules before
issue 28. With --door every seal names today's door, as this keeper's seals do, so `verify` replays
today's rules, lessons compared with lessons by meaning among them; and, since a door never lets a
lesson in that says what another says, the lessons are drawn from made-up words (below) instead of
the 50 words findings share. Everything else is the same ledger, line for line: the lessons' claims
and the seals' `door` are the only lines that differ.

What to expect: `verify` still fails on it, with a few more problems than without --door, since
today's rules also compare findings by meaning. Lessons drawn from made-up words seldom say the same
thing, but they can: at 100k, `verify` still reports ~70 lessons refused by meaning ("in other words"),
along with the same-scope `DUPLICATE`/`RERAISE`/`REVERSAL` problems the generator's directions
produce with or without --door. Use it to time the replay of today's rules (lessons compared by
meaning among them), not as a ledger that verifies clean.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from priors.core.canonical import dumps, sha12
from priors.core.vocabulary import DOOR

NAMESPACES = [("web", 5), ("api", 3), ("infra", 2), ("docs", 1), ("mobile", 1)]
PRESETS = {
    "conclusion": ("content-hash", "verify-phase", "disposition-required", "advisory", "stale-on-scope-change"),
    "behavioral": ("tool-version", "run-start", "inject-as-instruction", "advisory", "challenged-on-failure"),
    "coverage": ("content-hash", "propose-gate", "veto-only", "advisory", "stale-on-scope-change"),
    "calibration": ("repo-wide", "run-start", "inject-as-instruction", "advisory", "only-by-supersession"),
}
FACETS = ("scope", "activation", "obligation", "authority", "lifecycle")
TYPES = [("conclusion", 78), ("behavioral", 8), ("coverage", 6), ("calibration", 8)]
DIRECTIONS = ["terser", "expand", "proof-earlier", "proof-later", "cta-singular", "cta-multiple", "hoist-resource",
              "inline-resource"]
OPPOSITE = {"terser": "expand", "expand": "terser", "proof-earlier": "proof-later", "proof-later": "proof-earlier",
            "cta-singular": "cta-multiple", "cta-multiple": "cta-singular",
            "hoist-resource": "inline-resource", "inline-resource": "hoist-resource"}
AGENT_VERDICTS = [("fixed", 52), ("still-open", 24), ("stale", 8), ("reaffirmed", 6), ("challenged", 5), ("obsolete-proposed", 5)]
HUMAN_VERDICTS = [("accepted", 30), ("wontfix", 25), ("obsolete", 20), ("keep", 15), ("reopen", 10)]
WORDS = ("button form email pricing header footer cache query index token session retry timeout handler render layout "
         "modal link image font color contrast label input schema migration lock queue worker log metric alert test "
         "fixture mock route param cookie redirect auth role scope bundle chunk import export config flag").split()


def _coined(count: int, seed: int) -> List[str]:
    """`count` made-up words (`tovika`, `zerumo`), the same every time: a lesson's vocabulary (below)."""
    rng, out, seen = random.Random(seed), [], set()
    while len(out) < count:
        word = "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 3)))
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


# A lesson's words with --door. The door compares a lesson with every lesson by meaning (door 5 and later), so a ledger a
# door wrote holds no two agent lessons saying the same thing: lessons drawn from `WORDS` like findings would
# say the same thing dozens of times over (their 50 words in common). Drawn instead from made-up words —
# each word, 30 % of the time, one of a common hundred, else one of 5,000 rarer ones — two lessons seldom
# share many words (seldom, not never: see the module's docstring).
LESSON_COMMON, LESSON_RARE = _coined(100, 7), _coined(5100, 8)[100:]


def weighted(rng: random.Random, table: List[Tuple[str, int]]) -> str:
    return rng.choices([k for k, _ in table], weights=[w for _, w in table])[0]


def scope_hash(ref: str, version: int) -> str:
    return sha12(f"{ref}#{version}")


class Gen:
    """Builds the ledger as a list of records, tracking just enough state to keep it coherent."""

    def __init__(self, n: int, seed: int, runs: Optional[int] = None, open_heavy: bool = False, door: bool = False) -> None:
        self.n = n
        self.door = door                              # seals name today's door, lessons say different things
        self.open_heavy = open_heavy                  # one namespace, few verdicts a run: most priors stay open
        self.runs = runs                              # exactly this many runs, or None: 10–40 priors a run
        self.rng = random.Random(seed)
        self.records: List[Dict[str, Any]] = []
        self.next_prior = 1
        self.next_run = 1
        self.version: Dict[str, int] = {}            # scope ref -> current content version
        self.open_verify: Dict[str, List[str]] = {ns: [] for ns, _ in NAMESPACES}  # judged each run
        self.gone: Dict[str, List[str]] = {ns: [] for ns, _ in NAMESPACES}          # scope missing streaks
        self.info: Dict[str, Dict[str, Any]] = {}     # id -> {ns, ref, status, type, direction}
        self.prior_line: Dict[str, int] = {}
        self.files_per_ns = max(20, n // 12)
        self.lesson_rng = random.Random(seed * 7919 + 1)  # (its own stream: the rest of the ledger is as before)

    # ----------------------------------------------------------------- records

    def new_prior(self, ns: str, run: str) -> Dict[str, Any]:
        rng = self.rng
        typ = weighted(rng, TYPES)
        pid = f"P-{self.next_prior:04d}"
        self.next_prior += 1
        rec: Dict[str, Any] = {"t": "prior", "id": pid, "ns": ns, "type": typ,
                               "facets": dict(zip(FACETS, PRESETS[typ])), "born": run}
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14)))
        rec["claim"] = f"{pid.lower()} {words} — {rng.choice(['missing', 'wrong', 'slow', 'unclear', 'duplicated'])} in {ns}"
        if self.door and PRESETS[typ][1] == "run-start":  # a lesson: see LESSON_COMMON
            lr = self.lesson_rng
            rec["claim"] = " ".join(lr.choice(LESSON_COMMON) if lr.random() < 0.3 else lr.choice(LESSON_RARE)
                                    for _ in range(lr.randint(5, 12)))
        ref: Optional[str] = None
        if PRESETS[typ][0] != "repo-wide":
            if typ == "behavioral":
                ref = f"tool:{rng.choice(['eslint', 'tsc', 'pytest', 'node', 'npm'])}"
            else:
                ref = f"src/{ns}/m{rng.randrange(self.files_per_ns // 10 + 1)}/f{rng.randrange(self.files_per_ns)}.ts"
            rec["scope_ref"] = ref
            rec["scope_hash"] = scope_hash(ref, self.version.setdefault(ref, 0))
        if typ == "conclusion":
            rec["severity"] = rng.choice(["minor", "major", "major", "gate"])
        if typ == "coverage":
            rec["depth"] = rng.choice(["minor", "major"])
        if rng.random() < 0.25:
            rec["direction"] = rng.choice(DIRECTIONS)
        if rng.random() < 0.4:
            rec["evidence"] = f"{ref or 'repo'}:{rng.randint(1, 400)} {rng.choice(WORDS)}"
        if typ == "calibration" and rng.random() < 0.5:
            rec["review_every"] = rng.choice([5, 10, 20])
        self.info[pid] = {"ns": ns, "ref": ref, "status": "open", "type": typ, "direction": rec.get("direction")}
        return rec

    def emit(self, rec: Dict[str, Any]) -> None:
        if rec["t"] == "prior":
            self.prior_line[rec["id"]] = len(self.records)
        self.records.append(rec)

    # ----------------------------------------------------------------- runs

    def run_block(self) -> None:
        rng = self.rng
        ns = "web" if self.open_heavy else weighted(rng, NAMESPACES)
        run_no = self.next_run
        run = f"run-{run_no:03d}"
        self.next_run += 1
        counts = {"fixed": 0, "carried": 0, "touched": 0, "call": 0}
        # the world moved: some files changed since last run
        pool = self.open_verify[ns]
        judged = pool[: rng.randint(0, 3) if self.open_heavy else rng.randint(10, 40)]
        still: List[str] = []
        for pid in judged:
            ref = self.info[pid]["ref"]
            changed = rng.random() < 0.3
            if changed:
                self.version[ref] = self.version.get(ref, 0) + 1
            verdict = weighted(rng, AGENT_VERDICTS)
            if not changed and verdict in ("stale", "reaffirmed"):
                verdict = "still-open"
            if changed and verdict == "still-open":
                verdict = "reaffirmed"
            ev = {"t": "event", "id": pid, "action": "disposition", "to": verdict, "run": run, "by": "agent",
                  "scope_hash": scope_hash(ref, self.version.get(ref, 0))}
            self.emit(ev)
            if verdict in ("still-open", "reaffirmed", "stale"):
                still.append(pid)
                counts["touched" if verdict == "stale" else "carried"] += 1
            elif verdict == "fixed":
                counts["fixed"] += 1
                self.info[pid]["status"] = "fixed"
            else:
                counts["call"] += 1
                self.info[pid]["status"] = verdict
        self.open_verify[ns] = pool[len(judged):] + still
        # scope-missing streaks: files deleted; their priors go resting after 5 runs
        for pid in list(self.gone[ns]):
            self.emit({"t": "event", "id": pid, "action": "scope-missing", "run": run})
            self.info[pid]["miss"] = self.info[pid].get("miss", 0) + 1
            if self.info[pid]["miss"] >= 5:
                self.gone[ns].remove(pid)
        if self.open_verify[ns] and rng.random() < 0.3:
            pid = self.open_verify[ns].pop(rng.randrange(len(self.open_verify[ns])))
            self.gone[ns].append(pid)
        # new priors
        born = []
        for _ in range(self._births(run_no)):
            rec = self.new_prior(ns, run)
            self.emit(rec)
            born.append(rec["id"])
            if rec["facets"]["activation"] == "verify-phase":
                self.open_verify[ns].append(rec["id"])
        # a reversal escalation now and then
        calls = 0
        if rng.random() < 0.08:
            target = self._settled_with_direction(ns)
            if target is not None:
                calls += 1
                self.emit({"t": "call", "call_id": f"{run}-C-01", "kind": "reversal", "run": run, "ns": ns,
                           "conflicts_with": target, "claim": f"reverse {target}: {rng.choice(WORDS)} {rng.choice(WORDS)}",
                           "direction": OPPOSITE[self.info[target]["direction"]]})
        checked = len(judged)
        summary = [f"Checked against {checked} priors:"]
        if counts["fixed"]:
            summary.append(f"  ✓ {counts['fixed']} fixed — nice work")
        if counts["carried"]:
            summary.append(f"  → {counts['carried']} carried (same identities, current scope state)")
        if counts["touched"]:
            summary.append(f"  ~ {counts['touched']} touched by changes — queued for re-judgment")
        if counts["call"] + calls:
            summary.append(f"  ? {counts['call'] + calls} need your call — `priors status --calls` to review")
        summary.append(f"New this run: {len(born)}")
        seal = {"t": "run", "action": "commit", "run": run, "ns": ns, "summary": summary}
        self.emit(dict(seal, door=DOOR) if self.door else seal)

    def _births(self, run_no: int) -> int:
        """How many priors run `run_no` (1-based) adds: random by default; with --runs, run k adds
        its even share, floor(N*k/R) - floor(N*(k-1)/R), so the R runs add exactly N."""
        if self.runs is None:
            return min(self.rng.randint(10, 40), self.n - self.next_prior + 1)
        return self.n * run_no // self.runs - self.n * (run_no - 1) // self.runs

    def _settled_with_direction(self, ns: str) -> Optional[str]:
        for _ in range(20):
            pid = f"P-{self.rng.randint(1, self.next_prior - 1):04d}"
            i = self.info.get(pid)
            if i and i["ns"] == ns and i["direction"] and i["status"] in ("fixed", "accepted", "wontfix"):
                return pid
        return None

    def decides(self) -> None:
        rng = self.rng
        for _ in range(rng.randint(0, 3)):
            pid = f"P-{rng.randint(1, self.next_prior - 1):04d}"
            if self.info[pid]["status"] == "redacted":
                continue
            to = weighted(rng, HUMAN_VERDICTS)
            ev = {"t": "event", "id": pid, "action": "decide", "to": to, "by": "human"}
            if to == "reopen" or rng.random() < 0.5:
                ev["reason"] = f"{rng.choice(WORDS)} {rng.choice(WORDS)} — decided in review"
            self.emit(ev)
            self.info[pid]["status"] = {"keep": "accepted", "reopen": "open"}.get(to, to)
            if pid in self.open_verify[self.info[pid]["ns"]] and to != "reopen":
                self.open_verify[self.info[pid]["ns"]].remove(pid)

    def redact(self, pid: str) -> None:
        """Apply the one sanctioned rewrite, exactly as `priors redact` does."""
        i = self.prior_line[pid]
        orig = self.records[i]
        self.records[i] = {"t": "prior", "id": pid, "ns": orig["ns"], "redacted": True,
                           "content_hash": sha12(dumps(orig)), "born": orig["born"]}
        for j, rec in enumerate(self.records):
            if rec.get("t") == "event" and rec.get("id") == pid and "reason" in rec:
                rec = dict(rec)
                reason = rec.pop("reason")
                rec["reason_redacted"] = True
                rec["reason_hash"] = sha12(reason)
                self.records[j] = rec
            elif rec.get("t") == "call" and rec.get("conflicts_with") == pid:
                self.records[j] = {k: rec[k] for k in ("t", "call_id", "kind", "run", "ns", "conflicts_with")}
                self.records[j]["redacted"] = True
        self.emit({"t": "event", "id": pid, "action": "redact", "by": "human", "reason": "contained a customer email"})
        self.info[pid]["status"] = "redacted"

    def generate(self) -> List[Dict[str, Any]]:
        while self.next_prior <= self.n if self.runs is None else self.next_run <= self.runs:
            self.run_block()
            self.decides()
        for _ in range(max(1, self.n // 5000)):
            pid = f"P-{self.rng.randint(1, self.n):04d}"
            if self.info[pid]["status"] != "redacted":
                self.redact(pid)
        return self.records


# ----------------------------------------------------------------- the typical run's inputs


def typical_run_inputs(gen: Gen, verify_target: int = 50, proposals: int = 20) -> Tuple[Dict[str, str], List[Dict[str, Any]]]:
    """Scopes for ~verify_target present verify items in `web` (half changed; every one when the ledger
    is open-heavy) and 20 fresh candidates."""
    if gen.open_heavy:
        verify_target = gen.n
    from priors.core.fold import fold

    st = fold(gen.records)
    by_ref: Dict[str, List[str]] = {}
    for p in st.priors.values():
        if p.ns != "web" or p.redacted or p.resting or p.facet("activation") != "verify-phase":
            continue
        if p.status in ("open", "stale", "challenged") and p.scope_ref:
            by_ref.setdefault(p.scope_ref, []).append(p.id)
    scopes: Dict[str, str] = {}
    present = 0
    rng = random.Random(7)
    for ref in sorted(by_ref):
        if present >= verify_target:
            break
        # a ref can carry priors with different effective hashes; half the refs are "changed"
        p0 = st.priors[by_ref[ref][0]]
        scopes[ref] = p0.scope_hash if rng.random() < 0.5 else sha12(ref + "#bench-new")
        present += len(by_ref[ref])
    # floors' own scopes unchanged keep their veto live but our candidates are severity major
    cands = []
    for k in range(proposals):
        ref = f"src/web/bench/new{k}.ts"
        scopes[ref] = sha12(ref)
        cands.append({"type": "conclusion", "claim": f"bench candidate {k}: the {WORDS[k]} {WORDS[-k - 1]} is unguarded",
                      "scope_ref": ref, "severity": "major", "evidence": f"{ref}:{k + 1}"})
    return scopes, cands


def write_tree(out: Path, records: List[Dict[str, Any]], scopes: Dict[str, str], cands: List[Dict[str, Any]]) -> None:
    d = out / ".priors"
    (d / "runs").mkdir(parents=True, exist_ok=True)
    with open(d / "ledger.jsonl", "w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(dumps(rec) + "\n")
    (d / ".gitignore").write_text("runs/\nkeeper.lock\n*.tmp\ncache/\nreflection/\n", encoding="utf-8")
    (out / "bench-scopes.json").write_text(json.dumps(scopes, indent=0, sort_keys=True), encoding="utf-8")
    cdir = out / "bench-cands"
    cdir.mkdir(exist_ok=True)
    for k, c in enumerate(cands):
        (cdir / f"c{k:02d}.json").write_text(dumps(c), encoding="utf-8")


def generate(n: int, out: Path, seed: int = 1, runs: Optional[int] = None, open_heavy: bool = False,
             door: bool = False) -> Dict[str, Any]:
    gen = Gen(n, seed, runs, open_heavy, door)
    records = gen.generate()
    scopes, cands = typical_run_inputs(gen)
    write_tree(out, records, scopes, cands)
    ledger = out / ".priors" / "ledger.jsonl"
    data = ledger.read_bytes()
    return {"priors": n, "lines": len(records), "bytes": len(data), "runs": gen.next_run - 1,
            "sha256": hashlib.sha256(data).hexdigest()}


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("n", type=lambda s: int(s.lower().replace("k", "000")))
    ap.add_argument("out", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=None,
                    help="exactly this many runs, the priors spread evenly over them (default: 10–40 priors a run)")
    ap.add_argument("--open-heavy", action="store_true",
                    help="one namespace, 0-3 verdicts a run, and bench-scopes.json covering every open finding: "
                         "`relevant` answers with most of the ledger as its verify list")
    ap.add_argument("--door", action="store_true",
                    help="every seal names today's door, as this keeper's seals do (so `verify` replays today's rules, "
                         "lessons compared by meaning among them), and lessons are drawn from made-up words so few say "
                         "the same thing; `verify` still reports problems on it (see the docstring)")
    a = ap.parse_args(argv)
    if a.runs is not None and not 1 <= a.runs <= a.n:
        ap.error("--runs must be between 1 and N (every run adds at least one prior)")
    a.out.mkdir(parents=True, exist_ok=True)
    info = generate(a.n, a.out, a.seed, a.runs, a.open_heavy, a.door)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
