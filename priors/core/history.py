"""See what is settled: timelines, lists and per-run history as data, text and SVG.
"""

from __future__ import annotations

import heapq
from operator import itemgetter

from priors.core.canonical import dumps
from priors.core.chart import CATEGORIES, LABELS, TOUCHED_MEANS, chart_svg, quiet_notes
from priors.core.controls import one_line
from priors.core.fold import PriorState, State, apply, apply_at, apply_priors, pack, rests
from priors.core.lesson_likeness import reads_like_unseen
from priors.core.lessons import kept_in_force
from priors.core.plain import Plain
from priors.core.sameness import beside_unseen, differs_from
from priors.core.unseen import lessons_unseen
from priors.core.views import pressure_text, tried_since, tried_words
from priors.core.vocabulary import SESSION_VIA, SUGGEST_VIA, display_status

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

    Spans = Iterable[Tuple[Dict[str, Any], int, int]]


BAR_CHARS = {"fixed": "#", "carried": "=", "touched": "~", "your_call": "?", "new": "+"}
CLAIM_WIDTH = 72


def cut(text: str, width: int = CLAIM_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


# ------------------------------------------------------------------ show


def timeline(records: Sequence[Dict[str, Any]], pid: str) -> Optional[Dict[str, Any]]:
    """The prior and every ledger line that touched it, with resting and resurrection read from the fold."""
    return timeline_of(((no, rec, 0, 0) for no, rec in enumerate(records, 1)), pid, None)


def spans_of(records: Iterable[Dict[str, Any]]) -> Iterator[Tuple[Dict[str, Any], int, int]]:
    """Records as the readers of spans take them (store.ledger.read_spans), with no line to read back."""
    return ((rec, 0, 0) for rec in records)


def timeline_of(lines: Iterable[Tuple[int, Dict[str, Any], int, int]], pid: str, src: Any,
                final: Optional[State] = None) -> Optional[Dict[str, Any]]:
    """`timeline` of (line number, record, offset, length) of the ledger's lines; with `src` (the
    ledger they were read from) each prior's record is let go once folded, its line kept
    (`fold.apply_at`). `final`: the whole ledger's fold, when `lines` are only those that can name
    `pid` (store.ledger.numbered_lines: its id, or an escape, in their text) — they alone move `pid`,
    its calls and its timeline; the prior itself is then read from `final`."""
    st = State()
    events: List[Dict[str, Any]] = []
    calls: Dict[str, Dict[str, Any]] = {}
    found = False
    mine: List[Any] = []  # the calls against `pid`, in ledger order
    last: Dict[str, Any] = {}  # call id → the last call with that id (what a lookup by id finds)
    for no, rec, at, n in lines:
        before = st.priors.get(pid)
        was_resting = before.resting if before else False
        call_before = {cid: last[cid].resolved for cid in {str(c.rec.get("call_id")) for c in mine} if cid in last}
        n_calls = len(st.calls)
        apply_at(st, rec, at, n, src)
        if len(st.calls) > n_calls:
            c = st.calls[-1]
            cid = str(c.rec.get("call_id"))
            if cid in last and cid not in call_before:
                call_before[cid] = last[cid].resolved
            last[cid] = c
            if c.conflicts_with == pid:
                mine.append(c)
        p = st.priors.get(pid)
        if p is None:
            continue
        t = rec.get("t")
        run = rec.get("run") if isinstance(rec.get("run"), str) else None
        if t == "prior" and rec.get("id") == pid and not found:
            found = True
            events.append(_ev(no, rec.get("born"), "born", f"born in {rec.get('born')} (namespace {rec.get('ns')})"))
        elif t == "event" and rec.get("id") == pid:
            events.append(_event_entry(no, run, rec, p))
        elif t == "call" and rec.get("conflicts_with") == pid:
            call_id = rec.get("call_id")
            if rec.get("redacted") is True:
                text = f"call {call_id}: a reversal of this prior (redacted)"
            else:
                text = f"call {call_id}: {cut(str(rec.get('claim', '')), 60)!s} — reverses this ({rec.get('direction')})"
            entry = _ev(no, run, "call", text)
            entry["call_id"] = cid
            calls[str(cid)] = entry
            events.append(entry)
        for c in mine:
            cid = str(c.rec.get("call_id"))
            if c.resolved and call_before.get(cid) is False and cid in calls:
                calls[str(cid)]["resolved_on_line"] = no
        if not was_resting and p.resting:
            events.append(_ev(no, run, "resting",
                              f"resting — its scope was missing {p.miss} runs in a row; it wakes if the scope returns"))
        elif was_resting and not p.resting and not p.redacted and t == "event" and rec.get("id") == pid:
            events.append(_ev(no, run, "resurrected", "resurrected — back from resting"))
        if t == "run" and isinstance(rec.get("attempts"), list):
            tried = _tried_in_run(rec["attempts"], pid)
            if tried:
                events.append(_ev(no, run, "tried", tried))
    if not found:
        return None
    st = st if final is None else final
    p = st.priors[pid]
    rec = p.rec
    body: Dict[str, Any] = {
        "id": pid,
        "ns": rec.get("ns"),
        "status": display_status(p),
        "born": rec.get("born"),
        "timeline": events,
    }
    if p.redacted or rec.get("redacted") is True:
        body["redacted"] = True
        body["content_hash"] = rec.get("content_hash")
    else:
        for key in ("type", "claim", "facets", "scope_ref", "direction", "rule", "fingerprint", "severity", "depth",
                    "evidence", "review_every", "distinct_from", "supersedes"):
            if key in rec:
                body[key] = rec[key]
        if p.scope_hash is not None:
            body["scope_hash"] = p.scope_hash
        ev, now = body.get("evidence"), p.scope_ref
        if (isinstance(ev, str) and isinstance(now, str) and any(e["kind"] == "moved" for e in events)
                and ":" in ev and ev.split(":", 1)[0] != now.split("#", 1)[0]):
            body["evidence_before_move"] = True  # (it names the file the code was in: newcomer pass 27ai)
        kept = kept_in_force(st, pid) if "supersedes" in body else None
        if kept is not None:  # a person's lesson: accepting this one leaves it in force unless the person names it
            body["supersedes_binding"] = st.priors[kept].status
        held = lessons_unseen(st, p) if pid in st.unseen else []
        waits = differs_from(st, p) or beside_unseen(st, p) or reads_like_unseen(st, p, held) \
            if "distinct_from" in body or pid in st.unseen else []
        if held:  # a parallel branch's lesson, held back from runs and sessions until the person decides it
            body["held_back"] = held
        old = st.priors.get(rec["supersedes"]) if isinstance(rec.get("supersedes"), str) else None
        if old is not None and old.status == "obsolete":
            body["supersedes_retired"] = True
        if waits:  # the person's call (core/sameness.py): whether it is one of their decisions
            body["waits_for_call"] = [dict({"id": q, "status": st.priors[q].status},
                                           **({"ns": st.priors[q].ns} if st.priors[q].ns != p.ns else {})) for q in waits]
    if p.miss:
        body["missing_runs"] = p.miss
    tried_list = tried_since(st, p)
    if tried_list:  # pressure a person may want to weigh: shown, never acted on
        body["tried_since_decision"] = tried_list
    return body


def lines_suffice(st: State, pid: str) -> bool:
    """Whether the ledger's lines that name `pid` alone replay its timeline (`timeline_of`'s `final`):
    they hold its prior and events, the calls against it and the runs' attempts on it — all that
    moves it — unless a call against it shares its call id with a call against another prior (ids a
    hand reused), whose lines would then count too."""
    mine = {str(c.rec.get("call_id")) for c in st.calls if c.conflicts_with == pid}
    return not mine or not any(c.conflicts_with != pid and str(c.rec.get("call_id")) in mine for c in st.calls)


def _tried_in_run(attempts: List[Any], pid: str, most: int = 3) -> str:
    """One timeline line for a run's attempts on `pid` (however many its seal holds): how many, the
    refusal codes, and the first few words."""
    mine = [a for a in attempts if isinstance(a, dict) and a.get("of") == pid]
    if not mine:
        return ""
    codes = ", ".join(dict.fromkeys(str(a.get("code")) for a in mine))
    said = [f"“{cut(a['claim'], 60)}”" if isinstance(a.get("claim"), str) else "(words redacted)" for a in mine[:most]]
    more = f" and {len(mine) - most} more" if len(mine) > most else ""
    n = len(mine)
    return (f"an agent raised it again{'' if n == 1 else f' {n} times'} in this run, refused {codes}: "
            + ", ".join(said) + more)


def _ev(line: int, run: Any, kind: str, text: str) -> Dict[str, Any]:
    e: Dict[str, Any] = {"line": line, "kind": kind, "text": text}
    if isinstance(run, str):
        e["run"] = run
    return e


def _event_entry(no: int, run: Optional[str], rec: Dict[str, Any], p: Any) -> Dict[str, Any]:
    action, to = rec.get("action"), rec.get("to")
    reason = rec.get("reason")
    why = f" — “{reason}”" if isinstance(reason, str) else " — (reason redacted)" if rec.get("reason_redacted") else ""
    if action == "disposition":  # an analyzer's finding (`ingest-sarif`, the only writer of `rule`) was judged by its log
        text = f"{'analyzer' if isinstance(p.rec.get('rule'), str) else 'agent'}: {to}"
    elif action == "scope-missing":
        text = f"scope missing ({p.miss} in a row)" if not p.redacted else "scope missing"
    elif action == "decide":
        same = rec.get("same_as")  # `decide P duplicate --of Q`: obsolete, as the same finding as Q
        text = f"you decided: {to}" + (f" (the same finding as {same})" if isinstance(same, str) and to == "obsolete"
                                       else "") + why
    elif action == "redact":
        text = f"redacted by you{why}"
    elif action == "moved":  # core/moves.py
        how = "renamed or moved, the same code" if isinstance(rec.get("scope_hash"), str) else "moved and edited"
        text = f"its code moved: {rec.get('from')} → {to} ({how})"
    else:
        text = f"{action} {to or ''}".strip()
    if rec.get("restated") is True:
        text += " (restated by a merge, so it stays the last word)"
    e = _ev(no, run, str(action), text)
    if isinstance(to, str):
        e["to"] = to
    return e


def show_text(body: Dict[str, Any]) -> str:
    lines = [f"{body['id']} · {body.get('ns')} · {body.get('type', 'redacted')} — {body['status']}"]
    if body.get("redacted"):
        lines.append(f"  (content redacted; content_hash {body.get('content_hash')})")
    else:
        lines.append(f"  {body.get('claim', '')}")
        facets = body.get("facets")
        f = facets if isinstance(facets, dict) else {}
        where = body.get("scope_ref") or ("the whole repo" if f.get("scope") == "repo-wide" else "—")
        sh = f" @ {body['scope_hash']}" if body.get("scope_hash") else ""
        lines.append(f"  where: {where}{sh}")
        if f:
            lines.append("  facets: " + " · ".join(str(f.get(k))
                                                   for k in ("scope", "activation", "obligation", "authority", "lifecycle")))
        if "rule" in body:  # an analyzer's result (`ingest-sarif`): its identity
            lines.append(f"  rule: {body['rule']} · fingerprint {body.get('fingerprint')}")
        extra = [f"{k.replace('_', ' ')} {body[k]}" for k in ("severity", "depth", "direction", "review_every") if k in body]
        if extra:
            lines.append("  " + " · ".join(extra))
        what = "lesson" if f.get("activation") == "run-start" else "finding"
        if isinstance(body.get("distinct_from"), list):
            lines.append("  distinct from: " + ", ".join(str(x) for x in body["distinct_from"])
                         + f" (the agent said this differs from those {what}s, which the door found alike or nearby)")
        if body.get("waits_for_call"):
            said = ", ".join(f"your {w['status']} {w['id']}" + (f" (in {w['ns']})" if w.get("ns") else "")
                             for w in body["waits_for_call"])
            lines.append(f"  your call: whether it is the same {what} as {said} — `priors status --calls`")
        if body.get("held_back"):
            n = len(body["held_back"])
            lines.append(f"  held back from runs and sessions until you decide: its run, on a parallel branch, never saw"
                         f" your decision{'s' if n != 1 else ''} on {', '.join(body['held_back'])}")
        if isinstance(body.get("supersedes"), str) and body.get("supersedes_binding"):
            old = body["supersedes"]
            lines.append(f"  supersedes: {old} ({body['supersedes_binding']} by a person: accepting or keeping this lesson"
                         f" leaves it in force unless you name it — `priors decide {body['id']} accepted --retires {old}`)")
        elif isinstance(body.get("supersedes"), str) and body.get("supersedes_retired"):
            lines.append(f"  supersedes: {body['supersedes']} (a person retired it: accepting this lesson retires nothing)")
        elif isinstance(body.get("supersedes"), str):
            lines.append(f"  supersedes: {body['supersedes']} (accepting or keeping this lesson retires it)")
        if "evidence" in body:
            ev = body["evidence"]
            lines.append("  evidence: " + cut(ev if isinstance(ev, str) else _compact(ev), 100)
                         + (" (where it was seen, before its code moved)" if body.get("evidence_before_move") else ""))
    tried = body.get("tried_since_decision")
    if isinstance(tried, list) and tried:
        lines.append(f"  agents {pressure_text(tried, str(body.get('status')))} — in these words:")
        lines += [f"    “{cut(w, 100)}”" for w in tried_words(tried)]
    lines.append("timeline:")
    for e in body["timeline"]:
        resolved = ""
        if e.get("kind") == "call":
            resolved = (f" — resolved by your decision on line {e['resolved_on_line']}" if "resolved_on_line" in e
                        else " — awaiting your call")
        lines.append(f"  line {e['line']:<5} {e.get('run', ''):<9} {e['text']}{resolved}")
    return "\n".join(one_line(x) for x in lines)  # a line feed in a direction or a rule id starts no line


def _compact(v: Any) -> str:
    return dumps(v)


# ------------------------------------------------------------------ history


COUNTS = ("checked", "fixed", "carried", "touched", "your_call", "new")
ROW_FIELDS = ("run", "ns", "line", *COUNTS, "resting", "open", "quiescent")


class RunRow(Plain):
    """One committed run's row: equality and repr by its fields, as the dataclass it was — without
    importing dataclasses (and the inspect module it pulls in) on every `priors history`."""

    __slots__ = ROW_FIELDS

    def __init__(self, run: str, ns: Any, line: int, checked: int = 0, fixed: int = 0, carried: int = 0,
                 touched: int = 0, your_call: int = 0, new: int = 0, resting: int = 0, open: int = 0,
                 quiescent: bool = False) -> None:
        self.run, self.ns, self.line = run, ns, line
        self.checked, self.fixed, self.carried = checked, fixed, carried
        self.touched, self.your_call, self.new = touched, your_call, new
        self.resting, self.open, self.quiescent = resting, open, quiescent

    def as_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in ROW_FIELDS}


