"""What `priors verify` holds each ledger record to: the rules, record by record, over parsed lines.

These strict methods are the reference and say every message; `ledger_quick` clears the common
sound line at speed and hands anything else to them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from priors.core.canonical import normalize, value_problem
from priors.core.ledger_parse import ns_shown_whole
from priors.core.problem import Problem
from priors.core.unseen import UNSEEN, mark_problem
from priors.core.vocabulary import (
    ACTIONS,
    AGENT_VERDICTS,
    ATTEMPT_CODES,
    CALL_RE,
    FACETS,
    HASH12_RE,
    HUMAN_VERDICTS,
    MAX_DEPTH,
    OUTCOMES,
    PRIOR_RE,
    RUN_RE,
    SESSION_VIA,
    SEVERITIES,
    id_number,
)

TOMBSTONE_KEYS = {"t", "id", "ns", "redacted", "content_hash", "born"}
REDACTED_CALL_KEYS = {"t", "call_id", "kind", "run", "ns", "conflicts_with", "redacted"}

# Order of a run's lines at commit (contract §7 commit): dispositions, scope-missing, priors, calls, the run record.
# The lessons loop adds `injected` (what a budgeted run was shown) just before the run record.
BLOCK_RANK = {"disposition": 0, "scope-missing": 1, "prior": 2, "call": 3, "injected": 4}
_NS_OF = itemgetter(3)  # the namespace of a line of a run's block


def _nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and value != ""


# ------------------------------------------------------------------ the ledger checker


@dataclass
class RunBlock:
    run: str
    start: int
    rank: int = -1
    lines: List[Tuple[int, str, str, Any]] = field(default_factory=list)  # (line, what, more of what, ns)
    disposed: Set[str] = field(default_factory=set)


@dataclass
class Checker:
    problems: List[Problem] = field(default_factory=list)
    warnings: List[Problem] = field(default_factory=list)
    # id -> (its ns, whether it is a tombstone, its line): what later lines ask of a prior, not its record
    priors: Dict[str, Tuple[Any, bool, int]] = field(default_factory=dict)
    redact_seen: Set[str] = field(default_factory=set)
    max_prior: int = -1
    committed: Dict[str, int] = field(default_factory=dict)  # run -> line of its commit record
    call_ids: Set[str] = field(default_factory=set)
    block: Optional[RunBlock] = None
    # tombstone line numbers waiting for their redact event
    tombstones: Dict[str, int] = field(default_factory=dict)
    after_redact: Dict[str, int] = field(default_factory=dict)
    binding: Dict[str, str] = field(default_factory=dict)  # prior -> the binding verdict a person last gave it
    # agent verdicts on a binding prior, waiting for a later human word on it (a merge restates one)
    after_binding: Dict[str, Tuple[int, str]] = field(default_factory=dict)
    # runs sealed as a scored coding session (`via: session`) that no person's score of has followed yet:
    # only `priors score` writes such a seal, in the same write as its score
    unscored_sessions: Dict[str, int] = field(default_factory=dict)

    def add(self, line: int, code: str, message: str) -> None:
        self.problems.append(Problem(line, code, message))

    def warn(self, line: int, code: str, message: str) -> None:
        self.warnings.append(Problem(line, code, message))

    # -- structure of run blocks

    def belong(self, no: int, run: Any, what: str, ns: Any) -> None:
        """A line written by the commit of `run`: it must sit inside that run's one contiguous block."""
        if not isinstance(run, str) or not RUN_RE.match(run):
            return  # the field check already named it
        if run in self.committed:
            self.add(no, "RUN_ALREADY_SEALED",
                     f"{what} belongs to {run}, which was already sealed by its commit record on line {self.committed[run]}")
            return
        blk = self.block
        if blk is not None and blk.run != run:
            self.add(no, "RUN_NOT_CONTIGUOUS",
                     f"{what} belongs to {run} but stands inside the block of {blk.run}"
                     f" (opened on line {blk.start}, not yet sealed)")
            return
        if blk is None:
            blk = self.block = RunBlock(run, no)
        rank = BLOCK_RANK.get(what.split(" ")[0], 0)
        if rank < blk.rank:
            self.add(no, "BLOCK_ORDER",
                     f"{what} is out of order in {run}'s block (dispositions, scope-missing, priors, calls, then the run record)")
        blk.rank = max(blk.rank, rank)
        blk.lines.append((no, what, "", ns))

    def outside_block(self, no: int, what: str) -> None:
        if self.block is not None:
            self.add(no, "INSIDE_RUN_BLOCK",
                     f"{what} has no run but stands inside the block of {self.block.run}"
                     f" (opened on line {self.block.start}); it belongs between runs")

    def seal(self, no: int, rec: Dict[str, Any]) -> None:
        run, ns = rec.get("run"), rec.get("ns")
        if not isinstance(run, str) or not RUN_RE.match(run):
            return
        if run in self.committed:
            self.add(no, "DUPLICATE_COMMIT", f"{run} is sealed twice (first commit record on line {self.committed[run]})")
            return
        blk = self.block
        if blk is not None and blk.run != run:
            self.add(no, "RUN_NOT_CONTIGUOUS",
                     f"the commit record of {run} stands inside the block of {blk.run}"
                     f" (opened on line {blk.start}, not yet sealed)")
            return
        if blk is not None and isinstance(ns, str) and list(map(_NS_OF, blk.lines)).count(ns) != len(blk.lines):
            for line, what, more, other_ns in blk.lines:  # (only a block with another namespace in it gets here)
                if isinstance(other_ns, str) and other_ns != ns:
                    self.add(line, "RUN_NS_MISMATCH", f"{what}{more} is in namespace {other_ns!r} but {run} is a run of {ns!r}")
        self.committed[run] = no
        self.block = None

    def finish(self) -> None:
        if self.block is not None:
            self.add(self.block.start, "UNSEALED_RUN", f"{self.block.run} starts here but no commit record seals it")
        for pid, no in self.tombstones.items():
            self.add(no, "TOMBSTONE_WITHOUT_REDACT", f"{pid} is a tombstone but no redact event for it follows")
        for pid, no in self.after_redact.items():
            self.add(no, "EVENT_AFTER_REDACT",
                     f"an event of {pid} comes after its redaction and no later redact event restates it")
        for run, no in self.unscored_sessions.items():
            self.add(no, "SESSION_NOT_SCORED", f"{run} is sealed as a coding session a person scored (via: session), but"
                     " no score of it follows — only `priors score` seals a session, with its score in the same write")
        for pid, (no, status) in self.after_binding.items():
            self.add(no, "AGENT_AFTER_BINDING", f"an agent verdict on {pid} after a person made it {status}, and no later "
                     "decision restates theirs — only `priors decide` changes a binding prior (the keeper ignores this verdict)")

    # -- one record

    def record(self, no: int, rec: Dict[str, Any], plain: bool = False) -> None:
        """Check one parsed line; `plain`: its text already proved it holds no value the writer refuses."""
        why = None if plain else value_problem(rec, MAX_DEPTH)
        if why is not None:  # the writer's limits at the door (core.grammar.check_at_door), held here too
            self.add(no, "BAD_VALUE", f"the line holds {why} — no keeper writes that and not every reader can read it")
        t = rec.get("t")
        if "t" not in rec:
            self.add(no, "MISSING_FIELD", "record has no `t`")
            return
        if t == "prior":
            self.prior(no, rec)
        elif t == "event":
            self.event(no, rec)
        elif t == "call":
            self.call(no, rec)
        elif t == "run":
            self.run(no, rec)
        elif t == "injected":
            self.injected(no, rec)
        elif t == "score":
            self.score(no, rec)
        elif t == "learned":
            self.learned(no, rec)
        else:
            self.warn(no, "UNKNOWN_TYPE", f"unknown record type {t!r} (tolerated — another keeper may write it)")

    def need(self, no: int, rec: Dict[str, Any], keys: Sequence[str], what: str) -> bool:
        ok = True
        for key in keys:
            if not _nonempty_str(rec.get(key)):
                if key in rec:
                    self.add(no, "BAD_FIELD", f"{what}: `{key}` must be a non-empty string")
                else:
                    self.add(no, "MISSING_FIELD", f"{what}: missing `{key}`")
                ok = False
        return ok

    def prior(self, no: int, rec: Dict[str, Any]) -> None:
        pid = rec.get("id")
        what = f"prior {pid}" if isinstance(pid, str) else "prior"
        if not isinstance(pid, str):
            self.add(no, "MISSING_FIELD" if "id" not in rec else "BAD_FIELD", "prior: missing or non-string `id`")
            return
        n = id_number(PRIOR_RE, pid, -1)
        if n < 0:
            self.add(no, "BAD_ID", f"prior id {pid!r} is not `P-` and four to eighteen digits")
        elif pid in self.priors:
            self.add(no, "DUPLICATE_ID", f"prior id {pid} already used on line {self.priors[pid][2]}")
            return
        elif n <= self.max_prior:
            self.add(no, "ID_NOT_INCREASING", f"prior id {pid} does not increase (an earlier prior is P-{self.max_prior:04d})")
        self.max_prior = max(self.max_prior, n)
        self.priors[pid] = (rec.get("ns"), rec.get("redacted") is True, no)
        born = rec.get("born")
        if self.need(no, rec, ["ns", "born"], what) and isinstance(born, str) and not RUN_RE.match(born):
            self.add(no, "BAD_FIELD", f"{what}: born {born!r} is not a run id")
        ns = rec.get("ns")
        if isinstance(ns, str) and ns and not ns_shown_whole(ns):
            # no keeper's door takes such a name (ours: NS_RE); a line feed in it forged lines of `status`
            # and `list`, a zero-width space made a second "code-review" (hostile pass 27q). Other names
            # outside NS_RE (capitals: another keeper may have taken them) stand.
            self.add(no, "BAD_FIELD", f"{what}: namespace {ns!r} holds a space, control or format character —"
                     " a namespace is a name like code-review")
        if rec.get("redacted") is True or "redacted" in rec:
            self.tombstone(no, pid, rec)
        else:
            self.live_prior(no, what, rec)
        self.belong(no, born, what, rec.get("ns"))

    def tombstone(self, no: int, pid: str, rec: Dict[str, Any]) -> None:
        if rec.get("redacted") is not True:
            self.add(no, "BAD_TOMBSTONE", f"tombstone {pid}: `redacted` must be true")
        extra = sorted(set(rec) - TOMBSTONE_KEYS)
        if extra:
            self.add(no, "BAD_TOMBSTONE",
                     f"tombstone {pid} still carries {', '.join(extra)} — a tombstone keeps only id, ns, born and content_hash")
        ch = rec.get("content_hash")
        if not (isinstance(ch, str) and HASH12_RE.match(ch)):
            self.add(no, "BAD_TOMBSTONE", f"tombstone {pid}: content_hash must be 12 lowercase hex digits")
        self.tombstones[pid] = no

    def live_prior(self, no: int, what: str, rec: Dict[str, Any]) -> None:
        self.need(no, rec, ["type"], what)
        claim = rec.get("claim")
        if not isinstance(claim, str) or claim == "":  # as _nonempty_str, spelled out so the checker knows a str follows
            self.add(no, "MISSING_FIELD" if "claim" not in rec else "BAD_FIELD", f"{what}: missing or empty `claim`")
        elif normalize(claim) != claim:
            self.add(no, "BAD_FIELD", f"{what}: claim is not stored normalized")
        facets = rec.get("facets")
        scope = self.facets(no, what, facets)
        if scope is not None and scope != "repo-wide" and not _nonempty_str(rec.get("scope_ref")):
            self.add(no, "MISSING_FIELD", f"{what}: a {scope} scope needs a `scope_ref`")
        for key in ("severity", "depth"):
            if key in rec and rec[key] not in SEVERITIES:
                self.add(no, "BAD_FIELD", f"{what}: {key} {rec[key]!r} is not minor, major or gate")
        if "review_every" in rec:
            every = rec["review_every"]
            if isinstance(every, bool) or not isinstance(every, int) or every < 1:
                self.add(no, "BAD_FIELD", f"{what}: review_every must be a positive integer")
        for key in ("scope_ref", "scope_hash", "direction", "rule", "fingerprint"):
            if key in rec and not _nonempty_str(rec[key]):
                self.add(no, "BAD_FIELD", f"{what}: `{key}` must be a non-empty string")
        if ("rule" in rec) != ("fingerprint" in rec):  # an analyzer's identity (docs/sarif.md): both or neither
            self.add(no, "BAD_FIELD", f"{what}: an analyzer's identity needs both `rule` and `fingerprint`, or neither")

    def facets(self, no: int, what: str, facets: Any) -> Optional[str]:
        if not isinstance(facets, dict):
            self.add(no, "MISSING_FIELD" if facets is None else "BAD_FACETS",
                     f"{what}: `facets` must be an object of the five facets")
            return None
        ok = True
        for name, values in FACETS.items():
            v = facets.get(name)
            if name not in facets:
                self.add(no, "BAD_FACETS", f"{what}: facet {name} is missing")
                ok = False
            elif name == "authority" and v == "binding":
                self.add(no, "BINDING_FACET",
                         f"{what}: authority is never self-assigned — `binding` comes only from a human decision")
            elif v not in values:
                self.add(no, "BAD_FACETS", f"{what}: {name} {v!r} is not one of {', '.join(values)}")
                ok = False
        for name in sorted(set(facets) - set(FACETS)):
            self.add(no, "BAD_FACETS", f"{what}: unknown facet {name!r}")
        if not ok:
            return None
        rules = [
            ("obligation", "inject-as-instruction", "activation", "run-start"),
            ("obligation", "disposition-required", "activation", "verify-phase"),
            ("obligation", "veto-only", "activation", "propose-gate"),
        ]
        for a, av, b, bv in rules:
            if facets[a] == av and facets[b] != bv:
                self.add(no, "INCOHERENT_FACETS", f"{what}: {av} needs {bv}, not {facets[b]}")
        if facets["scope"] == "repo-wide" and facets["lifecycle"] == "stale-on-scope-change":
            self.add(no, "INCOHERENT_FACETS", f"{what}: repo-wide cannot be stale-on-scope-change")
        return facets["scope"]

    def event(self, no: int, rec: Dict[str, Any]) -> None:
        pid, action = rec.get("id"), rec.get("action")
        what = f"{action or 'event'} of {pid}" if isinstance(pid, str) else f"{action or 'event'}"
        if not self.need(no, rec, ["id", "action"], "event") or not isinstance(pid, str):
            return
        if action not in ACTIONS:
            self.warn(no, "UNKNOWN_ACTION", f"event action {action!r} is unknown (tolerated — another keeper may write it)")
            return
        prior = self.priors.get(pid)
        if prior is None:
            self.add(no, "UNKNOWN_PRIOR", f"{what} refers to {pid}, which no earlier line defines")
        tomb = prior is not None and prior[1]
        if tomb and action != "redact" and pid in self.redact_seen:
            self.after_redact.setdefault(pid, no)  # fine only if a later redact restates it (a merge)
        if tomb and "reason" in rec and action != "redact":
            self.add(no, "REASON_NOT_REDACTED", f"{what}: {pid} is redacted but this event still carries its reason")
        if "reason_redacted" in rec:
            if rec.get("reason_redacted") is not True or not (isinstance(rec.get("reason_hash"), str)
                                                              and HASH12_RE.match(rec["reason_hash"])):
                self.add(no, "BAD_FIELD", f"{what}: a redacted reason needs reason_redacted: true and a 12-hex reason_hash")
            if "reason" in rec:
                self.add(no, "BAD_FIELD", f"{what}: reason_redacted but the reason is still there")
        ns = prior[0] if prior is not None else None
        if action == "disposition":
            self.actor(no, what, rec, "agent", AGENT_VERDICTS, "an agent verdict")
            if self.need(no, rec, ["run"], what) and self.run_id(no, what, rec["run"]):
                blk = self.block
                if blk is not None and blk.run == rec["run"] and pid in blk.disposed:
                    self.add(no, "DUPLICATE_DISPOSITION", f"{pid} has two dispositions in {rec['run']}")
                self.belong(no, rec["run"], f"disposition of {pid}", ns)
                if self.block is not None and self.block.run == rec["run"]:
                    self.block.disposed.add(pid)
            if pid in self.binding:
                self.after_binding.setdefault(pid, (no, self.binding[pid]))
        elif action == "scope-missing":
            if self.need(no, rec, ["run"], what) and self.run_id(no, what, rec["run"]):
                self.belong(no, rec["run"], f"scope-missing of {pid}", ns)
        elif action == "moved":  # the code moved (core/moves.py): the keeper writes it in the run's block
            if self.need(no, rec, ["run", "from", "to"], what) and self.run_id(no, what, rec["run"]):
                self.belong(no, rec["run"], f"moved of {pid}", ns)
                if not (_nonempty_str(rec["from"]) and _nonempty_str(rec["to"]) and "#" in rec["to"]):
                    self.add(no, "BAD_FIELD", f"{what}: `from` and `to` are scope refs, `to` a definition's")
                sh = rec.get("scope_hash")
                if sh is not None and not (isinstance(sh, str) and HASH12_RE.match(sh)):
                    self.add(no, "BAD_FIELD", f"{what}: `scope_hash` is 12 hex digits")
        elif action == "decide":
            self.actor(no, what, rec, "human", HUMAN_VERDICTS, "a human verdict")
            if rec.get("to") == "reopen" and not (_nonempty_str(rec.get("reason")) or rec.get("reason_redacted") is True):
                self.add(no, "REOPEN_WITHOUT_REASON", f"{what}: reopen needs a reason")
            self.outside_block(no, what)
            self.after_binding.pop(pid, None)  # the person's later word stands (a merge restates theirs)
            to = rec.get("to")
            if to in ("accepted", "wontfix", "keep"):
                self.binding[pid] = "accepted" if to == "keep" else to
            else:
                self.binding.pop(pid, None)
        elif action == "redact":
            if rec.get("by") != "human":
                self.add(no, "WRONG_ACTOR", f"{what}: a redaction is by the human (by: \"human\"), not {rec.get('by')!r}")
            if not (_nonempty_str(rec.get("reason")) or rec.get("reason_redacted") is True):
                self.add(no, "MISSING_FIELD", f"{what}: a redaction needs a reason")
            if prior is not None and not tomb:
                self.add(no, "REDACT_WITHOUT_TOMBSTONE",
                         f"{what}: {pid} was redacted but its prior line (line {prior[2]}) still holds the content")
            self.tombstones.pop(pid, None)
            self.after_redact.pop(pid, None)
            self.after_binding.pop(pid, None)
            self.binding.pop(pid, None)
            self.redact_seen.add(pid)
            self.outside_block(no, what)

    def actor(self, no: int, what: str, rec: Dict[str, Any], by: str, verdicts: Sequence[str], kind: str) -> None:
        to = rec.get("to")
        if to not in verdicts:
            other = HUMAN_VERDICTS if by == "agent" else AGENT_VERDICTS
            hint = f" ({to} is {'a human' if by == 'agent' else 'an agent'} verdict)" if to in other else ""
            self.add(no, "BAD_VERDICT", f"{what}: {to!r} is not {kind}{hint}")
        if rec.get("by") != by:
            self.add(no, "WRONG_ACTOR", f"{what}: must be by {by!r}, not {rec.get('by')!r}")

    def run_id(self, no: int, what: str, run: str) -> bool:
        if not RUN_RE.match(run):
            self.add(no, "BAD_FIELD", f"{what}: run {run!r} is not a run id")
            return False
        return True

    def call(self, no: int, rec: Dict[str, Any]) -> None:
        cid = rec.get("call_id")
        what = f"call {cid}" if isinstance(cid, str) else "call"
        if not self.need(no, rec, ["call_id", "kind", "run", "ns", "conflicts_with"], what) or not isinstance(cid, str):
            if isinstance(rec.get("run"), str):
                self.belong(no, rec["run"], what, rec.get("ns"))
            return
        m = CALL_RE.match(cid)
        if not m or m.group(1) != rec["run"]:
            self.add(no, "BAD_CALL_ID", f"{what}: call_id must be `{rec['run']}-C-NN`")
        if cid in self.call_ids:
            self.add(no, "DUPLICATE_ID", f"call id {cid} is used twice")
        self.call_ids.add(cid)
        self.run_id(no, what, rec["run"])
        target = self.priors.get(rec["conflicts_with"])
        if target is None:
            self.add(no, "UNKNOWN_PRIOR", f"{what} conflicts with {rec['conflicts_with']}, which no earlier line defines")
        if rec.get("redacted") is True:
            extra = sorted(set(rec) - REDACTED_CALL_KEYS)
            if extra:
                self.add(no, "BAD_TOMBSTONE", f"redacted {what} still carries {', '.join(extra)}")
        else:
            if target is not None and target[1]:
                self.add(no, "CALL_NOT_REDACTED",
                         f"{what} conflicts with redacted {rec['conflicts_with']} but still carries its claim")
            self.need(no, rec, ["claim"], what)
            if "direction" in rec and not _nonempty_str(rec["direction"]):
                self.add(no, "BAD_FIELD", f"{what}: `direction` must be a non-empty string")
        self.belong(no, rec["run"], what, rec.get("ns"))

    # -- the lessons loop's own records

    def id_list(self, no: int, what: str, value: Any, key: str, kind: str) -> None:
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            self.add(no, "MISSING_FIELD" if value is None else "BAD_FIELD", f"{what}: `{key}` must be a list of {kind} ids")
            return
        for x in value:
            if kind == "prior" and x not in self.priors:
                self.add(no, "UNKNOWN_PRIOR", f"{what} names {x}, which no earlier line defines")
            if kind == "run" and x not in self.committed:
                self.add(no, "UNKNOWN_RUN", f"{what} names {x}, which no earlier commit record seals")

    def injected(self, no: int, rec: Dict[str, Any]) -> None:
        run = rec.get("run")
        what = f"injected record of {run}" if isinstance(run, str) else "injected record"
        if self.need(no, rec, ["run"], what) and isinstance(run, str) and self.run_id(no, what, run):
            self.belong(no, run, f"injected record of {run}", None)
        self.id_list(no, what, rec.get("ids"), "ids", "prior")

    def score(self, no: int, rec: Dict[str, Any]) -> None:
        run = rec.get("run")
        what = f"score of {run}" if isinstance(run, str) else "score"
        if self.need(no, rec, ["run"], what) and run not in self.committed:
            self.add(no, "UNKNOWN_RUN", f"{what}: only a committed run can be scored")
        if rec.get("by") == "human" and isinstance(run, str):
            self.unscored_sessions.pop(run, None)
        if rec.get("outcome") not in OUTCOMES:
            self.add(no, "BAD_FIELD", f"{what}: outcome {rec.get('outcome')!r} is not success, partial or failure")
        if rec.get("by") != "human":
            self.add(no, "WRONG_ACTOR", f"{what}: a score is by the human (by: \"human\"), not {rec.get('by')!r}")
        if "injected" in rec:
            self.id_list(no, what, rec.get("injected"), "injected", "prior")
        self.outside_block(no, what)

    def learned(self, no: int, rec: Dict[str, Any]) -> None:
        self.id_list(no, "learned record", rec.get("runs"), "runs", "run")
        self.outside_block(no, "learned record")

    def run(self, no: int, rec: Dict[str, Any]) -> None:
        what = f"run record {rec.get('run')}" if isinstance(rec.get("run"), str) else "run record"
        if rec.get("action") != "commit":
            self.warn(no, "UNKNOWN_ACTION", f"{what}: action {rec.get('action')!r} is unknown (tolerated)")
            return
        ok = self.need(no, rec, ["run", "ns"], what)
        summary = rec.get("summary")
        if not isinstance(summary, list) or not all(isinstance(s, str) for s in summary):
            self.add(no, "MISSING_FIELD" if summary is None else "BAD_FIELD", f"{what}: `summary` must be a list of lines")
        tried = rec.get("attempts")
        if tried is not None and (not isinstance(tried, list) or not tried or not all(_attempt_ok(a) for a in tried)):
            self.add(no, "BAD_FIELD", f"{what}: `attempts` must be a list of {{code, of, claim}} — code one of"
                     f" {', '.join(ATTEMPT_CODES)}, of a prior id, claim normalized — or, redacted, {{code, of,"
                     " claim_hash, claim_redacted: true}}")
        elif tried is not None:
            self.attempts(no, what, tried)
        shapes = rec.get("shapes")  # core/moves.py: prior id → the shape of its definition ("" forgets it)
        if shapes is not None and not (isinstance(shapes, dict) and all(isinstance(v, str) for v in shapes.values())):
            self.add(no, "BAD_FIELD", f"{what}: `shapes` maps prior ids to shapes (strings)")
        unseen = rec.get(UNSEEN)  # core/unseen.py: what a parallel branch's run saw of our side's decisions
        why = mark_problem(unseen) if unseen is not None else None
        if why is not None:
            self.add(no, "BAD_FIELD", f"{what}: {why}")
        elif unseen is not None:
            for pid in unseen:
                if pid not in self.priors:
                    self.add(no, "UNKNOWN_PRIOR", f"{what}: `unseen` names {pid}, which no earlier line defines")
        if ok and self.run_id(no, what, rec["run"]):
            if rec.get("via") == SESSION_VIA and rec["run"] not in self.committed:
                self.unscored_sessions[rec["run"]] = no
            self.seal(no, rec)


    def attempts(self, no: int, what: str, tried: List[Dict[str, Any]]) -> None:
        """A seal's attempts name priors of earlier lines, and keep words exactly when their prior is not
        redacted: commit writes no other (a redacted form on a live prior would count as an agent's pressure
        whose words nobody can read; words on a tombstone are what its redaction removes)."""
        for pid in dict.fromkeys(a["of"] for a in tried):
            prior = self.priors.get(pid)
            if prior is None:
                self.add(no, "UNKNOWN_PRIOR", f"{what}: an attempt names {pid}, which no earlier line defines")
                continue
            hidden = [a.get("claim_redacted") is True for a in tried if a["of"] == pid]
            if prior[1] and not all(hidden):
                self.add(no, "ATTEMPT_NOT_REDACTED", f"{what}: {pid} is redacted but an attempt on it still carries its words")
            elif not prior[1] and any(hidden):
                self.add(no, "BAD_FIELD", f"{what}: an attempt on {pid} is in its redacted form, but {pid} is not redacted")


def _attempt_ok(a: Any) -> bool:
    """One of the refusals a run's seal keeps (`attempts`), shaped as commit writes it."""
    if not isinstance(a, dict) or a.get("code") not in ATTEMPT_CODES:
        return False
    of = a.get("of")
    if not isinstance(of, str) or not PRIOR_RE.match(of):
        return False
    if a.get("claim_redacted") is True:
        return set(a) == {"code", "of", "claim_hash", "claim_redacted"} and bool(HASH12_RE.match(str(a.get("claim_hash"))))
    claim = a.get("claim")
    return set(a) == {"claim", "code", "of"} and isinstance(claim, str) and bool(claim) and normalize(claim) == claim
