"""An open run's staging under `.priors/runs/<run>/`: what `relevant` noted, the dispositions, the
staged priors and the calls for the human — read whole, written a file at a time, judged again at
commit (staging is the agent's to write, so nothing in it is trusted).
"""

from __future__ import annotations

from pathlib import Path

from priors.core.canonical import JSONError, dumps, loads, object_pieces_utf8
from priors.core.errors import UsageError
from priors.core.json_stream import read_object
from priors.core.run_files import ATTEMPTS_FILE, STAGING_FILES, WITHDRAWN_FILE, RunFiles
from priors.core.staged_snapshot import sinks
from priors.core.verdicts import Verdicts, read_verdicts
from priors.store.files import atomic_write, check_inside, discard_tree, file_size, make_dir, read_blocks, read_bytes, remove_tree
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, List, Optional, Tuple


def read_jsonl(path: Path) -> List[Any]:
    """Staging lines; an unparseable line is kept as None so commit can name it malformed."""
    return read_numbered(path)[0]


def read_numbered(path: Path) -> Tuple[List[Any], List[int]]:
    """Staging lines and the line number (from 1) each stands on in the file: blank lines are
    skipped, so a refusal can still name the line a person sees."""
    data = read_bytes(path)
    out: List[Any] = []
    numbers: List[int] = []
    if not data:
        return out, numbers
    for no, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        numbers.append(no)
        try:
            out.append(loads(raw.decode("utf-8")))
        except (UnicodeDecodeError, JSONError):
            out.append(None)
    return out, numbers


def write_jsonl(path: Path, items: Iterable[Any]) -> None:
    """Staging lines, canonical JSON, the whole file written atomically (the verdicts a piece at a time)."""
    if isinstance(items, Verdicts):
        atomic_write(path, (piece.encode("utf-8") for piece in items.text()))
        return
    atomic_write(path, "".join(dumps(x) + "\n" for x in items).encode("utf-8"))


SHARED_FROM = 8 << 20  # bytes of `relevant.json` from which its ids are held as the fold's (a quarter: of the verdicts')