class _Open:
    """An uncommitted run's counts so far, and the review nudges due when it opened."""

    __slots__ = ("counts", "nudges")

    def __init__(self, nudges: Dict[Any, int]) -> None:
        self.counts = dict.fromkeys(COUNTS, 0)
        self.nudges = nudges


def _counts_open(p: Any) -> bool:
    """Open as `priors status` counts it: not redacted, resting, fixed, retired, binding or a locked lesson; open or stale."""
    return _open(p.status, p.resting, p.facet("obligation"))


def _open(status: Any, resting: bool, obligation: Any) -> bool:
    """`_counts_open` from what it reads: redacted, fixed, retired and binding priors are neither
    open nor stale, so only a resting prior and a locked lesson (open, inject-as-instruction) drop out."""
    return not resting and (status == "stale" or (status == "open" and obligation != "inject-as-instruction"))


def open_count(st: Any, ns: Any) -> int:
    """Open as `priors status` counts it, for namespace `ns`."""
    return sum(1 for p in st.priors.values() if p.ns == ns and _counts_open(p))


# what a prior's share is computed from, beside its record: (status, miss, human_idx), read by position
_BASIS = itemgetter(*(PriorState.LAYOUT.index(k) for k in ("status", "miss", "human_idx")))
_OPEN, _RESTING = 1, 2  # a prior's share: counted open, counted resting (never both), or 0: neither


