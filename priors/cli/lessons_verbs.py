"""The lessons loop's verbs: config, add, score, reflect, export, import, lessons.
"""

from __future__ import annotations

import os

from priors.cli.args import BOOL, MULTI, VALUE, Spec, parse, required
from priors.cli.inputs import paths_of
from priors.cli.lesson_config import config_path, read_config
from priors.core.canonical import dumps
from priors.core.errors import Refusal, UsageError
from priors.store.files import atomic_write, read_bytes
from priors.store.lock import Lock
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional

REFLECTION_DIR = "reflection"


def _ledger(paths: Paths, records: bool = False):
    """(the loaded ledger, lessons.Ledger over its folded state); `records`: with the parsed records too."""
    from priors.core.lessons import Ledger
    from priors.store.ledger import load_ledger, read_records

    loaded = load_ledger(paths, want_data=False)
    return loaded, Ledger(loaded.state, read_records(paths) if records else None)


def _append(paths: Paths, loaded, lines: List[Dict[str, Any]]) -> None:
    from priors.core.fold import apply
    from priors.store.files import aftercare
    from priors.store.ledger import append_ledger, render

    after = append_ledger(paths, None, lines, loaded)
    st = loaded.state
    for rec in lines:
        apply(st, rec)
    # PRIORS.md patched, not redone; once the ledger landed a failure here is a warning, not the answer
    aftercare("rendering .priors/PRIORS.md", render, paths, st, loaded.mark, lines, after)


def _refuse_if_open(paths: Paths, st, verb: str) -> None:
    from priors.store.ledger import open_runs

    active = open_runs(paths, st)
    if active:
        raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                      hint=f"{verb} happens between runs: commit or abort {active[0]} first")


# ------------------------------------------------------------------ config


CONFIG = Spec("config", "priors config [KEY [VALUE]]", {}, max_pos=2, help="""usage: priors config [KEY [VALUE]]

Show or set .priors/config.json (committed with the repo, shared by every agent).
  max_inject N        at most N lessons injected per run (`relevant --max-inject`)
  max_chars C         at most C characters of lesson text per run (`relevant --max-chars`)
  require_review on   inject agent-proposed lessons only after a human accepts them
A VALUE of `none` removes the key (back to the contract: inject every lesson).
With no KEY, prints the whole config as JSON; with only KEY, its value.""")


