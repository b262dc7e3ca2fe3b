"""What leaves the repository: `priors export` — the live lessons as a JSON bundle, or the ledger's
findings as SARIF 2.1.0 for code scanning (the mapping is core/sarif_out.py; this module reads the
ledger and, for each file a finding points at, its lines and definitions as they are now) — to
standard output or to a file a person names (never one of the keeper's own).
"""

from __future__ import annotations

from itertools import chain

from priors import __version__
from priors.core.answer import Answer
from priors.core.canonical import JSONError, loads
from priors.core.errors import UsageError
from priors.core.sarif_out import SarifFacts, SarifLog
from priors.core.spelling import nearest
from priors.ops.lessons import export_lessons
from priors.snapshot.anchors import line_spans
from priors.store.files import atomic_write, read_bytes
from priors.store.ledger import load_ledger, note_records, read_ledger_bytes
from priors.store.paths import Paths, output_target, require_init

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from pathlib import Path
    from typing import Any, Dict, Iterable, Optional

    from priors.core.fold import State


def export(paths: Paths, ns: Optional[str], typ: Optional[str], sarif: bool, current: bool,
           out: Optional[str]) -> Answer:
    """The bundle (or with `sarif` the SARIF log) printed, or written to `out` (`-`: printed)."""
    require_init(paths)
    target = output_target("export", "-o", out, paths.root) if out is not None and out != "-" else None
    if sarif:
        if typ is not None:
            raise UsageError("priors export: --type selects lessons; --sarif exports findings — give one or the other")
        log = sarif_log(paths, ns, current)
        made, what = log.pieces, "finding"
    else:
        if current:
            raise UsageError("priors export: --current goes with --sarif")
        bundle = export_lessons(paths, ns, typ)
        made, what = bundle.pieces, "lesson"
    if target is None:  # (the text made as it is printed: the SARIF log is ~50 MB at 100k priors, never held whole)
        return Answer(0, None, chunks=made())
    _write(target, out, (piece.encode("utf-8") for piece in chain(made(), ["\n"])))
    n = log.results if sarif else bundle.lessons
    return Answer(0, {"count": n, "path": out},
                  f"exported {n} {what}{'s' if n != 1 else ''} to {out}" + (" as SARIF 2.1.0" if sarif else ""))


def _write(target: Path, out: Optional[str], pieces: Iterable[bytes]) -> None:
    try:
        atomic_write(target, pieces)
    except FileNotFoundError:
        raise UsageError(f"priors export: cannot write {out}: no such directory") from None


def sarif_log(paths: Paths, ns: Optional[str], current_only: bool) -> SarifLog:
    """The ledger's findings as a SARIF log (core/sarif_out.py) — `priors export --sarif`: the records
    read a block at a time, noting what the log reads of them (`SarifFacts`), none held."""
    st = load_ledger(paths, want_data=False).state
    facts, reread = note_records(paths, lambda: SarifFacts(st.priors))
    if ns is not None:
        _check_ns(ns, st, facts.last)
    # a prior's line: its record's place where each line holds one record (the clean parse took them all),
    # else counted in the ledger's bytes (a blank line, CRLF, no final newline)
    lines = _ledger_lines(read_ledger_bytes(paths)) if reread else facts.lines
    return SarifLog(st, facts, ns, _files_now(paths, st, ns), lines, __version__, current_only)


def _check_ns(ns: str, st: State, last: Dict[str, str]) -> None:
    """A namespace the ledger never held is a usage error, not an empty log: uploaded to code
    scanning, an empty run would close every alert of the namespace meant (a misspelt `--ns`)."""
    known = sorted({p.ns for p in st.priors.values() if isinstance(p.ns, str)} | set(last))
    if ns in known:
        return
    close = nearest(ns, known)
    hint = f" — did you mean {close}?" if close else (f" (it holds {', '.join(known)})" if known else " (it holds none yet)")
    raise UsageError(f"priors export: --ns {ns}: the ledger holds no namespace of that name{hint}")


def _ledger_lines(data: bytes) -> Dict[str, int]:
    """prior id -> the line of the ledger that defines it (canonical lines: `"t":"prior"` is literal)."""
    out: Dict[str, int] = {}
    for no, raw in enumerate(data.split(b"\n"), 1):
        if b'"t":"prior"' not in raw:
            continue
        try:
            rec = loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, JSONError):
            continue
        if isinstance(rec, dict) and rec.get("t") == "prior" and isinstance(rec.get("id"), str):
            out.setdefault(rec["id"], no)
    return out


def _files_now(paths: Paths, st: State, ns: Optional[str]) -> Dict[str, Any]:
    """For every file a finding points at: its line count and its definitions' spans, read now."""
    wanted = set()
    for p in st.priors.values():
        ref = p.scope_ref
        if (ns is None or p.ns == ns) and isinstance(ref, str) and ref != "*" and not ref.endswith("/"):
            file = ref.split("#", 1)[0]
            if file:
                wanted.add(file)
    out: Dict[str, Any] = {}
    for file in sorted(wanted):
        parts = file.split("/")
        if file.startswith("/") or ".." in parts or "\\" in file or ":" in parts[0]:
            continue  # not a path inside the target: never read
        full = paths.root.joinpath(*parts)
        data = read_bytes(full) if full.is_file() else None
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        spans = {name: (first, last) for name, first, last in line_spans(file, text)}
        out[file] = (data.count(b"\n") + (0 if data.endswith(b"\n") else 1), spans)
    return out
