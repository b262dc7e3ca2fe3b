"""A person's signature on a ledger line, as rules over plain data: which lines are a person's, what
their signature covers, how it is stored on the line, and what `verify` makes of the results.

What a signature covers (docs/ci.md, "Human lines are signed"): the line's record without `sig`
and without the two marks other writers add to a line they copy or scrub — `restated` (the merge
driver's copy of a decision) and a redaction's `reason_redacted` — and with a `reason` replaced by
its `reason_hash`, the hash a redaction leaves in its place. So a redaction, which turns a reason
into its hash, and a merge, which restates a decision, keep every signature valid; any other change
to a signed line's fields breaks it. The principal (`signer`, the person's git `user.email`) is on
the line and is covered too.

Version 2 of the signed bytes (every line signed since) also covers the content of the priors the
line is about — the prior a decide or redact names, the priors an add's or import's seal commits —
as the digest of each one's prior line in the ledger before it: the sha12 of the line's text, which
is what a redaction's tombstone keeps as `content_hash` (so a redaction keeps these signatures valid
too). Version 1 lines, signed before, cover only their own fields; verify accepts either.

A signature says who, not when: an exact copy of a signed line verifies as well. So `judge` names a
line whose signature an earlier line already carries (REPLAYED_SIGNATURE) unless it changes nothing
a person decided: a decision restating the prior's latest human verdict (a merge's restatement, a
repeated `keep`), or a redaction of a prior a person already redacted (a merge's restated redact).
"""

from __future__ import annotations

import json
import re

from priors.core.canonical import dumps, loads, reason_hash, sha12
from priors.core.ledger_parse import whole_line_pieces
from priors.core.problem import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

NAMESPACE = "priors"  # ssh-keygen -Y sign/verify -n: a priors signature is never a valid git or file signature
SIGNERS_NAME = ".priors/allowed_signers"
PAYLOAD_HEAD = "priors signed line v1\n"  # a line's own fields only (lines signed before v2)
PAYLOAD_HEAD_V2 = "priors signed line v2\n"  # and the digests of the priors it decides or seals
NO_PRIOR = "-"  # the digest of a prior no earlier line defines
NOT_COVERED = ("sig", "restated", "reason", "reason_redacted")
ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
ARMOR_END = "-----END SSH SIGNATURE-----"
_BASE64 = re.compile(r"[A-Za-z0-9+/]{20,8000}={0,2}\Z")
_PRINCIPAL = re.compile(r"[^\s\x00-\x1f\x7f,\"*?!-][^\s\x00-\x1f\x7f,\"*?!]{0,253}\Z")
_HUMAN_MARK = b'"by":"human"'


def is_human(rec: Any) -> bool:
    """A line a person's verb wrote: decide, redact, an added or imported block's seal, a score."""
    return isinstance(rec, dict) and rec.get("by") == "human"


def payload(rec: Dict[str, Any], covers: Optional[List[List[str]]] = None) -> bytes:
    """The bytes a person signs for `rec` (its `sig`, if any, left out): version 1 without `covers`;
    version 2 with them — `[prior id, digest]` for each prior the line decides or seals (`coverage`)."""
    body = {k: v for k, v in rec.items() if k not in NOT_COVERED}
    if "reason" in rec:
        body["reason_hash"] = reason_hash(rec["reason"])
    if covers is None:
        return (PAYLOAD_HEAD + dumps(body) + "\n").encode("utf-8")
    return (PAYLOAD_HEAD_V2 + dumps(body) + "\n" + dumps(covers) + "\n").encode("utf-8")


def prior_digest(text: str, rec: Dict[str, Any]) -> str:
    """A prior line's digest as a signature covers it: the sha12 of its text, which a redaction keeps
    as the tombstone's `content_hash` (a tombstone's digest is that hash)."""
    kept = rec.get("content_hash")
    if rec.get("redacted") is True and isinstance(kept, str):
        return kept
    return sha12(text)


def covered(rec: Dict[str, Any]) -> Tuple[Optional[str], Optional[str]]:
    """(the prior id, the run) whose content a person's line covers: a decide or redact names its
    prior; a seal (an add's or import's `run` line) covers every prior born in its run."""
    t = rec.get("t")
    if t == "event" and rec.get("action") in ("decide", "redact") and isinstance(rec.get("id"), str):
        return rec["id"], None
    if t == "run" and isinstance(rec.get("run"), str):
        return None, rec["run"]
    return None, None


