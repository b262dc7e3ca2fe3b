"""When two findings say the same thing in other words: a deterministic, standard-library similarity.

Pure rules, no I/O. `similarity(a, b, scope_ref)` is a figure in [0, 1]; findings at or above
`SIMILAR_AT` on related, unchanged scopes are the same finding (see `core/protocol.py`).

A claim becomes weighted terms in `reading.read`: identifiers lifted out, phrases and words folded
to the idea they name through the concept lexicon (`lexicon.py`: `swallows`/`ignores`, `hangs` is
`no timeout`, `leaks` is `not closes`), what says what is wrong weighing more and the scope's own
words a quarter — and remembers how the claim holds each (said, denied, wished for). Two adjacent
words that the other claim writes as one (`hard coded` / `hardcoded`) are joined; `unescaped` beside
`escape` is that word, negated. Two claims that deny one another (`reading.clash`: `retried without
backoff` / `never retried`, `the first page` / `the last page`; `opposite`: `X is validated` / `X
is not validated`) are not rewordings, however many words they share; nor are two that name
different things wrong (`injection` / `case-sensitive`) or one thing said of different subjects (`the
tax rate is hard-coded` / `the rounding precision is hard-coded`).

Runs sealed before issue 28 are held to the rules of their day (`legacy`: `terms`, the short synonym
table `SYNONYM_GROUPS`, `lexicon.legacy_stem`), kept byte for byte.

See `similarity` for the figure.
The threshold, the lexicon and the rules are tuned on the three labelled sets in tests/data
(similarity_corpus.json, similarity_heldout.json, similarity_heldout2.json); docs/protocol.md reports
recall and false refusals on each.
"""

from __future__ import annotations

import re
from functools import lru_cache

from priors.core.lexicon import KIN, kin, legacy_stem
from priors.core.reading import (
    ASIDE,
    ASIDE_WEIGHT,
    CAMEL,
    DETAIL_WEIGHT,
    FAIL,
    GENERIC,
    GENERIC_WEIGHT,
    IDENT_WEIGHT,
    NAMED,
    NEUTRAL,
    POS,
    SCOPE_WEIGHT,
    STOP,
    STRONG,
    WORD_WEIGHT,
    clash,
    fold,
    read,
    split_idents,
)

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Tuple

SIMILAR_AT = 0.45  # calibrated on tests/data/similarity_corpus.json: see docs/protocol.md, "Similar findings"
DIFFERENT_CODE_CAP = 0.2
THIN_SHARED = 2.5  # less weight than this in common, and not most of the shorter claim: too thin to call it the same
THIN_CAP = 0.4
SWAP_WEIGHT = 1.5  # at most this much said by one side alone, on both sides: one thing swapped, not a rewording
MIN_WEIGHT = 2.0  # a claim lighter than this (`b is theirs`) says too little to be matched by meaning
KIN_SHARE = 0.5  # related ideas (`lexicon.RELATED`), one on each side: half a shared word
MOST = 0.6  # two claims sharing this much of the longer one are not thin, however short
NEG_SAME = 0.7  # two claims this alike in their own words, one negated and the other not, say opposite things
NEGATORS = frozenset("""
not no never without cannot nothing none neither nor nobody nowhere lack lacks lacking absent missing
dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt hasnt havent hadnt mustnt neednt
""".split())  # apostrophes are dropped before words are split: `doesn't` is `doesnt`
_WORD = re.compile(r"[a-z0-9]+")
# Words reviewers use for the same idea: each group folds to its first word (stemmed at import).
SYNONYM_GROUPS = (
    "swallow ignore suppress silence silently discard eat mute",
    "error exception failure fail err",
    "raise throw crash",
    "block hang stuck forever indefinitely",
    "close leak release",
    "shadow mask override",
    "drop lose lost miss missing skip omit",
    "last final end",
    "slow quadratic inefficient performance n2",
    "hardcoded literal magic",
    "parameter param argument arg",
    "check validate verify",
    "escape sanitize",
    "concatenation interpolate interpolation concatenate format",
    "money currency amount",
    "float floating",
    "insecure unsafe broken weak",
    "platform locale",
    "timezone tz naive",
    "long split large big",
    "zero zerodivisionerror",
    "stable stability",
    "compare comparison compares compared",
    "divide division divides",
    "busywait busy spin poll",
)


