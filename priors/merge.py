"""Merge two branches' ledgers: base + our new lines + their new lines, their ids renumbered.

The human's word stays on top: our redact event of a prior their lines still
mention, and our last decision on a prior their lines end on an agent disposition
of, are restated (copied with `"restated": true`) after their lines — so a
redaction wins, and a parallel agent run never silently undoes a human decision —
while our lines stay a byte-for-byte prefix of the result.

`merge(base, ours, theirs)` is pure and deterministic. `cmd_merge_driver` is the
git merge driver (`merge.priors.driver = priors merge-driver %O %A %B %P`);
`register_git(root)` is what `priors init --git` runs.

PRIORS.md never blocks a merge: git merges paths in reverse order, so the ledger
driver runs first; it stashes the rendering of the merged ledger in the git dir,
and the PRIORS.md driver (`merge-driver --render`) writes that stash as the result.
If the stash is absent (the ledger merged trivially, or conflicted) the render
driver keeps our PRIORS.md and still succeeds; `priors verify` then says whether
a `priors render` is due.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

RUN_RE = re.compile(r"^run-(\d{3,})$")
PRIOR_RE = re.compile(r"^P-(\d{4,})$")
CALL_RE = re.compile(r"^(run-\d{3,})(-C-\d+)$")
PRIOR_REF_KEYS = ("id", "conflicts_with", "supersedes")
RUN_REF_KEYS = ("run", "born")
PRIOR_LIST_KEYS = ("ids", "injected")  # the lessons loop: what a run was shown, what a score credits
RUN_LIST_KEYS = ("runs",)  # the lessons loop: runs marked learned
STASH = "priors-merge-render.json"


@dataclass(frozen=True)
class Conflict:
    reason: str


def _records(lines: Sequence[bytes], side: str, offset: int) -> Union[List[Dict[str, Any]], Conflict]:
    from priors.verify import parse_line

    out = []
    for i, raw in enumerate(lines):
        rec, why = parse_line(raw)
        if rec is None:
            return Conflict(f"{side} line {offset + i + 1} is damaged ({why})")
        out.append(rec)
    return out


def _s(value: Any) -> Optional[str]:
    """A record's reference when it is a string (anything else references nothing)."""
    return value if isinstance(value, str) else None


def _num(regex: "re.Pattern[str]", value: Any) -> int:
    """-1 for a value that is not an id (so 0-numbered ids still count)."""
    from priors.fold import id_number

    return id_number(regex, value, -1)


def _prefix(base: List[bytes], side: List[bytes], name: str) -> Optional[Conflict]:
    from priors.verify import rewrite_problem

    if len(side) < len(base):
        return Conflict(f"{name} is not an append-only extension of the base: it has {len(side)} lines, the base {len(base)}")
    for i, (a, b) in enumerate(zip(base, side), 1):
        why = rewrite_problem(a, b)
        if why is not None:
            return Conflict(f"{name} is not an append-only extension of the base: line {i} {why}")
    return None


def _max_ids(records: Sequence[Dict[str, Any]]) -> Tuple[int, int]:
    """(largest prior number, largest run number) seen in these records."""
    mp, mr = 0, 0
    for rec in records:
        if rec.get("t") == "prior":
            mp = max(mp, _num(PRIOR_RE, rec.get("id")))
        for key in RUN_REF_KEYS:
            mr = max(mr, _num(RUN_RE, rec.get(key)))
        m = CALL_RE.match(rec.get("call_id") or "") if isinstance(rec.get("call_id"), str) else None
        if m:
            mr = max(mr, _num(RUN_RE, m.group(1)))
    return mp, mr


def renumbering(
    base: Sequence[Dict[str, Any]],
    ours: Sequence[Dict[str, Any]],
    theirs_new: Sequence[Dict[str, Any]],
    reserved: Sequence[str] = (),
) -> Tuple[Dict[str, str], Dict[str, str]]:
    """(prior id map, run id map) moving their new ids after ours, gaps and order kept; empty when nothing collides.

    `reserved` are ids our work tree already holds outside the ledger (open runs, staged priors).
    """
    our_prior, our_run = _max_ids(list(base) + list(ours))
    for rid in reserved:
        our_prior = max(our_prior, _num(PRIOR_RE, rid))
        our_run = max(our_run, _num(RUN_RE, rid))
    base_runs: Set[str] = set()
    for rec in base:
        for key in RUN_REF_KEYS:
            if isinstance(rec.get(key), str):
                base_runs.add(rec[key])
    new_priors = [r["id"] for r in theirs_new if r.get("t") == "prior" and _num(PRIOR_RE, r.get("id")) >= 0]
    new_runs: List[str] = []
    for rec in theirs_new:
        for key in RUN_REF_KEYS:
            v = rec.get(key)
            if _num(RUN_RE, v) >= 0 and v not in base_runs and v not in new_runs:
                new_runs.append(v)
    pmap = _shift_after(new_priors, our_prior, PRIOR_RE, "P-{:04d}")
    rmap = _shift_after(new_runs, our_run, RUN_RE, "run-{:03d}")
    return pmap, rmap


