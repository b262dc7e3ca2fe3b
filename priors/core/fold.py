"""Fold the ledger into current state: pure functions over parsed lines.
"""

from __future__ import annotations

from operator import itemgetter

from priors.core.errors import DamagedLedger
from priors.core.plain import Plain
from priors.core.vocabulary import BINDING, BLOCK_TYPES, INJECTABLE, PRIOR_RE, REST_AFTER, RUN_RE, id_number, prior_number  # noqa: F401 (re-exported to callers of the fold)

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
    are read and set by name. Make one with `new_prior`.
    """

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
    _packed = _field(6, "(offset, length) of the ledger line holding the record, when known")
    _facets = _field(7, "the record's facets, kept beside the packed record")
    _ns = _field(8, "the record's ns, kept beside the packed record")
    _ref = _field(9, "the record's scope_ref, kept beside the packed record")
    _every = _field(10, "the record's review_every, kept beside the packed record")
    _src = _field(11, "where the packed record is read from: any object with `inflate(prior) -> record`")

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
        c = self.rec.get("claim")
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
        return self[3] >= REST_AFTER and self[1] not in BINDING and self[1] != "redacted"

    def copy(self) -> "PriorState":  # type: ignore[override]
        return PriorState(self)


def new_prior(id: str, rec: Optional[Dict[str, Any]], status: str, scope_hash: Optional[str],
              miss: int = 0, human_idx: int = -1) -> PriorState:
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
    naming it (`run`/`born` of a prior, event, call or run record: where its block starts);
    `commit_at`: run → its first commit record; `lessons`: namespace → run-start prior ids, in order
    of their first prior record; `spans`: lesson id → sorted boundaries of the positions at which a
    run starting there was shown it (even entries open a span, odd ones close it); `injected`:
    run → the ids of its last `injected` record; `scores`: [position, record] of every score;
    `decided`: prior id → its last human decide; `learned`: run → the last `learned` record naming it.
    """
    return {"first": {}, "commit_at": {}, "lessons": {}, "spans": {}, "injected": {}, "scores": [],
            "decided": {}, "learned": {}}


class State(Plain):
    """The folded ledger. `scored`: any score record. `records`: how many were folded — fewer than
    the ledger has lines only if some are blank. `loop`: what the lessons loop reads (`new_loop`)."""

    __slots__ = ("priors", "runs_order", "run_pos", "calls", "commits", "max_prior", "max_run", "scored", "records",
                 "loop", "awaiting")
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
        self.awaiting: Dict[str, List[CallState]] = {}  # prior id → its unresolved calls, in order

    def fields(self) -> tuple:
        return self.__slots__[:-len(self.DERIVED)]  # equality by what the ledger says, not by the index

    def note_run(self, run: Any) -> None:
        if isinstance(run, str) and run not in self.run_pos:
            self.run_pos[run] = len(self.runs_order)
            self.runs_order.append(run)

    @property
    def last_run_idx(self) -> int:
        return len(self.runs_order) - 1

    def in_ns(self, ns: str) -> Iterable[PriorState]:
        return (p for p in self.priors.values() if p.ns == ns)


LEDGER_NAME = ".priors/ledger.jsonl"
BLOCK = 1 << 20  # the clean parse decodes the ledger a block of about this many bytes at a time


def parse_lines(data: bytes, name: str = LEDGER_NAME) -> List[Dict[str, Any]]:
    """Each non-blank line must be one JSON object in UTF-8; anything else names its line.

    The clean parse without the byte offsets (`parse_spans`): the timeline readers (show,
    history, reflect) never use them."""
    out: List[Dict[str, Any]] = []
    if _each_clean(data, None, out):
        return out
    return [rec for rec, _at, _n in _parse_strict(data, name)]


def parse_spans(data: bytes, name: str = LEDGER_NAME, first_line: int = 1) -> List[Tuple[Dict[str, Any], int, int]]:
    """(record, byte offset, byte length) of each record line — the line without its newline.

    The clean parse first; on any deviation the strict line-by-line parse decides and names the
    line (counting from `first_line`, for a tail whose earlier lines were checked already)."""
    out: List[Tuple[Dict[str, Any], int, int]] = []
    if _each_clean(data, lambda rec, at, n: out.append((rec, at, n))):
        return out
    return _parse_strict(data, name, first_line)


