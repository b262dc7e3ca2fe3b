"""Fold the ledger into current state: pure functions over parsed lines."""

from __future__ import annotations

from operator import itemgetter

from priors.core.errors import UsageError
from priors.core.ledger_parse import (  # noqa: F401 (parse_lines, parse_spans, LEDGER_NAME: re-exported)
    LEDGER_NAME,
    SHAPE_CARE,
    blocks_of,
    each_block,
    each_clean,
    line_shapes,
    lines_of,
    parse_lines,
    parse_spans,
    parse_strict,
    scanner,
)
from priors.core.moves import MOVED, move, note_shapes
from priors.core.plain import Plain
from priors.core.sameness import note
from priors.core.vocabulary import (  # noqa: F401 (re-exported to callers of the fold)
    BINDING,
    BLOCK_TYPES,
    INJECTABLE,
    LAST_RUN,
    PRIOR_RE,
    REST_AFTER,
    RUN_RE,
    id_number,
    prior_number,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, List, Optional, Tuple


def _field(i: int, doc: str) -> property:
    def set_(self: "PriorState", value: Any) -> None:
        self[i] = value

    return property(itemgetter(i), set_, doc=doc)


class PriorState(Plain, list):
    """One prior's folded state. `rec` is its ledger record, read back from its ledger line on first use.

    A fold keeps no record dict: only where the record's line lies in the ledger (`_packed`) and
    the few fields every verb reads (facets, ns, scope_ref, review_every). At 100k priors that is
    the difference between ~400 MB and well under 120 MB. A list underneath, in the order of
    `LAYOUT`, so that the fold cache builds 100k of them at C speed (`PriorState(row)`); fields
    are read and set by name. Make one with `new_prior`."""

    __slots__ = ()
    LAYOUT = ("id", "status", "scope_hash", "miss", "human_idx", "_rec", "_packed", "_facets", "_ns", "_ref",
              "_every", "_src")
    FIELDS = ("id", "rec", "status", "scope_hash", "miss", "human_idx")

    id = _field(0, "the prior's id")
    status = _field(1, "open, fixed, stale, challenged, obsolete-proposed, accepted, wontfix, obsolete or redacted")
    scope_hash = _field(2, "the scope hash it was last judged against")
    miss = _field(3, "runs in a row its scope was missing")
    human_idx = _field(4, "index in runs_order of its last human decision (or birth)")
    _rec = _field(5, "the record, once read (or when it is known only in memory)")
    _packed = _field(6, "(offset, length) of the ledger line holding the record, when known (or its values: replay_kept)")
    _facets = _field(7, "the record's facets, kept beside the packed record")
    _ns = _field(8, "the record's ns, kept beside the packed record")
    _ref = _field(9, "the record's scope_ref, kept beside the packed record")
    _every = _field(10, "the record's review_every, kept beside the packed record")
    _src = _field(11, "where the packed record is read from: any object with `inflate(prior) -> record` (and, to "
                      "read a claim without keeping the record, `claim_of(prior)`: core/replay_kept.py)")

    @property
    def rec(self) -> Dict[str, Any]:
        r = self[5]
        if r is None:
            # a packed record (read back from the ledger line it came from): kept once read, and its
            # place in the ledger stays known, so a snapshot still points at the line, not a copy
            r = self[5] = self[11].inflate(self)
        return r

    @rec.setter
    def rec(self, value: Dict[str, Any]) -> None:
        self[5] = value
        self[6] = self[7] = self[8] = self[9] = self[10] = self[11] = None

    def record(self) -> Dict[str, Any]:
        """The record without keeping an inflated copy — for one-pass readers such as render."""
        r = self[5]
        if r is not None:
            return r
        return self[11].inflate(self)  # the store that packed it reads it back (an injected source: no I/O here)

    def fields(self) -> tuple:
        return self.FIELDS  # equality and repr by these (priors.plain): the record, not how it is held

    @property
    def ns(self) -> Any:
        r = self[5]
        return self[8] if r is None else r.get("ns")

    @property
    def claim(self) -> str:
        r = self[5]
        if r is None:  # a packed record: read in place when its store can (`claim_of`), else read back and kept
            read = getattr(self[11], "claim_of", None)
            c = read(self) if read is not None else self.rec.get("claim")
        else:
            c = r.get("claim")
        return c if isinstance(c, str) else ""

    @property
    def scope_ref(self) -> Optional[str]:
        r = self[5]
        if r is None:
            return self[9]  # kept beside the packed record: scope matching reads no record
        ref = r.get("scope_ref")
        return ref if isinstance(ref, str) else None

    @property
    def review_every(self) -> Any:
        r = self[5]
        return self[10] if r is None else r.get("review_every")

    def facet(self, name: str) -> Any:
        if self[5] is None and self[7] is not None:
            return self[7].get(name)  # facets stay readable without inflating the record
        f = self.rec.get("facets")
        return f.get(name) if isinstance(f, dict) else None

    @property
    def binding(self) -> bool:
        return self[1] in BINDING

    @property
    def redacted(self) -> bool:
        return self[1] == "redacted"

    @property
    def resting(self) -> bool:
        return rests(self[1], self[3])

    def copy(self) -> "PriorState":
        return PriorState(self)


def rests(status: str, miss: int) -> bool:
    """A prior with this status and this many runs in a row without its scope is resting: it leaves
    a run's lists until its scope returns (a person's binding decision and a tombstone never rest)."""
    return miss >= REST_AFTER and status not in BINDING and status != "redacted"


def new_prior(id: str, rec: Optional[Dict[str, Any]], status: str, scope_hash: Optional[str], miss: int = 0,
              human_idx: int = -1) -> PriorState:
    return PriorState((id, status, scope_hash, miss, human_idx, rec, None, None, None, None, None, None))


class CallState(Plain):
    __slots__ = ("rec", "resolved")

    def __init__(self, rec: Dict[str, Any], resolved: bool) -> None:
        self.rec, self.resolved = rec, resolved

    @property
    def conflicts_with(self) -> Any:
        return self.rec.get("conflicts_with")


def new_loop() -> Dict[str, Any]:
    """What the lessons loop reads, gathered during the fold (plain data, so the fold cache keeps it).
    Positions are record indexes (0-based, blank lines not counted). `first`: run → the first record
    naming it (`run`/`born` of a prior, event, call or run record: where its block starts); `commit_at`:
    run → its first commit record; `lessons`: namespace → run-start prior ids, in order of their first
    prior record; `spans`: lesson id → sorted boundaries of the positions at which a run starting there
    was shown it (even entries open a span, odd ones close it); `injected`: run → the ids of its last
    `injected` record; `scores`: [position, record] of every score; `decided`: prior id → its last human
    decide; `learned`: run → the last `learned` record naming it."""
    return {"first": {}, "commit_at": {}, "lessons": {}, "spans": {}, "injected": {}, "scores": [], "decided": {},
            "learned": {}}


class State(Plain):
    """The folded ledger. `scored`: any score record. `records`: how many were folded — fewer than
    the ledger has lines only if some are blank. `loop`: what the lessons loop reads (`new_loop`)."""

    __slots__ = ("priors", "runs_order", "run_pos", "calls", "commits", "max_prior", "max_run", "scored", "records",
                 "loop", "same_as", "distinct", "shapes", "unseen", "awaiting")
    DERIVED = ("awaiting",)  # rebuilt from the rest (`index_calls`), never stored

    def __init__(self) -> None:
        self.priors: Dict[str, PriorState] = {}
        self.runs_order: List[str] = []
        self.run_pos: Dict[str, int] = {}
        self.calls: List[CallState] = []
        self.commits: Dict[str, Dict[str, Any]] = {}
        self.max_prior = 0
        self.max_run = 0
        self.scored = False
        self.records = 0
        self.loop: Dict[str, Any] = new_loop()
        self.same_as: Dict[str, List[str]] = {}  # id → ids a person said repeat it; `distinct`: id → its `distinct_from`;
        self.distinct: Dict[str, List[str]] = {}  # `unseen`: id → the decisions its run never saw (core/sameness.py)
        self.unseen: Dict[str, List[str]] = {}
        self.shapes: Dict[str, str] = {}  # id → the shape of the definition it was last judged on (core/moves.py)
        self.awaiting: Dict[str, List[CallState]] = {}  # prior id → its unresolved calls, in order

    def fields(self) -> tuple:
        return self.__slots__[:-len(self.DERIVED)]  # equality by what the ledger says, not by the index

    def note_run(self, run: Any) -> None:
        if isinstance(run, str) and run not in self.run_pos:
            self.run_pos[run] = len(self.runs_order)
            self.runs_order.append(run)

    @property
    def last_run_idx(self) -> int:  # (the int `run_pos` holds, not one more each prior: ~3 MB of a fold of 100k priors)
        order = self.runs_order
        return self.run_pos[order[-1]] if order else -1

    def in_ns(self, ns: str) -> Iterable[PriorState]:
        return (p for p in self.priors.values() if p.ns == ns)


def fold_data(data: bytes, name: str = LEDGER_NAME, src: Any = None) -> State:
    """`fold(parse_lines(data))` without holding every parsed record at once: each record is folded
    as it is decoded and dropped. With a `src` (anything with `inflate(prior) -> record`: the store
    reading the ledger back), a prior keeps only where its line lies; without one it keeps its dict.
    With a `src`, a prior's line in the common canonical shape is not decoded at all (`_quick_prior`)."""
    if src is not None:
        folded = fold_blocks(blocks_of(data), src)
    else:
        fresh = State()
        folded = fresh if each_clean(data, lambda rec, _at, _n: apply(fresh, rec)) else None
    if folded is not None:
        return folded
    st = State()  # a deviation: start over strictly (rare; names the bad line)
    for rec, at, n in parse_strict(data, name, 1):
        apply_at(st, rec, at, n, src)
    return st


def fold_blocks(blocks: Iterable[Tuple[bytes, int]], src: Any) -> Optional[State]:
    """`fold_data` of a ledger handed over a block at a time — (bytes of whole lines, their offset in
    the ledger) — for a reader that never holds it whole; None at the first deviation from the
    clean form (an iterator that raises ValueError says there was one): the caller then reads the
    ledger whole and `fold_data` decides, naming a bad line."""
    st = State()
    scan = scanner()
    return st if each_block(blocks, lambda block, start: _fold_block(st, block, start, scan, src)) else None


def fold_tail(st: State, data: bytes, base: int, src: Any, name: str = LEDGER_NAME,
              first_line: int = 1) -> List[Dict[str, Any]]:
    """Fold `data` — the ledger's bytes from offset `base` on — onto `st`; returns its records.
    Parsed whole before the first is applied, so a damaged tail leaves `st` untouched."""
    spans = parse_spans(data, name, first_line)
    for rec, at, n in spans:
        apply_at(st, rec, base + at, n, src)
    return [rec for rec, _at, _n in spans]


_ONE: Dict[Any, Any] = {}  # one string object per distinct namespace across the fold


def apply_at(st: State, rec: Dict[str, Any], at: int, n: int, src: Any) -> None:
    """`apply`, and when `rec` became a prior's record, keep where its line is instead of the dict (`pack`)."""
    apply(st, rec)
    if src is not None and rec.get("t") == "prior":
        pack(st, rec, at, n, src)


def pack(st: State, rec: Dict[str, Any], at: int, n: int, src: Any) -> None:
    """If `rec` (at `at`, `n` bytes long, in the ledger `src` reads back) is its prior's record now, keep
    where its line is and the few fields every verb reads instead of the dict (PriorState)."""
    pid = rec.get("id")
    p = st.priors.get(pid) if type(pid) is str else None
    if p is None or p[5] is not rec:
        return
    f = rec.get("facets")
    ns = rec.get("ns")
    if type(ns) is str:
        ns = _ONE.setdefault(ns, ns)
    ref = rec.get("scope_ref")
    p[9] = ref if isinstance(ref, str) else None  # (`p.scope_ref` of the record)
    p[6], p[7], p[8], p[10], p[11] = (at, n), f if id(f) in _SHARED_IDS else None, ns, rec.get("review_every"), src
    p[5] = None


# ------------------------------------------------------------------ a prior's line, read without decoding it
#
# Most ledger bytes are priors' lines, whose claim and evidence the fold never reads: a line in the shape the keeper
# writes (ledger_parse.line_shapes) is matched as text, no dict built; any other line is decoded.
# A property test holds the two ways to the same folded state on any ledger.

_FACETS_TEXT: Dict[str, Dict[str, Any]] = {}  # a facets object's text → its shared dict


def _fold_block(st: State, block: bytes, base: int, scan: Any, src: Any) -> bool:
    """`each_clean`'s block loop with the fold inlined, and a prior's canonical line read as text."""
    text, bfind = lines_of(block)
    find, starts = text.find, text.startswith
    prior_line, event_line = line_shapes(len(block.translate(None, SHAPE_CARE)) == len(block))
    i, n, b, at = 0, len(text), 0, base
    while i < n:
        j = find("\n", i)  # (the block ends with one)
        if bfind is None:
            at, ln = base + i, j - i
        else:
            e = bfind(b"\n", b)
            at, ln = base + b, e - b
            b = e + 1
        if starts('{"action":', i):
            m = event_line(text, i, j)
            if m is not None:
                _quick_event(st, m.groups())
        else:
            m = prior_line(text, i, j)
            if m is not None:
                _quick_prior(st, m.groups(), at, ln, src, scan)
        if m is None:
            if text[i] != "{":
                return False
            rec, e = scan(text, i)
            if e != j or type(rec) is not dict:
                return False
            apply(st, rec)
            if rec.get("t") == "prior":
                pack(st, rec, at, ln, src)
        i = j + 1
    return True


def _quick_prior(st: State, g: Tuple[Any, ...], at: int, ln: int, src: Any, scan: Any) -> None:
    """`apply` and `_pack` of a prior's line from the groups its `_prior_shape` pattern matched (None: absent)."""
    born, facets, pid, ns, redacted, every, sh, ref = g
    idx = st.records
    st.records = idx + 1
    if born is not None:
        _block_run(st, born, idx)
    f = None if facets is None else facets_of(facets, scan)
    if ns is not None:
        ns = _ONE.setdefault(ns, ns)
    was = st.priors.get(pid)
    _place_prior(st, pid, born, redacted is not None, sh, None,
                 ((at, ln), f if id(f) in _SHARED_IDS else None, ns, ref, None if every is None else int(every), src))
    _after_prior(st, pid, was, f, ns, idx)


def _quick_event(st: State, g: Tuple[Any, ...]) -> None:
    """`apply` of an event's line from the groups its `_event_shape` pattern matched (None: absent)."""
    action, pid, run, sh, to = g
    idx = st.records
    st.records = idx + 1
    if run is not None:
        _block_run(st, run, idx)
    _on_event(st, pid, action, run, sh, to, idx)


def facets_of(text: str, scan: Any) -> Dict[str, Any]:
    """The facets a line's text spells, as the one dict shared by every equal set (`_share_facets`)."""
    f = _FACETS_TEXT.get(text)
    if f is None:
        holder = {"facets": scan(text, 0)[0]}
        _share_facets(holder)
        f = holder["facets"]
        if id(f) in _SHARED_IDS and len(_FACETS_TEXT) < _SHARED_MAX:
            _FACETS_TEXT[text] = f
    return f


def fold(records: Iterable[Dict[str, Any]]) -> State:
    st = State()
    for rec in records:
        apply(st, rec)
    return st


def apply(st: State, rec: Dict[str, Any]) -> None:
    """Advance the state by one ledger record.

    This runs once per ledger line on a first call (216k times at 100k priors), so it works on the
    prior's list by position and inlines what a property or a method call would cost."""
    idx = st.records
    st.records = idx + 1
    get = rec.get
    t = get("t")
    if "same_as" in rec or "distinct_from" in rec or "unseen" in rec:
        note(st, rec)  # what a person said is one finding, what an agent said is not; what a run never saw
    if "shapes" in rec:
        note_shapes(st, rec)  # a seal's shapes of the definitions its priors were judged on (core/moves.py)
    block = t in BLOCK_TYPES
    for v in (get("run"), get("born")):
        if type(v) is not str:
            continue  # no run id: numbers 0, starts no block
        if block:
            _block_run(st, v, idx)
            continue
        n = _RUN_NUMBER.get(v)
        if n is None:
            n = _RUN_NUMBER[v] = id_number(RUN_RE, v)
        if n > st.max_run:
            st.max_run = n
    if t == "event":
        pid = get("id")
        if type(pid) is str:
            _on_event(st, pid, get("action"), get("run"), get("scope_hash"), get("to"), idx)
    elif t == "prior":
        pid = get("id")
        if type(pid) is not str:
            return
        was = st.priors.get(pid)
        _apply_prior(st, rec, pid)
        _after_prior(st, pid, was, rec.get("facets"), rec.get("ns"), idx)
    else:
        _apply_other(st, rec, t, idx)


def _on_event(st: State, pid: str, action: Any, run: Any, sh: Any, to: Any, idx: int) -> None:
    """An event naming `pid`, from the values the fold reads of it, and the lessons loop after it."""
    if action == "decide":
        st.loop["decided"][pid] = idx
    p = st.priors.get(pid)
    if p is None:
        return
    was = p[1] in INJECTABLE
    _apply_event(st, p, action, run, sh, to)
    if was != (p[1] in INJECTABLE):
        spans = st.loop["spans"].get(pid)
        if spans is not None:
            spans.append(idx + 1)


def _block_run(st: State, run: str, idx: int) -> None:
    """A run id on a line of a run's block (a prior's `born`, an event's or call's `run`): the
    highest run number so far, and where that run's block starts."""
    n = _RUN_NUMBER.get(run)
    if n is None:
        n = _RUN_NUMBER[run] = id_number(RUN_RE, run)
    if n > st.max_run:
        st.max_run = n
    first = st.loop["first"]
    if run not in first:
        first[run] = idx


def _after_prior(st: State, pid: str, was: Optional[PriorState], facets: Any, ns: Any, idx: int) -> None:
    """The lessons loop after a prior record made `pid` (`was`: its state before, None if new)."""
    if was is None:
        _new_lesson(st, pid, facets, ns, idx)
        return
    spans = st.loop["spans"].get(pid)
    if spans is not None and (was[1] in INJECTABLE) != (st.priors[pid][1] in INJECTABLE):
        spans.append(idx + 1)


def apply_priors(st: State, rec: Dict[str, Any]) -> None:
    """`apply`, less what only the lessons loop (`State.loop`), the id counters and the calls are: the priors,
    the run order and the commits advance exactly as `apply` advances them. For a reader that folds the whole
    ledger record by record and reads nothing else (`priors history`: ~30 % less fold per line); the state it
    leaves is not the ledger's. Keep it beside `apply`: a new way a record moves a prior goes into both."""
    get = rec.get
    t = get("t")
    if t == "event":
        pid = get("id")
        p = st.priors.get(pid) if type(pid) is str else None
        if p is not None:
            _apply_event(st, p, get("action"), get("run"), get("scope_hash"), get("to"))
    elif t == "prior":
        pid = get("id")
        if type(pid) is str:
            _apply_prior(st, rec, pid, False)
    elif t == "call":
        st.note_run(get("run"))
    elif t == "run" and get("action") == "commit":
        st.note_run(run := get("run"))
        if isinstance(run, str) and run not in st.commits:
            st.commits[run] = rec


def _apply_other(st: State, rec: Dict[str, Any], t: Any, idx: int) -> None:
    """Calls, scores, commits and the lessons loop's records."""
    loop = st.loop
    if t == "call":
        st.note_run(rec.get("run"))
        call = CallState(rec, bool(rec.get("redacted") is True))
        st.calls.append(call)
        _await_decision(st, call)
    elif t == "score":
        st.scored = True
        loop["scores"].append([idx, rec])
    elif t == "run" and rec.get("action") == "commit":
        st.note_run(rec.get("run"))
        run = rec.get("run")
        if isinstance(run, str) and run not in st.commits:
            st.commits[run] = rec
            loop["commit_at"][run] = idx
    elif t == "injected":
        run, ids = rec.get("run"), rec.get("ids")
        if isinstance(run, str) and isinstance(ids, list):
            loop["injected"][run] = [x for x in ids if isinstance(x, str)]
    elif t == "learned":
        runs = rec.get("runs")
        if isinstance(runs, list):
            learned = loop["learned"]
            for r in runs:
                if isinstance(r, str):
                    learned[r] = idx


_RUN_NUMBER: Dict[str, int] = {}  # run id → its number: a ledger names each run on many lines


def _await_decision(st: State, call: CallState) -> None:
    """Index an unresolved call under the prior it conflicts with: a decide on that prior resolves it."""
    cw = call.conflicts_with
    if not call.resolved and type(cw) is str:
        st.awaiting.setdefault(cw, []).append(call)


def index_calls(st: State) -> None:
    """Rebuild `st.awaiting` from `st.calls` (a state read back from a snapshot keeps only the calls)."""
    st.awaiting = {}
    for call in st.calls:
        _await_decision(st, call)


def _new_lesson(st: State, pid: str, f: Any, ns: Any, idx: int) -> None:
    """A prior's first record: a run-start prior joins its namespace's lessons, shown from the next record on."""
    if not isinstance(f, dict) or f.get("activation") != "run-start":
        return
    try:
        hash(ns)
    except TypeError:
        return
    st.loop["lessons"].setdefault(ns, []).append(pid)
    st.loop["spans"][pid] = [idx + 1] if st.priors[pid][1] in INJECTABLE else []


def forget_lesson(st: State, pid: str) -> None:
    """`pid`'s prior lines became tombstones (a redaction): as in a fresh fold, it was never a lesson."""
    loop = st.loop
    if loop["spans"].pop(pid, None) is None:
        return
    for ids in loop["lessons"].values():
        if pid in ids:
            ids.remove(pid)


_SHARED_FACETS: Dict[Any, Dict[str, Any]] = {}  # content → one dict: a ledger has a handful of distinct facet sets
_SHARED_IDS = set()  # ids of those dicts: facets kept beside a packed record are always one of them
_SHARED_MAX = 4096


def _share_facets(rec: Dict[str, Any]) -> None:
    """Point the record at the one dict holding its facets (equal content, equal dict). 100k priors carry a
    handful of distinct facet sets; one dict each instead of one per record saves ~60 MB on a first call at
    100k. Nothing mutates a record's facets (the fold cache already hands out shared ones): sharing is invisible."""
    f = rec.get("facets")
    if type(f) is not dict or id(f) in _SHARED_IDS:
        return  # (not a plain object, or the shared one already: a line read as text is handed it)
    key = tuple(f.items())
    try:
        shared = _SHARED_FACETS.get(key)
    except TypeError:  # a facet value that is a list or an object: kept as it is
        return
    if shared is None:  # (found: equal to text-only facets, and only text equals text — `True == 1` cannot match)
        if len(_SHARED_FACETS) >= _SHARED_MAX or not all(type(k) is str and type(v) is str for k, v in key):
            return
        shared = _SHARED_FACETS[key] = f
        _SHARED_IDS.add(id(f))
    rec["facets"] = shared


def _apply_prior(st: State, rec: Dict[str, Any], pid: str, share: bool = True) -> None:
    if share:  # (a fold that keeps its state; history's drops it, and sharing only saves memory)
        _share_facets(rec)
    _place_prior(st, pid, rec.get("born"), rec.get("redacted") is True, rec.get("scope_hash"), rec)


def _place_prior(st: State, pid: str, born: Any, redacted: bool, sh: Any, rec: Optional[Dict[str, Any]],
                 packed: Tuple[Any, ...] = (None, None, None, None, None, None)) -> None:
    """`pid`'s new state after a prior record: open as of the latest run, or redacted (a tombstone).
    `packed`: where its line lies and what is kept beside it (PriorState.LAYOUT's last six), when
    the record itself is not kept."""
    digits = pid[2:]  # `P-` and four to eighteen ASCII digits (PRIOR_RE), without a regex per record
    n = int(digits) if pid[:2] == "P-" and 4 <= len(digits) <= 18 and digits.isascii() and digits.isdigit() else 0
    if n > st.max_prior:
        st.max_prior = n
    if type(born) is str and born not in st.run_pos:
        st.note_run(born)
    if redacted:
        st.priors[pid] = PriorState((pid, "redacted", None, 0, -1, rec) + packed)
        return
    runs = st.runs_order  # (`last_run_idx`, written out: this runs once per prior)
    st.priors[pid] = PriorState((pid, "open", sh if type(sh) is str else None, 0, st.run_pos[runs[-1]] if runs else -1, rec)
                                + packed)


def _apply_event(st: State, p: PriorState, action: Any, run: Any, sh: Any, to: Any) -> None:
    """An event on the prior `p` it names, from its `action`, `run`, `scope_hash` and `to`.
    Positions: 1 status, 2 scope_hash, 3 miss, 4 human_idx."""
    if type(run) is str and run not in st.run_pos:
        st.note_run(run)
    if action == "scope-missing":
        p[3] += 1
    elif action == "disposition":
        if p[1] in BINDING:
            return  # a person's binding decision is absolute: no agent verdict moves it (docs/protocol.md)
        p[3] = 0
        if type(sh) is str and sh != p[2]:  # (an equal hash keeps the string held: one copy per prior, not two)
            p[2] = sh
        p[1] = "open" if to in ("still-open", "reaffirmed") else to if type(to) is str else "open"
    elif action == "decide":
        p[3] = 0
        p[1] = "open" if to == "reopen" else "accepted" if to == "keep" else to if type(to) is str else "open"
        p[4] = st.last_run_idx
        for call in st.awaiting.pop(p[0], ()):
            call.resolved = True
    elif action == "redact":
        p[1] = "redacted"
    elif action == MOVED:  # the code moved: `to` is its new ref (core/moves.py)
        move(p, to, sh)


def named_in(records: Iterable[Dict[str, Any]]) -> Dict[str, bool]:
    """The prior ids whose state appended records can change — a record changes only the prior it
    names (and the ledger-wide fields: runs, calls, commits) — each with whether a prior record,
    which replaces the whole record, or a `moved` event, which gives it a new ref, was among them."""
    out: Dict[str, bool] = {}
    for r in records:
        t, pid = r.get("t"), r.get("id")
        if t in ("prior", "event") and isinstance(pid, str):
            out[pid] = out.get(pid, False) or t == "prior" or r.get("action") == MOVED
    return out


def review_due(st: State, p: PriorState) -> bool:
    """A review nudge: the prior asked to be re-confirmed every N runs and N runs have passed."""
    every = p.review_every
    if not isinstance(every, int) or isinstance(every, bool):
        return False
    return (len(st.runs_order) - 1 - p.human_idx) >= every


def next_run_id(st: State, run_dirs: Iterable[str]) -> str:
    """One more than the largest run id the ledger or the staging holds — never an id the grammar
    refuses: a ledger whose runs reached the last nine-digit id (by hand; `relevant --run` keeps a
    million ids of room) is an error that says so, not a run no verb could name again."""
    best = st.max_run
    for name in run_dirs:
        best = max(best, id_number(RUN_RE, name))
    if best >= LAST_RUN:
        raise UsageError(f"priors: the ledger holds run-{best}, the last run id there is (run ids have at most nine"
                         " digits), so no run can be numbered after it; nothing was changed")
    return f"run-{best + 1:03d}"


def next_prior_id(max_seen: int) -> str:
    return f"P-{max_seen + 1:04d}"
