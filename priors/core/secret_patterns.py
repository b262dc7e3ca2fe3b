"""Credential patterns: refuse text that looks like a secret before it reaches the ledger.
"""

from __future__ import annotations

import math
import re

from priors.core.errors import Refusal

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Iterator, List, Optional, Tuple

# (kind, pattern) — checked in order; the first hit names the kind.
_PATTERNS: List[Tuple[str, "re.Pattern[str]"]] = [
    ("private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("cloud access key", re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Z0-9])")),
    ("cloud API key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("GitHub token", re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("GitLab token", re.compile(r"(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,}")),
    ("Slack token", re.compile(r"(?<![A-Za-z0-9_-])xox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Slack webhook", re.compile(r"hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/[A-Za-z0-9_]+")),
    ("Stripe key", re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("API key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,}")),
    ("JWT", re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("URL with credentials", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@\"'<>]+:[^/\s@\"'<>]{3,}@[^\s/]")),
]

# `password = "…"`-style assignments: a credential word ending the name, `=` or `:`, then a literal value.
_ASSIGN = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:[A-Za-z0-9]+[_-])*"
    r"(password|passwd|passphrase|pwd|secret|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|client[_-]?secret|auth[_-]?token|access[_-]?token|token|private[_-]?key)[\"']?"
    r"\s*(?:=|:|=>)\s*"
    r"(?:\"([^\"\n]{8,})\"|'([^'\n]{8,})'|([^\s\"',;]{8,}))"
)
_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd")
_PLACEHOLDER = re.compile(r"[<>{}$%()\[\]*]|\.\.\.|…|^(?:x+|your[-_ ].*|changeme|password|example.*|placeholder|redacted)$", re.I)
_IDENTIFIER_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$")

# Candidate tokens for the entropy check: long runs of base64/url-safe characters.
_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{24,}")
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")


def shannon(s: str) -> float:
    """Bits of entropy per character of `s`."""
    counts: dict = {}
    for ch in s:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(token: str) -> bool:
    """A long random-looking token: mixed case and digits, few repeats, not a hash or a word chain."""
    core = token.strip("=")
    if len(core) < 24 or _HEX.match(core) or _UUID.match(core):
        return False
    for part in re.split(r"[/_-]", core):
        if len(part) >= 24 and _random_part(part):
            return True
    return len(core) >= 32 and "/" not in core and _random_part(core.replace("_", "").replace("-", ""))


_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _random_part(s: str) -> bool:
    if len(s) < 24:
        return False
    upper = sum(c.isupper() for c in s)
    lower = sum(c.islower() for c in s)
    digits = sum(c.isdigit() for c in s)
    if upper < 2 or lower < 2 or (digits < 1 and len(s) < 32):
        return False
    # Identifiers split into a few long words (stringEndArchive64Locator); random text into many short bits.
    if len(_SEGMENT.findall(s)) * 7 < len(s) * 2:
        return False
    return shannon(s) >= min(4.2, 0.87 * math.log2(len(s)))


def _assignment_value(m: "re.Match[str]") -> Optional[str]:
    """The assigned literal when it looks like a real credential value (not code, not a placeholder)."""
    word = m.group(1).lower()
    value = next(g for g in m.groups()[1:] if g is not None)
    if _PLACEHOLDER.search(value) or len(set(value)) < 4:
        return None
    digits = any(c.isdigit() for c in value)
    if m.group(4) is not None and len(value) < 12 and not (value.isalnum() and digits and not value.isdigit()):
        return None  # a short bare value counts only as letters with digits (letmein99): `non-empty`, `/srv/app` are prose
    mixed = digits and any(c.isupper() for c in value) and any(c.islower() for c in value)
    # A bare word with digits and no `.`/`_` (hunter2hunter2) is a value; `settings.db_password`, `DB_PASSWORD`,
    # `password_v2` and a plain word (`required`) are code or prose.
    word_value = digits and "." not in value and "_" not in value and any(c.isalpha() for c in value)
    if m.group(4) is not None and _IDENTIFIER_PATH.match(value) and not (mixed or word_value):
        return None  # password = settings.database_password — code, not a value
    if word in _PASSWORD_WORDS:
        return value
    # token/secret/key words are common in code and examples: demand a long value, no spaces, letters and digits
    if " " in value or len(value) < 16:
        return None
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return None
    return value


def scan(text: str) -> Optional[str]:
    """The kind of credential `text` seems to hold, or None."""
    if not isinstance(text, str) or not text:
        return None
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    for m in _ASSIGN.finditer(text):
        if _assignment_value(m) is not None:
            return "password assignment"
    for m in _TOKEN.finditer(text):
        if _high_entropy(m.group()):
            return "high-entropy string"
    return None


def walk_strings(value: Any, path: str) -> Iterator[Tuple[str, str]]:
    """Every string inside `value`, with a field path like `evidence[2].note`."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key in sorted(value, key=str):
            yield from walk_strings(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from walk_strings(item, f"{path}[{i}]")


HINT = ("this looks like a credential; priors never stores secrets — remove the value "
        "(describe where it lives instead) and try again")


def find(value: Any, path: str = "") -> Optional[Tuple[str, str]]:
    """(field, kind) of the first string in `value` that looks like a credential."""
    for field, text in walk_strings(value, path):
        kind = scan(text)
        if kind is not None:
            return field, kind
    return None


def guard(value: Any, path: str = "") -> None:
    """Refuse SECRET_SUSPECTED {field, kind, hint} — the secret itself is never echoed."""
    hit = find(value, path)
    if hit is not None:
        raise Refusal("SECRET_SUSPECTED", field=hit[0], kind=hit[1], hint=HINT)


def redacted(text: str) -> str:
    """`text` with what looks like a credential replaced by `[redacted: KIND]` — word by word, and
    the whole text when the credential spans words (a key block, a quoted password). For the
    traces a harness captures (prompts, tool output), which are kept, not refused."""
    if scan(text) is None:
        return text
    out = []
    for word in re.split(r"(\s+)", text):
        kind = scan(word) if word and not word.isspace() else None
        out.append(f"[redacted: {kind}]" if kind is not None else word)
    joined = "".join(out)
    kind = scan(joined)
    return joined if kind is None else f"[redacted: {kind}]"