def coverage(data: Union[bytes, Iterable[bytes]], lines: Sequence[HumanLine]) -> Dict[int, List[List[str]]]:
    """line number → the `covers` of its version 2 payload, for each of `lines` (human lines of the
    ledger `data` — its bytes, or its bytes in pieces —, in order): the digest of each prior it covers
    as the lines before it define it. One pass; only prior lines that can matter are parsed."""
    pids: Set[str] = set()
    runs: Set[str] = set()
    for hl in lines:
        pid, run = covered(hl.rec)
        if pid is not None:
            pids.add(pid)
        if run is not None:
            runs.add(run)
    digest: Dict[str, str] = {}
    born: Dict[str, List[str]] = {}
    out: Dict[int, List[List[str]]] = {}
    todo = sorted(lines, key=lambda hl: hl.no)
    at = 0
    for no, raw in numbered(data):
        while at < len(todo) and todo[at].no == no:
            pid, run = covered(todo[at].rec)
            if pid is not None:
                out[no] = [[pid, digest.get(pid, NO_PRIOR)]]
            elif run is not None:
                out[no] = [[p, digest[p]] for p in born.get(run, ())]
            else:
                out[no] = []
            at += 1
        if at >= len(todo):
            break
        if b"prior" not in raw and b"\\" not in raw:  # a prior line spells `"t":"prior"`, or escapes it
            continue
        try:
            text = raw.decode("utf-8")
            rec = loads(text)
        except (UnicodeDecodeError, ValueError):
            continue
        if not isinstance(rec, dict) or rec.get("t") != "prior" or not isinstance(rec.get("id"), str):
            continue
        pid, run = rec["id"], rec.get("born")
        if pid in pids or (isinstance(run, str) and run in runs):
            digest[pid] = prior_digest(text, rec)
            if isinstance(run, str) and run in runs:
                born.setdefault(run, []).append(pid)
    return out


def good_principal(name: Any) -> bool:
    """A principal as the line may name it: one word, no control or pattern character (it is given
    to ssh-keygen as `-I` and matched against allowed_signers)."""
    return isinstance(name, str) and bool(_PRINCIPAL.match(name))


def dearmor(text: str) -> Optional[str]:
    """The base64 body of an armored SSH signature, as the line stores it; None when it is not one."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != ARMOR_BEGIN or lines[-1] != ARMOR_END:
        return None
    body = "".join(lines[1:-1])
    return body if _BASE64.match(body) else None


def armor(body: str) -> str:
    """The armored signature file ssh-keygen reads, from the line's `sig`."""
    rows = [body[i:i + 70] for i in range(0, len(body), 70)]
    return "\n".join([ARMOR_BEGIN, *rows, ARMOR_END]) + "\n"


def describe(rec: Dict[str, Any]) -> str:
    """One line of what a person's line says, for the list `verify --since` shows a reviewer."""
    t, action = rec.get("t"), rec.get("action")
    if t == "event" and action == "decide":
        text = f"decide {rec.get('id')} {rec.get('to')}"
        if isinstance(rec.get("same_as"), str):  # `decide P duplicate --of Q`, as the person typed it
            text = f"decide {rec.get('id')} duplicate of {rec['same_as']} ({rec.get('to')})"
    elif t == "event" and action == "redact":
        text = f"redact {rec.get('id')}"
    elif t == "run":
        text = f"{rec.get('via', 'seal')} {rec.get('run')} in {rec.get('ns')}"
    elif t == "score":
        text = f"score {rec.get('run')} {rec.get('outcome')}"
    else:
        text = f"{t} {action or ''}".strip()
    if rec.get("restated") is True:
        text += " (restated by a merge)"
    return text


# ------------------------------------------------------------------ the ledger's human lines


