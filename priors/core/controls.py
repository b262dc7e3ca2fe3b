"""Control and bidirectional-format characters: refused in new text, shown escaped everywhere.

A claim holding ESC can rewrite a reviewer's terminal (`\\x1b]0;…`, clear the screen, hide the
rest of a line); U+202E turns `evil.py` into text that reads otherwise; NUL and BEL are noise.
The policy, in one place: new text (argv, candidates, imported lessons, a reason typed in the
`decide` walk) holding any of them is a usage error before anything is written
(`control_problem`); text already in a ledger (another keeper, a hand edit) is shown with every
such character written as a visible `\\uXXXX` escape (`visible`) — on stdout, stderr, the walk,
`PRIORS.md`, the report page and the chart. The escape is the JSON one, so a JSON answer stays
valid JSON meaning the same value. Tab and line feed are text; carriage return is accepted in new
text (Windows line ends in evidence) but shown escaped, since it moves a terminal's cursor.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Optional

# Bidirectional formatting: embeddings and overrides (U+202A-U+202E), isolates (U+2066-U+2069),
# the marks (U+200E, U+200F, U+061C); then the line and paragraph separators, the interlinear
# annotation marks and the invisible tag characters (U+E0000-U+E007F, used to smuggle text).
_FORMAT = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufff9-\ufffb\U000e0000-\U000e007f"
# What is never shown raw: C0 but tab and line feed, DEL, C1, and the format characters above.
_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _FORMAT + "]")
# What new text may not hold: the same, except carriage return (a Windows line end).
_REFUSED = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f" + _FORMAT + "]")
_ASCII_SHOWN = re.compile("[\x00-\x08\x0b-\x1f\x7f]")


def _escape(m: "re.Match[str]") -> str:
    code = ord(m.group())
    if code > 0xFFFF:  # as JSON writes it: a surrogate pair
        code -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
    return "\\u%04x" % code


def visible(text: str) -> str:
    """`text` with every control or bidi-format character written as a visible `\\uXXXX` escape."""
    if text.isascii():
        if text.isprintable():  # (a C loop, twice as fast as the search: a snapshot's map is 5 MB of ASCII)
            return text
        return _ASCII_SHOWN.sub(_escape, text) if _ASCII_SHOWN.search(text) else text
    if text.isprintable():  # every character shown escaped is a control, format or separator one: none here
        return text  # (a C loop: twice as fast as the search over a JSON answer of 20 MB)
    return _SHOWN.sub(_escape, text) if _SHOWN.search(text) else text


def one_line(text: str) -> str:
    """`text` as one line of a text answer: a line feed in it (an id, a config key, a signer, a
    finding's `direction`, an analyzer's rule id — text a hand or an agent wrote) written as its JSON
    escape, so it cannot start a line of its own — a made-up `ledger sound` line, or a GitHub Actions
    command (`::add-mask::`, `::stop-commands::`, `::error`) in a CI log. The other controls are
    escaped where every answer is printed (`visible`)."""
    return text.replace("\n", "\\u000a") if "\n" in text else text


def has_control(text: str) -> bool:
    """True when new text holds a character it may not (see the module's policy)."""
    return _REFUSED.search(text) is not None


def describe(text: str) -> str:
    """The first refused character, named for a usage error: `U+001B`."""
    m = _REFUSED.search(text)
    return "" if m is None else "U+%04X" % ord(m.group())


def control_problem(value: Any) -> Optional[str]:
    """Why `value` (a string, or JSON nested any depth) may not enter the ledger, or None: a
    string or key holding a control or bidi-format character."""
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            if _REFUSED.search(v):
                return f"a control or bidirectional-format character ({describe(v)})"
        elif type(v) is dict:
            for key, item in v.items():
                if type(key) is str and _REFUSED.search(key):
                    return f"a key holding a control or bidirectional-format character ({describe(key)})"
                stack.append(item)
        elif type(v) is list:
            stack.extend(v)
    return None


_BARE = re.compile(r"^[A-Za-z0-9._:/=+-]+\Z")
_SHELL_SPECIAL_IN_DOUBLE_QUOTES = '"$`\\!'


def shell_word(text: Any) -> str:
    """A value placed into a command a person is offered to copy (`priors decide ID …`), as one
    shell word: as it is when it holds only plain characters, else single-quoted. Ledger text can be
    hand-written: a call id or a claim must never turn a suggested command into another one."""
    one = " ".join(str(text).split())  # one line: a newline would end the command
    if _BARE.match(one):
        return one
    return "'" + one.replace("'", "'\\''") + "'"


def shell_text(text: Any) -> str:
    """A phrase for `--because`: double-quoted as people write it when the shell reads nothing into
    it, else single-quoted (`shell_word`)."""
    one = " ".join(str(text).split())
    if one and not any(c in one for c in _SHELL_SPECIAL_IN_DOUBLE_QUOTES):
        return f'"{one}"'
    return "'" + one.replace("'", "'\\''") + "'"


# A terminal's escape sequences: CSI (`ESC [ … final`) and OSC (`ESC ] … BEL` or `ESC \`).
_ANSI = re.compile("\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?")


def without_controls(text: str) -> str:
    """`text` with terminal escape sequences removed and every other refused character turned into a
    space — for text that only ranks and is never stored (a query copied from a coloured prompt)."""
    return " ".join(_REFUSED.sub(" ", _ANSI.sub("", text)).split())
