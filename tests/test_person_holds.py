"""A person's decision holds against anything an agent can do: random sequences of agent verbs and
of hand edits to a run's staging (the files an agent can write) never change the status of a
prior a person settled, and the ledger they leave always replays clean under `verify`.

The hand edits are the ones a hostile pass used: a settled prior's own line staged again under a
new id, reworded, in another namespace, marked `distinct_from` it, or with a made-up `scopeState`;
an agent verdict on the settled prior; a call with a malformed claim; an invented scope hash.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Keeper
from priors.core.fold import fold_data

FILES = {"src/tax.py": "RATE = 0.2\n\n\ndef total(x):\n    return x * RATE\n",
         "src/cart.py": "class Cart:\n    def add(self, n):\n        self.n = n\n"}
CLAIMS = ["tax rate is hard-coded", "Cart.add never checks the quantity", "rounding drops cents"]
SETTLED = ("wontfix", "accepted", "obsolete")


def _settle(keeper: Keeper) -> Dict[str, str]:
    """Two files, three findings; a person marks P-0001 wontfix and P-0002 accepted."""
    for rel, text in FILES.items():
        keeper.write(rel, text)
    scopes = {rel: keeper.hash(rel) for rel in FILES}
    run = keeper.open_run("web", scopes)["run"]
    for claim, ref in zip(CLAIMS, ["src/tax.py", "src/cart.py", "src/tax.py"]):
        keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": claim, "scope_ref": ref,
                                               "severity": "major"}), "--run", run, "--ns", "web")
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    keeper.ok("decide", "P-0002", "accepted", "--because", "real")
    return scopes


def _staged_line(state: Any, pid: str, run: str, edit: int, target: str) -> Dict[str, Any]:
    """A hand-written staged prior built from a settled prior's own line."""
    rec = dict(state.priors[target].record())
    for key in ("status", "by", "authority"):
        rec.pop(key, None)
    rec.update(id=pid, born=run)
    if edit == 1:
        rec["claim"] = rec["claim"].upper() + "!!"
    elif edit == 2:
        rec["ns"] = "web2"
    elif edit == 3:
        rec["distinct_from"] = [target]
    elif edit == 4:
        rec["scope_hash"] = "0123456789ab"
    elif edit == 5:
        rec["status"] = "accepted"
    return rec


def _hand_edit(keeper: Keeper, run: str, kind: int, edit: int, target: str) -> None:
    rdir = keeper.root / ".priors" / "runs" / run
    state = fold_data(keeper.ledger_bytes())
    pid = f"P-{state.max_prior + 1:04d}"
    if kind == 0:
        line = _staged_line(state, pid, run, edit, target)
        with open(rdir / "staged.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
    elif kind == 1:
        with open(rdir / "dispositions.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"t": "disposition", "id": target, "run": run,
                                 "verdict": ["fixed", "obsolete-proposed", "stale"][edit % 3]}) + "\n")
    else:
        with open(rdir / "escalations.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"conflicts_with": [target], "claim": [{"x": 1}, "ok", None][edit % 3]}) + "\n")


step = st.tuples(st.integers(0, 5), st.integers(0, 2), st.integers(0, 5), st.sampled_from(["P-0001", "P-0002"]),
                 st.integers(0, 2))


@settings(max_examples=int(os.environ.get("PRIORS_PERSON_EXAMPLES", "6")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=4))
def test_no_agent_verb_or_staging_edit_changes_a_persons_decision(tmp_path_factory, steps: List[Any]) -> None:
    keeper = Keeper(tmp_path_factory.mktemp("holds"))
    keeper.ok("init")
    scopes = _settle(keeper)
    before = {pid: p.status for pid, p in fold_data(keeper.ledger_bytes()).priors.items() if p.status in SETTLED}
    humans = keeper.ledger_bytes().count(b'"by":"human"')
    for action, kind, edit, target, claim in steps:
        forged = dict(scopes, **({"src/tax.py": "0123456789ab"} if action == 5 else {}))
        rel = keeper.open_run("web2" if action == 4 else "web", forged)
        run = rel["run"]
        for item in rel["verify"]:
            if item["scopeState"] != "missing":
                keeper("disposition", "--run", run, item["id"], "fixed")
        keeper("propose", keeper.candidate({"type": "conclusion", "claim": CLAIMS[claim].upper(),
                                            "scope_ref": "src/tax.py", "severity": "major"}),
               "--run", run, "--ns", "web2" if action == 4 else "web")
        if action in (0, 1, 2):
            _hand_edit(keeper, run, kind, edit, target)
        r = keeper("commit", "--run", run)
        assert r.code in (0, 1), r
        if r.code == 1:
            assert "Traceback" not in r.err
            keeper.ok("abort", "--run", run)
    state = fold_data(keeper.ledger_bytes())
    assert keeper.ledger_bytes().count(b'"by":"human"') == humans  # no agent path wrote a person's line
    assert {pid: state.priors[pid].status for pid in before} == before
    v = keeper("verify", "--no-git", "--json")
    assert v.code == 0, v
