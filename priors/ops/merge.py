"""git's merge drivers for `.priors/`: the ledger (base + our new lines + their new lines, their
colliding ids renumbered; a person's signed line the renumbering changed signed again by the person
merging, when signing is on) and PRIORS.md (the rendering of the merged ledger, never a conflict).
The rules are core/merge_rules.py; this module reads the three versions, writes ours, and hands
the rendering from one driver to the other through a file in the git directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import Refusal, UsageError
from priors.core.ledger_checks import render_expected
from priors.core.merge_rules import RUN_RE, Conflict, merge
from priors.core.signing import SIGNERS_NAME, HumanLine, coverage, describe, human_lines, payload
from priors.store.files import atomic_write, read_bytes
from priors.store.git import file_at, git_dir, head_commit
from priors.store.lock import writer_alive
from priors.store.signing import SIGN_HELP, check_all, refuse, sign_lines, signers_path, signing_wanted

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

STASH = "priors-merge-render.json"


def _stash(cwd: str) -> Optional[str]:
    gitdir = git_dir(cwd)
    return os.path.join(gitdir, STASH) if gitdir else None


def merge_ledgers(base_p: str, ours_p: str, theirs_p: str, path: Optional[str],
                  warn: Callable[[str], object]) -> None:
    """Merge the three versions git gives into OURS (`path`: the ledger's own path, %P, when git
    passes it). Not an append-only extension on either side: the MERGE_CONFLICT refusal (git's
    "conflict"), `warn`ing the person how to merge it by hand; ours is left in place."""
    label = path if path is not None else ours_p
    cwd = os.getcwd()
    stash = _stash(cwd)
    where = os.path.dirname(path) if path is not None else None
    data = []
    for p in (base_p, ours_p, theirs_p):
        b = read_bytes(Path(p))
        if b is None:
            raise UsageError(f"priors merge-driver: {p}: no such file")
        data.append(b)
    if stash and os.path.exists(stash):
        os.unlink(stash)
    clear_dead_temps(ours_p)
    result = merge(data[0], data[1], data[2], reserved=_reserved(os.path.dirname(path)) if path is not None else (),
                   mark=making_a_merge_commit(cwd))
    if isinstance(result, Conflict):
        warn(f"priors merge-driver: cannot merge {label}: {result.reason}.\n"
             "  The ledger is append-only; merge it by hand so that it is the base plus both sides' new lines,\n"
             "  then run `priors verify` (our version was left in place).")
        # exit 1 tells git "conflict"; like every exit 1 it is also a refusal line on stdout
        raise Refusal("MERGE_CONFLICT", path=label, reason=result.reason,
                      hint="merge the ledger by hand (the base plus both sides' new lines), then `priors verify`")
    if where is not None:
        result = resign_changed(os.path.dirname(where) or ".", result, data[1:], label, warn)
    atomic_write(Path(ours_p), result)
    md = render_expected(result)
    if stash and md is not None:
        with open(stash, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(dumps({"head": head_commit(cwd), "md": md.decode("utf-8"), "dir": where}))


def making_a_merge_commit(cwd: str) -> bool:
    """Whether git runs the driver for `git merge` or `git pull` (which say so in `GIT_REFLOG_ACTION`), not
    for a rebase (its state folder is there meanwhile) or a cherry-pick: only a merge commit keeps the
    fact that their runs never saw our side's decisions, so only then are their seals marked with it
    (core/unseen.py) — `verify` finds the merge and holds the marks to it."""
    action = os.environ.get("GIT_REFLOG_ACTION", "")
    if not (action.startswith("merge") or action.startswith("pull")):
        return False
    gitdir = git_dir(cwd)
    return not (gitdir and any(os.path.exists(os.path.join(gitdir, d)) for d in ("rebase-merge", "rebase-apply")))


def clear_dead_temps(ours_p: str) -> None:
    """A driver killed while writing OURS (SIGKILL, a power cut) leaves its temp file beside it,
    `.<ours>.<pid>.tmp` — in git's case `..merge_file_XXXXXX.<pid>.tmp` at the top of the work
    tree, an untracked file nobody made. The next driver deletes every such temp whose writer is
    dead: its own name's, and git's merge files' (never another file, never a live writer's)."""
    folder, name = os.path.split(os.path.abspath(ours_p))
    mine = f".{name}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for other in names:
        if not other.endswith(".tmp") or not (other.startswith(mine) or other.startswith("..merge_file_")):
            continue
        pid = other[:-4].rsplit(".", 1)[-1]
        if not pid.isdigit() or writer_alive(other):
            continue
        try:
            os.unlink(os.path.join(folder, other))
        except OSError:
            pass


def _reserved(priors_dir: str) -> List[str]:
    """Run ids of open runs beside the ledger in our work tree.

    Their runs are moved past these, or a later `commit --run` of our open run would find
    "already committed" and drop its staging. Staged prior ids are not reserved: prior ids must
    increase along the ledger, so a collision is left to `commit`'s STAGED_ID_COLLISION refusal.
    """
    try:
        names = sorted(os.listdir(os.path.join(priors_dir or ".", "runs")))
    except OSError:
        return []
    return [name for name in names if RUN_RE.match(name)]


def merge_rendering(ours_p: str, where: Optional[str]) -> None:
    """PRIORS.md: take the rendering of the merged ledger the ledger driver left; else keep ours. Never a conflict."""
    cwd = os.getcwd()
    stash = _stash(cwd)
    if not stash or not os.path.exists(stash):
        return
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
    if isinstance(saved, dict) and same_dir and saved.get("head") == head_commit(cwd) and isinstance(saved.get("md"), str):
        atomic_write(Path(ours_p), saved["md"].encode("utf-8"))




# ------------------------------------------------------------------ signed lines the merge changed


def resign_changed(root: str, result: bytes, sides: Sequence[bytes], label: str,
                   warn: Callable[[str], object]) -> bytes:
    """`result` with every person's signed line the merge changed (a renumbered id: their `decide
    P-0008` become `decide P-0009`) signed again by the person merging — when signing is on in
    `root`. The merger vouches for the renumbered decision; the line then names them as its signer.

    A line is re-signed only when its signature held before the merge (against the work tree's
    .priors/allowed_signers): a merge never turns a bad or foreign signature into a good one. When
    a line cannot be re-signed (no key, no ssh-keygen, a key the list does not hold, an original
    signature that does not hold), nothing is written: the MERGE_CONFLICT refusal (git's
    "conflict", our version left in place), `warn`ing which decisions need signing and what to do.
    """
    changed = changed_signed_lines(result, sides)
    if not changed:  # (a signed line the merge changes wants signing, whatever our side holds: hostile pass 27ad)
        return result
    try:
        if not signing_wanted(root):  # (a list HEAD holds that the work tree lacks is refused, not skipped)
            raise refuse("the lines it renumbers are signed, but this side has no .priors/allowed_signers: merge"
                         " the change that adds the list first, in a change of its own, then this one")
    except Refusal as exc:
        why = str(exc.details.get("hint", exc.code)).split("; nothing was written")[0]
        raise _cannot_resign(label, [(hl, orig) for hl, orig, _ in changed], why, warn) from None
    lines_changed = list({hl.no: hl for hl, _, _ in changed}.values())
    fresh = [{k: v for k, v in hl.rec.items() if k not in ("sig", "signer", "nonce")} for hl in lines_changed]
    lines = result.split(b"\n")
    try:
        lists = [read_bytes(Path(signers_path(root))) or b""]
        trusted = _signers_before(root)  # (mid-rebase the work tree's list may be one the branch itself wrote)
        if trusted is not None and trusted != lists[0]:
            lists.append(trusted)
        bad = list(dict.fromkeys(why for allowed in lists for _, orig, cov in changed
                                 for why in check_all(allowed, [orig], None if cov is None else {orig.no: cov}).values()))
        if bad:
            raise Refusal("SIGNING_FAILED", hint=f"its signature did not hold before the merge either ({'; '.join(bad)}), "
                          "so the merge cannot vouch for it; if its signer is missing from .priors/allowed_signers, "
                          "add them in a change of its own first")
        for hl, rec in zip(lines_changed, fresh):  # each signed as the merged ledger before it defines its priors
            sign_lines(root, [rec], before=_prefix(lines, hl.no - 1))
    except Refusal as exc:
        why = str(exc.details.get("hint", exc.code)).split("; nothing was written")[0]
        raise _cannot_resign(label, [(hl, orig) for hl, orig, _ in changed], why, warn) from None
    for hl, rec in zip(lines_changed, fresh):
        lines[hl.no - 1] = dumps(rec).encode("utf-8")
    return b"\n".join(lines)


def _signers_before(root: str) -> Optional[bytes]:
    """.priors/allowed_signers as committed where the merging side stood before this merge began: the
    revision a rebase replays onto, a cherry-pick or revert sequence's starting HEAD, else HEAD (None:
    none there). A rebase's HEAD, and so its work tree, already holds the branch's earlier commits — a
    branch that lists its own key in one commit and signs with it in the next must not have the person
    rebasing vouch for that signature (hostile pass 27f)."""
    gitdir = git_dir(root)
    rev = "HEAD"
    for name in ("rebase-merge/onto", "rebase-apply/onto", "sequencer/head"):
        try:
            with open(os.path.join(gitdir or "", name), encoding="ascii") as fh:
                got = fh.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if got:
            rev = got
            break
    return file_at(root, rev, SIGNERS_NAME)


def _prefix(lines: List[bytes], n: int) -> Callable[[], Optional[bytes]]:
    """The ledger's first `n` lines, when asked (what a line placed after them is signed against)."""
    return lambda: b"".join(line + b"\n" for line in lines[:n])


def changed_signed_lines(result: bytes, sides: Sequence[bytes]) -> List[Tuple[HumanLine, HumanLine, Optional[List[List[str]]]]]:
    """(line of `result`, the line of `sides` it came from, what that line's version 2 signature covered
    there) for each person's signed line of the merge whose signed bytes are no longer those its
    signature was made over — its own fields (a renumbered id), or the content of a prior it covers
    (a renumbered prior or run: core/signing.py `coverage`). Found by its signature among the sides'
    lines, so whatever rule of the merge changed it."""
    signed: Dict[str, List[Tuple[HumanLine, Optional[List[List[str]]]]]] = {}
    for data in sides:
        side = [hl for hl in human_lines(data) if hl.sig is not None]  # (a ledger that never signed: none)
        covers = coverage(data, side) if side else {}
        for hl in side:
            signed.setdefault(str(hl.sig), []).append((hl, covers.get(hl.no)))
    if not signed:
        return []
    merged = human_lines(result)
    rcov = coverage(result, merged)
    out: List[Tuple[HumanLine, HumanLine, Optional[List[List[str]]]]] = []
    for hl in merged:
        if hl.sig is None or hl.sig not in signed:
            continue
        v1, v2 = payload(hl.rec), payload(hl.rec, rcov.get(hl.no, []))
        if any(payload(o.rec) == v1 and payload(o.rec, oc or []) == v2 for o, oc in signed[hl.sig]):
            continue
        for orig, was in signed[hl.sig]:  # every line of the sides that carries it is checked before the merge
            out.append((hl, orig, was))  # vouches: the one it came from may be an agent's edited copy
    return out


def _cannot_resign(label: str, changed: Sequence[Tuple[HumanLine, HumanLine]], why: str,
                   warn: Callable[[str], object]) -> Refusal:
    items: List[Dict[str, Any]] = []
    rows = []
    for hl, orig in changed:
        was, now = describe(orig.rec), describe(hl.rec)
        rows.append(f"    {was}, signed by {orig.signer}, would become {now}")
        items.append({"line": hl.no, "was": was, "now": now, "signer": orig.signer})
    n = len(changed)
    warn(f"priors merge-driver: cannot merge {label}: the merge renumbers an id in {n} signed decision"
         f"{'s' if n != 1 else ''} by a person:\n" + "\n".join(rows) + "\n"
         "  Signing is on (.priors/allowed_signers), so the merge signs a renumbered line with your key (you\n"
         f"  vouch for it), and it could not: {why}.\n"
         "  Our version of the ledger was left in place. Set up signing "
         f"({SIGN_HELP}), then start again:\n"
         "  `git merge --abort` (or `git rebase --abort`) and merge (or rebase) again. Resolving the ledger\n"
         "  by hand would leave a line whose signature fails `priors verify`.")
    return Refusal("MERGE_CONFLICT", path=label, reason="a renumbered signed decision needs your signature",
                   decisions=items, hint=f"set up signing ({SIGN_HELP}), `git merge --abort` and merge again")
