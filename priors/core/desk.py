"""The human's desk: what waits for a decision, as data — for `priors decide` (interactive) and the report.

Pure: the folded state in, a list of asks out, each with what a person needs to decide it and the
exact `priors decide` commands that answer it. `status --calls` lists the same asks as text.
"""

from __future__ import annotations

from operator import itemgetter

from priors.core.canonical import dumps
from priors.core.controls import shell_text, shell_word
from priors.core.fold import PriorState, State, review_due
from priors.core.inject import given_in_chain
from priors.core.lesson_likeness import reads_like_unseen
from priors.core.lessons import is_lesson, kept_in_force, person_settled
from priors.core.record_text import value_of
from priors.core.sameness import beside_unseen, differs_from
from priors.core.selection import with_texts
from priors.core.unseen import lessons_unseen
from priors.core.views import (
    PRESSED_AT,
    attempts_index,
    count_bucket,
    namespaces,
    pressure_text,
    tried_runs,
    tried_since,
    tried_words,
)
from priors.core.vocabulary import HUMAN_VERDICTS, RUN_RE, SEVERITY_RANK, id_number

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

# one key per human verdict: its first letter (a w o r k); s and q are taken by skip and quit
KEYS: Dict[str, str] = {v[0]: v for v in HUMAN_VERDICTS}
SKIP, QUIT = "s", "q"
assert len(KEYS) == len(HUMAN_VERDICTS) and SKIP not in KEYS and QUIT not in KEYS

KEEP_OR_RETIRE = ("keep", "obsolete")
_NO_EXTRA: Dict[str, Any] = {}  # the fields of an ask that has none beyond its kind's: one map, only ever read
MAX_RUNS_SHOWN = 6  # the walk names the runs an attempt came from up to this many, then how many and the first and last
# what each kind of ask is, in the order the desk walks them
KINDS = {
    "challenged": "a run challenged this lesson — keep it or retire it?",
    "obsolete-proposed": "a run proposed retiring this — keep it or retire it?",
    "reversal": "a run's finding reverses this — reopen it (accept the reversal) or keep it?",
    "differs": ("this may differ from a finding you settled — the same (duplicate), another that stands as it is (keep:"
                " accepted), or another that runs should go on checking (reopen)?"),
    "low-score": "this lesson keeps losing — keep it or retire it?",
    "awaiting-review": "a proposed lesson, not injected until you accept it",
    "proposed-lesson": "a lesson an agent proposed: injected as advice until you decide — accept it or retire it?",
    "review": "due for review — still true?",
    "pressed": "agents keep raising this again since your decision — does it stand, or reopen it?",
    "open": "an open finding — settle it, or skip",
}
OPEN_VERDICTS = ("wontfix", "obsolete", "accepted")
# what each key does to an open finding, in plain words: `accepted` is not "yes, fix it" — skipping is
OPEN_MEANS = (
    ("w wontfix", "it is real but will not be fixed: your call, settled — no run checks it again, and agents"
                  " may not raise it again on this code (once the code changes, they may)"),
    ("o obsolete", "it no longer applies (or never did): retired"),
    ("a accepted", "you accept it as it stands (it is how things should be): your call, settled — no run"
                   " checks it again, and agents may not raise it again on this code; not “fix it”"),
    ("s skip", "leave it open: every run checks it until a run finds it fixed — the answer for a bug to fix"),
)
# what each key does to the prior a call is about (newcomer pass 27aw pressed `k` on a finding it wanted checked
# still: `keep` settles it as `accepted`, and no run checks it again), by verdict
CALL_MEANS = {
    "keep": "it stands as it is: settled, as accepted — no run checks it again",
    "accepted": "you accept it: settled — given to every run if it is a lesson, never raised again on this code",
    "obsolete": "it no longer applies: retired",
    "reopen": "open again: every run checks it (needs a reason)",
    "duplicate": "it says what the other says: retired, its words kept with the other",
    "wontfix": "real, but not to be fixed: settled — no run checks it again",
}
# `duplicate` is `decide P duplicate --of Q`: P obsolete, its words Q's; `keep` settles P as it stands (accepted);
# `reopen` leaves P open, a different finding for runs to check
DIFFERS_VERDICTS = ("duplicate", "keep", "reopen")
KEYS["d"] = "duplicate"


