"""The lessons loop's transactions: a person's lesson (`add`), reflection packets (`reflect`), bundles
in (`import`), the shared config (`config`), the list (`lessons`) — and the hooks other verbs call:
the injection budget `relevant` and `lessons --inject` share, the ranking `relevant` applies, the
`injected` record a budgeted commit writes, and the scrub a redaction runs over reflection packets.
"""

from __future__ import annotations

from priors.core.answer import Answer
from priors.core.canonical import dumps, normalize
from priors.core.controls import visible
from priors.core.errors import Refusal, UsageError
from priors.core.fold import next_run_id
from priors.core.grammar import PRESETS, check_at_door, check_lesson_claim, check_tags
from priors.core.inject import rival_lines
from priors.core.lesson_bundles import (
    Bundle,
    RunRecords,
    next_ids,
    present_claims,
    read_bundle,
    reflection_packet,
    sealed_block,
)
from priors.core.lesson_likeness import forget_readings, reads_like_settled, settled_lessons
from priors.core.lessons import (
    Ledger,
    check_supersedes,
    is_lesson,
)
from priors.core.secret_patterns import guard
from priors.core.settings import CONFIG_KEYS, parse_count, set_config
from priors.core.similarity import claim_key
from priors.core.views import check_namespace, known_namespaces
from priors.core.vocabulary import LESSON_TYPES
from priors.store.config import read_config, write_config
from priors.store.files import atomic_write, check_inside, make_dir
from priors.store.ledger import append_and_apply, load_ledger, note_records, open_runs
from priors.store.lock import Lock
from priors.store.paths import Paths, list_run_dirs, require_init
from priors.store.reflection import REFLECTION_DIR
from priors.store.traces import traces_by_run

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from priors.core.fold import State



def lesson_ledger(paths: Paths) -> Tuple[Any, Ledger]:
    """(the loaded ledger, lessons.Ledger over its folded state)."""
    loaded = load_ledger(paths, want_data=False)
    return loaded, Ledger(loaded.state)


def refuse_if_open(paths: Paths, st: State, verb: str) -> None:
    """A person's write to the lessons happens between runs, as a decision does."""
    active = open_runs(paths, st)
    if active:
        raise Refusal("ACTIVE_RUN_EXISTS", run=active[0],
                      hint=f"{verb} happens between runs: commit or abort {active[0]} first")


# ------------------------------------------------------------------ what a redaction scrubs


# ------------------------------------------------------------------ config