def cmd_config(argv: List[str], ctx) -> int:
    from priors.core.lessons import CONFIG_KEYS, set_config

    a = parse(argv, CONFIG)
    paths = paths_of(ctx)
    if not a.pos:
        ctx.print(dumps(read_config(paths)))
        return 0
    key = a.pos[0]
    if key not in CONFIG_KEYS:
        raise UsageError(f"priors config: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
    if len(a.pos) == 1:
        cfg = read_config(paths)
        ctx.print(dumps(cfg[key]) if key in cfg else "none")
        return 0
    with Lock(paths):
        cfg = set_config(read_config(paths), key, a.pos[1])
        atomic_write(config_path(paths), (dumps(cfg) + "\n").encode("utf-8"))
    ctx.print(f"{key} = {dumps(cfg[key]) if key in cfg else 'none'}")
    return 0


# ------------------------------------------------------------------ add


ADD = Spec("add", "priors add --ns NS [--type calibration|behavioral] [--scope-ref R --scope-hash H] [--tag T ...] TEXT",
           {"--ns": VALUE, "--type": VALUE, "--scope-ref": VALUE, "--scope-hash": VALUE, "--tag": MULTI,
            "--supersedes": VALUE, "--review-every": VALUE, "--open": BOOL},
           min_pos=1, max_pos=None, help="""usage: priors add --ns NS [--type calibration|behavioral] [--scope-ref R --scope-hash H]
                  [--tag T ...] [--supersedes P-…] [--review-every N] [--open] TEXT

Record a lesson a person wrote, as already accepted (binding), between runs.
It is sealed like a run of its own (a new run id), so any keeper can read it.
  --type calibration   a repo-wide preference (default)
  --type behavioral    a tool lesson; needs --scope-ref and --scope-hash
  --tag T              a short lowercase word for ranking (repeatable)
  --supersedes P-…     retire that lesson in the same write
  --review-every N     ask you to re-confirm it every N runs
  --open               record it as open (advisory) instead of accepted
A human verb: agents propose lessons with `priors propose` instead.""")


def cmd_add(argv: List[str], ctx) -> int:
    from priors.core.canonical import normalize
    from priors.core.fold import next_run_id
    from priors.core.grammar import PRESETS, check_tags
    from priors.core.lesson_bundles import present_claims, sealed_block
    from priors.core.lessons import LESSON_TYPES, check_supersedes, parse_count
    from priors.core.secret_patterns import guard
    from priors.store.paths import list_run_dirs

    a = parse(argv, ADD)
    ns = required(a, ADD, "ns", "NS")
    typ = str(a.get("type") or "calibration")
    if typ not in LESSON_TYPES:
        raise UsageError(f"priors add: --type must be one of {', '.join(LESSON_TYPES)}")
    claim = normalize(" ".join(a.pos))
    if not claim:
        raise UsageError("priors add: the lesson TEXT is empty")
    tags = check_tags(list(a.get("tag") or []))
    facets = dict(PRESETS[typ])
    rec: Dict[str, Any] = {"t": "prior", "ns": ns, "type": typ, "facets": facets, "claim": claim}
    ref, h = a.get("scope_ref"), a.get("scope_hash")
    if facets["scope"] == "repo-wide":
        if ref is not None or h is not None:
            raise UsageError(f"priors add: a {typ} lesson is repo-wide — it takes no --scope-ref/--scope-hash")
    else:
        if not ref or not h:
            raise UsageError(f"priors add: a {typ} lesson needs --scope-ref R and --scope-hash H (see `priors hash`)")
        rec["scope_ref"], rec["scope_hash"] = str(ref), str(h)
    if tags:
        rec["tags"] = tags
    if a.get("review_every") is not None:
        rec["review_every"] = parse_count(a.get("review_every"), "priors add: --review-every")
    guard({k: rec[k] for k in ("claim", "scope_ref", "tags") if k in rec})
    paths = paths_of(ctx)
    with Lock(paths):
        loaded, ledger = _ledger(paths)
        st = ledger.state
        _refuse_if_open(paths, st, "add")
        old = check_supersedes(st, a.get("supersedes"), ns)
        if old is not None:
            rec["supersedes"] = old
        same = present_claims(st, ns).get(claim)
        if same is not None and same.status != "obsolete" and same.id != old:
            raise Refusal("DUPLICATE", of=same.id, status=same.status, hint="this lesson is already in the ledger")
        run = next_run_id(st, list_run_dirs(paths))
        rec["id"] = f"P-{st.max_prior + 1:04d}"
        rec["born"] = run
        accept = not a.get("open")
        # the old lesson retires when a human accepts its successor: now, or at a later `decide … accepted`
        retire = [(old, rec["id"])] if accept and old is not None and st.priors[old].status != "obsolete" else []
        lines = sealed_block([rec], run, ns, accept, "add", retire)
        _append(paths, loaded, lines)
    ctx.print(f"{rec['id']} added to {ns} as {run} — {'accepted (binding)' if accept else 'open'}")
    for o, _ in retire:
        ctx.print(f"{o} → obsolete (superseded by {rec['id']})")
    return 0


# ------------------------------------------------------------------ score


SCORE = Spec("score", "priors score RUN success|partial|failure [--because TEXT] [--again|--replace]",
             {"--because": VALUE, "--again": BOOL, "--replace": BOOL}, min_pos=2, max_pos=2,
             help="""usage: priors score RUN success|partial|failure [--because TEXT] [--again|--replace]

A human verdict on how a committed run turned out. Every lesson injected
into that run is credited: a win, a partial or a loss. RUN may be `last`
(the most recent committed run). Once per run, unless:
  --again     add another score (both count)
  --replace   replace the latest score of that run
Lessons that keep losing (3+ scored uses, score under 1/3) come back to you
as a keep-or-retire call.""")


def cmd_score(argv: List[str], ctx) -> int:
    from priors.core.lessons import OUTCOMES, is_run_id
    from priors.core.secret_patterns import guard

    a = parse(argv, SCORE)
    run, outcome = a.pos
    if outcome not in OUTCOMES:
        raise UsageError(f"priors score: outcome must be one of {', '.join(OUTCOMES)}")
    if a.get("again") and a.get("replace"):
        raise UsageError("priors score: give --again or --replace, not both")
    if run != "last" and not is_run_id(run):
        raise UsageError(f"priors score: bad run id {run!r} — a run id is `run-` and three to nine ASCII digits (e.g. run-001), or say `last`")
    reason = a.get("because")
    if reason is not None:
        from priors.core.canonical import normalize

        reason = normalize(str(reason))
        if not reason:
            raise UsageError("priors score: --because needs some text")
        guard({"reason": reason})
    paths = paths_of(ctx)
    from priors.cli import inject_verb

    with Lock(paths):
        loaded, ledger = _ledger(paths)
        runs = [run]
        if run == "last":
            session = inject_verb.pending_session(paths, ledger)
            if session is not None:
                return _score_session(ctx, paths, loaded, ledger, session, outcome, reason, bool(a.get("replace")))
            sealed = inject_verb.session_targets(paths, ledger)
            if sealed:
                runs = sealed  # the session scored last: --again and --replace reach all its runs
            else:
                agent = [r for r in ledger.runs.values() if not r.by_human]
                if not agent:
                    raise Refusal("UNKNOWN_RUN", run="last", hint="no committed run or coding session to score yet")
                runs = [max(agent, key=lambda r: r.index).run]
        recs = [_score_record(paths, ledger, r, outcome, reason, bool(a.get("again")), bool(a.get("replace")))
                for r in runs]
        _append(paths, loaded, recs)
    for rec in recs:
        ctx.print(_scored_line(rec))
    return 0


def _score_record(paths: Paths, ledger, run: str, outcome: str, reason: Optional[str], again: bool,
                  replace: bool) -> Dict[str, Any]:
    """The score record for a committed agent run, or the refusal that stops it."""
    info = ledger.runs.get(run)
    if info is None:
        if paths.run_dir(run).is_dir():
            raise Refusal("RUN_OPEN", run=run, hint="score a run after `priors commit`")
        raise Refusal("UNKNOWN_RUN", run=run)
    if info.by_human:
        raise Refusal("NOT_SCORABLE", run=run, hint="this run holds lessons a person added or imported; score agent runs")
    prior = ledger.scores.get(run, [])
    if replace and not prior:
        raise Refusal("NOT_SCORED", run=run, hint="nothing to replace — score it without --replace")
    if prior and not (again or replace):
        raise Refusal("ALREADY_SCORED", run=run, outcome=prior[-1].outcome,
                      hint="--again adds another score, --replace corrects the latest")
    ids = ledger.shown_for(run) or []
    rec: Dict[str, Any] = {"t": "score", "run": run, "outcome": outcome, "by": "human", "injected": ids}
    if reason is not None:
        rec["reason"] = reason
    if replace:
        rec["replaces"] = True
    return rec


def _scored_line(rec: Dict[str, Any], session: bool = False) -> str:
    ids = rec["injected"]
    what = f"credits {len(ids)} lesson{'s' if len(ids) != 1 else ''}" + (f": {_few(ids)}" if ids else "")
    return f"{rec['run']} → {rec['outcome']} ({'a coding session: ' if session else ''}{what})"


def _score_session(ctx, paths: Paths, loaded, ledger, session: Dict[str, Any], outcome: str,
                   reason: Optional[str], replace: bool) -> int:
    """`score last` after a coding session newer than any run: seal what it was given as runs (one per
    namespace), score them in the same write, and note the runs in the session record."""
    from priors.cli import inject_verb
    from priors.store.files import aftercare

    if replace:
        raise Refusal("NOT_SCORED", run="last", hint="the latest session is not scored yet — score it without --replace")
    _refuse_if_open(paths, ledger.state, "scoring a coding session")
    lines = inject_verb.seal_session(paths, ledger, session)
    if not lines:
        raise Refusal("UNKNOWN_RUN", run="last", hint="the lessons the latest session was given are gone from the ledger")
    scores: List[Dict[str, Any]] = []
    for rec in lines:
        if rec["t"] == "injected":
            score: Dict[str, Any] = {"t": "score", "run": rec["run"], "outcome": outcome, "by": "human",
                                     "injected": list(rec["ids"])}
            if reason is not None:
                score["reason"] = reason
            scores.append(score)
    _append(paths, loaded, lines + scores)
    aftercare("noting the scored session in .priors/cache/", inject_verb.remember_sealed, paths, session,
              [s["run"] for s in scores])
    for rec in scores:
        ctx.print(_scored_line(rec, session=True))
    return 0


def _few(ids: List[str], shown: int = 5) -> str:
    """A handful of ids and how many more: a run shown 650 lessons is not a 650-id line."""
    if len(ids) <= shown:
        return ", ".join(ids)
    return f"{', '.join(ids[:shown])} and {len(ids) - shown} more (`priors lessons` lists them)"


# ------------------------------------------------------------------ reflect


REFLECT = Spec("reflect", "priors reflect [N] [--ns NS] [--dry-run] [--include-learned] [--mark-existing]",
               {"--ns": VALUE, "--dry-run": BOOL, "--include-learned": BOOL, "--mark-existing": BOOL}, max_pos=1,
               help="""usage: priors reflect [N] [--ns NS] [--dry-run] [--include-learned] [--mark-existing [N]]

Write a reflection packet (.priors/reflection/, gitignored) from the last N
scored runs not yet learned from (default 8): each run's outcome and note,
its summary and findings, and the lesson ids injected at that time. The next
agent run reads it and proposes lessons. The runs are then marked learned
(an appended `learned` record), so they are not reflected on twice.
  --ns NS             only runs of that namespace
  --dry-run           write the packet, mark nothing
  --include-learned   revisit runs already learned from
  --mark-existing     mark the last N (default all) unlearned scored runs as
                      learned without writing a packet (a one-time catch-up)""")


def cmd_reflect(argv: List[str], ctx) -> int:
    from priors.core.lesson_bundles import reflection_packet
    from priors.core.lessons import parse_count

    a = parse(argv, REFLECT)
    n: Optional[int] = parse_count(a.pos[0], "priors reflect: N") if a.pos else None
    ns = a.get("ns")
    ns = str(ns) if ns else None
    mark_only = bool(a.get("mark_existing"))
    if mark_only and a.get("include_learned"):
        raise UsageError("priors reflect: --mark-existing marks unlearned runs; --include-learned makes no sense with it")
    paths = paths_of(ctx)
    with Lock(paths):
        loaded, ledger = _ledger(paths, records=True)
        runs = ledger.scored_runs(ns, bool(a.get("include_learned")))
        if n is None and not mark_only:
            n = 8
        if n is not None:
            runs = runs[-n:]
        if not runs:
            ctx.print("nothing to reflect on — no scored runs" + ("" if a.get("include_learned") else " left unlearned")
                      + " (score runs with `priors score RUN success|partial|failure`)")
            return 0
        unlearned = set(ledger.scored_runs(ns, False))
        to_mark = [r for r in runs if r in unlearned]
        if mark_only:
            if not a.get("dry_run"):
                _append(paths, loaded, [{"t": "learned", "runs": to_mark}])
            verb = "would mark" if a.get("dry_run") else "marked"
            ctx.print(f"{verb} {len(to_mark)} run{'s' if len(to_mark) != 1 else ''} as learned: {', '.join(to_mark)}")
            return 0
        from priors.core.controls import visible

        text = visible(reflection_packet(ledger, runs, ns))
        rdir = paths.dir / REFLECTION_DIR
        rdir.mkdir(exist_ok=True)
        name = f"reflect-{runs[-1]}{'-' + _safe(ns) if ns else ''}.md"
        atomic_write(rdir / name, text.encode("utf-8"))
        if to_mark and not a.get("dry_run"):
            _append(paths, loaded, [{"t": "learned", "runs": to_mark}])
    rel = f".priors/{REFLECTION_DIR}/{name}"
    ctx.print(f"wrote {rel} from {len(runs)} scored run{'s' if len(runs) != 1 else ''} ({', '.join(runs)})")
    if a.get("dry_run"):
        ctx.print("dry run: no run was marked learned")
    elif to_mark:
        ctx.print(f"marked learned: {', '.join(to_mark)}")
    ctx.print(f"next: the agent reads {rel} and proposes lessons in its next run; you accept the good ones")
    return 0


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40]


