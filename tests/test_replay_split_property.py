"""A replay split by namespace names what the whole replay names (core/replay_split.py), on random forged
ledgers of lessons and findings in three namespaces: rewordings across namespaces; a person's decisions between
blocks, inside a run's block and inside a person's `add` block; reopenings; redactions (tombstone and event, or
the event alone); restated ids (in another namespace, with another claim); `supersedes` and `distinct_from`; and
agent verdicts — those forged to give a status only a person gives among them. Hostile pass 27au wrote the
first of these; the two cases it found (a half that skipped such a verdict's block; a rewording judged by a
decision as it is now, not as its run saw it) are rare here and tested as they were found, in
test_lesson_likeness.py. Derandomized: the same examples every run."""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any, Dict, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from priors.core.canonical import dumps
from priors.core.ledger_replay import in_order, replay
from priors.core.replay_split import Share, survey
from priors.core.vocabulary import DOOR

CLAIMS = (
    "Before committing a change, always run the full test suite",
    "Always run the full test suite before you commit any change",
    "Run the whole test suite before every commit",
    "Never run the full test suite before committing",
    "Quote shell variables in scripts",
    "Always quote the shell variables in your scripts",
    "Do not quote shell variables in scripts",
    "Never log user email addresses in plain text",
    "Always log user email addresses in plain text",
    "Mask user email addresses before logging them",
    "Link every page from the index.",
    "Every page should be linked from the index page",
)
LESSON = {"activation": "run-start", "authority": "advisory", "lifecycle": "only-by-supersession",
          "obligation": "inject-as-instruction", "scope": "repo-wide"}
FINDING = {"activation": "verify-phase", "authority": "advisory", "lifecycle": "stale-on-scope-change",
           "obligation": "disposition-required", "scope": "content-hash"}
SPACES = ("a", "b", "c")
AGENT_TO = ("obsolete-proposed", "still-open", "fixed", "obsolete", "accepted", "wontfix")  # the last three forged