class HumanLine:
    """One line of the ledger a person's verb wrote: its number, record, and signature if any."""

    __slots__ = ("no", "rec", "sig", "signer")

    def __init__(self, no: int, rec: Dict[str, Any]) -> None:
        self.no = no
        self.rec = rec
        sig, signer = rec.get("sig"), rec.get("signer")
        self.sig: Optional[str] = sig if isinstance(sig, str) else None
        self.signer: Optional[str] = signer if isinstance(signer, str) else None

    def shape_problem(self) -> Optional[str]:
        """Why the signature cannot even be checked; None when it can (or there is none)."""
        if "sig" not in self.rec:
            return None
        if self.sig is None or not _BASE64.match(self.sig):
            return "its sig is not an SSH signature (base64)"
        if not good_principal(self.signer):
            return "its signer is missing or not a principal allowed_signers can name"
        return None


def human_lines(data: Union[bytes, Iterable[bytes]]) -> List[HumanLine]:
    """Every line of the ledger (its bytes, or its bytes in pieces: `numbered`) a person's verb wrote, in
    order. Only lines that spell `"by":"human"` are parsed (a line spelling it another way is not
    canonical, which verify names anyway); a line that does not parse is left to the ledger checks."""
    out: List[HumanLine] = []
    if isinstance(data, (bytes, bytearray)) and _HUMAN_MARK not in data:
        return out
    for no, raw in numbered(data, _HUMAN_MARK):
        if _HUMAN_MARK not in raw:
            continue
        try:
            rec = loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if is_human(rec):
            out.append(HumanLine(no, rec))
    return out


def numbered(data: Union[bytes, Iterable[bytes]], mark: bytes = b"") -> Iterator[Tuple[int, bytes]]:
    """(line number, line) of the ledger's bytes as `data.split(b"\\n")` numbers them — `data` whole, or in
    pieces as they are read (`verify`: never held whole), then a line cut in two is read whole. With
    `mark`, a piece of whole lines without it is only counted."""
    if isinstance(data, (bytes, bytearray)):
        yield from enumerate(data.split(b"\n"), 1)
        return
    no, whole = 0, True
    for piece in whole_line_pieces(data):
        whole = piece.endswith(b"\n")
        if mark and mark not in piece:
            no += piece.count(b"\n") + (not whole)
            continue
        parts = piece.split(b"\n")
        if whole:
            parts.pop()
        for raw in parts:
            no += 1
            yield no, raw
    if whole:
        yield no + 1, b""  # (what follows the last newline, as `split` gives it)


def judge(lines: Sequence[HumanLine], added_from: int, failures: Dict[int, str]) -> Tuple[List[Problem], List[Problem]]:
    """(problems, warnings) for a ledger's human lines when signing is on.

    `added_from`: the first line number the compared range added (lines from there on are new in this
    change; a number past the end when there is no comparison); `failures`: line number → why its
    signature did not verify, for every signed line that failed.

    A signed line must verify. An unsigned one is a problem when the change adds it, or when it
    follows a line whose signature verified (signing had begun); otherwise it was recorded before
    signing began, and one warning lists every such line. A line whose signature an earlier line
    already carries — a copy — is REPLAYED_SIGNATURE unless it changes nothing a person decided
    (`replayed`).
    """
    problems: List[Problem] = []
    early: List[int] = []
    began: Optional[int] = None
    # what a line says, signed (its payload, nonce and signer included) → the line that first said it:
    # a copy is known by what it says, not by its `sig` text, which more than one encoding can verify
    first: Dict[bytes, int] = {}
    word: Dict[str, str] = {}  # prior id → its latest human word so far: the status a decide gives, or redacted
    for hl in lines:
        why = hl.shape_problem() or failures.get(hl.no)
        said = word_of(hl.rec)
        if why is not None:
            problems.append(Problem(hl.no, "BAD_SIGNATURE", f"{describe(hl.rec)}: a person's line whose signature "
                                    f"does not hold — {why}"))
        elif hl.sig is not None:
            if began is None:
                began = hl.no
            said_signed = payload(hl.rec)
            if said_signed in first:
                replay = replayed(hl, first[said_signed], said, word)
                if replay is not None:
                    problems.append(replay)
            else:
                first[said_signed] = hl.no
        elif hl.no >= added_from or began is not None:
            when = "this change adds it" if hl.no >= added_from else f"signing began at line {began}"
            problems.append(Problem(hl.no, "UNSIGNED_HUMAN_LINE", f"{describe(hl.rec)}: a person's line without a "
                                    f"signature ({when}; .priors/allowed_signers turns signing on)"))
        else:
            early.append(hl.no)
        if said is not None:
            word[said[0]] = said[1]
    warnings: List[Problem] = []
    if early:
        listed = ", ".join(str(n) for n in early[:20]) + (" …" if len(early) > 20 else "")
        warnings.append(Problem(early[0], "UNSIGNED_BEFORE_SIGNING",
                                f"{len(early)} unsigned line{'s' if len(early) != 1 else ''} by a person, "
                                f"recorded before signing began (lines {listed}): committed before the compared "
                                "revision and before the first signed line, so they are not checked"))
    return problems, warnings