class _Seen:
    """One prior as the tally last counted it: the folded state it read, what that state's record
    says (read once per state: a prior record makes a new one), the status, miss streak and last
    human decision its share was computed from (`basis`), and the share: `code` (_OPEN, _RESTING
    or 0) counted under namespace `where`."""

    __slots__ = ("state", "ns", "plain", "activation", "obligation", "every", "basis", "code", "where")
    code: int
    where: Any  # a namespace: whatever JSON value the record holds

    def __init__(self, p: Any, was: Optional["_Seen"]) -> None:
        r = p[5]  # the record, when the fold kept it (history's does): read it once, not per property
        if r is not None:
            ns, every, f = r.get("ns"), r.get("review_every"), r.get("facets")
            activation, obligation = (f.get("activation"), f.get("obligation")) if isinstance(f, dict) else (None, None)
        else:
            ns, every = p.ns, p.review_every
            activation, obligation = p.facet("activation"), p.facet("obligation")
        try:
            hash(ns)
            self.plain = True
        except TypeError:
            self.plain = False  # counted the slow way, only for a run whose namespace is not a plain value
        self.state, self.ns, self.basis = p, ns, None
        self.activation, self.obligation = activation, obligation
        self.every = every if isinstance(every, int) and not isinstance(every, bool) else None
        self.code, self.where = (0, None) if was is None else (was.code, was.where)  # until `update` moves it