# ------------------------------------------------------------------ export / import


EXPORT = Spec("export", "priors export [--ns NS] [--type T] [-o FILE] | priors export --sarif [--ns NS] [--current] [-o FILE]",
              {"--ns": VALUE, "--type": VALUE, "--out": VALUE, "--sarif": BOOL, "--current": BOOL},
              aliases={"-o": "--out"}, help="""usage: priors export [--ns NS] [--type T] [-o FILE]
       priors export --sarif [--ns NS] [--current] [-o FILE]

Write a JSON bundle of the live lessons (open or binding run-start priors)
with their provenance and outcome counts, to FILE or stdout. Redacted and
retired lessons never leave; runs, scores and notes stay in this repo.

--sarif writes the ledger's findings as SARIF 2.1.0 instead (docs/sarif.md):
one run per namespace, each finding a result with its baselineState against
the namespace's last run (new, unchanged, updated, absent), a stable
fingerprint, its location (the definition's lines when the file has it), and
a suppression with your reason for wontfix, accepted and obsolete. Redacted
priors never leave. --current leaves out what the last run fixed (absent),
for viewers that show every result they receive.""")


def cmd_export(argv: List[str], ctx) -> int:
    from priors.core.lesson_bundles import export_bundle

    a = parse(argv, EXPORT)
    paths = paths_of(ctx)
    ns = a.get("ns")
    if a.get("sarif"):
        if a.get("type") is not None:
            raise UsageError("priors export: --type selects lessons; --sarif exports findings — give one or the other")
        from priors.cli.sarif_export import export_sarif

        text, n = export_sarif(paths, str(ns) if ns else None, bool(a.get("current")))
        what = "finding"
    else:
        if a.get("current"):
            raise UsageError("priors export: --current goes with --sarif")
        _, ledger = _ledger(paths)
        typ = a.get("type")
        if typ is not None:
            from priors.core.lessons import is_lesson
            from priors.core.vocabulary import LESSON_TYPES

            known = list(LESSON_TYPES) + sorted({p.rec["type"] for p in ledger.state.priors.values()
                                                 if not p.redacted and is_lesson(p)
                                                 and isinstance(p.rec.get("type"), str)} - set(LESSON_TYPES))
            if typ not in known:  # a misspelt type would export nothing and look like no lessons
                raise UsageError(f"priors export: --type {typ!r}: expected one of {', '.join(known)}")
        bundle = export_bundle(ledger, str(ns) if ns else None, str(typ) if typ else None)
        text, n, what = dumps(bundle) + "\n", len(bundle["lessons"]), "lesson"
    out = a.get("out")
    if out is None or out == "-":
        ctx.print(text[:-1])
        return 0
    from priors.cli.inputs import output_target

    target = output_target("export", "-o", str(out), ctx.root)
    try:
        atomic_write(target, text.encode("utf-8"))
    except FileNotFoundError:
        raise UsageError(f"priors export: cannot write {out}: no such directory") from None
    ctx.print(f"exported {n} {what}{'s' if n != 1 else ''} to {out}" + (" as SARIF 2.1.0" if a.get("sarif") else ""))
    return 0


