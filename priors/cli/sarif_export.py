"""Code scanning out: `priors export --sarif`, the ledger's findings as SARIF 2.1.0. The mapping is
core/sarif_out.py; this module reads the ledger and, for each file a finding points at, its lines
and definitions as they are now.
"""

from __future__ import annotations

from priors.core.canonical import dumps

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, Optional, Tuple


def export_sarif(paths, ns: Optional[str], current_only: bool) -> Tuple[str, int]:
    """(the SARIF log as canonical JSON text, how many results it holds) — `priors export --sarif`."""
    from priors import __version__
    from priors.core.fold import parse_lines
    from priors.core.sarif_out import sarif_log
    from priors.store.ledger import load
    from priors.store.paths import read_ledger_bytes

    _, st = load(paths, want_data=False)
    data = read_ledger_bytes(paths) or b""
    records = parse_lines(data)
    if ns is not None:
        _check_ns(ns, st, records)
    doc = sarif_log(st, records, ns, _files_now(paths, st, ns), _ledger_lines(data), __version__, current_only)
    return dumps(doc) + "\n", sum(len(r["results"]) for r in doc["runs"])


def _check_ns(ns: str, st, records) -> None:
    """A namespace the ledger never held is a usage error, not an empty log: uploaded to code
    scanning, an empty run would close every alert of the namespace meant (a misspelt `--ns`)."""
    from priors.core.errors import UsageError
    from priors.core.sarif_out import last_runs
    from priors.core.spelling import nearest

    known = sorted({p.ns for p in st.priors.values() if isinstance(p.ns, str)} | set(last_runs(records)))
    if ns in known:
        return
    close = nearest(ns, known)
    hint = f" — did you mean {close}?" if close else (f" (it holds {', '.join(known)})" if known else " (it holds none yet)")
    raise UsageError(f"priors export: --ns {ns}: the ledger holds no namespace of that name{hint}")


def _ledger_lines(data: bytes) -> Dict[str, int]:
    """prior id -> the line of the ledger that defines it (canonical lines: `"t":"prior"` is literal)."""
    from priors.core.canonical import JSONError, loads

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


def _files_now(paths, st, ns: Optional[str]) -> Dict[str, Any]:
    """For every file a finding points at: its line count and its definitions' spans, read now."""
    from priors.snapshot.anchors import line_spans
    from priors.store.files import read_bytes

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