class _Tally:
    """Per namespace, resting and open priors and the review nudges due, kept current record by
    record (a record changes only the prior it names; a nudge falls due as runs pass) — so history
    is linear in the ledger instead of walking every prior for every run.

    A record that leaves its prior's status, miss streak and last human decision as they were —
    as most dispositions do — costs one comparison (`_Seen.basis`)."""

    def __init__(self) -> None:
        self.resting: Dict[Any, int] = {}
        self.open: Dict[Any, int] = {}
        self.due: Dict[Any, int] = {}
        self.review: Dict[str, List[Any]] = {}  # id → [ns, the run position it falls due at, due yet]
        self.heap: List[Tuple[int, int, str, List[Any]]] = []  # (due at, push order, id, its review entry)
        self.n = 0
        self.seen: Dict[str, _Seen] = {}

    def facts(self, pid: str, p: Any) -> _Seen:
        """`pid` as last counted, for the prior state `p` (its share carries over to a new state)."""
        e = self.seen.get(pid)
        if e is None or e.state is not p:
            e = self.seen[pid] = _Seen(p, e)
        return e

    def update(self, pid: str, p: Any) -> None:
        """`pid`'s prior is now `p` (None: there is none): move its share and review if they changed."""
        if p is None:
            return  # (a prior once folded never goes away: it had no share either)
        e = self.seen.get(pid)
        if e is None or e.state is not p:
            e = self.facts(pid, p)
        basis = _BASIS(p)
        if basis == e.basis:
            return
        e.basis = basis
        status = basis[0]
        code = 0
        if e.plain:
            if rests(status, basis[1]):  # (p.resting, from the basis already read)
                code = _RESTING
            elif _open(status, False, e.obligation):
                code = _OPEN
        if code != e.code or (code and e.where != e.ns):
            self._move(e, code)
        due_at = None
        if e.plain and e.every is not None and e.activation == "run-start" and status in ("open", "accepted", "wontfix"):
            due_at = basis[2] + e.every  # as fold.review_due: due once `every` runs passed its last human decision
        if due_at is not None or pid in self.review:
            old = self.review.get(pid)
            if old is None or old[1] != due_at or old[0] != e.ns:
                self._reschedule(pid, e.ns, due_at)
        if not code:  # counted nowhere: nothing to carry over, read again if it moves (at 100k priors ~12 MB less)
            del self.seen[pid]

    def _move(self, e: _Seen, code: int) -> None:
        """Count `e`'s prior as `code` under its namespace, no longer as it was counted."""
        if e.code:
            tally = self.resting if e.code == _RESTING else self.open
            tally[e.where] -= 1
        if code:
            tally = self.resting if code == _RESTING else self.open
            tally[e.ns] = tally.get(e.ns, 0) + 1
        e.code, e.where = code, e.ns

    def _reschedule(self, pid: str, ns: Any, due_at: Any) -> None:
        """Its review falls due at `due_at` now (None: never): the old entry goes, due or not."""
        e = self.review.pop(pid, None)
        if e is not None and e[2]:
            self.due[e[0]] -= 1
        if due_at is not None:
            e = self.review[pid] = [ns, due_at, False]
            self.n += 1
            heapq.heappush(self.heap, (due_at, self.n, pid, e))

    def nudges(self, st: Any) -> Dict[Any, int]:
        """Review nudges `relevant` would give now, per namespace (taken when a run opens)."""
        now = len(st.runs_order) - 1
        heap = self.heap
        while heap and heap[0][0] <= now:
            _, _, pid, e = heapq.heappop(heap)
            if self.review.get(pid) is e and not e[2]:
                e[2] = True
                self.due[e[0]] = self.due.get(e[0], 0) + 1
        return {k: v for k, v in self.due.items() if v}

    def after_commit(self, st: Any, ns: Any) -> Tuple[int, int]:
        try:
            return self.resting.get(ns, 0), self.open.get(ns, 0)
        except TypeError:
            return sum(1 for p in st.priors.values() if p.ns == ns and p.resting), open_count(st, ns)


