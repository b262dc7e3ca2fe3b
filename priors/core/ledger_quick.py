"""The quick way through a ledger line, for `verify` on a large ledger: the common sound prior or
event, checked from its values without the strict rules' per-field work.

Every quick check is conservative: it clears a line only when the strict rules (`ledger_rules`)
would find nothing wrong with it, moving the state exactly as they would; anything else — an
unusual line, or a line some rule objects to — goes to the strict method, which says every message.
A property test holds the quick pass to the strict one on any ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from priors.core.canonical import dumps, flat_size, normalize
from priors.core.ledger_parse import EVENT_TEXT, PRIOR_TEXT, ns_shown_whole
from priors.core.ledger_rules import BLOCK_RANK, Checker, RunBlock
from priors.core.vocabulary import AGENT_VERDICTS, HUMAN_VERDICTS, PRIOR_RE, RUN_RE, SEVERITIES

# ------------------------------------------------------------------ lines read as text

# The canonical lines of the common events and priors (core/ledger_parse.py), with every value captured.
EVENT_LINE = re.compile(EVENT_TEXT).fullmatch
PRIOR_LINE = re.compile(PRIOR_TEXT).fullmatch


# ------------------------------------------------------------------ lines read as parsed records

class Shape:
    """What every record whose keys are exactly these, in this order, has in common: where each field
    the rules read sits among its values (-1: absent), the kind of line it can be ("prior", "event" or
    None: the strict rules only), and the length of its canonical text but for its string values
    (`size`; -1 when the keys are not in sorted order). A ledger holds a few dozen shapes."""

    FIELDS = ("t", "id", "born", "ns", "type", "claim", "facets", "scope_ref", "scope_hash", "direction", "severity",
              "depth", "review_every", "action", "by", "to", "run", "reason", "rule", "fingerprint")
    __slots__ = FIELDS + ("kind", "size")
    # where each of FIELDS sits among the values, or -1 (set by name in __init__)
    t: int
    id: int
    born: int
    ns: int
    type: int
    claim: int
    facets: int
    scope_ref: int
    scope_hash: int
    direction: int
    severity: int
    depth: int
    review_every: int
    action: int
    by: int
    to: int
    run: int
    reason: int
    rule: int
    fingerprint: int

    def __init__(self, keys: Tuple[str, ...]) -> None:
        at = {key: i for i, key in enumerate(keys)}
        for name in self.FIELDS:
            setattr(self, name, at.get(name, -1))
        n = len(keys)
        # `{"k":"v",...}`: braces, and per key two quotes, a colon, two quotes and a comma (one too many)
        self.size = 1 + 6 * n + sum(map(len, keys)) if n and list(keys) == sorted(keys) else -1
        if "redacted" not in at and all(key in at for key in ("t", "id", "born", "ns", "type", "claim", "facets")):
            self.kind: Optional[str] = "prior"
        elif "reason_redacted" not in at and all(key in at for key in ("t", "id", "action")):
            self.kind = "event"
        else:
            self.kind = None


_FACETS_SEEN: Dict[Any, Optional[Tuple[str, int, str]]] = {}  # a facets object's items -> facets_verdict
_FACETS_SEEN_MAX = 4096


def facets_verdict(facets: Any) -> Optional[Tuple[str, int, str]]:
    """(its scope, the length of its canonical text, that text) for a facets object the strict rule
    finds nothing wrong with, its keys in sorted order; None for any other value.

    A ledger holds a handful of distinct facet objects: each is judged once, by the strict method."""
    if type(facets) is not dict:
        return None
    key = tuple(facets.items())
    try:
        return _FACETS_SEEN[key]
    except KeyError:
        pass
    except TypeError:  # a value that is a list or an object: the strict method says what is wrong
        return None

    probe = Checker()
    scope = probe.facets(0, "", facets)
    size = flat_size(facets)
    verdict = (scope, size, dumps(facets)) if scope is not None and not probe.problems and size > 0 else None
    if len(_FACETS_SEEN) < _FACETS_SEEN_MAX:
        _FACETS_SEEN[key] = verdict
    return verdict


# ------------------------------------------------------------------ the rules, the quick way

@dataclass
class QuickChecker(Checker):
    """The strict checker with quick methods for the common sound prior and event. Each returns True
    when the line is sound and the state moved exactly as `record` would have moved it, and False,
    having changed nothing, when `record` must check the line."""

    names: Dict[str, str] = field(default_factory=dict)  # each namespace's one string
    next_id: str = ""  # the id most likely next, while max_prior is still next_after
    next_after: int = -2

    def sound_prior(self, no: int, pid: str, born: str, ns: str, claim: str, clean: bool) -> bool:
        """A prior whose fields are all strings and, but for these, already found sound. `clean`: the
        claim is known printable with single inner spaces only (its PRIORS.md row said so)."""
        if not ns or not claim or (ns not in self.names and not ns_shown_whole(ns)):
            return False  # (a namespace no door takes: the strict rule names it)
        blk = self.block
        if blk is None:
            if RUN_RE.match(born) is None or born in self.committed:
                return False
        elif blk.run != born or blk.rank > BLOCK_RANK["prior"]:
            return False  # (the open block's run is a run id no commit record has sealed yet)
        if pid == self.next_id and self.next_after == self.max_prior:
            n = self.max_prior + 1  # the id that follows the last one, as a keeper numbers them
        else:
            m = PRIOR_RE.match(pid)
            if m is None:
                return False
            n = int(m.group(1))  # greater than every earlier id's number: so no earlier prior has this id
            if n <= self.max_prior:
                return False
        # Printable text holds no whitespace but the space (every other ECMAScript whitespace character
        # is a control, a format character or a separator): single inner spaces prove it normalized.
        if not clean and not (claim.isprintable() and "  " not in claim and claim[0] != " " and claim[-1] != " ") \
                and normalize(claim) != claim:
            return False
        ns = self.names.setdefault(ns, ns)  # one string per namespace, not one per prior
        self.max_prior = self.next_after = n
        self.next_id = f"P-{n + 1:04d}"
        self.priors[pid] = (ns, False, no)
        if blk is None:
            blk = self.block = RunBlock(born, no)
        blk.rank = BLOCK_RANK["prior"]
        blk.lines.append((no, "prior ", pid, ns))
        return True

    def sound_event(self, no: int, pid: str, action: str, by: Any, to: Any, run: Any, reason: Any) -> bool:
        """An event whose fields are all strings (None: absent), with no redacted reason."""
        if not pid:
            return False
        prior = self.priors.get(pid)
        if prior is None or prior[1]:
            return False  # an unknown prior or a tombstone: the strict method has more to say
        if action == "decide":
            if self.block is not None or by != "human" or to not in HUMAN_VERDICTS or (to == "reopen" and not reason):
                return False
            self.after_binding.pop(pid, None)
            if to == "accepted" or to == "wontfix" or to == "keep":
                self.binding[pid] = "accepted" if to == "keep" else to
            else:
                self.binding.pop(pid, None)
            return True
        if action == "disposition":
            if by != "agent" or to not in AGENT_VERDICTS:
                return False
            rank, head = BLOCK_RANK["disposition"], "disposition of "
        elif action == "scope-missing":
            rank, head = BLOCK_RANK["scope-missing"], "scope-missing of "
        else:
            return False
        blk = self.block
        if blk is None:
            if run is None or RUN_RE.match(run) is None or run in self.committed:
                return False
            blk = self.block = RunBlock(run, no)
        elif blk.run != run or blk.rank > rank or (rank == 0 and pid in blk.disposed):
            return False
        blk.rank = rank
        blk.lines.append((no, head, pid, prior[0]))
        if rank == 0:
            blk.disposed.add(pid)
            if pid in self.binding:
                self.after_binding.setdefault(pid, (no, self.binding[pid]))
        return True

    def quick_prior(self, no: int, shape: Shape, vals: List[Any], scope: str, clean: bool = False) -> bool:
        """A parsed prior line whose values are all strings — its facets (found sound with this `scope`)
        and a positive `review_every` set aside by the caller."""
        if vals[shape.t] != "prior" or not vals[shape.type]:
            return False
        if shape.scope_ref < 0:
            if scope != "repo-wide":
                return False
        elif not vals[shape.scope_ref]:
            return False
        if (shape.scope_hash >= 0 and not vals[shape.scope_hash]) or (shape.direction >= 0 and not vals[shape.direction]):
            return False
        if (shape.rule >= 0) != (shape.fingerprint >= 0) or (
                shape.rule >= 0 and not (vals[shape.rule] and vals[shape.fingerprint])):
            return False  # an analyzer's identity is both, non-empty: the strict rule names what is wrong
        if ((shape.severity >= 0 and vals[shape.severity] not in SEVERITIES)
                or (shape.depth >= 0 and vals[shape.depth] not in SEVERITIES)):
            return False
        return self.sound_prior(no, vals[shape.id], vals[shape.born], vals[shape.ns], vals[shape.claim], clean)

    def quick_event(self, no: int, shape: Shape, vals: Sequence[Any]) -> bool:
        """A parsed event line whose values are all strings."""
        if vals[shape.t] != "event":
            return False
        return self.sound_event(no, vals[shape.id], vals[shape.action], vals[shape.by] if shape.by >= 0 else None,
                                vals[shape.to] if shape.to >= 0 else None, vals[shape.run] if shape.run >= 0 else None,
                                vals[shape.reason] if shape.reason >= 0 else None)

    def text_prior(self, no: int, fields: Tuple[Any, ...], scope: str, clean: bool) -> bool:
        """A prior line `PRIOR_LINE` matched (`fields`: its groups), its facets set found sound with
        this `scope`."""
        born, claim, depth, direction, _facets, pid, ns, scope_hash, ref, severity, kind = fields
        if not kind or (ref is None and scope != "repo-wide") or ref == "" or scope_hash == "" or direction == "":
            return False
        if (severity is not None and severity not in SEVERITIES) or (depth is not None and depth not in SEVERITIES):
            return False
        return self.sound_prior(no, pid, born, ns, claim, clean)
