"""Signing a person's ledger lines with the SSH key git signs commits with, and checking them.

Signing is on when `.priors/allowed_signers` exists (OpenSSH's allowed-signers format, the file git
reads for `gpg.ssh.allowedSignersFile`). A person's verb then signs each of its lines with
`ssh-keygen -Y sign -n priors` and the key `git config user.signingkey` names (`gpg.format ssh`),
as the principal `git config user.email`, before the first byte is written; `verify` checks every
person's line with `ssh-keygen -Y verify`. The rules — what a signature covers, which lines must
carry one — are pure, in core/signing.py.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import stat
from pathlib import Path

from priors.core.canonical import JSONError, dumps, loads, split_lines
from priors.core.errors import Refusal, UsageError
from priors.core.problem import LEDGER_NAME, Problem
from priors.core.signing import (
    NAMESPACE,
    SIGNERS_NAME,
    UNREADABLE_CONFIG,
    HumanLine,
    added_lines,
    armor,
    broad_signers,
    config_changes,
    coverage,
    dearmor,
    good_principal,
    human_lines,
    is_human,
    judge,
    limited_entries,
    payload,
    signer_changes,
    unreadable_signers,
)
from priors.store.files import WARNINGS, read_bytes
from priors.store.git import ever_committed, file_at, head_holds

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

CONFIG_NAME = ".priors/config.json"
SIGN_HELP = "docs/ci.md, \"Human lines are signed\""


def signers_path(root: Any) -> str:
    return os.path.join(str(root), *SIGNERS_NAME.split("/"))


def signing_on(root: Any) -> bool:
    """Whether the repository asks for signed human lines: it holds `.priors/allowed_signers`."""
    return os.path.isfile(signers_path(root))


def signing_wanted(root: Any) -> bool:
    """`signing_on`, for a verb about to write a person's line (and the merge driver), failing closed. Signing
    once on stays on: a ledger holding a person's signed line wants every later one signed, whatever git
    shows — a commit removing the list, a HEAD pointed elsewhere, a nested repository are all an agent can
    make (hostile passes 27y, 27aa, 27ab: the person's next line went unsigned and, once committed, failed
    `verify` for good). Before the first signed line, a list HEAD holds that the work tree lacks is refused
    too. Either refusal says how to restore the list; the ledger and git are read only when it is absent."""
    if signing_on(root):
        return True
    how = "`git checkout HEAD -- .priors/allowed_signers` (or from the last commit that holds it)"
    if ledger_signed(root):
        raise refuse("the ledger holds a person's signed lines, so signing stays on, but .priors/allowed_signers is"
                     f" not in the work tree (deleted, moved, a folder in its place): restore it — {how} — and try"
                     " again (if no list was ever committed here, such a line was typed in by hand: set signing up,"
                     " docs/ci.md, and `verify` names it)")
    held = head_holds(root, [SIGNERS_NAME])
    if (held is not None and SIGNERS_NAME in held) or (held is None and ever_committed(root, SIGNERS_NAME)):
        raise refuse("signing is on (.priors/allowed_signers is committed) but the work tree's copy is missing or"
                     f" not a file: restore it — {how} — and try again (to turn signing off before any line is"
                     " signed, commit its removal first)")
    return False


def ledger_signed(root: Any) -> bool:
    """Whether the ledger holds a line a person signed: a person's line (`by: human`) whose own `sig` is a
    signature — not an agent's line holding the mark in a field of its own, which would lock a person out of
    every verb (hostile pass 27ac). Read into one buffer a block of whole lines at a time and searched for the
    few bytes a signed line must hold (`_signed_line`): ~20 ms of CPU at 100k priors, paid by a person's verb
    only where no allowed_signers is in place. (It was mapped: the mapped ledger's pages counted in the
    process's memory, +55 MB at 100k priors.)"""
    try:  # never through a symlink in the ledger's own name, never waiting on a FIFO's writer
        fd = os.open(os.path.join(str(root), *LEDGER_NAME.split("/")), _READ_FLAGS)
        with os.fdopen(fd, "rb", buffering=0) as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return False
            buf = bytearray(1 << 20)
            have = 0  # bytes at the buffer's start: the start of a line the last read cut
            while True:
                if have == len(buf):  # (a line longer than the buffer)
                    if have >= LONG_LINE:  # the file is searched mapped, as it was (hostile pass 32b: a 400 MB
                        return _signed_mapped(fh)  # line grew the buffer to ~1 GB, and MemoryError stopped the verb)
                    buf += bytes(len(buf))
                with memoryview(buf) as view:
                    n = fh.readinto(view[have:]) or 0
                end = have + n
                cut = buf.rfind(b"\n", 0, end) + 1 if n else end  # (the last line may lack its line feed)
                if _signed_line(buf, cut):
                    return True
                if not n:
                    return False
                buf[:end - cut] = buf[cut:end]
                have = end - cut
    except (OSError, ValueError):  # (ValueError: a file emptied before it was mapped)
        return False


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
LONG_LINE = 16 << 20  # a line past this is not held: the ledger is mapped instead, its pages the system's to drop


def _signed_mapped(fh: Any) -> bool:
    """`ledger_signed` over the whole file, mapped (a line too long to hold in the buffer)."""
    if os.fstat(fh.fileno()).st_size == 0:
        return False
    with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        return _signed_line(mapped, len(mapped))


def _signed_line(text: Union[bytes, bytearray, mmap.mmap], end: int) -> bool:
    """Whether one of the whole lines in `text[:end]` is a person's signed line (`ledger_signed`): each
    line holding a signature's first bytes, or a `\\u` escape that could spell them (or `sig`, `by`,
    `human`), is parsed and judged — a line re-spelled by hand is read as JSON reads it (hostile pass
    32c: `"sig":"\\u00551NI…"` or a space after a colon hid a person's signed line, and the person's
    next verb wrote an unsigned line where signing was to stay on)."""
    marks = [text.find(mark, 0, end) for mark in _CANDIDATE_MARKS]
    while True:
        at = min([a for a in marks if a >= 0], default=-1)
        if at < 0:
            return False
        if at == marks[1] and text[at + 1:at + 2] != b"u":  # an escape that spells no letter: `\\"`, `\\n`…
            marks[1] = text.find(b"\\", at + 2, end)
            continue
        start = text.rfind(b"\n", 0, at) + 1
        stop = text.find(b"\n", at, end)
        after = stop if stop >= 0 else end
        rec: Any = None
        try:
            rec = loads(text[start:after].decode("utf-8"))
        except (UnicodeDecodeError, JSONError):
            pass
        if is_human(rec) and isinstance(rec.get("sig"), str) and rec["sig"].startswith(_SIGNATURE_START):
            return True
        marks = [a if a < 0 or a >= after else text.find(mark, after, end) for a, mark in zip(marks, _CANDIDATE_MARKS)]


# How every OpenSSH signature's text begins (`dearmor`): base64 of the `SSHSIG` magic, version 1 and the
# first half of its key's length. Sixteen bytes are searched at 3x the speed of eight (~12 ms at 100k).
_SIGNATURE_START = "U1NIU0lHAAAAAQAA"
_CANDIDATE_MARKS = (_SIGNATURE_START.encode("ascii"), b"\\")  # (a backslash: the escape `\\u` could spell any of it)


# ------------------------------------------------------------------ signing a person's lines


def refuse(why: str) -> Refusal:
    return Refusal("SIGNING_FAILED", hint=f"{why}; nothing was written (set-up: {SIGN_HELP})")


def git_config(root: Any) -> Dict[str, str]:
    """Git's effective configuration in `root` (the last value of each key wins, as in git)."""
    import subprocess

    try:
        out = subprocess.run(["git", "config", "--null", "--list"], cwd=str(root), capture_output=True)
    except OSError:
        raise refuse(".priors/allowed_signers turns signing on, and the signing key is read from git's "
                     "config, but git was not found") from None
    cfg: Dict[str, str] = {}
    for entry in out.stdout.decode("utf-8", "replace").split("\0"):
        key, _, value = entry.partition("\n")
        if key:
            cfg[key.lower()] = value
    return cfg


# git's config scopes a person sets for themselves; any other (`local`, `worktree`: the repository's own
# .git/config, which an agent that can write the repository can write too) is not believed for the program
PERSON_SCOPES = ("system", "global")


def program_checked(root: Any) -> None:
    """Refuses a `gpg.ssh.program` set in the repository's own git config: it is the program handed the
    person's key, so an agent that set it there could have the person's next decision sign its own
    line too (hostile pass 27l). Set for the person (`git config --global`) it is used as git uses it."""
    import subprocess

    try:
        out = subprocess.run(["git", "config", "--show-scope", "--null", "--get-all", "gpg.ssh.program"],
                             cwd=str(root), capture_output=True)
    except OSError:
        raise refuse("the signing program (gpg.ssh.program) could not be checked: git was not found") from None
    scopes = out.stdout.decode("utf-8", "replace").split("\0")[:-1][0::2]  # (scope, value, scope, value, …)
    if out.returncode != 0 or any(scope not in PERSON_SCOPES for scope in scopes):
        raise refuse("git's gpg.ssh.program (the program handed your signing key) is set in this repository's own "
                     "git config (.git/config), which an agent working here can write: set it for yourself "
                     "(`git config --global gpg.ssh.program …`) and remove it here (`git config --unset gpg.ssh.program`)")


def signing_key(root: Any) -> Tuple[str, str, bool, str]:
    """(principal, key file for `ssh-keygen -f`, whether the key is a literal held by the agent,
    the ssh-keygen program) from git's config — or the refusal saying what is missing."""
    cfg = git_config(root)
    program = cfg.get("gpg.ssh.program") or "ssh-keygen"
    if "gpg.ssh.program" in cfg:
        program_checked(root)
    if cfg.get("gpg.format") != "ssh":
        raise refuse("signing is on (.priors/allowed_signers exists) and uses git's SSH signing key: run "
                     "`git config gpg.format ssh` and `git config user.signingkey ~/.ssh/id_ed25519.pub`")
    key = cfg.get("user.signingkey", "").strip()
    if not key:
        raise refuse("signing is on (.priors/allowed_signers exists) but git names no signing key: run "
                     "`git config user.signingkey ~/.ssh/id_ed25519.pub` (a private or public key file)")
    email = cfg.get("user.email", "").strip()
    if not good_principal(email):
        raise refuse("signing is on (.priors/allowed_signers exists) and your line names you by "
                     "`git config user.email`, which is unset or not one word: set it to your principal in "
                     ".priors/allowed_signers")
    if key.startswith("key::"):
        return email, key[len("key::"):].strip(), True, program
    if key.startswith(("ssh-", "ecdsa-", "sk-")):  # git's older spelling of a literal key
        return email, key, True, program
    path = os.path.expanduser(key)
    if not os.path.isabs(path):
        path = os.path.join(str(root), path)
    if not os.path.isfile(path):
        raise refuse(f"git's user.signingkey names {key!r}, which is not a file")
    return email, path, False, program


def ready_to_sign(root: Any) -> None:
    """The refusal `sign_lines` would give for want of a set-up — no key, no principal, no ssh-keygen —
    said before a person answers anything (the decide walk asks for a reason first). Nothing when
    signing is off or all is in place; a key the list does not hold is found at the first signature."""
    if not signing_wanted(root):
        return
    program = signing_key(root)[3]
    import shutil

    if shutil.which(program) is None:
        raise refuse(f"signing is on (.priors/allowed_signers exists) but {program} was not found: "
                     "install OpenSSH (ssh-keygen 8.2 or later)")


def run_keygen(args: Sequence[str], data: bytes) -> Tuple[int, bytes, str]:
    """(exit code, stdout, the last line of stderr) of ssh-keygen — or the refusal naming its absence."""
    import subprocess

    try:
        out = subprocess.run(list(args), input=data, capture_output=True)
    except FileNotFoundError:
        raise refuse(f"signing is on (.priors/allowed_signers exists) but {args[0]} was not found: "
                     "install OpenSSH (ssh-keygen 8.2 or later)") from None
    except OSError as exc:
        raise refuse(f"signing is on but {args[0]} could not be started: {exc.strerror or exc}") from None
    said = [ln.strip() for ln in out.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return out.returncode, out.stdout, said[-1] if said else ""


def sign_lines(root: Any, records: Iterable[Dict[str, Any]],
               before: Optional[Callable[[], Optional[bytes]]] = None) -> None:
    """Sign, in place, every person's line among `records` that carries no signature yet — when signing
    is on. Each signature is checked against allowed_signers before anything is written, so a key the
    file does not list is refused here, not found by the next `verify`. Raises SIGNING_FAILED.

    `before` gives the ledger `records` are appended to (called only when there is a line to sign):
    the signatures are then version 2, covering the content of the priors each line decides or seals
    as the ledger and the records before it define them (core/signing.py). Without it, version 1."""
    todo = [r for r in records if is_human(r) and "sig" not in r]
    if not todo or not signing_wanted(root):
        return
    import tempfile

    email, key, literal, program = signing_key(root)
    data = None if before is None else (before() or b"")
    covers = None if data is None else covers_of(data, records, todo)
    done: List[Tuple[Dict[str, Any], str, str]] = []
    with tempfile.TemporaryDirectory(prefix="priors-sign-") as tmp:
        if literal:
            keyfile = os.path.join(tmp, "key.pub")
            with open(keyfile, "w", encoding="utf-8") as fh:
                fh.write(key + "\n")
            key = keyfile
        for i, rec in enumerate(todo):
            # A person signing the same thing twice signs two lines: the nonce tells them apart. It is
            # drawn from where the line goes (the ledger's length and the line's place among `records`),
            # so the same inputs still write the same bytes.
            nonce = rec.get("nonce") or (os.urandom(8).hex() if data is None else hashlib.sha256(
                f"{len(data)}:{i}:{dumps(rec)}".encode("utf-8", "surrogatepass")).hexdigest()[:16])
            body = payload(dict(rec, signer=email, nonce=nonce), None if covers is None else covers[i])
            args = [program, "-Y", "sign", "-n", NAMESPACE, "-f", key] + (["-U"] if literal else [])
            code, out, said = run_keygen(args, body)
            sig = dearmor(out.decode("utf-8", "replace")) if code == 0 else None
            if sig is None:
                raise refuse(f"ssh-keygen could not sign with {key} ({said or f'exit {code}'})")
            why = check_one(program, signers_path(root), email, sig, body, tmp)
            if why is not None:
                fix = (f"add `{email} <your public key>` to it" if why == unlisted(email) else
                       f"mend your entry there (or add `{email} <your public key>`)")
                raise refuse(f"your signature does not verify against .priors/allowed_signers ({why}): {fix}, in a"
                             " change of its own that lands first (CI checks signatures against the list of the"
                             " change's base)")
            done.append((rec, nonce, sig))
        if done:
            committed_list_warning(root, program, email, done[-1][2], body, tmp)
    for rec, nonce, sig in done:
        rec["nonce"] = nonce
        rec["signer"] = email
        rec["sig"] = sig


def covers_of(data: bytes, records: Iterable[Dict[str, Any]], todo: Sequence[Dict[str, Any]]) -> List[List[List[str]]]:
    """The version 2 `covers` of each of `todo` (records among `records`), as they will stand in the
    ledger `data` + `records`."""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    start = data.count(b"\n") + 1
    ids = {id(r) for r in todo}
    lines = [HumanLine(start + i, r) for i, r in enumerate(records) if id(r) in ids]
    ctx = data + "".join(dumps(r) + "\n" for r in records).encode("utf-8")
    got = coverage(ctx, lines)
    return [got[hl.no] for hl in lines]


def unlisted(principal: str) -> str:
    return f"made with a key that .priors/allowed_signers does not list for {principal}"


def check_one(program: str, allowed: str, principal: str, sig: str, body: bytes, tmp: str) -> Optional[str]:
    """None when `sig` is `principal`'s valid signature of `body` under `allowed`; else why not."""
    sigfile = os.path.join(tmp, "line.sig")
    with open(sigfile, "w", encoding="ascii") as fh:
        fh.write(armor(sig))
    code, out, said = run_keygen([program, "-Y", "verify", "-f", allowed, "-I", principal, "-n", NAMESPACE,
                                  "-s", sigfile], body)
    if code == 0:
        return None
    if said:  # ("<path>:1: key has expired: …" — the path is a temporary copy when verify checks a revision's list)
        # (and without the clock: the same ledger and list give the same message on every run)
        return re.sub(r"verify time \S+ ([<>]) ", r"today \1 ", said.replace(allowed, ".priors/allowed_signers"))
    # A key the list does not hold for `principal` (another key, or the principal not listed): ssh-keygen
    # says only "Could not verify signature." on stdout, and nothing on stderr.
    told = [ln.strip() for ln in out.decode("utf-8", "replace").splitlines() if ln.strip()]
    if told and told[-1].startswith("Could not verify signature"):
        try:
            with open(allowed, "rb") as fh:
                limits = limited_entries(fh.read(), principal)
        except OSError:
            limits = []
        if limits:  # ssh-keygen says the same for a listed key whose options exclude it today
            return (f"{unlisted(principal)}, or lists it with options that exclude it now ({'; '.join(limits)}:"
                    " ssh-keygen checks valid-before, valid-after and namespaces= at verify time, not the line's)")
        return unlisted(principal)
    return told[-1] if told else f"ssh-keygen exit {code}"


# ------------------------------------------------------------------ verify: a person's lines and the change


class Review:
    """What `verify` adds about people: signature problems, warnings (unsigned lines from before
    signing, a changed config or signer list), and the person's lines the compared change adds."""

    def __init__(self) -> None:
        self.problems: List[Problem] = []
        self.warnings: List[Problem] = []
        self.added: List[Dict[str, Any]] = []


def committed_list_warning(root: Any, program: str, email: str, sig: str, body: bytes, tmp: str) -> None:
    """A warning (stderr, exit 0) when the signature verifies against the work tree's allowed_signers but
    not against the list HEAD holds: `verify` checks against the committed list, so the line would fail
    it (`BAD_SIGNATURE`) until the list's change lands first (newcomer pass 27w). Only when they differ."""
    then = file_at(root, "HEAD", SIGNERS_NAME)
    if then is None or then == read_bytes(Path(signers_path(root))):
        return
    listed = os.path.join(tmp, "committed_signers")
    with open(listed, "wb") as fh:
        fh.write(then)
    if check_one(program, listed, email, sig, body, tmp) is not None:
        WARNINGS.append("priors: warning: your key verifies against .priors/allowed_signers only as you changed it,"
                        " not as HEAD holds it — `priors verify` checks signatures against the committed list, so"
                        " this line fails it (BAD_SIGNATURE) until that change is committed, in a change of its own"
                        " that lands first")


def review(root: Any, data: Callable[[], Any], old: Optional[int], rev: Optional[str], label: str) -> Review:
    """Check the human lines of the ledger `data` gives (its bytes, or its bytes in pieces, afresh each call:
    `verify` never holds it whole) against allowed_signers — the file as `rev` holds it when it does
    (a change cannot vouch for itself by adding a key), else the working tree's — and, when there is
    a comparison (`old`: the lines of the ledger at `rev`), list the human lines the change adds and flag
    changes to .priors/config.json and .priors/allowed_signers since `rev` (`label` names it)."""
    out = Review()
    lines = human_lines(data())
    added_from = old + 1 if old is not None else line_count(data()) + 1
    if old is not None:
        out.added = added_lines(lines, added_from)
    try:
        here = read_bytes(Path(signers_path(root)))
    except UsageError:  # a folder in its place, say: read as absent (the change's list is then "removed")
        here = None
    then = file_at(root, rev, SIGNERS_NAME) if rev is not None else None
    if rev is not None:
        config_warning(out, root, rev, label)
        moved = signer_changes(then, here)
        if moved and then is not None:
            out.warnings.append(Problem(0, "SIGNERS_CHANGED", f"changed since {label} ({'; '.join(moved)}) — "
                                        f"signatures are checked against the list at {label}", SIGNERS_NAME))
        elif moved and here is not None:
            out.warnings.append(Problem(0, "SIGNERS_CHANGED", f"added since {label} ({'; '.join(moved)}) — "
                                        "the change's signatures are vouched for by the change itself: check "
                                        "that these keys are your people's", SIGNERS_NAME))
    for no, why in unreadable_signers(here):
        out.warnings.append(Problem(no, "SIGNERS_LINE_UNREADABLE", why, SIGNERS_NAME))
    for no, why in broad_signers(here):
        out.warnings.append(Problem(no, "SIGNERS_BROAD", why, SIGNERS_NAME))
    anchor = then if then is not None else here
    if anchor is None:
        signed = sum(1 for hl in lines if hl.sig is not None)
        if signed:  # signing was on once: its file's removal turns every check off, so say so
            out.warnings.append(Problem(0, "SIGNING_OFF", f"missing, yet the ledger holds {signed} signed "
                                        f"line{'s' if signed != 1 else ''} by a person: no person's line is checked "
                                        "(restore the file to check them)", SIGNERS_NAME))
        return out
    failures: Dict[int, str] = {}
    to_check = [hl for hl in lines if hl.sig is not None and hl.shape_problem() is None]
    if to_check:
        try:
            failures = check_all(anchor, to_check, coverage(data(), to_check))
        except Refusal as exc:
            out.problems.append(Problem(0, "SIGNING_UNAVAILABLE", str(exc.details.get("hint", exc.code))
                                        .replace("; nothing was written", ""), SIGNERS_NAME))
            return out
    problems, warnings = judge(lines, added_from, failures)
    out.problems += problems
    out.warnings += warnings
    return out


def line_count(data: Any) -> int:
    """`len(split_lines(data))` of a ledger's bytes, or of its bytes in pieces (never joined)."""
    if isinstance(data, (bytes, bytearray)):
        return len(split_lines(data))
    n, last = 0, b"\n"
    for piece in data:
        if piece:
            n += piece.count(b"\n")
            last = piece[-1:]
    return n + (last != b"\n")


def check_all(allowed: bytes, lines: Sequence[HumanLine],
              covers: Optional[Dict[int, List[List[str]]]] = None) -> Dict[int, str]:
    """line number → why its signature failed, for each of `lines` whose signature does not verify.
    `covers` (line number → its `coverage` in the ledger): each line is checked as version 2 first,
    then as version 1 (a line signed before version 2 covers only its own fields). One `ssh-keygen`
    per check, several at once (`each`): a ledger with a thousand signed lines took ~5.5 s one by one."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="priors-verify-") as tmp:
        path = os.path.join(tmp, "allowed_signers")
        with open(path, "wb") as fh:
            fh.write(allowed)

        def one(i: int, hl: HumanLine) -> Optional[Tuple[int, str]]:
            assert hl.sig is not None and hl.signer is not None
            here = os.path.join(tmp, str(i))  # (each check its own signature file)
            os.mkdir(here)
            why = None
            if covers is not None and hl.no in covers:
                why = check_one("ssh-keygen", path, hl.signer, hl.sig, payload(hl.rec, covers[hl.no]), here)
                if why is None:
                    return None
            why_v1 = check_one("ssh-keygen", path, hl.signer, hl.sig, payload(hl.rec), here)
            if why_v1 is None:
                return None
            # a signature that holds as version 1 but by a key not listed: say that, not version 2's
            # "incorrect signature" (the bytes it was checked against were not the ones signed)
            return hl.no, f"signed as {hl.signer}: {why_v1 if why is None or why_v1 == unlisted(hl.signer) else why}"

        return dict(got for got in each(one, list(enumerate(lines))) if got is not None)


def each(fn: Callable[..., Any], items: List[Tuple[Any, ...]], least: int = 8) -> List[Any]:
    """`[fn(*item) for item in items]`, in order — on several threads when there are at least `least`
    items (each waits on a process of its own, so the machine's cores share the work). The first
    exception any call raises is raised here, after every thread has stopped."""
    if len(items) < least:
        return [fn(*item) for item in items]
    import threading

    out: List[Any] = [None] * len(items)
    errors: List[BaseException] = []
    order = iter(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        while not errors:
            with lock:
                i = next(order, None)
            if i is None:
                return
            try:
                out[i] = fn(*items[i])
            except BaseException as exc:  # (raised below, in the caller's thread)
                errors.append(exc)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(min(8, 2 * (os.cpu_count() or 1)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return out


def config_warning(out: Review, root: Any, rev: str, label: str) -> None:
    """A warning naming every key of .priors/config.json that changed since `rev`."""
    def parsed(data: Optional[bytes]) -> Optional[Dict[str, Any]]:
        if data is None:
            return None
        try:
            obj = loads(data.decode("utf-8"))
        except (UnicodeDecodeError, JSONError):
            return {UNREADABLE_CONFIG: "unreadable"}
        return obj if isinstance(obj, dict) else {UNREADABLE_CONFIG: "not an object"}

    try:
        now = parsed(read_bytes(Path(root, *CONFIG_NAME.split("/"))))
    except UsageError:  # a folder, say: `check_files` names it (CONFIG_INVALID), never a usage error here
        now = {UNREADABLE_CONFIG: "unreadable"}
    changes = config_changes(parsed(file_at(root, rev, CONFIG_NAME)), now)
    if changes:
        out.warnings.append(Problem(0, "CONFIG_CHANGED", f"changed since {label}: {'; '.join(changes)}", CONFIG_NAME))