IMPORT = Spec("import", "priors import FILE --ns NS [--accept]", {"--ns": VALUE, "--accept": BOOL},
              min_pos=1, max_pos=1, help="""usage: priors import FILE --ns NS [--accept]

Add the lessons of a bundle from `priors export` to namespace NS, sealed as a
run of its own. Lessons already present (same normalized claim) are skipped.
Without --accept they arrive open (advisory, awaiting your review); with it,
accepted (binding). A human verb.""")


def cmd_import(argv: List[str], ctx) -> int:
    from priors.cli.inputs import parse_json_input, read_input
    from priors.core.fold import next_run_id
    from priors.core.lesson_bundles import (
        next_ids,
        present_claims,
        read_bundle,
        sealed_block,
    )
    from priors.core.secret_patterns import guard
    from priors.store.paths import list_run_dirs

    a = parse(argv, IMPORT)
    ns = required(a, IMPORT, "ns", "NS")
    name = a.pos[0]
    incoming = read_bundle(parse_json_input(read_input(name, "bundle"), name, "bundle"))
    from priors.core.grammar import check_at_door

    for item in incoming:
        check_at_door(item.rec, f"bundle {name}: lessons[{item.index}]")
        guard({k: item.rec[k] for k in ("claim", "scope_ref", "tags", "direction") if k in item.rec},
              f"lessons[{item.index}]")
    paths = paths_of(ctx)
    accept = bool(a.get("accept"))
    with Lock(paths):
        loaded, ledger = _ledger(paths)
        st = ledger.state
        _refuse_if_open(paths, st, "import")
        have = present_claims(st, ns)
        fresh: List[Dict[str, Any]] = []
        skipped: List[str] = []
        seen = set()
        for item in incoming:
            claim = item.rec["claim"]
            if claim in have:
                p = have[claim]
                skipped.append(f"lessons[{item.index}] (already here as {p.id}, {p.status})")
            elif claim in seen:
                skipped.append(f"lessons[{item.index}] (repeated in the bundle)")
            else:
                seen.add(claim)
                fresh.append(dict(item.rec))
        if not fresh:
            run = None
        else:
            run = next_run_id(st, list_run_dirs(paths))
            for rec, pid in zip(fresh, next_ids(st, len(fresh))):
                rec.update({"id": pid, "ns": ns, "born": run})
            ordered = [{k: r[k] for k in sorted(r)} for r in fresh]
            _append(paths, loaded, sealed_block(ordered, run, ns, accept, "import"))
    if run is None:
        ctx.print(f"imported nothing into {ns} — all {len(incoming)} lessons are already here")
    else:
        ids = ", ".join(r["id"] for r in fresh)
        ctx.print(f"imported {len(fresh)} lesson{'s' if len(fresh) != 1 else ''} into {ns} as {run} "
                  f"({'accepted' if accept else 'open, awaiting your review'}): {ids}")
    for s in skipped:
        ctx.print(f"skipped {s}")
    return 0


