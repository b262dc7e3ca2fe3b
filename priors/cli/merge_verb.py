"""`priors merge-driver`: git's merge driver for the ledger and for PRIORS.md.
"""

from __future__ import annotations

from typing import Any, List, Optional

from priors.core.merge_rules import RUN_RE, Conflict, merge
from priors.store.git import _git_dir, _head

STASH = "priors-merge-render.json"


def _render(data: bytes) -> Optional[bytes]:
    from priors.core.ledger_checks import render_expected

    return render_expected(data)


def cmd_merge_driver(argv: List[str], ctx: Any) -> int:
    import os

    from priors.cli.args import BOOL, Spec, parse
    from priors.core.errors import Refusal, UsageError
    from priors.store.files import atomic_write, read_bytes

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
        from priors.core.canonical import dumps

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

    from priors.core.canonical import JSONError, loads
    from priors.store.files import atomic_write

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


DRIVER_HELP = """usage: priors merge-driver [--render] BASE OURS THEIRS [PATH]

The git merge driver for .priors/ledger.jsonl (git passes %O %A %B %P). Register it
with `priors init --git`. Writes base + our new lines + their new lines into OURS,
their colliding prior, run and call ids renumbered after ours and every reference
in their lines rewritten; a redaction on either side wins for that prior. If either
side is not an append-only extension of the base it exits 1 (a conflict) and says why.

  --render   the driver for .priors/PRIORS.md: writes the rendering of the merged
             ledger (left by the ledger driver), else keeps ours — never a conflict"""