class Forger:
    """A random ledger, line by line, as an agent with a text editor and a person with the CLI could leave it."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd, self.recs, self.ids, self.runs = rnd, [], [], 0  # type: random.Random, List[Dict[str, Any]], List[str], int

    def some_id(self) -> str:
        return self.rnd.choice(self.ids) if self.ids else "P-0001"

    def prior(self, run: str, ns: str, facets: Dict[str, str]) -> Dict[str, Any]:
        pid = f"P-{len(self.ids) + 1:04d}"
        self.ids.append(pid)
        rec = {"t": "prior", "id": pid, "ns": ns, "born": run, "claim": self.rnd.choice(CLAIMS), "facets": dict(facets),
               "type": "calibration" if facets is LESSON else "conclusion"}
        if facets is FINDING:
            rec.update(scope_ref=self.rnd.choice(("src/a.py", "src/b.py")),
                       scope_hash=self.rnd.choice(("aaaaaaaaaaaa", "bbbbbbbbbbbb")))
        elif self.rnd.random() < 0.15:
            rec["supersedes"] = self.some_id()
        elif self.rnd.random() < 0.1:
            rec["distinct_from"] = [self.some_id()]
        return rec

    def decide(self, to: Tuple[str, ...] = ("accepted", "obsolete", "wontfix")) -> Dict[str, Any]:
        return {"t": "event", "action": "decide", "by": "human", "id": self.some_id(), "to": self.rnd.choice(to)}

    def agent_block(self) -> None:
        rnd = self.rnd
        self.runs += 1
        run, ns = f"run-{self.runs:03d}", rnd.choice(SPACES)
        lines: List[Dict[str, Any]] = []
        for _ in range(rnd.randint(1, 3)):
            k = rnd.random()
            if k < 0.55 or not self.ids:
                lines.append(self.prior(run, ns if rnd.random() < 0.85 else rnd.choice(SPACES), LESSON))
            elif k < 0.62:
                lines.append(self.prior(run, ns, FINDING))
            elif k < 0.8:
                lines.append({"t": "event", "action": "disposition", "by": "agent", "id": self.some_id(), "run": run,
                              "to": rnd.choice(AGENT_TO)})
            elif k < 0.92:  # an existing prior's line again, perhaps in another namespace or saying another thing
                old = next((r for r in self.recs if r.get("t") == "prior" and r.get("id") == self.some_id()), None)
                if old is not None and "claim" in old:
                    lines.append(dict(old, born=run, ns=rnd.choice(SPACES) if rnd.random() < 0.5 else old["ns"],
                                      claim=rnd.choice(CLAIMS) if rnd.random() < 0.5 else old["claim"]))
            else:
                lines.append(self.decide())
        lines.append({"t": "injected", "run": run, "ids": []})
        if rnd.random() < 0.2:
            lines.insert(rnd.randrange(len(lines)), self.decide(("accepted", "obsolete", "wontfix", "reopen")))
        lines.append({"t": "run", "action": "commit", "run": run, "ns": ns, "door": DOOR, "summary": ["typed in"],
                      "via": rnd.choice(("suggest", "commit"))})
        self.recs += lines

    def person_adds(self) -> None:
        self.runs += 1
        run, ns = f"run-{self.runs:03d}", self.rnd.choice(SPACES)
        lesson = self.prior(run, ns, LESSON)
        lesson.pop("supersedes", None)
        lesson.pop("distinct_from", None)
        lines = [lesson, {"t": "run", "action": "commit", "by": "human", "run": run, "ns": ns, "door": DOOR,
                          "summary": ["typed in"], "via": "add"},
                 {"t": "event", "action": "decide", "by": "human", "id": lesson["id"], "to": "accepted"}]
        if self.rnd.random() < 0.2:  # a decision on another lesson inside the person's block
            lines.insert(1, self.decide())
        self.recs += lines

    def between_blocks(self) -> None:
        rec = self.decide(("accepted", "wontfix", "obsolete", "reopen", "keep", "obsolete"))
        if rec["to"] == "obsolete" and self.rnd.random() < 0.3:
            rec["reason"] = "superseded by " + self.some_id()
        if rec["to"] == "obsolete" and self.rnd.random() < 0.2:
            rec["same_as"] = self.some_id()
        self.recs.append(rec)

    def redacts(self) -> None:
        pid = self.some_id()
        if self.rnd.random() < 0.7:  # the tombstone in place of its line (else the event alone)
            for i, rec in enumerate(self.recs):
                if rec.get("t") == "prior" and rec.get("id") == pid:
                    self.recs[i] = {"t": "prior", "id": pid, "ns": rec["ns"], "born": rec["born"], "redacted": True,
                                    "content_hash": "6c0dd5f03121"}
        self.recs.append({"t": "event", "action": "redact", "by": "human", "id": pid, "reason": "r"})

    def ledger(self) -> bytes:
        for _ in range(self.rnd.randint(4, 16)):
            op = self.rnd.random()
            if op < 0.45 or not self.ids:
                self.agent_block()
            elif op < 0.6:
                self.person_adds()
            elif op < 0.9:
                self.between_blocks()
            else:
                self.redacts()
        return "".join(dumps(r) + "\n" for r in self.recs).encode()


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.randoms(use_true_random=False))
def test_a_split_replay_names_what_the_whole_replay_names(rnd):
    data = Forger(rnd).ledger()
    whole = replay(data)
    assert replay(data, packed=False) == whole  # (its priors held as their records: core/replay_kept.py)
    needed = survey(data)[1]
    for size in (1, 2):
        for mine in itertools.combinations(SPACES, size):
            for skipping in (None, needed):  # (a half that skips another's blocks, and one that folds them all)
                got = in_order(replay(data, Share(mine, True), skipping) + replay(data, Share(mine, False), skipping))
                assert got == whole, (mine, skipping is not None, data.decode())



def test_the_first_agent_verdict_on_a_decision_is_named_once_though_a_forged_line_moves_the_prior():
    """Hostile pass 27aw (a ledger of this file's `Forger`, seed 101959, with four person's `add` blocks): an
    agent verdict on a person's decision is named once, the first (until a person restates the decision) — but
    a forged line restating the prior into another namespace gave the half judging that namespace a first
    verdict of its own, and the split replay named line 20 besides the whole replay's first (line 5)."""
    data = (Path(__file__).parent / "data" / "split_first_verdict.jsonl").read_bytes()
    whole = replay(data)
    assert [p.line for p in whole if p.code == "AGENT_AFTER_BINDING"] == [5], whole
    needed = survey(data)[1]
    for size in (1, 2):
        for mine in itertools.combinations(SPACES, size):
            for skipping in (None, needed):
                got = in_order(replay(data, Share(mine, True), skipping) + replay(data, Share(mine, False), skipping))
                assert got == whole, (mine, skipping is not None)