def history_rows(records: Sequence[Dict[str, Any]], ns: Optional[str] = None) -> List[RunRow]:
    """One row per committed run, counted from the ledger's events (never from summary text).

    checked = dispositions of verify-phase priors + scope-missing events of the run
    (the verify items it accounted for); fixed; carried = still-open + reaffirmed;
    touched = stale; your call = challenged + obsolete-proposed + calls of the run +
    review nudges due when it opened + new findings said to differ from a person's decision;
    new = priors born in it; resting and open = priors of its namespace in that state right after its commit record.
    """
    return _walk(spans_of(records), ns, apply_priors, None)[0]  # (the rows read only priors, runs and commits)


def history_and_state(records: Sequence[Dict[str, Any]], ns: Optional[str] = None):
    """(history_rows, the folded state): one pass for callers that need both (the report) — the
    whole `apply` per record, where `history_rows` folds only what the rows read."""
    return _walk(spans_of(records), ns, apply, None)


def history_of(spans: Spans, src: Any, ns: Optional[str] = None, whole: bool = False):
    """`history_rows` (`whole`: `history_and_state`) of (record, offset, length) spans, read a block at
    a time (store.ledger.read_spans); each prior's record is let go once counted, its line kept for
    `src` to read back (`fold.pack`) — so a prior's record may be `fold_spans.quick_spans`' few fields.
    At 100k priors the records held were ~340 MB."""
    return _walk(spans, ns, apply if whole else apply_priors, src)