def word_of(rec: Dict[str, Any]) -> Optional[Tuple[str, str]]:
    """(prior id, the status it leaves) for a person's decide or redact; None for any other line."""
    pid, action, to = rec.get("id"), rec.get("action"), rec.get("to")
    if rec.get("t") != "event" or not isinstance(pid, str):
        return None
    if action == "redact":
        return pid, "redacted"
    if action == "decide":
        return pid, "open" if to == "reopen" else "accepted" if to == "keep" else to if isinstance(to, str) else "open"
    return None


def replayed(hl: HumanLine, earlier: int, said: Optional[Tuple[str, str]], word: Dict[str, str]) -> Optional[Problem]:
    """The problem with a line carrying the signature of line `earlier`, unless it changes nothing a
    person decided: a decide restating the prior's latest human word (`word`, before this line), a
    redact of a prior a person already redacted. None when it is such a restatement."""
    if said is not None and word.get(said[0]) == said[1]:
        return None
    what = describe(hl.rec)
    if said is not None and said[1] != "redacted":
        before = word.get(said[0])
        change = f"it moves {said[0]} from {before or 'no decision'} to {said[1]}"
    else:
        change = "a person's seal, score or redaction counts once"
    return Problem(hl.no, "REPLAYED_SIGNATURE",
                   f"{what}: a copy of line {earlier}'s signature, and {change} — a signature proves who signed "
                   "a line, not that they signed it again here (decide anew to change a decision)")


def added_lines(lines: Sequence[HumanLine], added_from: int) -> List[Dict[str, Any]]:
    """The human lines a change adds, as the reviewer's list shows them (`same_as`: an earlier line
    carrying the very same signature — a copy, or a merge's restatement)."""
    first_seen: Dict[bytes, int] = {}
    out: List[Dict[str, Any]] = []
    for hl in lines:
        item: Dict[str, Any] = {"line": hl.no, "says": describe(hl.rec)}
        if hl.signer is not None and hl.sig is not None:
            item["signer"] = hl.signer
        if hl.sig is not None:
            said_signed = payload(hl.rec)  # a copy is known by what it says signed (see `judge`)
            if said_signed in first_seen:
                item["same_as"] = first_seen[said_signed]
            else:
                first_seen[said_signed] = hl.no
        if hl.no >= added_from:
            out.append(item)
    return out


UNREADABLE_CONFIG = "(the file)"  # the one key of a config that cannot be read as one: "unreadable", "not an object"


def config_changes(old: Optional[Dict[str, Any]], new: Optional[Dict[str, Any]]) -> List[str]:
    """`key: old → new` for every key of .priors/config.json a change set, removed or changed."""
    o, n = old or {}, new or {}
    broken = n.get(UNREADABLE_CONFIG)
    if broken is not None and len(n) == 1:  # (the keys it held are not unset: the file cannot be read)
        return [f"the file is now {broken}, which no verb reads (see CONFIG_INVALID)"]
    out = []
    for key in sorted(set(o) | set(n)):
        if o.get(key, None) != n.get(key, None) or (key in o) != (key in n):
            before = _config_value(o[key]) if key in o else "unset"
            after = _config_value(n[key]) if key in n else "unset"
            out.append(f"{key}: {before} → {after}")
    return out


def _config_value(value: Any) -> str:
    """A config value as its JSON text — but a number past a float's range (`1e400`), which canonical
    JSON would write as `null`, as what it reads as: every verb refuses such a config, and "null"
    would tell the reviewer the key was cleared."""
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str) + \
            " (a number no float holds: every verb refuses this config)"
    return dumps(value)


