"""The reference keeper's invariant scenarios, as docs/protocol.md promises them of this keeper.

The reference project (conikeec/priors) ships an invariant suite that drives its keeper end to end:
the four ratchet rules, fail-closed commits, the depth gate, forgetting by attention and by
redaction, authority never self-assigned. Its scenarios, run here against our CLI with the
expectations it checks — exit codes, refusal codes and the words it matches — so a change that
would fail that suite fails here first. Written for this repository; the reference's code is not
copied. Where the reference suite sends what our docs treat differently (a candidate's unknown
`scope_changed` field, a `scope_hash` the snapshot does not hold) the scenario follows our docs.
"""

from __future__ import annotations

import json
from typing import Any, Dict

from conftest import Keeper

NS = "review"


def _open(k: Keeper, scopes: Dict[str, str]) -> Dict[str, Any]:
    return json.loads(k.ok("relevant", "--ns", NS, "--scopes", k.scopes(scopes)))


def _finding(i: int, **extra: Any) -> Dict[str, Any]:
    cand = {"type": "conclusion", "scope_ref": f"src/f{i}.ts#fn", "scope_hash": f"hash-v1-{i}",
            "claim": f"finding number {i}", "direction": "hoist-resource", "severity": "major"}
    cand.update(extra)
    return cand


def _seed(k: Keeper) -> None:
    """Five findings in run-001, each on a scope of its own, committed."""
    k.ok("init")
    rel = _open(k, {f"src/f{i}.ts#fn": f"hash-v1-{i}" for i in range(1, 6)})
    for i in range(1, 6):
        assert k.propose(rel["run"], NS, _finding(i)).code == 0
    k.ok("commit", "--run", rel["run"])


def _proposal(k: Keeper, run: str, cand: Dict[str, Any]):
    return k("propose", k.candidate(cand, "c.json"), "--ns", NS, "--run", run)


def test_replay_fixed_acknowledged_carried_keep_identity_no_rediscovery(keeper):
    _seed(keeper)
    scopes = {f"src/f{i}.ts#fn": (f"hash-v2-{i}" if i <= 3 else f"hash-v1-{i}") for i in range(1, 6)}
    rel = _open(keeper, scopes)
    assert len(rel["verify"]) == 5
    assert sum(v["scopeState"] == "changed" for v in rel["verify"]) == 3
    for v in rel["verify"]:
        keeper.ok("disposition", v["id"], "fixed" if v["scopeState"] == "changed" else "still-open", "--run", rel["run"])
    dup = _proposal(keeper, rel["run"], _finding(4, claim="finding number 4 reworded"))
    assert dup.code == 1 and json.loads(dup.out)["refused"] == "DUPLICATE"
    summary = keeper.ok("commit", "--run", rel["run"])
    for words in ("3 fixed", "2 carried", "New this run: 0"):
        assert words in summary, summary


def test_a_carried_prior_reappears_in_the_next_run(keeper):
    _seed(keeper)
    scopes = {f"src/f{i}.ts#fn": f"hash-v1-{i}" for i in range(1, 6)}
    r2 = _open(keeper, scopes)
    for v in r2["verify"]:
        keeper.ok("disposition", v["id"], "still-open", "--run", r2["run"])
    keeper.ok("commit", "--run", r2["run"])
    assert len(_open(keeper, scopes)["verify"]) == 5


def test_a_wontfix_is_never_re_arguable_on_unchanged_code(keeper):
    # a person's decision is hashed from disk when a run opens (docs/protocol.md), so here the code is real
    keeper.write("src/f4.ts", "export function fn(x: number) {\n  return x * 4;\n}\n")
    keeper.ok("init")
    scopes = json.loads(keeper.ok("snapshot", "src"))
    r1 = _open(keeper, scopes)
    _proposal(keeper, r1["run"], _finding(4, scope_hash=scopes["src/f4.ts#fn"]))
    keeper.ok("commit", "--run", r1["run"])
    keeper.ok("decide", "P-0001", "wontfix")
    rel = _open(keeper, scopes)
    assert "P-0001" not in [v["id"] for v in rel["verify"]]
    r = _proposal(keeper, rel["run"], _finding(4, scope_hash=scopes["src/f4.ts#fn"], claim="raising it again"))
    assert r.code == 1 and json.loads(r.out)["refused"] == "RERAISE"


def test_reversal_of_applied_advice_escalates_never_emits(keeper):
    _seed(keeper)
    rel = _open(keeper, {"src/f1.ts#fn": "hash-v2-1"})
    keeper.ok("disposition", "P-0001", "fixed", "--run", rel["run"])
    r = _proposal(keeper, rel["run"], _finding(1, scope_hash="hash-v2-1", claim="actually inline it again",
                                               direction="inline-resource"))
    assert r.code == 1 and json.loads(r.out)["refused"] == "REVERSAL"
    assert "inline-resource" in keeper.read(f".priors/runs/{rel['run']}/escalations.jsonl")