# ------------------------------------------------------------------ lessons (the list)


LESSONS = Spec("lessons", "priors lessons [--ns NS ...] [--all] [--json] | --inject [--query TEXT] [--ns NS ...]",
               {"--ns": MULTI, "--all": BOOL, "--json": BOOL, "--inject": BOOL, "--query": VALUE, "--session": VALUE,
                "--fresh": BOOL, "--new-only": BOOL, "--max-inject": VALUE, "--max-chars": VALUE},
               help="""usage: priors lessons [--ns NS ...] [--all] [--json]
       priors lessons --inject [--query TEXT] [--ns NS ...] [--json]
                      [--session KEY] [--fresh] [--new-only] [--max-inject N] [--max-chars C]

List lessons (run-start priors) with their outcome record: uses (agent runs
they were injected into), wins, partials, losses and score
((wins + ½·partials) / scored uses; 0.50 with none). Retired lessons only with --all.

--inject prints the lessons that apply as an advisory block for a coding
session's system prompt, ranked and budgeted exactly as `relevant` ranks them
(.priors/config.json's max_inject, max_chars and require_review; --query ranks by
word overlap). It opens no run and writes nothing to the ledger; it prints
nothing where there is no .priors/ or no lesson. It notes which ids it gave in
.priors/cache/session.json (local, never committed), so `priors score last`
can credit the session.
  --ns NS          only these namespaces (repeatable; default: every namespace)
  --session KEY    the harness's session id: another KEY starts a new session
  --fresh          start a new session here
  --new-only       print only lessons this session was not given yet""")


