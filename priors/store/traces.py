"""`.priors/traces/`: the traces harnesses capture of coding sessions' agent runs (private, never
committed). One JSON line per agent run in `traces.jsonl`; the folder carries its own `.gitignore`
(`*`), so even a `.priors/` made before traces existed keeps them out of git. Every writer holds
the keeper's lock. Here, below `ops`, so that `score` and `redact` can mark and scrub them."""

from __future__ import annotations

import os
import re

from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import MachineError, UsageError
from priors.core.traces import prune, well_formed
from priors.store.files import atomic_write, check_inside, make_dir, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from pathlib import Path
    from typing import Any, Dict, List, Optional

    from priors.store.paths import Paths

TRACES_DIR = "traces"
TRACES_FILE = "traces.jsonl"


def traces_path(paths: Paths) -> Path:
    return paths.dir / TRACES_DIR / TRACES_FILE


def read_traces(paths: Paths) -> List[Dict[str, Any]]:
    """Every trace as the keeper writes it (a damaged or foreign line is skipped: traces are notes,
    never evidence)."""
    path = traces_path(paths)
    try:
        check_inside(path)
        data = read_bytes(path)
    except (UsageError, MachineError):
        return []
    out: List[Dict[str, Any]] = []
    for line in (data or b"").decode("utf-8", "replace").splitlines():
        try:
            rec = loads(line)
        except (JSONError, RecursionError):
            continue
        if well_formed(rec):  # a line the keeper did not write is not quoted to a model
            out.append(rec)
    return out


def write_traces(paths: Paths, traces: List[Dict[str, Any]]) -> None:
    path = traces_path(paths)
    check_inside(path)  # a symlinked traces/ would carry prompts out of the repository
    make_dir(path.parent)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, b"# private: prompts and tool output of coding sessions (priors trace)\n*\n")
    atomic_write(path, "".join(dumps(t) + "\n" for t in traces).encode("utf-8"))


def add_trace(paths: Paths, trace: Dict[str, Any], key: Optional[str], keep_unscored: int) -> Dict[str, Any]:
    """Append one trace (numbered after the highest) and prune the unscored ones to `keep_unscored`."""
    traces = read_traces(paths)
    rec: Dict[str, Any] = {"t": "trace", "n": max((t["n"] for t in traces), default=0) + 1}
    if key is not None:
        rec["session"] = key
    rec.update(trace)
    traces.append(rec)
    write_traces(paths, prune(traces, keep_unscored))
    return rec


def mark_scored(paths: Paths, key: Optional[str], runs: List[str]) -> None:
    """The session `key` (None: the keyless one) was scored as `runs`: its unscored traces say so,
    and are kept from then on (reflection reads them)."""
    traces = read_traces(paths)
    changed = False
    for t in traces:
        if t.get("session") == key and not t.get("runs"):
            t["runs"] = list(runs)
            changed = True
    if changed:
        write_traces(paths, traces)


def traces_by_run(paths: Paths) -> Dict[str, List[Dict[str, Any]]]:
    out: Dict[str, List[Dict[str, Any]]] = {}
    for t in read_traces(paths):
        for run in t.get("runs") or []:
            if isinstance(run, str):
                out.setdefault(run, []).append(t)
    return out


def scrub_traces(paths: Paths, pid: str, claim: Any = None) -> None:
    """Redaction: a trace whose text names the prior (its id as a word: P-0001, not P-00010) or
    quotes its text (`claim`, whole or up to a cut) is deleted, scored or not; every other trace
    is kept, the id taken out of the lessons it was `given`. A `traces` that is a symlink is left
    alone: what it leads to is not the keeper's to rewrite."""
    folder = paths.dir / TRACES_DIR
    if folder.is_symlink() or not folder.is_dir():
        return
    path = traces_path(paths)
    if read_bytes(path) is None:
        return
    before = read_traces(paths)
    named = re.compile(r"(?<![A-Za-z0-9_-])" + re.escape(pid) + r"(?![0-9])")
    text = " ".join(claim.split()).casefold() if isinstance(claim, str) and claim.strip() else None
    kept: List[Dict[str, Any]] = []
    for t in before:
        if any(named.search(s) or (text is not None and _quotes(s.casefold(), text)) for s in _texts(t)):
            continue
        if pid in t.get("given", ()):
            t = dict(t, given=[x for x in t["given"] if x != pid])
        kept.append(t)
    if kept == before:
        return
    if kept:
        write_traces(paths, kept)
    else:
        try:
            os.unlink(str(path))
        except OSError:
            pass


def _texts(trace: Dict[str, Any]) -> List[str]:
    out = [str(trace.get("prompt", "")), *(str(x) for x in trace.get("assistant") or ())]
    for tool in trace.get("tools") or ():
        out += [str(tool.get(k, "")) for k in ("name", "input", "output")]
    return out


def _quotes(field: str, claim: str) -> bool:
    """Does the (casefolded, whitespace-collapsed) field hold the claim — whole, or its beginning
    where the field was cut (`…`, at least 40 characters of it)?"""
    if claim in field:
        return True
    if not field.endswith("…"):
        return False
    head = field[:-1]
    at = head.find(claim[:40])
    return at >= 0 and len(head) - at >= min(40, len(claim)) and claim.startswith(head[at:])