def test_commit_fails_closed_until_every_prior_is_dispositioned(keeper):
    _seed(keeper)
    rel = _open(keeper, {"src/f1.ts#fn": "hash-v1-1"})
    r = keeper("commit", "--run", rel["run"])
    assert r.code == 1 and json.loads(r.out)["refused"] == "INCOMPLETE_DISPOSITIONS"


def test_depth_gate_refuses_below_floor_dredging_on_unchanged_code(keeper):
    keeper.ok("init")
    r1 = _open(keeper, {"src/": "tree-v1"})
    assert _proposal(keeper, r1["run"], {"type": "coverage", "scope_ref": "src/", "scope_hash": "tree-v1",
                                         "claim": "reviewed src/ at depth major", "depth": "major"}).code == 0
    keeper.ok("commit", "--run", r1["run"])
    nit = {"type": "conclusion", "scope_ref": "src/util.ts#fmt", "claim": "nit: rename variable",
           "direction": "rename", "severity": "minor"}
    r2 = _open(keeper, {"src/": "tree-v1", "src/util.ts#fmt": "zzz"})
    # the reference suite sends `scope_changed`, a field candidates do not have: the rule answers, not a usage error
    low = _proposal(keeper, r2["run"], dict(nit, scope_changed=False))
    assert low.code == 1 and json.loads(low.out)["refused"] == "BELOW_FLOOR", low
    assert "scope_changed" in low.err
    keeper.ok("abort", "--run", r2["run"])
    # changed code is reviewable at any depth
    r3 = _open(keeper, {"src/": "tree-v2", "src/util.ts#fmt": "zzz2"})
    ok = _proposal(keeper, r3["run"], dict(nit, scope_changed=True))
    assert ok.code == 0 and "staged" in ok.out
    keeper.ok("commit", "--run", r3["run"])
    assert all("scope_changed" not in rec for rec in keeper.ledger())


def test_attention_forgetting_archives_after_five_missing_runs_and_resurrects_with_history(keeper):
    keeper.ok("init")
    r1 = _open(keeper, {"src/gone.ts#fn": "hash-v1"})
    _proposal(keeper, r1["run"], {"type": "conclusion", "scope_ref": "src/gone.ts#fn", "scope_hash": "hash-v1",
                                  "claim": "finding in code that will vanish", "direction": "hoist-resource",
                                  "severity": "major"})
    keeper.ok("commit", "--run", r1["run"])
    for _ in range(5):
        keeper.ok("commit", "--run", _open(keeper, {})["run"])
    asleep = _open(keeper, {})
    assert asleep["verify"] == [] and asleep["archived"] == 1
    keeper.ok("abort", "--run", asleep["run"])
    awake = _open(keeper, {"src/gone.ts#fn": "hash-v1"})
    assert [(v["id"], v.get("resurrected")) for v in awake["verify"]] == [("P-0001", True)]


def test_record_forgetting_tombstones_content_and_keeps_the_sequence(keeper):
    keeper.ok("init")
    r1 = _open(keeper, {"some-cli": "v1"})
    _proposal(keeper, r1["run"], {"type": "behavioral", "scope_ref": "some-cli", "scope_hash": "v1",
                                  "claim": "the tool's token flag abc123 works for auth", "direction": "use-token"})
    keeper.ok("commit", "--run", r1["run"])
    keeper.ok("redact", "P-0001", "--because", "captured a credential")
    ledger = keeper.ledger_bytes().decode("utf-8")
    assert "abc123" not in ledger and '"redacted":true' in ledger and '"action":"redact"' in ledger
    r2 = _open(keeper, {"src/a.ts#f": "h1"})
    nxt = _proposal(keeper, r2["run"], {"type": "conclusion", "scope_ref": "src/a.ts#f", "scope_hash": "h1",
                                        "claim": "a new finding", "direction": "rename", "severity": "major"})
    assert "P-0002 staged" in nxt.out


def test_authority_is_never_self_assigned(keeper):
    keeper.ok("init")
    rel = _open(keeper, {})
    err = keeper.usage("propose", keeper.candidate({"type": "calibration", "facets": {"authority": "binding"},
                                                    "claim": "I declare myself law", "direction": "x"}),
                       "--ns", NS, "--run", rel["run"])
    assert "authority is never self-assigned" in err


def test_a_bad_run_id_says_run_ids_must_match(keeper):
    keeper.ok("init")
    for verb in (["relevant", "--ns", NS], ["commit"], ["abort"], ["disposition", "P-0001", "fixed"]):
        assert "run ids must match" in keeper.usage(*verb, "--run", "run-1")