def fold_data(data: bytes, name: str = LEDGER_NAME, src: Any = None) -> State:
    """`fold(parse_lines(data))` without holding every parsed record at once: each record is folded
    as it is decoded and dropped. With a `src` (anything with `inflate(prior) -> record`: the store
    reading the ledger back), a prior keeps only where its line lies; without one it keeps its dict."""
    st = State()

    def sink(rec: Dict[str, Any], at: int, n: int) -> None:  # one call per line: apply_at, inlined
        apply(st, rec)
        if src is not None and rec.get("t") == "prior":
            _pack(st, rec, at, n, src)

    if _each_clean(data, sink):
        return st
    st = State()  # a deviation: start over strictly (rare; names the bad line)
    for rec, at, n in _parse_strict(data, name, 1):
        apply_at(st, rec, at, n, src)
    return st


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
    """`apply`, and when `rec` became a prior's record, keep where its line is instead of the dict."""
    apply(st, rec)
    if src is not None and rec.get("t") == "prior":
        _pack(st, rec, at, n, src)


def _pack(st: State, rec: Dict[str, Any], at: int, n: int, src: Any) -> None:
    pid = rec.get("id")
    p = st.priors.get(pid) if type(pid) is str else None
    if p is None or p[5] is not rec:
        return
    f = rec.get("facets")
    ns = rec.get("ns")
    if type(ns) is str:
        ns = _ONE.setdefault(ns, ns)
    p[9] = p.scope_ref
    p[6], p[7], p[8], p[10], p[11] = (at, n), f if id(f) in _SHARED_IDS else None, ns, rec.get("review_every"), src
    p[5] = None


def _each_clean(data: bytes, sink: Any, out: Optional[List[Dict[str, Any]]] = None) -> bool:
    """Hand `sink(record, offset, length)` each line's object, a block of lines at a time — or,
    with no sink, append each object to `out`; False at the first deviation (what was handed over
    so far is then to be discarded): a line that is not exactly one JSON object, a missing final
    newline, bad UTF-8, NaN, ..."""
    scan = _scanner()
    start, n = 0, len(data)
    try:
        while start < n:
            end = data.find(b"\n", min(start + BLOCK, n - 1))
            if end < 0:
                return False  # no final newline: the strict parse decides
            block = data[start:end + 1]
            if sink is None:
                if not _scan_records(block, scan, out.append):  # type: ignore[union-attr]
                    return False
            elif not _scan_block(block, scan, sink, start):
                return False
            start = end + 1
    except (ValueError, RecursionError, StopIteration):  # UnicodeDecodeError is a ValueError
        return False
    return True


def _scanner() -> Any:
    """The json module's C scanner, called directly: `scan(text, i)` → (object, end). It is what
    `raw_decode` calls after a Python-level wrapper; skipping that wrapper takes a quarter off
    decoding a prior's line. NaN and the infinities are refused (as `canonical.loads` refuses them)."""
    import json

    from priors.core.canonical import _reject_constant

    return json.JSONDecoder(parse_constant=_reject_constant).scan_once


def _scan_block(block: bytes, scan: Any, sink: Any, base: int) -> bool:
    """Lines decoded as one string: object after object, each followed at once by its newline. A
    clean line holds no newline inside, so the k-th object is the k-th line of the bytes: that gives
    byte offsets when some text is not ASCII (characters and bytes then differ)."""
    text = block.decode("utf-8")
    raws = None if len(text) == len(block) else block.split(b"\n")  # equal lengths: all ASCII
    find = text.find
    i, n, k, at = 0, len(text), 0, base
    while i < n:
        if text[i] != "{":
            return False
        obj, j = scan(text, i)
        if j >= n or text[j] != "\n" or type(obj) is not dict or find("\n", i, j) >= 0:
            return False
        if raws is None:
            sink(obj, base + i, j - i)
        else:
            ln = len(raws[k])
            sink(obj, at, ln)
            at += ln + 1
            k += 1
        i = j + 1
    return True