def differs_verdicts(p: PriorState, q: PriorState) -> Tuple[str, ...]:
    """`duplicate --of Q` names a prior of P's own namespace (`decide` refuses another's): a finding
    said to differ from, or a parallel branch's finding beside, a decision of another namespace is
    answered "the same" by `obsolete`."""
    return DIFFERS_VERDICTS if p.ns == q.ns else ("obsolete", "keep", "reopen")


def _ask(p: PriorState, kind: str, verdicts: Sequence[str], rec: Optional[Dict[str, Any]] = None,
         **extra: Any) -> Dict[str, Any]:
    if rec is None:
        rec = p.record()  # (read, not kept: at 100k a desk of 25k asks held every record, ~25 MB more)
    claim = rec.get("claim")
    ask: Dict[str, Any] = {"kind": kind, "id": p.id, "ns": p.ns, "status": p.status,
                           "claim": claim if isinstance(claim, str) else "",
                           "verdicts": list(verdicts), "born": rec.get("born")}
    ref = rec.get("scope_ref")
    facets = rec.get("facets")
    if isinstance(ref, str):
        ask["scope"] = ref
    elif isinstance(facets, dict) and facets.get("scope") == "repo-wide":
        ask["scope"] = "the whole repository"
    for key in ("severity", "evidence", "type", "supersedes"):
        if key in rec:
            ask[key] = rec[key]
    if isinstance(rec.get("rule"), str):  # an analyzer's result (`ingest-sarif`): its rule id, as list/show/report show it
        ask["rule"] = rec["rule"]
    ask.update(extra)
    return ask


def waiting(st: State, low: Optional[Dict[str, str]] = None, review_lessons: Iterable[str] = ()) -> List[Dict[str, Any]]:
    """Every call waiting for the human, in the order the desk walks them: challenges, proposed
    retirements, reversals, losing lessons, lessons awaiting review, then review nudges; within a
    kind, by namespace then ledger order. `low`: id → its score line (the lessons loop's low
    scorers); `review_lessons`: ids of proposed lessons held for review (`require_review`)."""
    return list(waiting_in_order(st, low, review_lessons))


def waiting_in_order(st: State, low: Optional[Dict[str, str]] = None,
                     review_lessons: Iterable[str] = ()) -> Iterator[Dict[str, Any]]:
    """`waiting`, one ask at a time: each is made when it is reached, so a reader that prints them
    (`status --calls`) never holds them all — at 100k priors the bench's 25k asks were ~20 MB."""
    for planned in waiting_plan(st, low, review_lessons):
        yield ask_of(st, planned)