def show_config(paths: Paths, key: Optional[str]) -> Answer:
    """The whole config as JSON, or one key's value (`none` when unset)."""
    require_init(paths)
    cfg = read_config(paths)
    if key is None:
        return Answer(0, cfg, dumps(cfg))
    if key not in CONFIG_KEYS:
        raise UsageError(f"priors config: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
    return Answer(0, cfg.get(key), dumps(cfg[key]) if key in cfg else "none")


def set_config_key(paths: Paths, key: str, value: str) -> Answer:
    """Set (or, with `none`, remove) one key of .priors/config.json, under the writer lock."""
    require_init(paths)
    if key not in CONFIG_KEYS:
        raise UsageError(f"priors config: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
    with Lock(paths):
        cfg = set_config(read_config(paths), key, value)
        write_config(paths, cfg)
    return Answer(0, cfg, f"{key} = {dumps(cfg[key]) if key in cfg else 'none'}")


# ------------------------------------------------------------------ add


def add_lesson(paths: Paths, ns: Optional[str], typ: str, words: Sequence[str], scope_ref: Optional[str],
               scope_hash: Optional[str], tags: Sequence[str], supersedes: Optional[str],
               review_every: Any, accept: bool) -> Answer:
    """A lesson a person wrote, sealed as a run of its own (accepted unless `accept` is False). No
    `ns` with `supersedes`: the namespace of the lesson it supersedes."""
    if typ not in LESSON_TYPES:
        raise UsageError(f"priors add: --type must be one of {', '.join(LESSON_TYPES)}")
    claim = normalize(" ".join(words))
    if not claim:
        raise UsageError("priors add: the lesson TEXT is empty")
    check_lesson_claim(claim, "priors add: the lesson TEXT")
    tags = check_tags(list(tags))
    facets = dict(PRESETS[typ])
    rec: Dict[str, Any] = {"t": "prior", "ns": ns, "type": typ, "facets": facets, "claim": claim}
    if facets["scope"] == "repo-wide":
        if scope_ref is not None or scope_hash is not None:
            raise UsageError(f"priors add: a {typ} lesson is repo-wide — it takes no --scope-ref/--scope-hash")
    else:
        if not scope_ref or not scope_hash:
            raise UsageError(f"priors add: a {typ} lesson needs --scope-ref R and --scope-hash H (see `priors hash`)")
        rec["scope_ref"], rec["scope_hash"] = str(scope_ref), str(scope_hash)
    if tags:
        rec["tags"] = tags
    if review_every is not None:
        rec["review_every"] = parse_count(review_every, "priors add: --review-every")
    guard({k: rec[k] for k in ("claim", "scope_ref", "tags") if k in rec})
    require_init(paths)
    with Lock(paths):
        loaded, ledger = lesson_ledger(paths)
        st = ledger.state
        refuse_if_open(paths, st, "add")
        if ns is None:
            target = st.priors.get(str(supersedes))
            if target is None or target.redacted or not isinstance(target.ns, str):
                raise UsageError(f"priors add: --supersedes names {supersedes}, which is not a prior in the ledger")
            ns = rec["ns"] = target.ns
        old = check_supersedes(st, supersedes, ns, retired_ok=True)  # (a person may replace a lesson they retired)
        if old is not None:
            rec["supersedes"] = old
        same = present_claims(st, ns).get(claim_key(claim))
        if same is not None and same.status != "obsolete" and same.id != old:
            raise Refusal("DUPLICATE", of=same.id, status=same.status, hint="this lesson is already in the ledger")
        run = next_run_id(st, list_run_dirs(paths))
        rec["id"] = f"P-{st.max_prior + 1:04d}"
        rec["born"] = run
        # the old lesson retires when a human accepts its successor: now, or at a later `decide … accepted`
        retire = [(old, rec["id"])] if accept and old is not None and st.priors[old].status != "obsolete" else []
        append_and_apply(paths, loaded, sealed_block([rec], run, ns, accept, "add", retire))
    lines = [f"{rec['id']} added to {ns} as {run} — {'accepted (binding)' if accept else 'open'}"]
    lines += [f"{o} → obsolete (superseded by {rec['id']})" for o, _ in retire]
    lines += [line for o, _ in retire for line in rival_lines(st, o, rec["id"])]
    return Answer(0, {"id": rec["id"], "run": run, "retired": [o for o, _ in retire]}, "\n".join(lines))


# ------------------------------------------------------------------ reflect


def reflect(paths: Paths, n: Any, ns: Optional[str], dry_run: bool, include_learned: bool,
            mark_only: bool) -> Answer:
    """Write a reflection packet from the last `n` scored runs (8 unless given) and mark them learned;
    `mark_only`: mark without a packet (a one-time catch-up)."""
    count: Optional[int] = parse_count(n, "priors reflect: N") if n is not None else None
    if mark_only and include_learned:
        raise UsageError("priors reflect: --mark-existing marks unlearned runs; --include-learned makes no sense with it")
    require_init(paths)
    with Lock(paths):
        loaded, ledger = lesson_ledger(paths)
        if ns is not None:
            check_namespace("reflect", [ns], known_namespaces(ledger.state))
        runs = ledger.scored_runs(ns, include_learned)
        if count is None and not mark_only:
            count = 8
        if count is not None:
            runs = runs[-count:]
        if not runs:
            return Answer(0, {"runs": []}, "nothing to reflect on — no scored runs"
                          + ("" if include_learned else " left unlearned")
                          + " (score runs with `priors score RUN success|partial|failure`)")
        unlearned = set(ledger.scored_runs(ns, False))
        to_mark = [r for r in runs if r in unlearned]
        if mark_only:
            if not dry_run:
                append_and_apply(paths, loaded, [{"t": "learned", "runs": to_mark}])
            verb = "would mark" if dry_run else "marked"
            return Answer(0, {"marked": [] if dry_run else to_mark, "runs": runs},
                          f"{verb} {len(to_mark)} run{'s' if len(to_mark) != 1 else ''} as learned: {', '.join(to_mark)}")
        pieces = reflection_packet(ledger, runs, ns, note_records(paths, lambda: RunRecords(ledger.state, runs))[0],
                                   traces_by_run(paths))
        rdir = paths.dir / REFLECTION_DIR
        name = f"reflect-{runs[-1]}{'-' + _safe(ns) if ns else ''}.md"
        check_inside(rdir / name)  # a symlinked reflection/ would carry the packet out of the repository
        make_dir(rdir)
        # (never joined whole; a lone surrogate a hand wrote into a claim is written as its escape, not refused)
        atomic_write(rdir / name, (visible(piece).encode("utf-8", "backslashreplace") for piece in pieces))
        if to_mark and not dry_run:
            append_and_apply(paths, loaded, [{"t": "learned", "runs": to_mark}])
    rel = f".priors/{REFLECTION_DIR}/{name}"
    lines = [f"wrote {rel} from {len(runs)} scored run{'s' if len(runs) != 1 else ''} ({', '.join(runs)})"]
    if dry_run:
        lines.append("dry run: no run was marked learned")
    elif to_mark:
        lines.append(f"marked learned: {', '.join(to_mark)}")
    lines.append(f"next: the agent reads {rel} and proposes lessons in its next run; you accept the good ones")
    return Answer(0, {"marked": [] if dry_run else to_mark, "packet": rel, "runs": runs}, "\n".join(lines))


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in text)[:40]


# ------------------------------------------------------------------ export / import


def export_lessons(paths: Paths, ns: Optional[str], typ: Optional[str]) -> Bundle:
    """The bundle of the live lessons (`priors export`), its text made as it is written."""
    require_init(paths)
    ledger = lesson_ledger(paths)[1]
    if ns is not None:
        check_namespace("export", [ns], known_namespaces(ledger.state))
    if typ is not None:
        known = list(LESSON_TYPES) + sorted({p.rec["type"] for p in ledger.state.priors.values()
                                             if not p.redacted and is_lesson(p)
                                             and isinstance(p.rec.get("type"), str)} - set(LESSON_TYPES))
        if typ not in known:  # a misspelt type would export nothing and look like no lessons
            raise UsageError(f"priors export: --type {typ!r}: expected one of {', '.join(known)}")
    return Bundle(ledger, ns, typ)


def import_bundle(paths: Paths, name: str, obj: Any, ns: str, accept: bool) -> Answer:
    """Add a bundle's lessons to `ns` as a sealed run of its own, skipping the claims already here."""
    incoming = read_bundle(obj)
    obj = None  # (the parsed bundle let go: its lessons are read; ~13 MB for 6k lessons)
    for item in incoming:
        check_at_door(item.rec, f"bundle {name}: lessons[{item.index}]")
        guard({k: item.rec[k] for k in ("claim", "scope_ref", "tags", "direction") if k in item.rec},
              f"lessons[{item.index}]")
    require_init(paths)
    with Lock(paths):
        loaded, ledger = lesson_ledger(paths)
        st = ledger.state
        refuse_if_open(paths, st, "import")
        have = present_claims(st, ns)
        settled = settled_lessons(st)
        fresh: List[Dict[str, Any]] = []
        skipped: List[str] = []
        seen = set()
        for n, item in enumerate(incoming, 1):
            if n % 1024 == 0:  # (each claim of the bundle is met once: its reading is let go — every 256 was 10 % slower)
                forget_readings()
            claim = claim_key(item.rec["claim"])
            like = reads_like_settled(settled, item.rec["claim"]) if claim not in have else None
            if claim in have:
                p = have[claim]
                skipped.append(f"lessons[{item.index}] (already here as {p.id}, {p.status})")
            elif claim in seen:
                skipped.append(f"lessons[{item.index}] (repeated in the bundle)")
            elif like is not None:  # a person's decision is not undone by a file (hostile passes 27u, 27v)
                q, figure = like
                skipped.append(f"lessons[{item.index}] (it reads like {q.id}, which a person retired"
                               + (f" in {q.ns}" if q.ns != ns else "") + f", similarity {figure}; if it is meant,"
                               f" `priors add` it)")
            else:
                seen.add(claim)
                fresh.append(item.rec)
        total = len(incoming)
        del incoming, seen  # (what the run writes is `fresh`)
        forget_readings()
        run = None
        if fresh:
            run = next_run_id(st, list_run_dirs(paths))
            for i, pid in enumerate(next_ids(st, len(fresh))):
                rec = dict(fresh[i], id=pid, ns=ns, born=run)
                fresh[i] = {k: rec[k] for k in sorted(rec)}
            append_and_apply(paths, loaded, sealed_block(fresh, run, ns, accept, "import"))
    if run is None:
        here = "already here" if not any("reads like" in x for x in skipped) else "skipped"
        lines = [f"imported nothing into {ns} — " + ("its one lesson is" if total == 1
                                                      else f"all {total} lessons are") + f" {here}"]
    else:
        ids = ", ".join(r["id"] for r in fresh)
        lines = [f"imported {len(fresh)} lesson{'s' if len(fresh) != 1 else ''} into {ns} as {run} "
                 f"({'accepted' if accept else 'open, awaiting your review'}): {ids}"]
    lines += [f"skipped {s}" for s in skipped]
    return Answer(0, {"ids": [r["id"] for r in fresh], "run": run, "skipped": skipped}, "\n".join(lines))