def _scan_records(block: bytes, scan: Any, append: Any) -> bool:
    """`_scan_block` for a reader that keeps only the records (no offsets, no call per line)."""
    text = block.decode("utf-8")
    find = text.find
    i, n = 0, len(text)
    while i < n:
        if text[i] != "{":
            return False
        obj, j = scan(text, i)
        if j >= n or text[j] != "\n" or type(obj) is not dict or find("\n", i, j) >= 0:
            return False
        append(obj)
        i = j + 1
    return True


def _parse_strict(data: bytes, name: str, first_line: int = 1) -> List[Tuple[Dict[str, Any], int, int]]:
    from priors.core.canonical import JSONError, loads

    records: List[Tuple[Dict[str, Any], int, int]] = []
    at = 0
    for no, raw in enumerate(data.split(b"\n"), first_line):
        here, at = at, at + len(raw) + 1
        if not raw.strip():
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DamagedLedger(f"priors: {name} line {no}: not valid UTF-8 — the ledger is damaged; nothing was written") from None
        try:
            obj = loads(text)
        except JSONError as exc:
            hint = " (a merge-conflict marker?)" if text.startswith(("<<<<<<<", "=======", ">>>>>>>")) else ""
            raise DamagedLedger(
                f"priors: {name} line {no}: not one JSON object{hint}: {exc} — the ledger is damaged; nothing was written"
            ) from None
        if not isinstance(obj, dict):
            raise DamagedLedger(f"priors: {name} line {no}: a JSON {type(obj).__name__}, not an object — the ledger is damaged; nothing was written")
        records.append((obj, here, len(raw)))
    return records


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
    block = t in BLOCK_TYPES
    for v in (get("run"), get("born")):
        if type(v) is not str:
            continue  # no run id: numbers 0, starts no block
        n = _RUN_NUMBER.get(v)
        if n is None:
            n = _RUN_NUMBER[v] = id_number(RUN_RE, v)
        if n > st.max_run:
            st.max_run = n
        if block:
            first = st.loop["first"]
            if v not in first:
                first[v] = idx
    if t == "event":
        pid = get("id")
        if type(pid) is not str:
            return
        action = get("action")
        if action == "decide":
            st.loop["decided"][pid] = idx
        p = st.priors.get(pid)
        if p is None:
            return
        was = p[1] in INJECTABLE
        _apply_event(st, p, rec, action)
        if was != (p[1] in INJECTABLE):
            spans = st.loop["spans"].get(pid)
            if spans is not None:
                spans.append(idx + 1)
    elif t == "prior":
        pid = get("id")
        if type(pid) is not str:
            return
        p = st.priors.get(pid)
        _apply_prior(st, rec, pid)
        if p is None:
            _new_lesson(st, pid, rec, idx)
        else:
            spans = st.loop["spans"].get(pid)
            if spans is not None and (p[1] in INJECTABLE) != (st.priors[pid][1] in INJECTABLE):
                spans.append(idx + 1)
    else:
        _apply_other(st, rec, t, idx)


def apply_priors(st: State, rec: Dict[str, Any]) -> None:
    """`apply`, less what only the lessons loop (`State.loop`), the id counters and the calls are:
    the priors, the run order and the commits advance exactly as `apply` advances them. For a
    reader that folds the whole ledger record by record and reads nothing else (`priors
    history`: ~30 % less fold per line); the state it leaves is not the ledger's. Keep it beside
    `apply`: a new way a record moves a prior, a run or a commit goes into both."""
    get = rec.get
    t = get("t")
    if t == "event":
        pid = get("id")
        p = st.priors.get(pid) if type(pid) is str else None
        if p is not None:
            _apply_event(st, p, rec, get("action"))
    elif t == "prior":
        pid = get("id")
        if type(pid) is str:
            _apply_prior(st, rec, pid, False)
    elif t == "call":
        st.note_run(get("run"))
    elif t == "run" and get("action") == "commit":
        run = get("run")
        st.note_run(run)
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