def signer_changes(old: Optional[bytes], new: Optional[bytes]) -> List[str]:
    """What a change did to allowed_signers, line by line (`+ line`, `- line`), comments and blanks
    left out."""

    def entries(data: Optional[bytes]) -> List[str]:
        text = (data or b"").decode("utf-8", "replace")
        return [" ".join(ln.split()) for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]

    before, after = entries(old), entries(new)
    gone: Set[str] = set(before) - set(after)
    came: Set[str] = set(after) - set(before)
    return [f"- {e}" for e in before if e in gone] + [f"+ {e}" for e in after if e in came]


KEY_TYPES = ("ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
             "sk-ssh-ed25519@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com")


def unreadable_signers(data: Optional[bytes]) -> List[Tuple[int, str]]:
    """allowed_signers lines that name no key (`alice@example.com` alone: the key generation failed
    and the set-up went on): (line, why). Such a line lets nobody sign, silently — `ssh-keygen`
    skips it. A line is principals, optional options, then a key type and the key."""
    return [(no, f"line {no} names no public key (`principal [options] key-type key`): nobody can sign with it")
            for no, words, at in signer_lines(data) if at is None or at == 0 or at + 1 >= len(words)]


def signer_lines(data: Optional[bytes]) -> List[Tuple[int, List[str], Optional[int]]]:
    """allowed_signers' entries: (line number, its words, where its key type stands — None when none does),
    comments and blank lines left out."""
    out: List[Tuple[int, List[str], Optional[int]]] = []
    for no, line in enumerate((data or b"").decode("utf-8", "replace").splitlines(), 1):
        words = line.split()
        if words and not words[0].startswith("#"):
            out.append((no, words, next((i for i, w in enumerate(words) if w in KEY_TYPES), None)))
    return out


def broad_signers(data: Optional[bytes]) -> List[Tuple[int, str]]:
    """allowed_signers lines that vouch for more than one key of one person: a certificate authority
    (`cert-authority`: any key it certifies signs as any principal the certificate names) or a
    principal pattern (`*`, `?`, `!`: every matching name, present and future). OpenSSH allows both,
    and an organisation may mean them; they are shown on every `verify` so nobody trusts one unawares
    (hostile pass 27m: a CA line added by a change got only the generic "added" warning)."""
    out: List[Tuple[int, str]] = []
    for no, words, at in signer_lines(data):
        if at is None or at == 0:
            continue  # (`unreadable_signers` names it)
        options = ",".join(words[1:at]).lower().split(",")
        ca = "cert-authority" in options
        pattern = any(c in words[0] for c in "*?!")
        if ca or pattern:
            what = ("a certificate authority: any key it certifies signs as any principal the certificate names"
                    if ca else "one key")
            who = f"every principal matching {words[0]!r}" if pattern else repr(words[0])
            out.append((no, f"line {no} trusts {what}, for {who} — check that it is yours and meant"))
    return out


LIMITING_OPTIONS = ("valid-before=", "valid-after=", "namespaces=")


def limited_entries(data: Optional[bytes], principal: str) -> List[str]:
    """allowed_signers' entries for `principal` whose options can exclude a key that is listed —
    `line 3: valid-before=20250101` — for the message of a signature that does not verify: OpenSSH
    says only "Could not verify signature." both for a key it does not list and for one whose
    validity ended (a person who gave their key `valid-before` would otherwise read "not listed")."""
    out: List[str] = []
    for no, words, at in signer_lines(data):
        if at is None or at == 0 or principal not in words[0].split(","):
            continue
        opts = [o for o in _options(" ".join(words[1:at])) if o.lower().startswith(LIMITING_OPTIONS)
                and not (o.lower().startswith("namespaces=") and NAMESPACE in o.split("=", 1)[1].strip('"').split(","))]
        if opts:
            out.append(f"line {no}: {','.join(opts)}")
    return out


def _options(text: str) -> List[str]:
    """An options field split at its commas outside double quotes (`namespaces="git,file"` is one)."""
    out, cur, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur] if cur else out