_stem = legacy_stem


def _synonyms() -> Dict[str, str]:
    table: Dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        words = group.split()
        head = _stem(words[0])
        for w in words:
            table[_stem(w)] = head
    return table


SYNONYMS = _synonyms()


def _fold(w: str) -> str:
    s = _stem(w)
    return SYNONYMS.get(s, s)


GENERIC_TERMS = frozenset(_fold(w) for w in GENERIC)


@lru_cache(maxsize=1024)
def scope_words(scope_ref: Optional[str], inner: Tuple[str, ...] = (), legacy: bool = False) -> frozenset:
    """The words a scope ref names (`src/shop.py#Cart.checkout` → cart, checkout, shop), and the
    names of the definitions inside it when given (`total` for `a.py` holding `a.py#total`);
    `web/cart.js#addItem` names `additem` and, unless `legacy`, its words `add` and `item`."""
    if not scope_ref:
        return frozenset()
    out = set()
    text = " ".join((scope_ref,) + tuple(inner))
    if not legacy:
        text += " " + CAMEL.sub(r"\1_\2", text)
    for part in re.split(r"[^A-Za-z0-9_]+", text.lower()):
        for piece in [part] + (part.split("_") if "_" in part else []):
            if piece and piece not in ("src", "py", "js", "ts", "go", "rs", "lib"):
                out.add(_fold(piece) if legacy else fold(piece))
    return frozenset(out)


def terms(claim: str, scope: frozenset = frozenset(), legacy: bool = False) -> List[Tuple[str, float]]:
    """The claim's terms in order with their weights (identifiers heavier, scope names lighter): as
    `reading.read` makes them, or, `legacy`, as the door made them before issue 28 (`validateEmail` one
    word, every number a fact, the short synonym table) — what `verify` holds a run sealed without
    `door: 2` to."""
    if not legacy:
        return list(read(claim, scope).items)
    out: List[Tuple[str, float]] = []
    rest: List[str] = []
    cuts, tail = split_idents(claim)
    for before, _m, raw in cuts:
        rest.append(before)
        parts = [p for p in re.split(r"[^a-z0-9]+", raw.lower()) if p]
        if not parts:
            continue
        key = ".".join(parts)
        last = _fold(parts[-1])
        named = last in scope or key in scope
        if len(parts) == 1:  # `tags` or `parse()`: the word itself, heavier
            out.append((last, SCOPE_WEIGHT if named else IDENT_WEIGHT))
            out.append(("=" + key, 0.0))  # remembered (see `_names`), weighs nothing
            continue
        out.append(("=" + key, SCOPE_WEIGHT if named else IDENT_WEIGHT))
        for p in parts:  # `Parser.parse` also names `parse`; `max_size` also says size
            f = _fold(p)
            if p not in STOP and f not in STOP:
                out.append((f, SCOPE_WEIGHT if f in scope else WORD_WEIGHT))
    rest.append(tail)
    text = " ".join(rest).lower().replace("-", "").replace("'", "").replace("\u2019", "")
    words = _WORD.findall(text)
    for i, w in enumerate(words):
        if w in STOP or (w in FAIL and i + 1 < len(words) and words[i + 1] == "to"):
            continue  # `fails to flush` says `does not flush`: the negation, not a failure, is meant
        f = _fold(w)
        if f in STOP or not f:
            continue
        out.append((f, SCOPE_WEIGHT if f in scope else GENERIC_WEIGHT if f in GENERIC_TERMS else WORD_WEIGHT))
    return out


def _bag(items: List[Tuple[str, float]]) -> Dict[str, float]:
    bag: Dict[str, float] = {}
    for t, w in items:  # a term said twice counts once, at its heaviest
        bag[t] = max(bag.get(t, 0.0), w)
    return bag