def waiting_plan(st: State, low: Optional[Dict[str, str]] = None,
                 review_lessons: Iterable[str] = ()) -> List[Tuple[Any, ...]]:
    """What `waiting_in_order` asks, in its order, each ask not made yet (`ask_of` makes it; `ask_ns`
    says its namespace): a reader that groups the asks (the report, by namespace) makes each once."""
    low = low or {}
    held = set(review_lessons)
    order = {ns: i for i, ns in enumerate(namespaces(st))}
    out: List[Tuple[int, int, int, Any]] = []  # (kind, namespace, place, what makes the ask)
    rank = {k: i for i, k in enumerate(KINDS)}
    index = attempts_index(st)
    for n, p in enumerate(st.priors.values()):
        if p.redacted:
            continue
        ask: Optional[Tuple[Any, ...]] = None  # (kind, verdicts, extra)
        if p.status == "obsolete-proposed" and not is_lesson(p):  # a finding: runs may go on checking it (reopen)
            ask = (p.status, KEEP_OR_RETIRE + ("reopen",), {"reason": "it still applies"})
        elif p.status in ("challenged", "obsolete-proposed"):
            ask = (p.status, KEEP_OR_RETIRE, _NO_EXTRA)
        elif p.id in low:
            ask = ("low-score", KEEP_OR_RETIRE, {"note": low[p.id]})
        elif p.id in held and p.status == "open":
            ask = ("awaiting-review", ("accepted", "obsolete"), _NO_EXTRA)
        elif (p.status == "open" or p.binding) and review_due(st, p) and not held_revision(st, p):
            ask = ("review", KEEP_OR_RETIRE, _NO_EXTRA)  # (an agent's `review_every` on its held revision asks no person)
        elif count_bucket(p) == "proposed":  # waits for a person, who may never hear of it otherwise
            ask = ("proposed-lesson", ("accepted", "obsolete"), _NO_EXTRA)
        elif p.id in st.unseen and beside_unseen(st, p):  # (before `distinct_from`: that run saw no decision)
            q, *rest = [st.priors[i] for i in beside_unseen(st, p)]
            ask = ("differs", differs_verdicts(p, q), dict(
                differs_from=q.id, settled_status=q.status, settled_claim=q.claim, unseen=True, **_also(p, rest),
                **({"settled_ns": q.ns} if q.ns != p.ns else {}),
                reason=f"a different finding from {q.id}", same_reason=f"the same finding as {q.id} ({q.ns})"))
        elif p.id in st.distinct and differs_from(st, p):
            q, *rest = [st.priors[i] for i in differs_from(st, p)]
            ask = ("differs", differs_verdicts(p, q), dict(
                differs_from=q.id, settled_status=q.status, settled_claim=q.claim, reason=f"a different finding from {q.id}",
                **_also(p, rest),
                **({"same_reason": f"the same finding as {q.id} ({q.ns})", "settled_ns": q.ns} if q.ns != p.ns else {})))
        elif p.id in index:
            tried = tried_since(st, p, index)
            if tried_runs(tried) >= PRESSED_AT:
                ask = ("pressed", (p.status, "reopen"), dict(tried=tried, note=pressure_text(tried, p.status),
                                                           reason=f"agents {pressure_text(tried, p.status)}"))
        if ask is not None:
            out.append((rank[ask[0]], order.get(p.ns, len(order)), n, (p,) + ask))
    for n, call in enumerate(st.calls):
        rec = call.rec
        against = rec.get("conflicts_with")
        target = st.priors.get(against) if isinstance(against, str) else None  # (a damaged call names no prior)
        if call.resolved or target is None or target.redacted:
            continue
        ns = rec.get("ns", target.ns)
        out.append((rank["reversal"], order.get(ns, len(order)), n, (target, "reversal", ("reopen", "keep"), call)))
    out.sort(key=lambda t: t[:3])
    return [t[3] for t in out]


def ask_ns(planned: Tuple[Any, ...]) -> Any:
    """The namespace of the ask `planned` (of `waiting_plan`) makes: a reversal's call's, else its prior's."""
    p, kind, _verdicts, extra = planned
    return extra.rec.get("ns", p.ns) if kind == "reversal" else p.ns


