"""Argument parsing for every verb, from the small declarative spec each verb's record holds
(cli/verbs.py): flags and their kinds, aliases, how many positionals, the help text.
"""

from __future__ import annotations

from priors.core.canonical import bad_text
from priors.core.controls import describe, has_control
from priors.core.errors import UsageError
from priors.core.plain import Plain
from priors.core.spelling import nearest
from priors.core.vocabulary import MAX_TEXT_BYTES, NS_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Dict, List, Optional, Sequence, Tuple

# Flag kinds: "value" takes the next token; "bool" takes none; "multi" repeats a value;
# "rest" takes every following token that does not start with "--".
VALUE, BOOL, MULTI, REST = "value", "bool", "multi", "rest"


class Spec(Plain):
    __slots__ = ("verb", "usage", "flags", "aliases", "min_pos", "max_pos", "help")

    def __init__(self, verb: str, usage: str, flags: Optional[Dict[str, str]] = None,
                 aliases: Optional[Dict[str, str]] = None, min_pos: int = 0, max_pos: Optional[int] = 0,
                 help: str = "") -> None:
        self.verb, self.usage = verb, usage
        self.flags = {} if flags is None else flags
        self.aliases = {} if aliases is None else aliases
        self.min_pos, self.max_pos, self.help = min_pos, max_pos, help


class Parsed(Plain):
    """A verb's arguments, parsed and checked against its `spec`: positionals, options by Python name
    (`--max-inject` as `max_inject`) and the flags given, in order."""

    __slots__ = ("pos", "opts", "present", "spec")

    def __init__(self, pos: List[str], opts: Dict[str, object], present: List[str], spec: Spec) -> None:
        self.pos, self.opts, self.present, self.spec = pos, opts, present, spec

    def get(self, name: str, default=None):
        return self.opts.get(name, default)

    def has(self, name: str) -> bool:
        return name in self.present


class HelpRequested(Exception):
    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def required(a: Parsed, flag: str, metavar: str) -> str:
    """A required flag's value, or the usage error every verb words the same way."""
    value = a.get(flag)
    if not value:
        raise UsageError(f"priors {a.spec.verb}: --{flag} {metavar} is required\nusage: {a.spec.usage}")
    return str(value)


def parse(argv: Sequence[str], spec: Spec) -> Parsed:
    """The verb's arguments, checked against its spec (the number of positionals included)."""
    pos: List[str] = []
    opts: Dict[str, object] = {}
    present: List[str] = []
    i = 0
    only_pos = False
    while i < len(argv):
        tok = argv[i]
        i += 1
        if only_pos or not tok.startswith("-") or tok == "-" or _is_number(tok):
            pos.append(tok)
            continue
        if tok == "--":
            only_pos = True
            continue
        if tok in ("-h", "--help"):
            raise HelpRequested(spec.help or spec.usage)
        name, inline = tok, None
        if tok.startswith("--") and "=" in tok:
            name, inline = tok.split("=", 1)
        name = spec.aliases.get(name, name)
        kind = spec.flags.get(name)
        if kind is None:
            raise UsageError(f"priors {spec.verb}: unknown option {name}{_nearest(name, spec)}\nusage: {spec.usage}")
        key = name.lstrip("-").replace("-", "_")
        if name not in present:
            present.append(name)
        if kind == BOOL:
            if inline is not None:
                raise UsageError(f"priors {spec.verb}: {name} takes no value")
            opts[key] = True
            continue
        if kind == REST:
            vals = [] if inline is None else [inline]
            while i < len(argv) and not argv[i].startswith("--"):
                vals.append(argv[i])
                i += 1
            rest = opts.setdefault(key, [])
            assert isinstance(rest, list)  # REST and MULTI values are always lists
            rest.extend(vals)
            continue
        if inline is None:
            if i >= len(argv):
                raise UsageError(f"priors {spec.verb}: {name} needs a value\nusage: {spec.usage}")
            inline = argv[i]
            i += 1
        if name == "--ns":
            check_ns(spec.verb, inline)
        if kind == MULTI:
            many = opts.setdefault(key, [])
            assert isinstance(many, list)
            many.append(inline)
        else:
            if key in opts:
                raise UsageError(f"priors {spec.verb}: {name} given twice")
            opts[key] = inline
    if len(pos) < spec.min_pos or (spec.max_pos is not None and len(pos) > spec.max_pos):
        raise UsageError(f"priors {spec.verb}: wrong number of arguments\nusage: {spec.usage}")
    _check_texts(spec, pos, opts)
    return Parsed(pos, opts, present, spec)