def _join_compounds(items: List[Tuple[str, float]], other: Dict[str, float], f: Any = None) -> List[Tuple[str, float]]:
    """`hard coded` beside a claim that writes `hardcoded`: join the pair into the other's one word."""
    joins = _joins(tuple(items), f)
    if not any(j in other for j in joins if j is not None):
        return items  # (the very list: `similarity` then keeps the bag it made of it)
    out: List[Tuple[str, float]] = []
    i = 0
    while i < len(items):
        joined = joins[i] if i < len(joins) else None
        if joined is not None and joined in other:
            out.append((joined, max(items[i][1], items[i + 1][1])))
            i += 2
            continue
        out.append(items[i])
        i += 1
    return out


def forget_joins() -> None:
    """Let go of the joined words kept for claims met before (`_joins`'s cache): for a caller that meets
    thousands of claims once each (`import`), where keeping them only fills memory."""
    _joins.cache_clear()


@lru_cache(maxsize=8192)
def _joins(items: Tuple[Tuple[str, float], ...], f: Any) -> Tuple[Optional[str], ...]:
    """For each term of a claim's terms but the last, the word it and the next one make joined (as `f`,
    or `_fold`, folds it), where that is a word of its own; else None. A claim is compared with many:
    its own joins are worked out once."""
    out: List[Optional[str]] = []
    for i in range(len(items) - 1):
        a, b = items[i][0], items[i + 1][0]
        joined = (f or _fold)(a + b)
        out.append(joined if not a.startswith("=") and not b.startswith("=") and joined not in (a, b) else None)
    return tuple(out)


def _unprefixed(bag: Dict[str, float], other: Dict[str, float], f: Any = None) -> Dict[str, float]:
    """`unescaped` beside a claim that says `escape`: the same word, negated (`opposite` weighs the
    negation; `not escaped` and `unescaped` say the same)."""
    out: Dict[str, float] = {}
    for t, w in bag.items():
        if t.startswith("un") and len(t) > 5 and t not in other and (f or _fold)(t[2:]) in other:
            t = (f or _fold)(t[2:])
        out[t] = max(out.get(t, 0.0), w)
    return out


def _names(bag: Dict[str, float], scope: frozenset, f: Any = None) -> set:
    """The code a claim names that is not its own scope (`refund()` in a finding on `shop.py`)."""
    out = set()
    for t in bag:
        if t.startswith("="):
            key = t[1:]
            if key.replace(".", "") not in scope and (f or _fold)(key.split(".")[-1]) not in scope:
                out.add(key)
    return out


def _adds(bag: Dict[str, float], other: Dict[str, float]) -> bool:
    """Does `bag` hold a full-weight word or a name that `other` lacks?"""
    return any(w >= WORD_WEIGHT and t not in other for t, w in bag.items())


def _extra(bag: Dict[str, float], other: Dict[str, float]) -> float:
    return sum(w for t, w in bag.items() if t not in other)


def _numbers(bag: Dict[str, float]) -> set:
    return {t for t in bag if t.isdigit()}


