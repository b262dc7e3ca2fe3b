"""The agent's ground in an open run: the scope refs it may point at (`scopes`), taking back what it
staged (`withdraw`), and a location (`"at": "src/a.py:120"`) resolved to the innermost definition
of the run's snapshot that spans it — the one resolver `propose` and `ingest-sarif` share.
"""

from __future__ import annotations

import os
import posixpath

from priors.core.answer import Answer
from priors.core.canonical import JSONError, dumps, loads, sha12_bytes
from priors.core.controls import one_line
from priors.core.errors import Refusal
from priors.core.grammar import check_run_id, location_of
from priors.core.protocol import nearest_refs
from priors.core.run_files import require_open
from priors.snapshot.anchors import line_spans
from priors.snapshot.scan import file_result
from priors.store.files import atomic_write, read_bytes
from priors.store.ledger import load_ledger
from priors.store.lock import Lock
from priors.store.paths import Paths, require_init
from priors.store.staging import read_run

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Sequence, Tuple

    from priors.core.run_files import RunFiles


# ------------------------------------------------------------------ line spans beside the run


def spans_for(paths: Paths, rf: RunFiles, file: str, memo: Optional[Dict[str, Any]] = None) -> Tuple[List[list], int]:
    """(`[[qualname, first, last], …]`, its number of lines) for `file` as it was in the run's snapshot.

    Read from `runs/<run>/spans.json`, or computed from the file on disk when its hash still
    equals the snapshot's (then kept there). A file that changed since the snapshot cannot say
    where its lines were: SCOPE_MISMATCH. `memo`: one verb resolving many locations in one go
    (`ingest-sarif`) reads each file once and keeps the spans in memory instead of rewriting
    spans.json for every file.
    """
    if memo is not None and file in memo:
        return memo[file]
    sfile = paths.run_dir(rf.run) / "spans.json"
    raw = read_bytes(sfile)
    table: Dict[str, Any] = {}
    if raw is not None:
        try:
            got = loads(raw.decode("utf-8"))
            table = got if isinstance(got, dict) else {}
        except (UnicodeDecodeError, JSONError):
            table = {}
    want = rf.scopes.get(file)
    # The agent counts lines in the file as it reads it now: they mean something only while it is
    # still the snapshot's. Checked on every call (one file read), cached spans or not.
    parts = file.split("/")
    inside = not file.startswith("/") and ".." not in parts and "\\" not in file and ":" not in parts[0]
    full = paths.root.joinpath(*parts)
    data = read_bytes(full) if inside and full.is_file() else None
    if data is None or file_result(file, data, False)[0] != want:
        raise Refusal("SCOPE_MISMATCH", scope_ref=file, expected=want,
                      hint="the file changed since the run's snapshot, so its line numbers cannot be trusted;"
                           " give `scope_ref` (see `priors scopes --run " + rf.run + "`)")
    # Spans are kept by the file's exact bytes: blank lines added above a definition leave the
    # snapshot's (whitespace-normalized) hash alone but move every line after them.
    exact = sha12_bytes(data)
    entry = table.get(file)
    if (isinstance(entry, dict) and entry.get("hash") == want and entry.get("bytes") == exact
            and isinstance(entry.get("defs"), list)):
        if memo is not None:
            memo[file] = (entry["defs"], data.count(b"\n") + 1)
        return entry["defs"], data.count(b"\n") + 1
    defs = [[n, a, b] for n, a, b in line_spans(file, data.decode("utf-8", "replace"))
            if f"{file}#{n}" in rf.scopes]
    if memo is not None:
        memo[file] = (defs, data.count(b"\n") + 1)
        return memo[file]
    table[file] = {"bytes": exact, "defs": defs, "hash": want}
    atomic_write(sfile, (dumps(table) + "\n").encode("utf-8"))
    return defs, data.count(b"\n") + 1