def _walk(spans: Spans, ns: Optional[str], step: Any, src: Any):
    """(the rows, the state `step` folded the records into; a prior's record packed when `src` is given).

    One fold step and a few lookups per record. A line counts for the run that wrote it while
    that run is uncommitted — a prior for its `born`, a disposition or scope-missing event, a call
    or a run record for its `run` — against the state before the line; the prior it names then
    has its share of the tallies moved (`_Tally.update`). The branches per record type are
    written out: this loop runs once per ledger line."""
    st = State()
    priors, commits = st.priors, st.commits
    tally = _Tally()
    update = tally.update
    rows: List[RunRow] = []
    runs: Dict[str, _Open] = {}
    for no, (rec, at, n) in enumerate(spans, 1):
        get = rec.get
        t = get("t")
        if t == "event":
            pid = get("id")
            if isinstance(pid, str):
                p = priors.get(pid)
            else:
                pid, p = "", None  # names no prior: counts nothing
            action = get("action")
            if action == "disposition" or action == "scope-missing":
                run = get("run")
                if isinstance(run, str) and run not in commits:
                    a = runs.get(run) or _opened(runs, run, tally, st)
                    if p is not None:
                        c = a.counts
                        if action == "scope-missing" or tally.facts(pid, p).activation != "run-start":
                            c["checked"] += 1
                        if action == "disposition":
                            _count_verdict(c, get("to"))
            step(st, rec)
            if p is not None:  # (an event names an existing prior or changes nothing)
                update(pid, priors.get(pid))
        elif t == "prior":
            pid, run = get("id"), get("born")
            if isinstance(run, str) and run not in commits:
                a = runs.get(run) or _opened(runs, run, tally, st)
                if isinstance(pid, str) and pid not in priors:
                    a.counts["new"] += 1
                    if _differs_from_a_decision(get("distinct_from"), priors):
                        a.counts["your_call"] += 1
            step(st, rec)
            if isinstance(pid, str):
                update(pid, priors.get(pid))
                if src is not None:
                    pack(st, rec, at, n, src)  # (after `update`: the tally read the record whole)
        elif t == "call" or t == "run":
            run = get("run")
            a = None
            if isinstance(run, str) and run not in commits:
                a = runs.get(run) or _opened(runs, run, tally, st)
                if t == "call":
                    a.counts["your_call"] += 1
            step(st, rec)
            if a is not None and isinstance(run, str) and t == "run" and get("action") == "commit":  # the run's first commit
                row = _row(run, get("ns"), no, a, tally, st)
                if (ns is None or row.ns == ns) and get("via") not in (SESSION_VIA, SUGGEST_VIA):
                    rows.append(row)  # (a scored coding session is sealed as a run, but reviewed nothing: no row)
        else:
            step(st, rec)
    return rows, st