def lesson_rows(ledger, ns, include_all: bool) -> List[Dict[str, Any]]:
    """Rows of `priors lessons`; `ns` is a namespace, a list of them, or None for all."""
    from priors.core.lessons import fmt_score, is_lesson, tags_of

    stats = ledger.stats()
    low = ledger.low_scores()
    rows = []
    for p in ledger.state.priors.values():
        if not is_lesson(p) or (ns is not None and (p.ns not in ns if isinstance(ns, list) else p.ns != ns)):
            continue
        if p.status == "obsolete" and not include_all:
            continue
        from priors.core.lessons import Stats

        s = stats.get(p.id, Stats())
        row: Dict[str, Any] = {"id": p.id, "ns": p.ns, "type": p.rec.get("type"), "status": p.status,
                               "claim": p.claim, "score": fmt_score(s.score), **s.as_dict()}
        tags = tags_of(p)
        if tags:
            row["tags"] = tags
        if p.id in low:
            row["your_call"] = True
        rows.append(row)
    return rows


def lessons_table(rows: List[Dict[str, Any]]) -> str:
    if not rows:
        return "no lessons yet — `priors add` one, or let a run propose one"
    out = ["id       score  uses  W  P  L  status    lesson"]
    for r in rows:
        tags = " " + " ".join("#" + t for t in r.get("tags", [])) if r.get("tags") else ""
        flag = "  ← your call" if r.get("your_call") else ""
        claim = r["claim"] if len(r["claim"]) <= 72 else r["claim"][:71] + "…"
        out.append(f"{r['id']:<8} {r['score']:>5} {r['uses']:>5} {r['wins']:>2} {r['partials']:>2} {r['losses']:>2}"
                   f"  {r['status']:<9} {claim}{tags}{flag}")
    return "\n".join(out)