def resolve_location(paths: Paths, rf: RunFiles, raw: Dict[str, Any], memo: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """The candidate with `at` (or `file`+`line`) replaced by the `scope_ref` it points at (`memo`: see spans_for)."""
    if raw.get("at") is not None:
        at = location_of(raw["at"])
        assert at is not None  # validate() checked the shape
        file, line = at
    else:
        file, line = raw["file"], raw.get("line")
    file = file[2:] if file.startswith("./") else file
    if file not in rf.scopes or file == "*" or file.endswith("/") or "#" in file:
        raise Refusal("UNKNOWN_SCOPE", scope_ref=file, nearest=nearest_refs(file, rf.scopes),
                      hint="point only at files in this run's snapshot (`priors scopes --run " + rf.run + "`)")
    ref = file
    if line is not None:
        refuse_link_lines(paths, rf, file, line)
        best = None
        defs, lines = spans_for(paths, rf, file, memo)  # checks the file on disk is the snapshot's
        if line > lines:
            raise Refusal("UNKNOWN_SCOPE", scope_ref=f"{file}:{line}", nearest=[file],
                          hint=f"{file} has {lines} lines; point at a line inside it")
        for name, first, last in defs:
            if first <= line <= last and (best is None or last - first <= best[1] - best[0]):
                best = (first, last, name)
        if best is not None:
            ref = f"{file}#{best[2]}"
    out = {k: v for k, v in raw.items() if k not in ("at", "file", "line")}
    out["scope_ref"] = ref
    return out


def refuse_link_lines(paths: Paths, rf: RunFiles, file: str, line: int) -> None:
    """A line of a symbolic link means nothing to the snapshot: it records the link itself (a hash
    of where it points) and never follows it (docs/snapshot.md), so it holds no lines or
    definitions. Refused UNKNOWN_SCOPE, naming the file the link leads to when the snapshot has it;
    the link itself stays a valid `scope_ref` (or `file` without `line`)."""
    full = paths.root.joinpath(*file.split("/"))
    if not os.path.islink(str(full)):
        return
    try:
        target = os.readlink(str(full)).replace("\\", "/")
    except OSError:
        target = ""
    inside = posixpath.normpath(posixpath.join(posixpath.dirname(file), target)) if target else ""
    own = "give the link itself as `scope_ref` for a finding about the link"
    if not target or posixpath.isabs(target) or inside == ".." or inside.startswith("../"):
        where, nearest, what = "outside the target", [], "it leads outside the target, which no run reviews; " + own
    elif inside in rf.scopes:
        where, nearest = inside, [inside]
        what = f"point at the file it leads to (`\"at\": \"{inside}:{line}\"`), or {own}"
    else:
        where, nearest, what = inside, [], f"it leads to {inside}, which this run's snapshot does not hold; " + own
    raise Refusal("UNKNOWN_SCOPE", scope_ref=f"{file}:{line}", link_to=where, nearest=nearest,
                  hint=f"{file} is a symbolic link: the snapshot records the link and never follows it, so it has"
                       " no lines; " + what)


# ------------------------------------------------------------------ scopes


def list_scopes(paths: Paths, run: str, wanted: Sequence[str], lines: bool) -> Answer:
    """The run's refs under `wanted` (all when empty); JSON: `{ref: hash}`, with `lines`
    `{ref: [first, last]}` for definitions."""
    check_run_id(run, "scopes")
    require_init(paths)
    wanted = [p[2:] if p.startswith("./") else p for p in wanted]
    with Lock(paths):
        st = load_ledger(paths, want_data=False).state
        rf = read_run(paths, run, snapshot="compact", known=st.priors)  # (an open-heavy run's file whole: ~100 MB)
        require_open(st, rf)
        scopes = rf.scopes
        refs = sorted(r for r in scopes if not wanted or any(_under(r, w) for w in wanted))
        spans: Dict[str, List[int]] = {}
        if lines:
            for file in sorted({r.split("#", 1)[0] for r in refs if "#" in r}):
                for name, first, last in spans_for(paths, rf, file)[0]:
                    spans[f"{file}#{name}"] = [first, last]
    obj = {r: spans.get(r, scopes[r]) if lines else scopes[r] for r in refs}
    # (a ref or a path holding a line feed — a file may be named so — cannot start a line of its own)
    text = "\n".join(f"{one_line(r)}  {spans[r][0]}-{spans[r][1]}" if r in spans else one_line(r) for r in refs)
    if not refs:  # (a mistyped path is said, not printed as nothing)
        text = (f"no scope of {run}'s snapshot lies under {one_line(' or '.join(wanted))}" if wanted
                else f"{run}'s snapshot holds no scope")
    return Answer(0, obj, text)


def _under(ref: str, path: str) -> bool:
    if path in ("", ".", "*"):
        return True
    p = path.rstrip("/")
    return ref == p or ref == p + "/" or ref.startswith(p + "/") or ref.startswith(p + "#")