def _shift_after(ids: List[str], ours: int, regex: "re.Pattern[str]", fmt: str) -> Dict[str, str]:
    """Renumber `ids` so the lowest lands just after our highest number (no map when they already do)."""
    if not ids:
        return {}
    shift = max(0, ours - min(_num(regex, i) for i in ids) + 1)
    return {i: fmt.format(_num(regex, i) + shift) for i in ids} if shift else {}


def rewrite_refs(rec: Dict[str, Any], pmap: Dict[str, str], rmap: Dict[str, str]) -> Dict[str, Any]:
    out = dict(rec)
    for key in PRIOR_REF_KEYS:
        v = out.get(key)
        if isinstance(v, str) and v in pmap:
            out[key] = pmap[v]
    for key in RUN_REF_KEYS:
        v = out.get(key)
        if isinstance(v, str) and v in rmap:
            out[key] = rmap[v]
    for keys, table in ((PRIOR_LIST_KEYS, pmap), (RUN_LIST_KEYS, rmap)):
        for key in keys:
            v = out.get(key)
            if isinstance(v, list):
                out[key] = [table.get(x, x) if isinstance(x, str) else x for x in v]
    cid = out.get("call_id")
    if isinstance(cid, str):
        m = CALL_RE.match(cid)
        if m and m.group(1) in rmap:
            out["call_id"] = rmap[m.group(1)] + m.group(2)
    return out


def redact_refs(rec: Dict[str, Any], redacted: Set[str]) -> Dict[str, Any]:
    """Apply the other side's redaction to a record: reasons hashed, calls cut to their stub."""
    from priors.verify import REDACTED_CALL_KEYS, reason_hash

    t = rec.get("t")
    if t == "event" and _s(rec.get("id")) in redacted and rec.get("action") != "redact" and "reason" in rec:
        out = {k: v for k, v in rec.items() if k != "reason"}
        out.update(reason_redacted=True, reason_hash=reason_hash(rec["reason"]))
        return out
    if t == "call" and _s(rec.get("conflicts_with")) in redacted and rec.get("redacted") is not True:
        out = {k: rec[k] for k in REDACTED_CALL_KEYS if k in rec}
        out["redacted"] = True
        return out
    return rec


def _tombs(records: Sequence[Dict[str, Any]]) -> Set[str]:
    return {r["id"] for r in records if r.get("t") == "prior" and r.get("redacted") is True and isinstance(r.get("id"), str)}


