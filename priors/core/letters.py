"""Text as it reads to a person or a model, whatever code points spell it: what the door compares where
a look-alike spelling would otherwise make another claim, another rule or another name.
"""

from __future__ import annotations

import unicodedata

# Letters of other scripts that look like Latin ones (and full-width forms, which NFKC folds): a lesson a
# person retired, copied with a few of them, reads the same to a model and to a person (hostile pass 27t).
_LOOKALIKE = str.maketrans(
    "аеёкморстухѕіјԁԛԝӏвнАВЕКМНОРСТУХЅІЈ" "αεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ" "օոսհ" "ıɛꭇ"
    "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ",
    "aeekmopctyxsijdqwlbhABEKMHOPCTYXSIJ" "aeikvoptuxABEZHIKMNOPTYX" "onuh" "ier"
    "abcdefghijklmnoprstuvwyz")


# Typographic marks that NFKC and NFKD leave as they are, that combine with nothing and that `_LOOKALIKE`
# does not hold: a claim of ASCII and these reads as it is written (a generated claim's `—`, a quote's `’`).
_INERT = ("\u2014", "\u2013", "\u2019", "\u2018", "\u201c", "\u201d", "\u2022", "\u00b7")


def plain_letters(claim: str) -> str:
    """The claim as it reads: NFKC-folded (full-width `Ｎｅｖｅｒ` is `Never`), accents dropped (`Névér` is
    `Never`), and the look-alikes `_LOOKALIKE` holds — Cyrillic, Greek and Armenian letters, small capitals,
    dotless `ı` — as the Latin letters they show. Lessons are compared so (`signature`, `most_similar_lesson`)."""
    if claim.isascii():
        return claim
    rest = claim
    for mark in _INERT:
        if mark in rest:
            rest = rest.replace(mark, "")
    if rest.isascii():  # (ASCII and the usual typographic marks: nothing to fold, and no character-by-character walk)
        return claim
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", claim).translate(_LOOKALIKE))
    return "".join(c for c in text if not unicodedata.combining(c))


def as_read(text: str) -> str:
    """`plain_letters`, less the format characters no one sees (a zero-width space, a soft hyphen) and
    case folded: an analyzer's rule and tool, a definition's name in a finding's words (door 7)."""
    if text.isascii():
        return text.casefold()
    return "".join(c for c in plain_letters(text) if unicodedata.category(c) != "Cf").casefold()