def _opened(runs: Dict[str, _Open], run: str, tally: _Tally, st: Any) -> _Open:
    """A run's first line: its counts start, with the review nudges due as it opened."""
    a = runs[run] = _Open(tally.nudges(st))
    return a


def _differs_from_a_decision(named: Any, priors: Dict[str, Any]) -> bool:
    """A new finding whose `distinct_from` names a person's decision: the person is asked whether it differs,
    and the commit summary counts it under "need your call" (`summarize` in core/commit_plan.py)."""
    return isinstance(named, list) and any(isinstance(q, str) and q in priors and priors[q].binding for q in named)


def _count_verdict(c: Dict[str, int], to: Any) -> None:
    if to == "fixed":
        c["fixed"] += 1
    elif to in ("still-open", "reaffirmed"):
        c["carried"] += 1
    elif to == "stale":
        c["touched"] += 1
    elif to in ("challenged", "obsolete-proposed"):
        c["your_call"] += 1


def _row(run: str, rns: Any, no: int, a: _Open, tally: _Tally, st: Any) -> RunRow:
    """The row of a run, at its first commit record (line `no`)."""
    c = a.counts
    row = RunRow(run, rns, no, c["checked"], c["fixed"], c["carried"], c["touched"], c["your_call"], c["new"])
    row.your_call += a.nudges.get(rns, 0) if isinstance(rns, str) else 0  # (`"ns": ["web"]` by hand: verify names it)
    row.resting, row.open = tally.after_commit(st, rns)
    row.quiescent = row.checked > 0 and row.carried == row.checked and not (row.fixed or row.touched or row.new or row.your_call)
    return row


def _bar(row: RunRow, scale: float) -> str:
    out = []
    for k in CATEGORIES:
        n = getattr(row, k)
        if n:
            out.append(BAR_CHARS[k] * max(1, int(round(n * scale))))
    return "".join(out)


def history_text(rows: Sequence[RunRow], width: int = 40) -> str:
    if not rows:
        return "no committed runs yet"
    head = ("run", "ns", "checked", "fixed", "carried", "touched", "call", "new", "resting", "open")
    table: List[Tuple[str, ...]] = [head]
    for r in rows:
        counts = ("checked", "fixed", "carried", "touched", "your_call", "new", "resting", "open")
        table.append((r.run, one_line(str(r.ns)), *(str(getattr(r, k)) for k in counts)))
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    biggest = max(sum(getattr(r, k) for k in CATEGORIES) for r in rows)
    scale = min(1.0, width / biggest) if biggest else 1.0
    lines = []
    for i, t in enumerate(table):
        cells = [t[0].ljust(widths[0]), t[1].ljust(widths[1])] + [t[j].rjust(widths[j]) for j in range(2, len(head))]
        line = "  ".join(cells)
        if i:
            r = rows[i - 1]
            line += "  " + _bar(r, scale) + ("  quiescent" if r.quiescent else "")
        lines.append(line.rstrip())
    lines.append("")
    lines.append("bars: " + "  ".join(f"{BAR_CHARS[k]} {LABELS[k]}" for k in CATEGORIES)
                 + (f"   (1 mark ≈ {1 / scale:.1f})" if scale < 1 else ""))
    q = sum(1 for r in rows if r.quiescent)
    if q:  # of the runs that checked something: a person's `add`, which reviews nothing, cannot be quiet or not
        reviewed = sum(1 for r in rows if r.checked or r.quiescent)
        lines.append(f"quiescent runs (everything settled still held, nothing new): {q} of {reviewed}"
                     f" that checked something")
    lines += quiet_notes(rows)  # per namespace: one's quiet runs say nothing of another's
    lines.append(TOUCHED_MEANS)  # the one column word that needs saying, said once under the table
    return "\n".join(lines)


def history_svg(rows: Sequence[RunRow], title: str = "priors history", now: Optional[int] = None) -> str:
    """A self-contained SVG: stacked bars per run, a line for the open count (ending at `now`, the open
    count today), quiescent runs marked. Deterministic."""
    return chart_svg(rows, title, now=now)