def ask_of(st: State, planned: Tuple[Any, ...], rec: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The ask `planned` (of `waiting_plan`), made (`rec`: its prior's record, when the caller read it)."""
    p, kind, verdicts, extra = planned
    return _made(st, p, kind, verdicts, extra, rec)


def _made(st: State, p: PriorState, kind: str, verdicts: Sequence[str], extra: Any,
          rec: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """One ask of `waiting_in_order`, made (`extra`: its fields, or for a reversal the call)."""
    if kind == "reversal":
        call = extra.rec
        cid = str(call.get("call_id"))
        ask = _ask(p, "reversal", verdicts, rec, call=cid, call_claim=str(call.get("claim", "")),
                   call_run=call.get("run"), direction=call.get("direction"), reason=f"accept {cid}")
        ask["ns"] = call.get("ns", p.ns)
        return ask
    if rec is None:  # (read once, not kept: `p.rec` would keep each ask's record — status --calls +8 MB at 100k)
        rec = p.record()
    ask = _ask(p, kind, verdicts, rec, **extra)
    if not isinstance(ask.get("supersedes"), str):  # (a hand edit's list or object: verify names it)
        ask.pop("supersedes", None)
    if "supersedes" in ask and kept_in_force(st, p.id) is not None:
        ask["supersedes_binding"] = st.priors[ask["supersedes"]].status  # a person's: left in force unless named
    elif "supersedes" in ask and getattr(st.priors.get(ask["supersedes"]), "status", None) == "obsolete":
        ask["supersedes_retired"] = True  # retired by a person: this revision is given in its place (hostile 27r)
    q = st.priors.get(ask["supersedes"]) if isinstance(ask.get("supersedes"), str) else None
    if q is not None and not q.redacted and q.claim:  # what it revises, for the person to compare (newcomer 27as)
        ask["supersedes_claim"] = q.claim
    elif q is not None and q.redacted:
        ask["supersedes_redacted"] = True
    if "supersedes" in ask and p.status == "open":  # … unless a lesson it revises through that one is given (27ar)
        held_by = given_in_chain(st, ask["supersedes"])
        if held_by is not None:
            ask["held_by"] = held_by
            if st.priors[held_by].redacted:
                ask["held_redacted"] = True
    named = rec.get("distinct_from") if kind != "differs" and is_lesson(p) else None
    said = [q for q in (st.priors.get(i) for i in named if type(i) is str) if q is not None and not q.redacted
            and is_lesson(q)] if isinstance(named, list) else []
    decided = [q for q in said if person_settled(q)]
    if decided:  # an agent's word that it is another lesson than one a person decided since (hostile pass 27t)
        ask["differs_from_decided"] = [{"id": q.id, "status": q.status, "claim": q.claim} for q in decided]
    if len(decided) < len(said):  # ... or than an agent's lesson, both before the person (newcomer pass 27z)
        ask["differs_from_lessons"] = [{"id": q.id, "status": q.status, "claim": q.claim} for q in said
                                       if not person_settled(q)]
    seal = st.commits.get(str(rec.get("born"))) if kind == "proposed-lesson" else None
    if isinstance(seal, dict) and seal.get("via") == "import":
        ask["imported"] = True
    held = lessons_unseen(st, p) if kind != "differs" and p.id in st.unseen else []
    if held:  # held back (hostile pass 27u): a parallel branch's run wrote it, never having seen these
        ask["held_unseen"] = held
        ask["reads_like_unseen"] = [dict({"id": q.id, "status": q.status, "claim": q.claim},
                                         **({"ns": q.ns} if q.ns != p.ns else {}))
                                    for q in (st.priors[i] for i in reads_like_unseen(st, p, held))]
    return ask


def _under(ref: Any, paths: Sequence[str]) -> bool:
    if not paths:
        return True
    if not isinstance(ref, str):
        return False
    file = ref.split("#", 1)[0]
    for path in paths:
        path = path[2:] if path.startswith("./") else path
        path = path.rstrip("/")
        if path in ("", ".") or file == path or file.startswith(path + "/") or ref == path:
            return True
    return False


def open_findings(st: State, ns: Optional[str] = None, paths: Sequence[str] = ()) -> List[PriorState]:
    """Findings still standing (what `status` counts open), checked at every run — by severity, then id."""
    found = [p for p in st.priors.values()
             if count_bucket(p) == "open" and p.facet("activation") == "verify-phase"
             and (ns is None or p.ns == ns) and _under(p.scope_ref, paths)]
    # by severity, stable: ledger order within — each severity read off its line's text where the line is
    # in the keepers' shape, else from its record, a batch at a time and not kept (14k–70k at 100k priors)
    ranks = [-SEVERITY_RANK.get(("" if t[4] is None else value_of(t[4])) if t is not None else rec.get("severity", ""), -1)
             for _p, t, rec in with_texts(found)]
    return [p for _rank, p in sorted(zip(ranks, found), key=itemgetter(0))]


def findings_under(st: State, ns: Optional[str], path: str) -> bool:
    """Whether the ledger holds any finding (of namespace `ns`), whatever its status, under `path`."""
    return any(p.facet("activation") == "verify-phase" and (ns is None or p.ns == ns) and _under(p.scope_ref, [path])
               for p in st.priors.values())


def open_asks(st: State, ns: Optional[str] = None, paths: Sequence[str] = ()) -> List[Dict[str, Any]]:
    return [_ask(p, "open", OPEN_VERDICTS) for p in open_findings(st, ns, paths)]


def commands(ask: Dict[str, Any]) -> List[str]:
    """The exact commands that answer an ask, one per verdict it offers."""
    out = []
    for v in ask["verdicts"]:
        cmd = f"priors decide {shell_word(ask['id'])} {v}"
        if v == "duplicate":
            cmd += f" --of {shell_word(ask['differs_from'])}"
        if v == "reopen":
            cmd += f" --because {shell_text(ask.get('reason') or 'why it no longer holds')}"
        if v == "obsolete" and ask.get("same_reason"):
            cmd += f" --because {shell_text(ask['same_reason'])}"
        out.append(cmd)
        if v in ("accepted", "keep") and ask.get("supersedes_binding"):  # naming the person's lesson retires it too
            out.append(f"{cmd} --retires {shell_word(ask['supersedes'])}")
    return out


def held_revision(st: State, p: PriorState) -> bool:
    """An agent's open revision held back from runs and sessions while a lesson it revises is given."""
    # (its record read, not kept: the desk asks it of every lesson due for review — 3.8k records held at 100k)
    return p.status == "open" and is_lesson(p) and given_in_chain(st, p.record().get("supersedes")) is not None


def supersedes_note(ask: Dict[str, Any]) -> str:
    """What accepting the ask's lesson does to the lesson it supersedes (the walk, the report)."""
    old = ask["supersedes"]
    status = ask.get("supersedes_binding")
    if status:
        return (f"{old} — a person settled it ({status}): accepting this lesson leaves it in force,"
                f" unless you name it (--retires {old})")
    if ask.get("supersedes_retired") and ask.get("held_by"):
        return (f"{old} — you retired it; this revision of it waits while {ask['held_by']}, which {old} revised,"
                " is given")
    if ask.get("supersedes_retired"):
        return f"{old} — you retired it; this revision of it is given to runs in its place until you decide"
    return f"{old} — accepting this lesson retires it"


_DONE = {"accepted": "accepted", "wontfix": "marked wontfix", "obsolete": "retired"}  # a person's verdict on a lesson


def held_text(ask: Dict[str, Any]) -> str:
    """Why a lesson from a parallel branch is not given to runs (`unseen.lessons_unseen`)."""
    return (f"held back from runs and sessions until you decide: its run, on a parallel branch, never saw your"
            f" decision{'s' if len(ask['held_unseen']) != 1 else ''} on {', '.join(ask['held_unseen'])}")


def _in_ns(q: Dict[str, Any]) -> str:
    return f" (in {q['ns']})" if q.get("ns") else ""


def _one_line(value: Any, width: int = 200) -> str:
    if not isinstance(value, str):
        value = dumps(value)
    text = " ".join(value.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def ask_text(ask: Dict[str, Any], at: int, total: int) -> str:
    """One ask on the terminal: what it is, the prior, where it came from."""
    lines = [f"[{at}/{total}] {ask['id']} · {ask['ns']} · {ask['status']} — {kind_text(ask)}"]
    if ask["kind"] == "reversal":
        lines.append(f"  reversal: {ask['call']} (raised in {ask.get('call_run')}): {_one_line(ask['call_claim'])}")
    if ask["kind"] == "differs":
        lines.append(f"  {differs_text(ask)}:")
        lines.append(f"  yours:    {_one_line(ask['settled_claim'])}")
        lines += [f"  also {o['id']}: {_one_line(o['claim'])}" for o in ask.get("also_differs_from", ())]
        if ask.get("direction"):
            lines.append(f"  direction: {_one_line(ask['direction'])}")
    lines.append(f"  claim:    {_one_line(ask['claim'])}")
    if "rule" in ask:
        lines.append(f"  rule:     {_one_line(ask['rule'])}")
    lines.append(f"  scope:    {ask.get('scope', '—')}")
    if "severity" in ask:
        lines.append(f"  severity: {_one_line(ask['severity'])}")
    if "evidence" in ask:
        lines.append(f"  evidence: {_one_line(ask['evidence'])}")
    if ask.get("note") and ask["kind"] == "pressed":
        lines.append(f"  tried:    {ask['note']} — {_runs_note(ask['tried'])}")
        lines += [f"            “{_one_line(w, 120)}”" for w in tried_words(ask["tried"])]
    elif ask.get("note"):
        lines.append(f"  score:    {ask['note']}")
    if isinstance(ask.get("supersedes"), str) and any(v in ("accepted", "keep") for v in ask["verdicts"]):
        lines.append(f"  {'revises: ' if ask.get('supersedes_retired') else 'replaces:'} {supersedes_note(ask)}")
    lines += [f"  differs:  the agent says it differs from your {q['status']} {q['id']}: {_one_line(q['claim'])}"
              for q in ask.get("differs_from_decided", ())]
    lines += [f"  differs:  the agent says it differs from {q['id']}, an agent's lesson ({q['status']}): {_one_line(q['claim'])}"
              for q in ask.get("differs_from_lessons", ())]
    lines += [f"  like:     from a parallel branch whose run never saw your decision, it reads like your {q['status']}"
              f" {q['id']}{_in_ns(q)}: {_one_line(q['claim'])}" for q in ask.get("reads_like_unseen", ())]
    if ask.get("held_unseen"):
        lines.append(f"  held:     {held_text(ask)}")
    lines.append(f"  origin:   born in {ask.get('born')}" + (f" ({ask['type']})" if ask.get("type") else ""))
    lines.append("  keys:")
    if ask["kind"] == "open":
        lines += [f"    {key:<11} {means}" for key, means in OPEN_MEANS]
    else:
        lines += [f"    {v[0] + ' ' + v:<11} {CALL_MEANS[v]}" for v in ask["verdicts"] if v in CALL_MEANS]
        lines.append(f"    {'s skip':<11} leave it waiting for you")
    return "\n".join(lines)


def kind_text(ask: Dict[str, Any]) -> str:
    """What the ask is, in the words of the verdicts it offers: "the same" to another namespace's decision
    is answered `obsolete` (`differs_verdicts`), so the question names that key, not `duplicate`."""
    text = KINDS[ask["kind"]]
    if ask.get("imported"):  # (a person's `import` without --accept: no agent proposed it — newcomer pass 27ag)
        text = text.replace("a lesson an agent proposed", "a lesson imported from a bundle")
    if ask["kind"] == "proposed-lesson" and ask.get("held_unseen"):  # not given to runs: `held_text` says why
        text = text.replace(": injected as advice until you decide", "")
    elif ask["kind"] == "proposed-lesson" and ask.get("held_redacted"):
        text = text.replace("injected as advice", f"held back (it revises {ask['held_by']}, since redacted: what"
                                                  " that one revised is no longer known)")
    elif ask["kind"] == "proposed-lesson" and ask.get("held_by"):
        text = text.replace("injected as advice", f"held back while {ask['held_by']} is given (a run or session"
                                                  " is given one version of a lesson)")  # (`selection.one_version`)
    if ask["kind"] == "differs" and "duplicate" not in ask["verdicts"]:
        text = text.replace("the same (duplicate)", "the same (obsolete)")
    if ask["kind"] == "obsolete-proposed" and "reopen" in ask["verdicts"]:  # (a finding: newcomer pass 27aw)
        text = text.replace("keep it or retire it?", "keep it settled, retire it, or reopen it for runs to check?")
    return text


def _also(p: PriorState, rest: Sequence[PriorState]) -> Dict[str, Any]:
    """The other decisions a "differs" ask sets the finding against (the first is `differs_from`): each
    is shown, so the person sees every decision the finding is said to differ from or stands beside."""
    return {"also_differs_from": [dict({"id": q.id, "status": q.status, "claim": q.claim},
                                       **({"ns": q.ns} if q.ns != p.ns else {})) for q in rest]} if rest else {}


def differs_text(ask: Dict[str, Any]) -> str:
    """Why a "differs" ask waits for the person: the agent said so (`distinct_from`), or the finding came
    from a parallel branch whose run never saw their decision beside it (core/unseen.py)."""
    yours = " and ".join([f"your {ask['settled_status']} {ask['differs_from']}" + (
        f" (in {ask['settled_ns']})" if ask.get("settled_ns") else "")] + [  # another namespace's: say which
        f"your {o['status']} {o['id']}{_in_ns(o)}" for o in ask.get("also_differs_from", ())])
    if ask.get("unseen"):
        return f"from a parallel branch whose run never saw {yours}, it stands beside it"
    return f"the agent says {ask['id']} differs from {yours}"


def call_text(ask: Dict[str, Any]) -> List[str]:
    """One call as `priors status --calls` prints it: what it is, then each command that answers it on a
    line of its own — whole, shell-quoted, ready to copy (never `a | b`, which a shell would run as a pipe)."""
    kind = ask["kind"]
    if kind == "reversal":
        head = f"{ask['call']} — {_one_line(ask['call_claim'])} reverses {ask['id']}"
    elif kind == "differs":
        head = f"{ask['id']} — {differs_text(ask)}: {_one_line(ask['claim'])!r} vs {_one_line(ask['settled_claim'])!r}"
    elif kind == "pressed":
        head = f"{ask['id']} — {_one_line(ask['claim'])} — agents {ask['note']}: does it stand?"
    elif kind == "low-score":
        head = f"{ask['id']} — {_one_line(ask['claim'])} {ask['note']} — keep it or retire it?"
    else:
        head = f"{ask['id']} — {_one_line(ask['claim'])} — {kind_text(ask)}"
        old = ask.get("supersedes")
        said = f"{old} {_one_line(ask['supersedes_claim'])!r}" if ask.get("supersedes_claim") else old
        if ask.get("supersedes_retired"):
            head += f" (it revises {said}, which you retired" + (
                ")" if ask.get("held_unseen") or kind != "proposed-lesson" or ask.get("held_by")
                else ": given to runs in its place until you decide)")
        elif ask.get("supersedes_binding"):
            head += f" (it revises {said}, which a person settled: accepting it leaves {old} in force unless you name it)"
        elif isinstance(old, str) and not ask.get("supersedes_redacted"):
            head += f" (it revises {said}: accepting it retires {old})"
        for q in ask.get("differs_from_decided", ()):
            done = _DONE.get(q["status"], q["status"])
            head += f" (the agent says it differs from {q['id']}, which you {done}: {q['claim']!r})"
        for q in ask.get("differs_from_lessons", ()):
            head += f" (the agent says it differs from {q['id']}, an agent's lesson, {q['status']}: {q['claim']!r})"
        for q in ask.get("reads_like_unseen", ()):
            done = _DONE.get(q["status"], q["status"])
            head += (f" (from a parallel branch whose run never saw your decision: it reads like {q['id']}{_in_ns(q)},"
                     f" which you {done}: {q['claim']!r})")
        if ask.get("held_unseen"):
            head += f" — {held_text(ask)}"
    return [f"  ? {head}"] + [f"      {cmd}" for cmd in commands(ask)]


def _runs_note(tried: List[Dict[str, Any]]) -> str:
    """The runs the attempts came from, in run order: all of them when few, else how many, the first and the last
    (a prior raised again in hundreds of runs is one line, not a screenful)."""
    runs = sorted({t["run"] for t in tried if isinstance(t.get("run"), str)}, key=lambda r: id_number(RUN_RE, r, -1))
    if len(runs) <= MAX_RUNS_SHOWN:
        return f"run{'s' if len(runs) != 1 else ''} {', '.join(runs)}"
    return f"{len(runs)} runs, {runs[0]} … {runs[-1]}"


def key_prompt(ask: Dict[str, Any]) -> str:
    keys = [f"{v[0]} {v}" for v in ask["verdicts"]]
    return "  " + " · ".join(keys + [f"{SKIP} skip", f"{QUIT} quit"]) + " > "