def _decisions_to_keep_last(ours_new: Sequence[Dict[str, Any]], theirs_new: Sequence[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Our decide events that are our last word on a prior which their lines end on an agent disposition."""
    agent_last: Set[str] = set()
    for r in theirs_new:
        if r.get("t") != "event" or not isinstance(r.get("id"), str):
            continue
        if r.get("action") == "disposition":
            agent_last.add(r["id"])
        elif r.get("action") in ("decide", "redact"):
            agent_last.discard(r["id"])
    last: Dict[str, int] = {}
    for i, r in enumerate(ours_new):
        if r.get("t") == "event" and isinstance(r.get("id"), str):
            last[r["id"]] = i
    return [r for i, r in enumerate(ours_new)
            if r.get("t") == "event" and r.get("action") == "decide" and r.get("id") in agent_last and last.get(r["id"]) == i]


def merge(base: bytes, ours: bytes, theirs: bytes, reserved: Sequence[str] = ()) -> Union[bytes, Conflict]:
    """base + our new lines + their new lines (renumbered after ours); a redaction on either side wins.

    `reserved`: ids our side holds outside the ledger (the driver passes its open runs); their ids
    are moved past those too. Our lines are kept byte for byte unless their redaction rewrites them.
    """
    from priors.canonical import dumps
    from priors.verify import split_lines

    b, o, t = split_lines(base), split_lines(ours), split_lines(theirs)
    for lines, name in ((o, "ours"), (t, "theirs")):
        bad = _prefix(b, lines, name)
        if bad is not None:
            return bad
    head: List[bytes] = []
    for i, (bl, ol, tl) in enumerate(zip(b, o, t), 1):
        if ol != bl and tl != bl and ol != tl:
            return Conflict(f"both sides rewrote line {i} differently")
        head.append(ol if ol != bl else tl)
    parsed = []
    for lines, name, off in ((b, "base", 0), (head, "merged base", 0), (o[len(b):], "ours", len(b)), (t[len(b):], "theirs", len(b))):
        recs = _records(lines, name, off)
        if isinstance(recs, Conflict):
            return recs
        parsed.append(recs)
    base_recs, head_recs, ours_new, theirs_new = parsed
    pmap, rmap = renumbering(base_recs, ours_new, theirs_new, reserved)
    theirs_new = [rewrite_refs(r, pmap, rmap) for r in theirs_new]
    was = _tombs(base_recs)
    ours_red = _tombs(_records(o, "ours", 0)) - was  # type: ignore[arg-type]
    theirs_red = _tombs(_records(t, "theirs", 0)) - was  # type: ignore[arg-type]
    ours_out = [raw if redact_refs(r, theirs_red) == r else dumps(redact_refs(r, theirs_red)).encode("utf-8")
                for r, raw in zip(ours_new, o[len(b):])]  # our untouched lines byte for byte
    ours_new = [redact_refs(r, theirs_red) for r in ours_new]
    theirs_new = [redact_refs(r, ours_red) for r in theirs_new]
    # The human's word stays on top without touching our lines (so the merge still extends ours, and
    # `verify --since` holds): our redact of a prior their lines still mention, and our last decision on a
    # prior their lines end on an agent disposition of, are restated after their lines.
    touched = {_s(r.get("id")) for r in theirs_new if r.get("t") == "event" and r.get("action") != "redact"}
    touched |= {_s(r.get("conflicts_with")) for r in theirs_new if r.get("t") == "call"}
    late = [r for r in ours_new if r.get("t") == "event" and r.get("action") == "redact" and _s(r.get("id")) in ours_red and _s(r.get("id")) in touched]
    restated = [dict(r, restated=True) for r in _decisions_to_keep_last(ours_new, theirs_new) + late]
    out = list(head)
    out += ours_out
    out += [dumps(r).encode("utf-8") for r in theirs_new + restated]
    return b"".join(line + b"\n" for line in out)


# ------------------------------------------------------------------ git plumbing


def _git(args: List[str], cwd: Any) -> "Any":
    import subprocess

    return subprocess.run(["git", *args], cwd=str(cwd), capture_output=True)


def _git_dir(cwd: Any) -> Optional[str]:
    import os

    try:
        r = _git(["rev-parse", "--absolute-git-dir"], cwd)
    except OSError:
        return None
    if r.returncode != 0:
        return None
    path = r.stdout.decode("utf-8", "replace").strip()
    return path if os.path.isdir(path) else None


def _head(cwd: Any) -> str:
    try:
        r = _git(["rev-parse", "-q", "--verify", "HEAD"], cwd)
    except OSError:
        return ""
    return r.stdout.decode("ascii", "replace").strip() if r.returncode == 0 else ""


def _render(data: bytes) -> Optional[bytes]:
    from priors.verify import render_expected

    return render_expected(data)


def cmd_merge_driver(argv: List[str], ctx: Any) -> int:
    import os

    from priors.args import BOOL, Spec, parse
    from priors.errors import Refusal, UsageError
    from priors.store import atomic_write, read_bytes

    spec = Spec(
        "merge-driver",
        "priors merge-driver [--render] BASE OURS THEIRS [PATH]",
        {"--render": BOOL},
        min_pos=3,
        max_pos=4,
        help=DRIVER_HELP,
    )
    args = parse(argv, spec)
    base_p, ours_p, theirs_p = args.pos[:3]
    label = args.pos[3] if len(args.pos) > 3 else ours_p
    cwd = os.getcwd()
    gitdir = _git_dir(cwd)
    stash = os.path.join(gitdir, STASH) if gitdir else None
    where = os.path.dirname(args.pos[3]) if len(args.pos) > 3 else None
    if args.get("render"):
        return _render_driver(ours_p, stash, cwd, where)
    data = []
    for p in (base_p, ours_p, theirs_p):
        b = read_bytes(p)  # type: ignore[arg-type]
        if b is None:
            raise UsageError(f"priors merge-driver: {p}: no such file")
        data.append(b)
    if stash and os.path.exists(stash):
        os.unlink(stash)
    result = merge(*data, reserved=_reserved(os.path.dirname(args.pos[3])) if len(args.pos) > 3 else ())
    if isinstance(result, Conflict):
        ctx.err.write(
            f"priors merge-driver: cannot merge {label}: {result.reason}.\n"
            "  The ledger is append-only; merge it by hand so that it is the base plus both sides' new lines,\n"
            "  then run `priors verify` (our version was left in place).\n"
        )
        # exit 1 tells git "conflict"; like every exit 1 it is also a refusal line on stdout
        raise Refusal("MERGE_CONFLICT", path=label, reason=result.reason,
                      hint="merge the ledger by hand (the base plus both sides' new lines), then `priors verify`")
    from pathlib import Path

    atomic_write(Path(ours_p), result)
    md = _render(result)
    if stash and md is not None:
        from priors.canonical import dumps

        with open(stash, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps({"head": _head(cwd), "md": md.decode("utf-8"), "dir": where}))
    return 0


def _reserved(priors_dir: str) -> List[str]:
    """Run ids of open runs beside the ledger in our work tree.

    Their runs are moved past these, or a later `commit --run` of our open run would find
    "already committed" and drop its staging. Staged prior ids are not reserved: prior ids must
    increase along the ledger, so a collision is left to `commit`'s STAGED_ID_COLLISION refusal.
    """
    import os

    try:
        names = sorted(os.listdir(os.path.join(priors_dir or ".", "runs")))
    except OSError:
        return []
    return [name for name in names if RUN_RE.match(name)]


def _render_driver(ours_p: str, stash: Optional[str], cwd: str, where: Optional[str]) -> int:
    """PRIORS.md: take the rendering of the merged ledger the ledger driver left; else keep ours. Never a conflict."""
    import os

    if not stash or not os.path.exists(stash):
        return 0
    from pathlib import Path

    from priors.canonical import JSONError, loads
    from priors.store import atomic_write

    try:
        with open(stash, "r", encoding="utf-8") as fh:
            saved = loads(fh.read())
    except (OSError, JSONError, UnicodeDecodeError):
        saved = None
    try:
        os.unlink(stash)
    except OSError:
        pass
    same_dir = where is None or saved is None or not isinstance(saved, dict) or saved.get("dir") in (None, where)
    if isinstance(saved, dict) and same_dir and saved.get("head") == _head(cwd) and isinstance(saved.get("md"), str):
        atomic_write(Path(ours_p), saved["md"].encode("utf-8"))
    return 0


def driver_command() -> str:
    """`priors` when it is on PATH, else this interpreter's `-m priors` (so a venv without the script works)."""
    import shutil
    import sys
    from pathlib import Path

    if shutil.which("priors"):
        return "priors"
    exe = Path(sys.executable).as_posix()
    return f'"{exe}" -m priors'


ATTR_LINES = (
    ".priors/ledger.jsonl merge=priors -text",
    ".priors/PRIORS.md merge=priors-render -text",
)


def require_git(root: Any) -> None:
    """UsageError unless `root` is inside a git work tree (checked before anything is written)."""
    from priors.errors import UsageError

    try:
        inside = _git(["rev-parse", "--is-inside-work-tree"], root)
    except OSError:
        raise UsageError("priors init --git: git was not found") from None
    if inside.returncode != 0 or inside.stdout.strip() != b"true":
        raise UsageError(f"priors init --git: {root} is not inside a git work tree — run `git init` first")


def register_git(root: Any) -> List[str]:
    """Register the merge drivers in the repo's git config and `.gitattributes` beside `.priors/`. Idempotent."""
    from pathlib import Path

    from priors.errors import UsageError
    from priors.store import atomic_write, read_bytes

    require_git(root)
    cmd = driver_command()
    settings = [
        ("merge.priors.name", "priors ledger: base + both sides' new lines, their ids renumbered"),
        ("merge.priors.driver", f"{cmd} merge-driver %O %A %B %P"),
        ("merge.priors-render.name", "priors PRIORS.md: rendered from the merged ledger"),
        ("merge.priors-render.driver", f"{cmd} merge-driver --render %O %A %B %P"),
    ]
    done: List[str] = []
    for key, value in settings:
        cur = _git(["config", "--local", "--get", key], root)
        if cur.returncode == 0 and cur.stdout.decode("utf-8", "replace").rstrip("\n") == value:
            continue
        r = _git(["config", "--local", key, value], root)
        if r.returncode != 0:
            raise UsageError(f"priors init --git: git config {key} failed: {r.stderr.decode('utf-8', 'replace').strip()}")
        done.append(f"git config {key}")
    attrs = Path(root) / ".gitattributes"
    old = (read_bytes(attrs) or b"").decode("utf-8", "replace")
    have = {ln.strip() for ln in old.splitlines()}
    missing = [ln for ln in ATTR_LINES if ln not in have]
    if missing:
        text = old + ("" if not old or old.endswith("\n") else "\n") + "".join(ln + "\n" for ln in missing)
        atomic_write(attrs, text.encode("utf-8"))
        done.append(".gitattributes")
    return done


DRIVER_HELP = """usage: priors merge-driver [--render] BASE OURS THEIRS [PATH]

The git merge driver for .priors/ledger.jsonl (git passes %O %A %B %P). Register it
with `priors init --git`. Writes base + our new lines + their new lines into OURS,
their colliding prior, run and call ids renumbered after ours and every reference
in their lines rewritten; a redaction on either side wins for that prior. If either
side is not an append-only extension of the base it exits 1 (a conflict) and says why.

  --render   the driver for .priors/PRIORS.md: writes the rendering of the merged
             ledger (left by the ledger driver), else keeps ours — never a conflict"""