def _new_lesson(st: State, pid: str, rec: Dict[str, Any], idx: int) -> None:
    """A prior's first record: a run-start prior joins its namespace's lessons, shown from the next record on."""
    f = rec.get("facets")
    if not isinstance(f, dict) or f.get("activation") != "run-start":
        return
    ns = rec.get("ns")
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
    """Point the record at the one dict holding its facets (equal content, equal dict).

    100k priors carry a handful of distinct facet sets; one dict each instead of one per record
    saves ~60 MB on a first call at 100k. Nothing mutates a record's facets (the fold cache
    already hands out shared ones), so sharing is invisible."""
    f = rec.get("facets")
    if type(f) is not dict:
        return
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
    digits = pid[2:]  # `P-` and four or more ASCII digits (PRIOR_RE), without a regex per record
    n = int(digits) if pid[:2] == "P-" and len(digits) >= 4 and digits.isascii() and digits.isdigit() else 0
    if n > st.max_prior:
        st.max_prior = n
    born = rec.get("born")
    if type(born) is str and born not in st.run_pos:
        st.note_run(born)
    if rec.get("redacted") is True:
        st.priors[pid] = PriorState((pid, "redacted", None, 0, -1, rec, None, None, None, None, None, None))
        return
    sh = rec.get("scope_hash")
    st.priors[pid] = PriorState((pid, "open", sh if type(sh) is str else None, 0, len(st.runs_order) - 1, rec,
                                 None, None, None, None, None, None))


def _apply_event(st: State, p: PriorState, rec: Dict[str, Any], action: Any) -> None:
    """An event on the prior `p` it names. Positions: 1 status, 2 scope_hash, 3 miss, 4 human_idx."""
    run = rec.get("run")
    if type(run) is str and run not in st.run_pos:
        st.note_run(run)
    if action == "scope-missing":
        p[3] += 1
    elif action == "disposition":
        if p[1] in BINDING:
            return  # a person's binding decision is absolute: no agent verdict moves it (docs/protocol.md)
        p[3] = 0
        sh = rec.get("scope_hash")
        if type(sh) is str:
            p[2] = sh
        to = rec.get("to")
        p[1] = "open" if to in ("still-open", "reaffirmed") else to if type(to) is str else "open"
    elif action == "decide":
        to = rec.get("to")
        p[3] = 0
        p[1] = "open" if to == "reopen" else "accepted" if to == "keep" else to if type(to) is str else "open"
        p[4] = len(st.runs_order) - 1
        for call in st.awaiting.pop(p[0], ()):
            call.resolved = True
    elif action == "redact":
        p[1] = "redacted"


def named_in(records: Iterable[Dict[str, Any]]) -> Dict[str, bool]:
    """The prior ids whose state appended records can change — a record changes only the prior it
    names (and the ledger-wide fields: runs, calls, commits) — each with whether a prior record,
    which replaces the whole record, was among them."""
    out: Dict[str, bool] = {}
    for r in records:
        t, pid = r.get("t"), r.get("id")
        if t in ("prior", "event") and isinstance(pid, str):
            out[pid] = out.get(pid, False) or t == "prior"
    return out


def review_due(st: State, p: PriorState) -> bool:
    """A review nudge: the prior asked to be re-confirmed every N runs and N runs have passed."""
    every = p.review_every
    if not isinstance(every, int) or isinstance(every, bool):
        return False
    return (len(st.runs_order) - 1 - p.human_idx) >= every


def next_run_id(st: State, run_dirs: Iterable[str]) -> str:
    best = st.max_run
    for name in run_dirs:
        best = max(best, id_number(RUN_RE, name))
    return f"run-{best + 1:03d}"


def next_prior_id(max_seen: int) -> str:
    return f"P-{max_seen + 1:04d}"


def scope_state(p: PriorState, scopes: Dict[str, str]) -> Tuple[str, Optional[str]]:
    """(missing|unchanged|changed, the snapshot's hash when present)."""
    ref = p.scope_ref
    if ref is None or ref not in scopes:
        return "missing", None
    cur = scopes[ref]
    return ("unchanged" if cur == p.scope_hash else "changed"), cur