def cmd_lessons(argv: List[str], ctx) -> int:
    from priors.cli.inject_verb import check_options, cmd_inject

    a = parse(argv, LESSONS)
    check_options(a)
    if a.get("inject"):
        return cmd_inject(a, ctx)
    paths = paths_of(ctx)
    _, ledger = _ledger(paths)
    ns = a.get("ns")
    rows = lesson_rows(ledger, list(ns) if ns else None, bool(a.get("all")))
    if a.get("json"):
        ctx.print(dumps(rows))
    else:
        ctx.print(lessons_table(rows))
    return 0


# ------------------------------------------------------------------ hooks the core calls


def relevant_hook(budget, paths: Paths, st, out: Dict[str, Any]) -> Dict[str, Any]:
    """Rank, budget and hold back `relevant`'s inject list; add low-score nudges.

    With no budget and no scores in the ledger, the contract's output is returned untouched.
    """
    if (budget is None or not budget.active) and not st.scored:
        return out
    from priors.core.lessons import Budget, Ledger, shape

    return shape(out, Ledger(st), budget or Budget())


def commit_extra(relevant: Optional[Dict[str, Any]], run: str) -> List[Dict[str, Any]]:
    """Lines to append just before the run record: what a budgeted run was actually shown."""
    if not isinstance(relevant, dict) or not (relevant.get("inject_omitted") or relevant.get("awaiting_review")):
        return []
    from priors.core.lessons import injected_record

    rec = injected_record(relevant, run)
    return [] if rec is None else [rec]


def supersede_events(st, pid: str, verdict: str) -> List[Dict[str, Any]]:
    """When a human accepts a lesson that supersedes another, the old one retires in the same write."""
    if verdict not in ("accepted", "keep"):
        return []
    p = st.priors.get(pid)
    old = p.rec.get("supersedes") if p is not None else None
    q = st.priors.get(old) if isinstance(old, str) else None
    if q is None or q.redacted or q.status == "obsolete" or q.id == pid:
        return []
    return [{"t": "event", "id": q.id, "action": "decide", "to": "obsolete", "by": "human",
             "reason": f"superseded by {pid}"}]


def status_hook(paths: Paths, st):
    """`status` extras: per namespace, score lines and (with --calls) keep-or-retire and review calls."""
    review = bool(read_config(paths).get("require_review", False)) if paths.dir.is_dir() else False
    if not st.scored and not review:
        return None
    from priors.core.lessons import Ledger, call_lines_for, score_lines_for

    ledger = Ledger(st)  # statistics are computed once, on first use, for every namespace

    def extras(ns: str, with_calls: bool):
        return score_lines_for(ledger, ns), (call_lines_for(ledger, ns, review) if with_calls else [])

    return extras


def scrub_reflections(paths: Paths, pid: str) -> None:
    """Redaction: a reflection packet naming the prior is deleted (packets are regenerable notes)."""
    rdir = paths.dir / REFLECTION_DIR
    if not rdir.is_dir():
        return
    needle = pid.encode("utf-8")
    for name in sorted(os.listdir(str(rdir))):
        path = rdir / name
        if path.is_file() and not path.is_symlink() and needle in (read_bytes(path) or b""):
            try:
                path.unlink()
            except OSError:
                pass
