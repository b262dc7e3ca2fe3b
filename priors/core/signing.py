"""A person's signature on a ledger line, as rules over plain data: which lines are a person's, what
their signature covers, how it is stored on the line, and what `verify` makes of the results.

What a signature covers (docs/ci.md, "Human lines are signed"): the line's record without `sig`
and without the two marks other writers add to a line they copy or scrub — `restated` (the merge
driver's copy of a decision) and a redaction's `reason_redacted` — and with a `reason` replaced by
its `reason_hash`, the hash a redaction leaves in its place. So a redaction, which turns a reason
into its hash, and a merge, which restates a decision, keep every signature valid; any other change
to a signed line's fields breaks it. The principal (`signer`, the person's git `user.email`) is on
the line and is covered too.
"""

from __future__ import annotations

import re

from priors.core.canonical import dumps, loads, reason_hash
from priors.core.problem import Problem

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

NAMESPACE = "priors"  # ssh-keygen -Y sign/verify -n: a priors signature is never a valid git or file signature
SIGNERS_NAME = ".priors/allowed_signers"
PAYLOAD_HEAD = "priors signed line v1\n"
NOT_COVERED = ("sig", "restated", "reason", "reason_redacted")
ARMOR_BEGIN = "-----BEGIN SSH SIGNATURE-----"
ARMOR_END = "-----END SSH SIGNATURE-----"
_BASE64 = re.compile(r"[A-Za-z0-9+/]{20,8000}={0,2}\Z")
_PRINCIPAL = re.compile(r"[^\s\x00-\x1f\x7f,\"*?!-][^\s\x00-\x1f\x7f,\"*?!]{0,253}\Z")
_HUMAN_MARK = b'"by":"human"'


def is_human(rec: Any) -> bool:
    """A line a person's verb wrote: decide, redact, an added or imported block's seal, a score."""
    return isinstance(rec, dict) and rec.get("by") == "human"


def payload(rec: Dict[str, Any]) -> bytes:
    """The bytes a person signs for `rec` (its `sig`, if any, left out)."""
    body = {k: v for k, v in rec.items() if k not in NOT_COVERED}
    if "reason" in rec:
        body["reason_hash"] = reason_hash(rec["reason"])
    return (PAYLOAD_HEAD + dumps(body) + "\n").encode("utf-8")


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


def human_lines(data: bytes) -> List[HumanLine]:
    """Every line of the ledger a person's verb wrote, in order. Only lines that spell `"by":"human"`
    are parsed (a line spelling it another way is not canonical, which verify names anyway); a
    line that does not parse is left to the ledger checks."""
    out: List[HumanLine] = []
    if _HUMAN_MARK not in data:
        return out
    for no, raw in enumerate(data.split(b"\n"), 1):
        if _HUMAN_MARK not in raw:
            continue
        try:
            rec = loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        if is_human(rec):
            out.append(HumanLine(no, rec))
    return out


def judge(lines: Sequence[HumanLine], added_from: int, failures: Dict[int, str]) -> Tuple[List[Problem], List[Problem]]:
    """(problems, warnings) for a ledger's human lines when signing is on.

    `added_from`: the first line number the compared range added (lines from there on are new in this
    change; a number past the end when there is no comparison); `failures`: line number → why its
    signature did not verify, for every signed line that failed.

    A signed line must verify. An unsigned one is a problem when the change adds it, or when it
    follows a line whose signature verified (signing had begun); otherwise it was recorded before
    signing began, and one warning lists every such line.
    """
    problems: List[Problem] = []
    early: List[int] = []
    began: Optional[int] = None
    for hl in lines:
        why = hl.shape_problem() or failures.get(hl.no)
        if why is not None:
            problems.append(Problem(hl.no, "BAD_SIGNATURE", f"{describe(hl.rec)}: a person's line whose signature "
                                    f"does not hold — {why}"))
        elif hl.sig is not None:
            if began is None:
                began = hl.no
        elif hl.no >= added_from or began is not None:
            when = "this change adds it" if hl.no >= added_from else f"signing began at line {began}"
            problems.append(Problem(hl.no, "UNSIGNED_HUMAN_LINE", f"{describe(hl.rec)}: a person's line without a "
                                    f"signature ({when}; .priors/allowed_signers turns signing on)"))
        else:
            early.append(hl.no)
    warnings: List[Problem] = []
    if early:
        listed = ", ".join(str(n) for n in early[:20]) + (" …" if len(early) > 20 else "")
        warnings.append(Problem(early[0], "UNSIGNED_BEFORE_SIGNING",
                                f"{len(early)} unsigned line{'s' if len(early) != 1 else ''} by a person, "
                                f"recorded before signing began (lines {listed}): committed before the compared "
                                "revision and before the first signed line, so they are not checked"))
    return problems, warnings


def added_lines(lines: Sequence[HumanLine], added_from: int) -> List[Dict[str, Any]]:
    """The human lines a change adds, as the reviewer's list shows them (`same_as`: an earlier line
    carrying the very same signature — a copy, or a merge's restatement)."""
    first_seen: Dict[str, int] = {}
    out: List[Dict[str, Any]] = []
    for hl in lines:
        item: Dict[str, Any] = {"line": hl.no, "says": describe(hl.rec)}
        if hl.signer is not None and hl.sig is not None:
            item["signer"] = hl.signer
        if hl.sig is not None:
            if hl.sig in first_seen:
                item["same_as"] = first_seen[hl.sig]
            else:
                first_seen[hl.sig] = hl.no
        if hl.no >= added_from:
            out.append(item)
    return out


def config_changes(old: Optional[Dict[str, Any]], new: Optional[Dict[str, Any]]) -> List[str]:
    """`key: old → new` for every key of .priors/config.json a change set, removed or changed."""
    o, n = old or {}, new or {}
    out = []
    for key in sorted(set(o) | set(n)):
        if o.get(key, None) != n.get(key, None) or (key in o) != (key in n):
            before = dumps(o[key]) if key in o else "unset"
            after = dumps(n[key]) if key in n else "unset"
            out.append(f"{key}: {before} → {after}")
    return out


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
    out: List[Tuple[int, str]] = []
    for no, line in enumerate((data or b"").decode("utf-8", "replace").splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        at = next((i for i, w in enumerate(words) if w in KEY_TYPES), None)
        if at is None or at == 0 or at + 1 >= len(words):
            out.append((no, f"line {no} names no public key (`principal [options] key-type key`): nobody can "
                            "sign with it"))
    return out