def check_ns(verb: str, value: str) -> None:
    """A namespace is a name: it becomes a table cell and a heading, never a path or two lines."""
    if not NS_RE.match(value):
        hint = f" — did you mean {value.lower()}?" if NS_RE.match(value.lower()) else ""  # `--ns Ruff`: names are lowercase
        raise UsageError(f"priors {verb}: bad namespace {value!r} — lowercase letters, digits, '.', '_' and '-',"
                         f" starting with a letter or digit, at most 64 characters (e.g. code-review){hint}")


# Flags and verbs whose values name files: a file name may be any bytes, so these are not text.
PATH_FLAGS = ("--scopes", "--snapshot", "--svg", "-o", "--out", "--keep", "--raw", "--merge", "--from")
PATH_POSITIONALS = ("propose", "hash", "snapshot", "import", "merge-driver", "ingest-sarif")


# Text that is only hashed, never stored or shown: any character may be hashed (`hash --text`).
HASHED_ONLY = (("hash", "--text"),)
# Text that only ranks lessons and is never stored: control characters and terminal escapes are
# dropped from it (ops.lessons.budget_for), not refused — a harness passes a person's prompt as it is.
RANKING_ONLY = (("relevant", "--query"), ("lessons", "--query"))


def _check_texts(spec: Spec, pos: List[str], opts: Dict[str, object]) -> None:
    """Every other argument may end up in the ledger: it must be valid Unicode text (Python turns
    argv bytes that are not UTF-8 into lone surrogates) and of a sane size. Checked before any write."""
    skip = {f.lstrip("-").replace("-", "_") for f in PATH_FLAGS}
    named: List[Tuple[str, object]] = [] if spec.verb in PATH_POSITIONALS else [("an argument", p) for p in pos]
    for key, value in opts.items():
        if key not in skip:
            for v in value if isinstance(value, list) else [value]:
                named.append(("--" + key.replace("_", "-"), v))
    for what, value in named:
        if isinstance(value, str):
            check_text(spec.verb, what, value)


def check_text(verb: str, what: str, value: str) -> None:
    """An argument that may end up in the ledger or on a screen: valid Unicode (no lone surrogate),
    no control or bidi-format character (unless it is only hashed), at most MAX_TEXT_BYTES. The
    MCP server holds a tool's arguments to the same rule."""
    if bad_text(value):
        raise UsageError(f"priors {verb}: {what} is not valid text — it holds bytes that are not UTF-8"
                         " (or a lone surrogate); nothing was written")
    if has_control(value) and (verb, what) not in HASHED_ONLY and (verb, what) not in RANKING_ONLY:
        raise UsageError(f"priors {verb}: {what} holds a control or bidirectional-format character"
                         f" ({describe(value)}); nothing was written")
    if len(value) > MAX_TEXT_BYTES // 4 and len(value.encode("utf-8")) > MAX_TEXT_BYTES:
        raise UsageError(f"priors {verb}: {what} is longer than {MAX_TEXT_BYTES} bytes; nothing was written")


def _is_number(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def _nearest(name: str, spec: "Spec") -> str:
    """` — did you mean --calls?` when an unknown option is a near miss of a known one."""
    close = nearest(name, [*spec.flags, *spec.aliases])
    return f" — did you mean {close}?" if close else ""