def _polar(claim: str) -> Tuple[int, List[str]]:
    """(how many negations the claim holds, its other words stemmed but not folded into synonyms).

    The words are the claim's own: `leaks the socket` and `never closes the socket` share no word
    here, although the synonym table makes them one finding."""
    words = _WORD.findall(claim.lower().replace("-", "").replace("'", "").replace("\u2019", ""))
    neg = 0
    out: List[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in NEGATORS:
            neg += 1
        elif w in FAIL and i + 1 < len(words) and words[i + 1] == "to":
            neg += 1
            i += 1
        elif w not in STOP:
            out.append(_stem(w))
        i += 1
    return neg, out


def opposite(a: str, b: str) -> bool:
    """Do the two claims say opposite things — the same words, one negated and the other not?

    `the address is validated` / `the address is not validated`; `unvalidated` counts as `not
    validated` when the other claim says `validated`. Two claims that say the same in different
    words (`never closes the socket` / `leaks the socket`) are not opposite: their own words differ."""
    na, wa = _polar(a)
    nb, wb = _polar(b)
    sa, sb = set(wa), set(wb)
    for mine, theirs, side in ((sa, sb, 0), (sb, sa, 1)):
        for w in sorted(mine):
            if w.startswith("un") and len(w) > 5 and w[2:] in theirs and w not in theirs:
                mine.discard(w)
                mine.add(w[2:])
                if side == 0:
                    na += 1
                else:
                    nb += 1
    if (na + nb) % 2 == 0 or not sa or not sb:
        return False
    return 2.0 * len(sa & sb) / (len(sa) + len(sb)) >= NEG_SAME


def similarity(a: str, b: str, scope_ref: Optional[str] = None, inner: Tuple[str, ...] = (),
               legacy: bool = False, polar: bool = True) -> float:
    """How far b says what a says, in [0, 1], rounded to 2 places (the figure a refusal reports).

    The mean of the weighted Dice coefficient and the weighted overlap coefficient (shared
    weight over the lighter claim's: a rewording often adds a clause). When both claims name
    code other than their scope and the names are disjoint, they are about different code:
    the figure is capped at `DIFFERENT_CODE_CAP`; when they share less than `THIN_SHARED` of
    weight and no more than half of the lighter claim, or one of them weighs under `MIN_WEIGHT`,
    at `THIN_CAP` — unless that claim is light only for the scope's own words (`_light`): they weigh
    a quarter so that two findings on `checkout` are not alike for saying `checkout`, never so that a
    claim in the scope's words (`the tax rate is hard-coded` on `tax.py#rate`) cannot match.
    Related ideas one on each side (`lexicon.RELATED`: `swallows` / `caught`) count half as shared.
    Also capped at `THIN_CAP`: two claims that each name what is wrong (`lexicon.ISSUES`) and share
    none of it, nor anything related; one idea in common and each side an unrelated subject of its own
    (`_swapped`). At `DIFFERENT_CODE_CAP`: different numbers (a number only one side gives is a
    detail), and claims that deny one another (`reading.clash`, `opposite`).
    Claims that fold alike (`same_claim`) are 1. `inner`: refs of the definitions inside the scope,
    whose names weigh as the scope's own. `legacy`: the figure as it was before issue 28 (see `terms`).
    `polar` False: two claims that deny one another are not capped for it — a lesson beside a person's
    decision on a lesson (core/lesson_likeness.py), where saying its opposite is no more an agent's to do
    than saying it again, and where a misspelt `Nevr` must not read as the denial of `Never`.
    """
    if not legacy and same_claim(a, b):
        return 1.0
    scope = scope_words(scope_ref, inner, legacy)
    ra = rb = None
    if legacy:
        ta, tb = terms(a, scope, legacy), terms(b, scope, legacy)
    else:
        ra, rb = read(a, scope), read(b, scope)
        ta, tb = ra.items, rb.items
    ba, bb = _bag(ta), _bag(tb)
    f = None if legacy else fold
    ja, jb = _join_compounds(ta, bb, f), _join_compounds(tb, ba, f)
    ba, bb = ba if ja is ta else _bag(ja), bb if jb is tb else _bag(jb)  # (nothing joined: the same bag)
    ba, bb = _unprefixed(ba, bb, f), _unprefixed(bb, ba, f)
    if not legacy:  # `max_retries` beside `max retries`: the name is matched by its words
        ba, bb = _spelled_out(ba, bb), _spelled_out(bb, ba)
        ba, bb = _lone_numbers(ba, bb), _lone_numbers(bb, ba)
    wa, wb = sum(ba.values()), sum(bb.values())
    if wa <= 0 or wb <= 0:
        return 0.0
    shared = sum(min(ba[t], bb[t]) for t in ba.keys() & bb.keys())
    if not legacy:
        shared += _kin_shared(ba, bb)
    overlap = shared / min(wa, wb)
    figure = 0.5 * (2.0 * shared / (wa + wb)) + 0.5 * overlap
    # the same frame with one thing swapped (`ignores discounts` / `ignores taxes`): each side adds a
    # substantive word the other lacks, and little else — a rewording that adds a clause adds more
    both_add = _adds(ba, bb) and _adds(bb, ba) and _extra(ba, bb) <= SWAP_WEIGHT and _extra(bb, ba) <= SWAP_WEIGHT
    if both_add and not legacy and _kin_swap(ba, bb):
        both_add = False  # `not validated` / `accepts`: one idea said with a related one, not another thing
    said = shared if legacy else _shared(_full(ba, scope), _full(bb, scope))  # (the scope's words in full: see `_light`)
    if (said < THIN_SHARED and (overlap <= 0.5 or both_add)) or (min(wa, wb) < MIN_WEIGHT and _light(ba, bb, scope, legacy)):
        figure = min(figure, THIN_CAP)  # `cart total ignores discounts` / `totals overflow on huge carts`; `b is theirs`
    if ra is not None and rb is not None and _swapped(_full(ba, scope), _full(bb, scope), scope, ra.held, rb.held):
        figure = min(figure, THIN_CAP)  # `the tax rate is hard-coded` / `the rounding precision is hard-coded` on `rate`
    if ra is not None and rb is not None and ra.issues and rb.issues and not _kin_any(ra.issues, rb.issues):
        figure = min(figure, THIN_CAP)  # `formatted into the SQL (injection)` / `not lower-cased (case-sensitive)`
    na, nb = _names(ba, scope, f), _names(bb, scope, f)
    if na and nb and not (na & nb) and (legacy or not _same_last(na, nb)):
        figure = min(figure, DIFFERENT_CODE_CAP)
    nums_a, nums_b = _numbers(ba), _numbers(bb)
    if nums_a and nums_b and nums_a != nums_b:
        figure = min(figure, DIFFERENT_CODE_CAP)  # `finding 1` / `finding 2`, `port 80` / `port 443`: different facts
    if not polar:
        return round(figure, 2)
    if figure > DIFFERENT_CODE_CAP and ra is not None and rb is not None and clash(ra, rb):
        figure = DIFFERENT_CODE_CAP  # `retried without backoff` / `never retried`; `the first page` / `the last page`
    if figure > DIFFERENT_CODE_CAP and opposite(a, b):
        figure = DIFFERENT_CODE_CAP  # `X is validated` / `X is not validated`: one denies what the other says
    return round(figure, 2)


def _kin_swap(ba: Dict[str, float], bb: Dict[str, float]) -> bool:
    """Are the words each side adds related ideas (`lexicon.RELATED`: `validate` / `accept`)?"""
    xa = [t for t, w in ba.items() if w >= WORD_WEIGHT and t not in bb]
    xb = [t for t, w in bb.items() if w >= WORD_WEIGHT and t not in ba]
    return _kin_any(xa, xb)


def _kin_shared(ba: Dict[str, float], bb: Dict[str, float]) -> float:
    """Related ideas said one on each side (`swallows` / `caught`) count half as shared, each once."""
    xa = [(t, w) for t, w in ba.items() if t not in bb and w >= WORD_WEIGHT and t in KIN]
    if not xa:
        return 0.0
    xb = [(t, w) for t, w in bb.items() if t not in ba and w >= WORD_WEIGHT and t in KIN]
    got, used = 0.0, set()
    for t, w in xa:
        for u, v in xb:
            if u not in used and kin(t, u):
                got += KIN_SHARE * min(w, v)
                used.add(u)
                break
    return got


def _head(how: int) -> bool:
    """Is a term held as what the claim says or denies — not in passing, not as the remedy?"""
    return bool(how & (POS | STRONG)) and not how & (ASIDE | NAMED)


def _kin_any(xa: Any, xb: Any) -> bool:
    return any(kin(x, y) for x in xa for y in xb)


def _swapped(fa: Dict[str, float], fb: Dict[str, float], scope: frozenset, ha: Dict[str, int], hb: Dict[str, int]) -> bool:
    """One idea in common and each side something else (the scope's words counted in full: `the tax
    rate is hard-coded` / `the rounding precision is hard-coded` on `tax.py#rate`), unrelated."""
    common = [t for t in fa.keys() & fb.keys() if fa[t] >= WORD_WEIGHT and fb[t] >= WORD_WEIGHT
              and t not in scope and not t.startswith("=")]
    if len(common) != 1:
        return False
    xa = [t for t, w in fa.items() if t not in fb and _own(t, w, ha.get(t, 0))]
    xb = [t for t, w in fb.items() if t not in fa and _own(t, w, hb.get(t, 0))]
    return bool(xa) and bool(xb) and not _kin_any(xa, xb)


def _own(term: str, weight: float, how: int) -> bool:
    """A subject of the claim's own: a word it says or denies, or its remedy (`uses print instead of
    logging`), in full — not a name, not a word in passing."""
    if term[0] == "=" or how & NAMED or not how & (POS | STRONG | NEUTRAL):
        return False
    return weight >= (WORD_WEIGHT * ASIDE_WEIGHT if how & ASIDE else WORD_WEIGHT)


def _lone_numbers(bag: Dict[str, float], other: Dict[str, float]) -> Dict[str, float]:
    """Numbers the other claim has none of (`port 8080 is hard-coded` / `the listen port is a literal`)
    say which example, a detail; numbers on both sides that differ are different facts (`_numbers`)."""
    if not _numbers(bag) or _numbers(other):
        return bag
    return {t: (DETAIL_WEIGHT if t.isdigit() else w) for t, w in bag.items()}


def _same_last(na: set, nb: set) -> bool:
    """`file.Sync` and `Sync()`: a dotted name and the bare name of its last part are one name."""
    la = {k.rsplit(".", 1)[-1] for k in na if "." not in k}
    lb = {k.rsplit(".", 1)[-1] for k in nb if "." not in k}
    return any(k.rsplit(".", 1)[-1] in lb for k in na) or any(k.rsplit(".", 1)[-1] in la for k in nb)


def _light(ba: Dict[str, float], bb: Dict[str, float], scope: frozenset, legacy: bool) -> bool:
    """A claim light only for the scope's own words it holds (`the tax rate is hard-coded` on
    `tax.py#rate`) is light no more when, with those words in full, it says enough and shares
    enough with the other (`THIN_SHARED`): the scope's name must not push it below the threshold."""
    if legacy:
        return True
    fa, fb = _full(ba, scope), _full(bb, scope)
    shared = _shared(fa, fb)
    wa, wb = sum(fa.values()), sum(fb.values())
    if shared >= MIN_WEIGHT and shared >= MOST * min(wa, wb):  # most of the shorter claim, and enough
        return False
    return min(wa, wb) < MIN_WEIGHT or shared < THIN_SHARED


def _shared(fa: Dict[str, float], fb: Dict[str, float]) -> float:
    return sum(min(fa[t], fb[t]) for t in fa.keys() & fb.keys())


def _full(bag: Dict[str, float], scope: frozenset) -> Dict[str, float]:
    """The bag with the scope's own words at a word's weight: how much a claim says, for the thin caps."""
    return {t: (WORD_WEIGHT if w == SCOPE_WEIGHT and (t in scope or t.startswith("=")) else w) for t, w in bag.items()}


def _spelled_out(bag: Dict[str, float], other: Dict[str, float]) -> Dict[str, float]:
    """A name (`=max.retries`) the other claim does not hold as a name but spells out in words
    (`max retries`): its words, already in the bag, are the match; the name adds nothing on top."""
    out: Dict[str, float] = {}
    for t, w in bag.items():
        if t.startswith("=") and w > 0 and t not in other:
            parts = [fold(p) for p in t[1:].split(".")]
            if len(parts) > 1 and all(p in other or p in STOP for p in parts):
                out[t] = 0.0  # (kept, weightless: `_names` still knows the code it names)
                continue
        out[t] = w
    return out


def similar(a: str, b: str, scope_ref: Optional[str] = None, inner: Tuple[str, ...] = (),
            legacy: bool = False, polar: bool = True) -> Optional[float]:
    """The figure when the two claims are the same finding, else None."""
    s = similarity(a, b, scope_ref, inner, legacy, polar)
    return s if s >= SIMILAR_AT else None


def norm_direction(d: object) -> Optional[str]:
    """Directions compare after folding case and `_`/`-`/space: `Hoist_Resource` is `hoist-resource`."""
    if not isinstance(d, str):
        return None
    if _PLAIN_DIRECTION(d) is not None:  # already folded (nearly every direction): the same answer, no split
        return d
    return "-".join(re.split(r"[\s_\-]+", d.strip().lower())) or None


_PLAIN_DIRECTION = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*").fullmatch  # words joined by single hyphens: its own fold


def scopes_related(a: Optional[str], b: Optional[str]) -> bool:
    """Equal, or one contains the other: `*` everything, `dir/` what lies under it, a file its
    definitions (`f.py` ⊃ `f.py#X`), a definition its nested ones (`f.py#X` ⊃ `f.py#X.m`)."""
    if a is None or b is None:
        return False
    return a == b or _contains(a, b) or _contains(b, a)


def settled_near(settled: str, ref: str) -> bool:
    """Is a person's decision on `settled` ground that a finding on `ref` stands on: the same
    definition or file, the enclosing file or definition, or a definition inside it — not a folder
    or the whole target (`*`), which hold too much to call the ground the same."""
    if settled == "*" or settled.endswith("/") or ref == "*" or ref.endswith("/"):
        return False
    return scopes_related(settled, ref)


def _contains(outer: str, inner: str) -> bool:
    if outer == "*":
        return True
    if outer.endswith("/"):
        return inner.startswith(outer)
    if "#" not in outer:
        return inner.startswith(outer + "#")
    return inner.startswith(outer + ".")


_PUNCTUATION = re.compile(r"[^\w]+")
_NOT_WORD = re.compile(r"[\W_]+")


def folded(claim: str) -> str:
    """A claim as its words alone: case, spaces and punctuation folded away (`Tax-rate: hard coded!`
    and `tax rate hard coded` fold alike). Two claims that fold alike say the same thing whatever
    else a candidate asserts about them (`distinct_from`)."""
    return " ".join(_PUNCTUATION.sub(" ", claim.casefold()).replace("_", " ").split())


def claim_key(claim: str) -> str:
    """A claim folded to its letters and digits: case, punctuation, hyphens and whitespace gone
    (`The tax rate is hard-coded.` and `the tax rate is hardcoded` fold alike). Two claims with one
    key are the same claim, refused as identical (issue 28). An ASCII claim by `bytes.translate`,
    ten times the regex's speed (`verify` keys every claim of the ledger; same answer: a property test)."""
    if not claim.isascii():
        folded_claim = claim.casefold()
        for mark in _MARKS:  # the usual typographic marks (none a letter or digit), then perhaps ASCII
            if mark in folded_claim:
                folded_claim = folded_claim.replace(mark, "")
        if not folded_claim.isascii():
            return _NOT_WORD.sub("", folded_claim)
        claim = folded_claim
    return claim.lower().encode("ascii").translate(None, _ASCII_NOT_ALNUM).decode("ascii")


_ASCII_NOT_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())
_MARKS = ("\u2014", "\u2013", "\u2019", "\u2018", "\u201c", "\u201d", "\u2026", "\u00a0", "\u2022", "\u00b7")


def same_claim(a: str, b: str) -> bool:
    """Do the two claims fold to one key (`claim_key`)? An empty key (a claim of punctuation only) is no claim."""
    ka = claim_key(a)
    return bool(ka) and ka == claim_key(b)