def read_run(paths: Paths, run: str, snapshot: str = "whole", known: Optional[Dict[str, Any]] = None) -> RunFiles:
    """The run's staging as it is on disk (a damaged `relevant.json` is named, with the way out).

    `snapshot` "compact": `relevant.json`'s large lists and scopes are read an item at a time into what
    the run verbs need (core/staged_snapshot.py: ~80 MB of objects at 100k priors on a ledger of open
    findings, never held), its text a block at a time; a text that reader does not take is parsed
    whole, as before, and read the same way. "none": it is read so (and refused as ever), and nothing
    of it kept but that it is there (`withdraw`). `known`: the fold's priors, whose id strings the
    staging's ids are held as (`sinks`) — in a file large enough for it to matter (SHARED_FROM bytes:
    looking 70k ids up costs ~50 ms, where holding them twice costs ~10 MB)."""
    rdir = paths.run_dir(run)
    check_inside(rdir / "relevant.json")  # staging read through a symlink could be anyone's data
    relevant = _relevant_whole(rdir, run) if snapshot == "whole" else _relevant(
        rdir, run, known if file_size(rdir / "relevant.json") >= SHARED_FROM else None, snapshot == "compact")
    disp = read_verdicts(read_blocks(rdir / STAGING_FILES[0]), run,
                         known if file_size(rdir / STAGING_FILES[0]) >= SHARED_FROM // 4 else None)
    staged, esc = (read_numbered(rdir / name) for name in STAGING_FILES[1:])
    rf = RunFiles(run, relevant, disp[0], staged[0], esc[0])
    tried = read_numbered(rdir / ATTEMPTS_FILE)
    rf.attempts = tried[0]
    rf.line_numbers = {"dispositions": disp[1], "staged": staged[1], "escalations": esc[1], "attempts": tried[1]}
    freed = read_bytes(rdir / WITHDRAWN_FILE)
    try:
        ids = loads(freed.decode("utf-8")) if freed is not None else []
    except (UnicodeDecodeError, JSONError):
        ids = []  # (only ever a list of ids the keeper wrote: a damaged one frees nothing)
    rf.freed = [x for x in ids if isinstance(x, str)] if isinstance(ids, list) else []
    return rf


def _relevant_whole(rdir: Path, run: str) -> Optional[Dict[str, Any]]:
    """`relevant.json` parsed whole (None when there is none)."""
    rel_bytes = read_bytes(rdir / "relevant.json")
    if rel_bytes is None:
        return None
    try:
        text = rel_bytes.decode("utf-8")
        rel_bytes = b""  # (not held while it is parsed: an open-heavy run's file is ~20 MB at 100k priors)
        relevant = loads(text)
        text = ""  # (nor its text, twice its size, while the rest of the staging is read)
    except (UnicodeDecodeError, JSONError):
        raise UsageError(f"priors: {rdir / 'relevant.json'} is damaged; `priors abort --run {run}` and reopen") from None
    if not isinstance(relevant, dict):
        raise UsageError(f"priors: {rdir / 'relevant.json'} is not an object; `priors abort --run {run}` and reopen")
    return relevant


def _relevant(rdir: Path, run: str, known: Optional[Dict[str, Any]], keep: bool) -> Optional[Dict[str, Any]]:
    """`relevant.json` with its large lists and scopes read into sinks (`read_run`'s "compact"; not `keep`:
    "none", and {} is answered for a sound one)."""
    blocks = read_blocks(rdir / "relevant.json")
    if blocks is None:
        return None
    got = read_object(blocks, sinks(known, keep))
    if got is None:
        got = _relevant_whole(rdir, run)  # (not a text the block reader takes: refused, or read, as ever)
        if got is None:
            return None
        for key, make in sinks(known, keep).items():
            value, sink = got.get(key), make()
            if isinstance(value, list) and hasattr(sink, "add_all"):
                sink.add_all(value)
                got[key] = sink
            elif isinstance(value, dict) and hasattr(sink, "add_pairs"):
                sink.add_pairs(value)
                got[key] = sink
    return got if keep else {}


def drop_staging(paths: Paths, run: str) -> None:
    """Remove a sealed run's staging, `relevant.json` first: a kill part-way then leaves no snapshot
    beside half the staging, and a retry of `commit` (which compares the ledger's block with what the
    staging would seal, and refuses if it differs: another clone's run of that id) finds nothing to
    compare and only tidies up."""
    rdir = paths.run_dir(run)
    check_inside(rdir)
    first = rdir / "relevant.json"
    if not rdir.is_symlink() and first.is_file():
        try:
            first.unlink()
        except FileNotFoundError:
            pass
    remove_tree(rdir)


def save_staging(paths: Paths, rf: RunFiles, before: Tuple[int, ...]) -> None:
    """Write back what a verb staged: the staged priors, the calls and (a third length in `before`)
    what the door refused, each only when it grew past `before` (their lengths when the verb read them)."""
    rdir = paths.run_dir(rf.run)
    if len(rf.staged) != before[0]:
        write_jsonl(rdir / "staged.jsonl", rf.staged)
    if len(rf.escalations) != before[1]:
        write_jsonl(rdir / "escalations.jsonl", rf.escalations)
    if len(before) > 2 and len(rf.attempts) != before[2]:
        write_jsonl(rdir / ATTEMPTS_FILE, rf.attempts)


class _Encoded:
    """A sink of `read_object`: a list's items kept as their canonical JSON text in UTF-8, a run of items
    at a time (each run one piece: its items joined by commas), the items themselves let go."""

    __slots__ = ("texts",)

    def __init__(self) -> None:
        self.texts: List[bytes] = []

    def add_all(self, items: Any) -> None:
        if items:
            self.texts.append(dumps(list(items))[1:-1].encode("utf-8"))


class _EncodedPairs:
    """A sink of `read_object`: an object's pairs kept as their canonical JSON text in UTF-8 while they come
    as the keeper writes them (each run's keys after the last run's, plain ASCII: the runs' texts in
    file order are then the canonical text), a run of pairs at a time; any other object is held as the
    dict the parser makes."""

    __slots__ = ("texts", "last", "d")

    def __init__(self) -> None:
        self.texts: List[bytes] = []
        self.last: Optional[str] = None
        self.d: Optional[Dict[str, Any]] = None

    def add_pairs(self, pairs: Dict[str, Any]) -> None:
        if self.d is None:
            if not pairs:
                return
            first, last = min(pairs), max(pairs)  # (a run's own pairs the encoder sorts)
            if all(k.isascii() for k in pairs) and (self.last is None or self.last < first):
                self.texts.append(dumps(pairs)[1:-1].encode("utf-8"))
                self.last = last
                return
            self.d = loads("{" + b",".join(self.texts).decode("utf-8") + "}")
            self.texts = []
        self.d.update(pairs)

    def text(self) -> bytes:
        return dumps(self.d).encode("utf-8") if self.d is not None else b"{" + b",".join(self.texts) + b"}"


MOVED_LISTS = ("verify", "inject", "floors", "nudges", "settled_here")  # a snapshot's long lists, kept as text


def moved_relevant(paths: Paths, old: str, new: str) -> Optional[List[bytes]]:
    """`old`'s `relevant.json` as `carry` writes it for `new` — the canonical JSON of its object with `run`
    set to `new`, and a line feed — in pieces (None when there is none): its long lists read an item at a
    time and kept as their text, not as objects (an open-heavy run's file is ~80 MB of them at 100k
    priors). A text the block reader does not take is parsed whole, as before, refused or read alike."""
    rdir = paths.run_dir(old)
    check_inside(rdir / "relevant.json")
    blocks = read_blocks(rdir / "relevant.json")
    if blocks is None:
        return None
    kept: Dict[str, Any] = {key: _Encoded for key in MOVED_LISTS}
    kept["scopes"] = _EncodedPairs
    got = read_object(blocks, kept)
    if got is None:
        whole = _relevant_whole(rdir, old)
        return None if whole is None else [(dumps(dict(whole, run=new)) + "\n").encode("utf-8")]
    got["run"] = new
    return object_pieces_utf8({k: v.texts if isinstance(v, _Encoded) else v.text() if isinstance(v, _EncodedPairs)
                               else dumps(v).encode("utf-8") for k, v in got.items()}, b"\n")


def move_staging(paths: Paths, old: str, new: str, relevant: Any, files: List[Any]) -> None:
    """Write a run's staging under a new run id, its stored snapshot last (it is what makes the run
    open), then drop the old folder — the new one is taken back if that fails. Caches (`spans.json`)
    are left behind: they are rebuilt when needed. `relevant`: the snapshot's text in pieces
    (`moved_relevant`); `files`: each staging file's lines, or None for a file not written."""
    rdir = paths.run_dir(new)
    make_dir(rdir)
    tried = read_bytes(paths.run_dir(old) / ATTEMPTS_FILE)  # what the agent tried goes with the run, as it was
    try:
        for name, items in zip(STAGING_FILES, files):
            if items is not None:
                write_jsonl(rdir / name, items)
        if tried:
            atomic_write(rdir / ATTEMPTS_FILE, tried)
        atomic_write(rdir / "relevant.json", relevant)
        remove_tree(paths.run_dir(old))
    except BaseException:
        discard_tree(rdir)
        raise
