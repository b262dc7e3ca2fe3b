"""Reading a claim: the words of a finding as the ideas they name, and how the claim holds each one.

Pure rules, no I/O; what `similarity` compares (its figure, caps and threshold live there). A claim
becomes weighted terms:
  1. identifiers are lifted out first — `parse()`, `Cache.get`, `snake_case`, `camelCase`, quoted or
     back-ticked names — weighted `IDENT_WEIGHT`, with their words (`validateEmail` → validate, email);
     a back-ticked or quoted literal (`-007`, `'1.2.3.4'`) is an example value, a detail;
  2. marks with a name become their word (`'-'` a dash, `../` path traversal, `O(n^2)` quadratic);
  3. the rest is lower-cased and split; phrases of the concept lexicon (`priors/core/lexicon.py`:
     `take precedence`, `out of memory`) and then single words fold to the idea they name, stemmed
     (`swallows`, `ignored`, `discards` → ignore); stop words and the framing of a review comment
     (`nit`, `consider`) go; what says what is wrong (`lexicon.ISSUES`) weighs more, light verbs
     (`sets`, `leaves`) and words every finding uses (`error`, `input`) less, the scope's own words a
     quarter (every finding on `checkout` says `checkout`).
As it reads, it remembers how the claim holds each term (`POS`...): said; denied (`not`, `never`,
`fails to`, a word that means the denial — `leaks` is `not closes` — or what follows `instead of`);
absent in passing (`no timeout`, the rest of a denied clause); wished for (`should`, `use X`). `clash`
compares two readings: one denies what the other says, they name different values of one contrast
(`first`/`last`), or they order the same two things the other way round (`before`/`after`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from priors.core.lexicon import (
    CONTRAST_OF,
    FRAMING_STEMS,
    ISSUES,
    LIGHT_STEMS,
    LONGEST_PHRASE,
    NEGATED_AS,
    NUMBER_WORDS,
    PHRASE_STARTS,
    PHRASES,
    SYMBOL_RE,
    WORDS,
    stem,
    symbol_word,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Tuple

IDENT_WEIGHT = 2.0
WORD_WEIGHT = 1.0
SCOPE_WEIGHT = 0.25
GENERIC_WEIGHT = 0.5  # words nearly every finding uses: they say little about which finding it is
ASIDE_WEIGHT = 0.5  # what follows `instead of` or `should`: the remedy, not the finding
PHRASE_WEIGHT = 1.5  # a phrase the lexicon knows (`floating point`): one idea, said in more words than one
ISSUE_WEIGHT = 1.5  # a word that says what is wrong (`lexicon.ISSUES`): the head of a finding, not a detail
DETAIL_WEIGHT = 0.3  # an example value (`e.g. -007`, a back-ticked literal): a detail, not the finding
EXAMPLE_CUES = frozenset(("eg", "like", "such", "example", "instance", "ie", "say"))  # (`e.g.` is `e`, `g`)

FAIL = frozenset(("fail", "fails", "failed", "failing"))  # `fails to close` says `does not close`

IDENT = re.compile(
    r"`([^`]{1,80})`"                                   # `anything back-ticked`
    r"|'([A-Za-z_][\w.]{0,60})'"                        # 'quoted_name'
    r"|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)"         # call()  or  a.b()
    r"|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b"           # dotted.name
    r"|\b([A-Za-z]+_\w*|_\w+)\b"                        # snake_case, _private, __dunder__
    r"|\b([a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b"     # camelCase, CamelCase
)
CAMEL = re.compile(r"([a-z0-9])([A-Z])")

STOP = frozenset("""
a an the this that these those it its it's is are was were be been being am do does did doing done
of in on at to for from by with as into onto about over under than then so such too very
and or but if when whenever while because since although though until unless whether
not no never nothing none nor only just even also still yet any all each every some more most
can could should would will shall may might must need needs needed
there here which who whom whose what where why how
i we you he she they them their our your his her him me us
has have had having get gets got make makes made use uses used using
instead rather out up down off again once both either other another same
function method code line lines call calls called value values variable
""".split())

GENERIC = frozenset("""
error input data file user value list return type name string number object result request
response item entry key
""".split())


POS, STRONG, WEAK, NEUTRAL, ASIDE, NAMED = 1, 2, 4, 8, 16, 32  # how a claim holds a term: said; denied; denied
# in passing; wished for (`should`); said as the remedy (`instead of`, `should`); as a name (`add()`)
_PRED_NEG = frozenset("""not non never cannot dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt
shouldnt hasnt havent hadnt mustnt neednt neither nor""".split())  # deny what follows: `never closes`
_ABSENT = frozenset("no without lack lacks lacking absent nothing outside".split())  # `no timeout`: the next word absent
_UNDOES = frozenset("missing break breaks broke violate violates bypass bypasses defeat defeats".split())  # and say so
_MODAL = frozenset("should must ought recommend recommended prefer consider avoid".split())  # a wish, not a fact
_BOUNDARY = frozenset("""but when whenever if because since so while which that who whom where whereas before after
until unless although though even than then""".split())  # where a denial stops
_RE = re.compile(r"\bre-(?=[a-z])")  # `re-read` says read again: read
_PREP = frozenset("for in on with to from at by into onto over under during".split())
_TOKEN = re.compile(r"\x01\d+\x01|\d+(?:\.\d+)+|[a-z0-9]+|[.,;:!?()\[\]{}|]")
_QUOTED = re.compile(r"(?<![\w'\"])(['\"])([^'\"\n]{1,40})\1(?![\w'\"])")
_DASH = re.compile(r"\s+[-\u2013\u2014]+\s+|\u2014|--")


class Reading:
    """A claim as the measure reads it: its terms and weights, how it holds each (`POS`...), the values
    of a contrast it names (`lexicon.CONTRASTS`)."""

    __slots__ = ("items", "held", "values", "issues", "order")

    def __init__(self, items: List[Tuple[str, float]], held: Dict[str, int], values: Dict[int, frozenset],
                 issues: frozenset, order: List[Tuple[frozenset, frozenset]]) -> None:
        self.items, self.held, self.values, self.issues, self.order = items, held, values, issues, order


def split_idents(claim: str) -> Tuple[List[Tuple[str, Any, str]], str]:
    """The claim cut at its identifiers (`IDENT`): for each, the text before it, its match and its
    name without `()`; and the text after the last. (`read` and the rules before issue 28 alike.)"""
    cuts: List[Tuple[str, Any, str]] = []
    pos = 0
    for m in IDENT.finditer(claim):
        cuts.append((claim[pos:m.start()], m, next(g for g in m.groups() if g is not None).strip("()")))
        pos = m.end()
    return cuts, claim[pos:]


@lru_cache(maxsize=4096)
def read(claim: str, scope: frozenset = frozenset()) -> Reading:
    """The claim's terms (see `terms`), with the concept lexicon: phrases and words folded to the
    idea they name, a denial (`not`, `never`, `fails to`; `leaks` is `not closes`) remembered on the
    word it denies, `instead of` what follows denied, `should` what follows wished for. U+0001 marks where
    an identifier was lifted out (U+0001, its number, U+0001): one the claim itself holds (no door lets it in; a ledger typed
    by hand can) is a space, not a mark naming an identifier that is not there."""
    if "\x01" in claim:
        claim = claim.replace("\x01", " ")
    placed: List[List[Tuple[str, float]]] = []
    rest: List[str] = []
    cuts, tail = split_idents(claim)
    for ahead, m, raw in cuts:
        rest.append(ahead)
        got = [] if raw.lower() in ("e.g", "i.e") else _ident(raw, scope)
        if not got and raw.lower() in ("e.g", "i.e"):
            rest.append(m.group(0))
            continue
        if got:
            rest.append(f" \x01{len(placed)}\x01 ")
            placed.append(got)
    rest.append(tail)
    text = SYMBOL_RE.sub(lambda m: symbol_word(m.group(0)), " ".join(rest))

    def literal(m: re.Match) -> str:  # `'1.2.3.4'`, `"Crème brûlée"`: an example value, a detail
        if m.group(2).strip().isalpha():  # a mark `SYMBOL_RE` named (`'-'` → dash): the word
            return m.group(2)
        placed.append([("#" + _NOT_WORD.sub("", m.group(2).casefold()), DETAIL_WEIGHT)])
        return f" \x01{len(placed) - 1}\x01 "

    text = _QUOTED.sub(literal, text)
    text = _RE.sub("", _DASH.sub(" ; ", text.lower())).replace("-", "").replace("'", "").replace("\u2019", "")
    toks = _TOKEN.findall(text)
    words = [t for t in toks if t[0].isalnum()]
    items: List[Tuple[str, float]] = []
    held: Dict[str, int] = {}
    values: Dict[int, set] = {}
    wish = alt = alt_said = False  # after `should` (wished for); after `instead of` (the remedy, denied)
    deny = absent = False  # a denial waiting for its word; an absence waiting for its word
    denied = False  # in the rest of a denied clause
    start = True  # at a clause's start (an imperative `use X` is a wish)
    clauses: List[List[str]] = [[]]
    aside: set = set()  # the items said after `instead of` or `should`
    order: List[Tuple[frozenset, frozenset]] = []  # what comes first, what follows (`before`, `after`)
    then: Optional[Tuple[frozenset, str]] = None
    wi = -1
    i = 0
    n = len(toks)
    lasts: Optional[List[int]] = None

    def hold(term: str, weight: float, neg: bool, light: bool = False, named: int = 0) -> None:
        nonlocal deny, absent, denied, alt_said
        if wish:
            how = NEUTRAL
        elif deny:
            how = POS if neg else STRONG
            deny, denied = False, True
        elif denied:
            how = WEAK
        elif absent:
            how, absent = WEAK, light  # `without holding the lock`: past `holding`, to the lock
        else:
            how = STRONG if neg else POS
        if wish or alt:
            aside.add(len(items))
            alt_said = alt
            how |= ASIDE
        how |= named
        items.append((term, weight))
        held[term] = held.get(term, 0) | how
        clauses[-1].append(term)
        dim = CONTRAST_OF.get(term)
        if dim is not None:
            values.setdefault(dim, set()).add(term)

    def end_clause() -> None:
        nonlocal then
        if then is not None:  # `the month before the day`: (month, day)
            first, word = then
            if clauses[-1]:
                order.append((first, frozenset(clauses[-1])) if word == "before" else (frozenset(clauses[-1]), first))
            then = None
        if deny and not clauses[-1] and len(clauses) > 1:  # `should take precedence but don't`: the wish denied
            for term in clauses[-2]:
                held[term] |= WEAK
        if clauses[-1]:
            clauses.append([])

    while i < n:
        t = toks[i]
        i += 1
        if t[0] == "\x01":
            for k, (term, weight) in enumerate(placed[int(t[1:-1])]):
                if k == 0:
                    hold(term, weight, False, named=NAMED)
                else:
                    if wish or alt:
                        aside.add(len(items))
                    items.append((term, weight))
            start = False
            continue
        if t[0].isalnum():
            wi += 1
        if not t[0].isalnum() or t in _BOUNDARY:
            before = frozenset(clauses[-1])
            end_clause()
            if t in ("before", "after") and before:
                then = (before, t)
            wish = alt = alt_said = deny = absent = denied = False
            start = True
            if t not in ("before", "after"):
                continue
        nxt = toks[i] if i < n else ""
        if t in _PRED_NEG:
            deny = True
            continue
        if t in FAIL and nxt == "to":
            deny = True
            i += 1
            wi += 1
            continue
        if t in ("instead", "rather") and nxt in ("of", "than"):
            alt, alt_said, deny, denied = True, False, not wish, False  # (`use X instead of Y`: still a wish)
            i += 1
            wi += 1
            continue
        if t in _MODAL or (start and t in ("use", "avoid")):
            wish = True
            continue
        if alt and alt_said and t in _PREP:  # `instead of crypto/rand for session ids`: the remedy ends
            alt = denied = False
        start = False
        if t in _ABSENT:
            absent = True
            continue
        if t[0].isdigit():
            if "." in t:  # `1.2.3.4`, `10.0.0.1`: a literal, a detail
                items.append(("#" + t.replace(".", ""), DETAIL_WEIGHT))
                continue
            if lasts is None:  # (the first number: where each run of numbers starts, worked out once)
                lasts = _word_before_numbers(words)
            if (_cued(words, lasts[wi]) if 0 <= wi < len(lasts) else example(words, wi)):  # `such as -0123`: a detail
                items.append(("#" + t.lstrip("0"), DETAIL_WEIGHT))
                continue
            hold(t, SCOPE_WEIGHT if t in scope else WORD_WEIGHT, False)
            continue
        s = stem(t)
        if s in PHRASE_STARTS:
            found: Optional[Tuple[Tuple[str, bool], int]] = None
            j, stems = i, [s]
            while j < n and len(stems) < LONGEST_PHRASE and toks[j][0].isalnum():
                stems.append(stem(toks[j]))
                j += 1
                phrase = PHRASES.get(tuple(stems))
                if phrase is not None:
                    found = (phrase, j)
            if found is not None:
                (head, neg), j = found
                wi += j - i
                i = j
                if head != "_":
                    head = "0" if head == "zero" else head  # (`division by zero`: the number 0)
                    hold(head, _weight(head, scope, PHRASE_WEIGHT), neg)
                continue
        if (t in STOP and t != "none") or s in FRAMING_STEMS:  # (`returns None`: null)
            continue
        if t in _UNDOES:  # `breaks stability`: the word, and the next one absent; `missing fsync`: absent
            if t != "missing" or not nxt[:1].isalpha() or nxt in STOP or nxt in _BOUNDARY:
                if t == "missing" and clauses[-1]:  # `the user is missing`: the user, denied
                    last = clauses[-1][-1]
                    held[last] = (held[last] & ~POS) | STRONG
                hold(fold(t), GENERIC_WEIGHT if t == "missing" else _weight(fold(t), scope), False)  # (`the header is missing`)
            absent = True
            continue
        if t in NUMBER_WORDS:  # `two concurrent transfers`: a number
            t = NUMBER_WORDS[t]
            hold(t, SCOPE_WEIGHT if t in scope else WORD_WEIGHT, False)
            continue
        head, neg = WORDS.get(s, (s, False))
        if head is s and t[:2] in ("un", "no") and len(t) > 5:  # `unvalidated`, `nonempty`: the word, denied
            base = WORDS.get(stem(t[3:] if t[2] == "n" and t[:3] == "non" else t[2:]))
            if base is not None:
                head, neg = base[0], not base[1]
        if deny and head in NEGATED_AS:  # `never returned`: dropped
            head, neg, deny, denied = NEGATED_AS[head], False, False, True
        if head in STOP:
            continue
        if head == "zero":  # `division by zero` / `height 0`: the number
            head = "0"
        w = GENERIC_WEIGHT if s in LIGHT_STEMS and head not in scope else _weight(head, scope)
        hold(head, w, neg, s in LIGHT_STEMS or t.endswith("ing"))
    end_clause()
    if aside and len(aside) < len(items):  # the remedy beside the finding weighs less; a claim all remedy, in full
        items = [(t, w * ASIDE_WEIGHT) if k in aside else (t, w) for k, (t, w) in enumerate(items)]
    issues = frozenset(t for k, (t, w) in enumerate(items) if t in ISSUES and w >= WORD_WEIGHT and k not in aside)
    return Reading(items, held, {d: frozenset(v) for d, v in values.items()}, issues, order)


def _weight(head: str, scope: frozenset, weight: float = WORD_WEIGHT) -> float:
    """A term's weight: the scope's own words a quarter, words every finding uses a half, what is
    wrong (`lexicon.ISSUES`: `timeout`, `hard-coded`, `injection`) and a phrase the lexicon knows more."""
    if head in scope:
        return SCOPE_WEIGHT
    if head in GENERIC_HEADS:
        return GENERIC_WEIGHT
    return max(weight, ISSUE_WEIGHT) if head in ISSUES else weight


def _ident(raw: str, scope: frozenset) -> List[Tuple[str, float]]:
    """The terms of one identifier (see `terms`, step 1), its main term first."""
    name = CAMEL.sub(r"\1_\2", raw).lower()  # `validateEmail` says validate, email
    parts = [p for p in re.split(r"[^a-z0-9]+", name) if p]
    if not parts:
        return []
    if all(p.isdigit() for p in parts):  # `-007`: an example value, a detail
        return [("#" + "".join(parts).lstrip("0"), DETAIL_WEIGHT)]
    key = ".".join(parts)
    last = fold(parts[-1])
    named = last in scope or key in scope
    if len(parts) == 1:  # `tags` or `parse()`: the word itself, heavier
        return [(last, SCOPE_WEIGHT if named else IDENT_WEIGHT), ("=" + key, 0.0)]  # (the name: see `_names`)
    out = [("=" + key, SCOPE_WEIGHT if named else IDENT_WEIGHT)]
    first, size = len(parts) - 1, len(parts[-1])  # (no ending longer than the lexicon's longest word is one:
    while first > 0 and size + len(parts[first - 1]) <= _LONGEST:  # a name of 20,000 parts is read in linear
        first -= 1  # time, not by joining every ending — hostile pass 27ao)
        size += len(parts[first])
    for k in range(first, len(parts) - 1):  # `hmac.compare_digest`: a name the lexicon knows (`comparedigest`)
        whole = WORDS.get("".join(parts[k:]))
        if whole is not None:
            out.append((whole[0], WORD_WEIGHT))
            break
    for p in parts:  # `Parser.parse` also names `parse`; `max_size` also says size
        f = fold(p)
        if p not in STOP and f not in STOP:
            out.append((f, SCOPE_WEIGHT if f in scope else WORD_WEIGHT))
    return out


_LONGEST = max(map(len, WORDS))  # the lexicon's longest word


def fold(w: str) -> str:
    """A word as the idea it names (`lexicon.CONCEPTS`), stemmed."""
    s = stem(w)
    got = WORDS.get(s)
    return s if got is None else got[0]


GENERIC_HEADS = frozenset(fold(w) for w in GENERIC)


def clash(a: Reading, b: Reading) -> bool:
    """Do the two readings say opposite things of one term — one denies what the other says
    (`retried without backoff` / `never retried`; `is preserved` / `is not preserved`; `returns None
    instead of raising` / `raises instead of returning None`) — or name different values of one
    contrast (`the first page` / `the last page`, `accepts` / `rejects`, `written twice` / `missing`)?"""
    for x, y in ((a.held, b.held), (b.held, a.held)):
        for term, how in x.items():
            if how & STRONG and not how & POS:
                other = y.get(term, 0)
                if other & POS and not other & (STRONG | WEAK):
                    return True
    for first, then in a.order:  # `the month before the day` / `the day before the month`
        if any(first & later and then & earlier for earlier, later in b.order):
            return True
    for dim, mine in a.values.items():
        theirs = b.values.get(dim)
        if theirs and not (mine & theirs):
            return True
    return False


def example(words: List[str], i: int) -> bool:
    """Is the number at `words[i]` an example (`e.g. 007`, `such as 0123`, `like 80`), or one of a run of them?"""
    j = i - 1
    while j >= 0 and words[j].isdigit():
        j -= 1
    return _cued(words, j)


def _cued(words: List[str], j: int) -> bool:
    """Is the word at `words[j]` (with the one before it) an example's cue (`e.g.`, `such as`, `like`)?"""
    before = words[max(0, j - 1): j + 1]
    return any(w in EXAMPLE_CUES for w in before) or before in (["e", "g"], ["i", "e"])


def _word_before_numbers(words: List[str]) -> List[int]:
    """For each word, the index of the last word before it that is not a number (-1: none) — what `example`
    walks back to, for every word at once: a claim of thousands of numbers in a row (a ledger typed by hand)
    read in linear time, not quadratic (hostile pass 27ao: 50,000 numbers took `verify` 150 s)."""
    out: List[int] = []
    last = -1
    for k, w in enumerate(words):
        out.append(last)
        if not w.isdigit():
            last = k
    return out



_NOT_WORD = re.compile(r"[\W_]+")
