"""`priors verify` replays the protocol: a hand-made line the door would have refused is named by its
line; a ledger only the keeper wrote replays clean (docs/ci.md, "The protocol, replayed")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import ledgerkit as k
from conftest import Keeper, gen_ledger
from priors.core.canonical import dumps
from priors.core.fold import fold_data
from priors.core.ledger_replay import in_order, replay
from priors.core.replay_split import Share, namespace_weights, split_namespaces, survey
from priors.store.ledger import ledger_sample
from priors.store.paths import Paths
from test_decided_words_moves import LESSON

REPO = Path(__file__).resolve().parent.parent
SCOPES = {"src/tax.py": "aaaaaaaaaaaa", "src/tax.py#total": "bbbbbbbbbbbb", "src/cart.py#Cart.add": "cccccccccccc"}


def cand(claim: str, ref: str = "src/tax.py#total", **extra: Any) -> Dict[str, Any]:
    return dict({"type": "conclusion", "claim": claim, "scope_ref": ref, "severity": "major"}, **extra)


def session(keeper: Keeper, *cands: Dict[str, Any], scopes: Dict[str, str] = SCOPES) -> str:
    """One keeper run through the CLI that proposes `cands` (each must be staged) and commits; its run id."""
    keeper.write("s.json", json.dumps(scopes))
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", "s.json"))["run"]
    for i, c in enumerate(cands):
        keeper.write(f"c{i}.json", json.dumps(c))
        keeper.ok("propose", "--run", run, "--ns", "web", f"c{i}.json")
    keeper.ok("commit", "--run", run)
    return run


def append(keeper: Keeper, records: List[Dict[str, Any]]) -> int:
    """Append hand-made lines (and bring PRIORS.md in step); the line number of the first."""
    path = keeper.root / ".priors" / "ledger.jsonl"
    first = path.read_bytes().count(b"\n") + 1
    with open(path, "ab") as fh:
        fh.write(k.to_bytes(records))
    keeper.ok("render")
    return first


def problems(keeper: Keeper) -> List[Dict[str, Any]]:
    r = keeper("verify", "--no-git", "--json")
    body = json.loads(r.out)
    assert r.code == (0 if body["ok"] else 1), r
    return body["problems"]


def forged(pid: str, run: str, claim: str, ref: str = "src/tax.py#total", h: str = "bbbbbbbbbbbb", **extra: Any):
    return k.prior(pid, run, claim, ref=ref, scope_hash=h, severity="major", **extra)


def assert_named(keeper: Keeper, line: int, code: str) -> None:
    got = problems(keeper)
    assert [(p["line"], p["code"]) for p in got] == [(line, code)], got


# ------------------------------------------------------------------ a clean keeper ledger


def test_a_keeper_ledger_replays_clean(keeper: Keeper) -> None:
    # Real files: the keeper hashes a scope that holds a person's decision from disk itself.
    keeper.write("src/tax.py", "RATE = 0.2\n\n\ndef total(x):\n    return x * RATE\n")
    keeper.write("src/cart.py", "class Cart:\n    def add(self, n):\n        self.n = n\n")
    scopes = {ref: keeper.hash(ref) for ref in ("src/tax.py", "src/cart.py")}
    session(keeper, cand("tax rate is hard-coded", "src/tax.py"), cand("Cart.add never checks the quantity", "src/cart.py"),
            scopes=scopes)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    run = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", "s.json"))["run"]
    keeper.ok("disposition", "--run", run, "P-0002", "still-open")
    keeper.refused("RERAISE", "propose", "--run", run, "--ns", "web", "c0.json")
    keeper.ok("commit", "--run", run)
    assert problems(keeper) == []


# ------------------------------------------------------------------ one test per rule (each passed verify before the replay)


def test_a_hand_made_reraise_of_a_person_s_decision_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    line = append(keeper, [forged("P-0002", "run-002", "tax rate is hard-coded"), k.commit("run-002")])
    assert_named(keeper, line, "RERAISE")


def test_a_hand_made_reraise_in_another_namespace_is_named(keeper: Keeper) -> None:
    """The door refuses a person's settled claim in every namespace; the replay names a block that
    slipped it in under another one (`audit`), exactly or reworded."""
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    line = append(keeper, [forged("P-0002", "run-002", "tax rate is hard-coded", ns="audit"),
                           k.commit("run-002", ns="audit")])
    assert_named(keeper, line, "RERAISE")


def test_a_hand_made_finding_without_its_scope_hash_is_named(keeper: Keeper) -> None:
    """Without a hash it could never meet the state a person decided on: the door always writes one."""
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    bare = forged("P-0002", "run-002", "tax rate is hard-coded")
    del bare["scope_hash"]
    line = append(keeper, [bare, k.commit("run-002")])
    assert_named(keeper, line, "MISSING_FIELD")


def test_a_prior_line_with_an_id_that_is_no_text_is_named_not_a_crash(keeper: Keeper) -> None:
    """`"id": {}` on a tombstone once ended `verify` in "unexpected error (TypeError: unhashable …)"."""
    session(keeper, cand("tax rate is hard-coded"))
    append(keeper, [{"t": "prior", "id": {}, "ns": "web", "redacted": True, "content_hash": "24ce5ae8a293"},
                    {"t": "event", "action": "disposition", "id": [], "run": "run-002", "to": "fixed", "by": "agent"},
                    k.commit("run-002")])
    r = keeper("verify", "--no-git", "--json")
    assert r.code == 1 and "Traceback" not in r.err and "unexpected" not in r.err, r
    assert json.loads(r.out)["problems"]


def test_a_hand_made_rewording_of_a_settled_finding_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "accepted")
    line = append(keeper, [forged("P-0002", "run-002", "The tax rate is hard coded"), k.commit("run-002")])
    got = problems(keeper)
    assert [(p["line"], p["code"]) for p in got] == [(line, "RERAISE")]
    assert "other words (similarity" in got[0]["message"]


def test_a_hand_made_duplicate_of_an_open_finding_the_run_judged_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    line = append(keeper, [k.disp("P-0001", "run-002", "still-open", scope_hash="bbbbbbbbbbbb"),
                           forged("P-0002", "run-002", "tax rate is hard-coded"), k.commit("run-002")])
    assert_named(keeper, line + 1, "DUPLICATE")


def test_a_hand_made_reversal_of_a_settled_finding_is_named(keeper: Keeper) -> None:
    session(keeper, cand("total() is too long", direction="terser"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "fine")
    line = append(keeper, [forged("P-0002", "run-002", "total() needs more words", direction="expand"), k.commit("run-002")])
    assert_named(keeper, line, "REVERSAL")


def test_a_hand_made_prior_that_names_the_direction_it_opposes_is_named(keeper: Keeper) -> None:
    """A candidate may say which direction it goes against (`opposes`) instead of naming its own: the door
    puts it to the person as a reversal all the same, so a prior that does so, written by hand, is named —
    the replay looked up only the opposite of the candidate's own direction (hostile pass 27ao)."""
    session(keeper, cand("total() is too long", direction="terser"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "fine")
    line = append(keeper, [forged("P-0002", "run-002", "total() needs more words", opposes=["terser"]),
                           k.commit("run-002")])
    assert_named(keeper, line, "REVERSAL")


def test_an_agent_verdict_on_a_person_s_decision_is_named_even_when_a_later_decision_differs(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    line = append(keeper, [k.disp("P-0001", "run-002", "fixed", scope_hash="bbbbbbbbbbbb"), k.commit("run-002"),
                           k.decide("P-0001", "reopen", "look again")])
    assert_named(keeper, line, "AGENT_AFTER_BINDING")


def test_an_agent_verdict_on_an_obsolete_prior_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "obsolete")
    line = append(keeper, [k.disp("P-0001", "run-002", "still-open", scope_hash="bbbbbbbbbbbb"), k.commit("run-002")])
    assert_named(keeper, line, "AGENT_AFTER_BINDING")


def test_a_prior_line_claiming_authority_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    line = append(keeper, [forged("P-0002", "run-002", "Cart.add never checks the quantity", ref="src/cart.py#Cart.add",
                                  h="cccccccccccc", by="human"), k.commit("run-002")])
    assert_named(keeper, line, "SELF_ASSIGNED_AUTHORITY")


def test_an_agent_run_sealed_as_a_person_s_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    seal = dict(k.commit("run-002"), by="human", via="add")
    line = append(keeper, [k.disp("P-0001", "run-002", "fixed", scope_hash="bbbbbbbbbbbb"), seal])
    assert_named(keeper, line, "SELF_ASSIGNED_AUTHORITY")
    keeper.ok("add", "--ns", "web", "Run the narrowest test first.")  # a person's own add replays clean beside it
    assert [p["code"] for p in problems(keeper)] == ["SELF_ASSIGNED_AUTHORITY"]


def test_a_person_s_run_repeating_a_lesson_is_named(keeper: Keeper) -> None:
    keeper.ok("add", "--ns", "web", "Run the narrowest test first.")
    rec = json.loads((keeper.root / ".priors" / "ledger.jsonl").read_text().splitlines()[0])
    copy = dict(rec, id="P-0002", born="run-002")
    line = append(keeper, [copy, dict(k.commit("run-002"), by="human", via="add")])
    assert_named(keeper, line, "DUPLICATE")


def test_supersedes_naming_a_finding_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    lesson = dict(k.prior("P-0002", "run-002", "Read the tax tables first.", **{"facets": dict(k.BEHAVIORAL)}),
                  type="behavioral", scope_ref="tool:pytest", supersedes="P-0001")
    line = append(keeper, [lesson, k.commit("run-002")])
    assert_named(keeper, line, "SUPERSEDES_NOT_LESSON")


def test_distinct_from_naming_the_same_claim_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    line = append(keeper, [forged("P-0002", "run-002", "Tax rate: is HARD coded!", ref="src/tax.py", h="aaaaaaaaaaaa",
                                  distinct_from=["P-0001"]), k.commit("run-002")])
    assert_named(keeper, line, "DUPLICATE")


def test_distinct_from_naming_another_namespace_is_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    line = append(keeper, [forged("P-0002", "run-002", "totals overflow", ns="api", ref="src/tax.py", h="aaaaaaaaaaaa",
                                  distinct_from=["P-0001"]), k.commit("run-002", ns="api")])
    assert_named(keeper, line, "DISTINCT_FROM_UNKNOWN")


def test_calls_out_of_sequence_are_named(keeper: Keeper) -> None:
    session(keeper, cand("tax rate is hard-coded"))
    line = append(keeper, [k.call("run-002", 2, "P-0001"), k.commit("run-002")])
    assert_named(keeper, line, "CALL_OUT_OF_SEQUENCE")


def test_a_branch_that_never_saw_a_finding_is_not_a_duplicate(keeper: Keeper) -> None:
    """Two branches that each raised the same finding, joined by the merge driver: the second block owed
    the first finding a verdict had it seen it, and gave none — it ran in parallel; not a door refusal."""
    session(keeper, cand("tax rate is hard-coded"))
    append(keeper, [forged("P-0002", "run-002", "tax rate is hard-coded"), k.commit("run-002")])
    assert problems(keeper) == []


# ------------------------------------------------------------------ random keeper sessions


CLAIMS = ["tax rate is hard-coded", "The tax rate is hard coded", "total() ignores discounts",
          "Cart.add never checks the quantity", "quantity is not validated in Cart.add", "rounding drops cents"]
REFS = ["src/tax.py", "src/tax.py#total", "src/cart.py#Cart.add"]
VERDICTS = {"unchanged": ["fixed", "still-open", "obsolete-proposed"], "changed": ["fixed", "reaffirmed", "stale"]}

step = st.tuples(st.integers(0, 9), st.integers(0, len(CLAIMS) - 1), st.integers(0, len(REFS) - 1),
                 st.sampled_from([None, "terser", "expand"]), st.integers(0, 3))


def play(keeper: Keeper, steps: List[Any]) -> None:
    """Runs, proposals (refused or not), verdicts and decisions, each through the real CLI."""
    version = 0
    for kind, ci, ri, direction, pick in steps:
        if kind == 9:
            ids = sorted(fold_data(keeper.ledger_bytes()).priors)
            if ids:
                keeper(*["decide", ids[pick % len(ids)], ["wontfix", "accepted", "obsolete", "reopen"][pick]]
                       + (["--because", "look"] if pick == 3 else []))
            continue
        if kind == 8:
            version += 1
        scopes = {r: f"{(version * 7 + i) % 10:012d}" for i, r in enumerate(REFS)}
        keeper.write("s.json", json.dumps(scopes))
        rel = json.loads(keeper.ok("relevant", "--ns", "web", "--scopes", "s.json"))
        run = rel["run"]
        for item in rel["verify"]:
            if item["scopeState"] != "missing":
                keeper.ok("disposition", "--run", run, item["id"], VERDICTS[item["scopeState"]][(ci + pick) % 3])
        for j in range(1 + kind % 3):
            c = cand(CLAIMS[(ci + j) % len(CLAIMS)], REFS[(ri + j) % len(REFS)])
            if direction:
                c["direction"] = direction
            keeper.write("c.json", json.dumps(c))
            r = keeper("propose", "--run", run, "--ns", "web", "c.json")
            assert r.code in (0, 1), r
        keeper.ok("commit", "--run", run)


def refused_lines(keeper: Keeper) -> List[List[Dict[str, Any]]]:
    """Blocks of one hand-made line (and its seal) the door refuses, built from the ledger as it is."""
    state = fold_data(keeper.ledger_bytes())
    run = f"run-{state.max_run + 1:03d}"
    pid = f"P-{state.max_prior + 1:04d}"
    out: List[List[Dict[str, Any]]] = []
    for p in state.priors.values():
        if p.redacted or p.facet("activation") != "verify-phase":
            continue
        if p.status in ("wontfix", "accepted", "fixed", "obsolete", "obsolete-proposed"):
            out.append([forged(pid, run, p.claim, ref=p.scope_ref, h=p.scope_hash)])
        if p.status == "stale":  # a verify item the run owes a verdict: without one, the run reads as a parallel
            # branch's that never saw it (docs/ci.md), so the forged run gives its verdict and then repeats it
            out.append([k.disp(p.id, run, "still-open", scope_hash=p.scope_hash),
                        forged(pid, run, p.claim, ref=p.scope_ref, h=p.scope_hash)])
        if p.status in ("wontfix", "accepted", "obsolete"):
            out.append([k.disp(p.id, run, "fixed", scope_hash=p.scope_hash)])
        out.append([forged(pid, run, p.claim.upper() + "!", ref="src/other.py", h="dddddddddddd", distinct_from=[p.id])])
        out.append([forged(pid, run, "something else entirely", ref="src/other.py", h="dddddddddddd", supersedes=p.id)])
        out.append([k.call(run, 3, p.id)])
    out.append([forged(pid, run, "something else entirely", ref="src/other.py", h="dddddddddddd", status="accepted")])
    return [lines + [k.commit(run)] for lines in out]


@settings(max_examples=int(os.environ.get("PRIORS_REPLAY_EXAMPLES", "8")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=6), choice=st.integers(0, 10**6))
@example(steps=[(0, 0, 0, None, 0), (0, 0, 2, None, 0), (8, 0, 0, None, 2)], choice=4)  # a repeat of a stale item
def test_random_keeper_sessions_replay_clean_and_any_refused_line_is_named(tmp_path_factory, steps, choice) -> None:
    keeper = Keeper(tmp_path_factory.mktemp("replay"))
    keeper.ok("init")
    play(keeper, steps)
    assert problems(keeper) == []
    blocks = refused_lines(keeper)
    block = blocks[choice % len(blocks)]
    at = next((i for i, rec in enumerate(block) if rec.get("t") == "prior"), 0)  # the refused line: its prior, if any
    line = append(keeper, block) + at
    got = problems(keeper)
    assert got and all(p["line"] == line for p in got), (block, got)
    assert dumps(block[at]) in (keeper.root / ".priors" / "ledger.jsonl").read_text().splitlines()[line - 1]


# ------------------------------------------------------------------ the replay in a second process


def test_the_replay_in_a_second_process_names_the_same_lines(keeper: Keeper) -> None:
    """On a large ledger the replay runs in a child while verify checks the lines
    (store/background.py); forced on a small one (PRIORS_PARALLEL_MIN_BYTES=0), and forced off,
    verify says the same, byte for byte."""
    session(keeper, cand("tax rate is hard-coded"))
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    line = append(keeper, [forged("P-0002", "run-002", "tax rate is hard-coded"), k.commit("run-002")])
    for args, says in ((("verify", "--no-git", "--json"), f'"code":"RERAISE","line":{line}'),
                       (("verify", "--no-git"), f"line {line} (RERAISE): prior P-0002 re-raises P-0001"),
                       # without --no-git the ledger is read whole (git compares it), not in blocks
                       (("verify", "--json"), f'"code":"RERAISE","line":{line}'),
                       (("verify",), f"line {line} (RERAISE): prior P-0002 re-raises P-0001")):
        forked = keeper(*args, env={"PRIORS_PARALLEL_MIN_BYTES": "0"})
        alone = keeper(*args, env={"PRIORS_PARALLEL_MIN_BYTES": str(1 << 40)})
        assert forked.code == alone.code == 1
        assert forked.out == alone.out and says in forked.out


def test_work_in_a_second_process_comes_back_or_is_done_here(tmp_path) -> None:
    """`background.start`: the child's result comes back through the pipe; a child that dies, or
    work too small to pay for a process, is done in the calling process instead."""
    script = """
import os, sys
from priors.store import background
parent = os.getpid()
where = background.start(lambda: ("child" if os.getpid() != parent else "parent", [1, "two"]), 1)()
dies = background.start(lambda: os._exit(3) if os.getpid() != parent else "done here", 1)()
small = background.start(lambda: os.getpid() == parent, 0)()
print(where, dies, small)
"""
    env = dict(os.environ, PRIORS_PARALLEL_MIN_BYTES="1", PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True).stdout
    expected = "('child', [1, 'two']) done here True" if os.name == "posix" else "('parent', [1, 'two']) done here True"
    assert out.strip() == expected


_GEN = gen_ledger()


def _crossing(seed: int) -> bytes:
    """A generated ledger of five namespaces (its random lines the door refuses by the dozen), then
    a person's decisions and hand-made blocks that meet every other rule, several across namespaces:
    a re-raise of a decision in another namespace, verdicts after a decision, `distinct_from` and
    `supersedes` naming another namespace's finding, calls out of sequence, self-assigned authority,
    a person's seal on an agent's run."""
    records = _GEN.Gen(1000, seed, 10).generate()
    state = fold_data(k.to_bytes(records))
    findings = [p for p in state.priors.values() if not p.redacted and p.facet("activation") == "verify-phase"
                and p.facet("scope") != "repo-wide" and isinstance(p.scope_ref, str)]
    by_ns: Dict[str, List[Any]] = {}
    for p in findings:
        by_ns.setdefault(p.ns, []).append(p)
    run_no, pid_no = state.max_run, state.max_prior
    names = sorted(by_ns)
    for i, ns in enumerate(names):
        target, other = by_ns[ns][seed], names[(i + 1) % len(names)]
        records.append(k.decide(target.id, "wontfix", "policy"))
        run_no += 1
        run = f"run-{run_no:03d}"
        pid_no += 1
        records += [k.prior(f"P-{pid_no:04d}", run, target.claim, ns=other, ref=target.scope_ref,
                            scope_hash=target.scope_hash), k.commit(run, ns=other)]
        run_no += 1
        run = f"run-{run_no:03d}"
        records += [k.disp(target.id, run, "fixed", scope_hash=target.scope_hash), k.call(run, 2, target.id, ns=ns)]
        pid_no += 1
        records.append(k.prior(f"P-{pid_no:04d}", run, "says another thing", ns=ns, distinct_from=[by_ns[other][0].id]))
        pid_no += 1
        records.append(k.prior(f"P-{pid_no:04d}", run, "and one more", ns=ns, supersedes=by_ns[ns][0].id, status="open"))
        records.append(k.commit(run, ns=ns))
        run_no += 1
        run = f"run-{run_no:03d}"
        pid_no += 1
        records += [k.prior(f"P-{pid_no:04d}", run, "an agent's finding", ns=ns), dict(k.commit(run, ns=ns), by="human")]
    return k.to_bytes(records)


_LEDGERS = {seed: _crossing(seed) for seed in (1, 2, 3)}


@settings(max_examples=12, deadline=None)
@given(st.sampled_from(sorted(_LEDGERS)), st.sets(st.sampled_from(["api", "docs", "infra", "mobile", "web", "nope"])))
def test_a_replay_split_by_namespace_names_what_the_whole_replay_names(seed: int, names) -> None:
    """verify splits the replay of a large ledger between two processes by namespace (ops/verify.py
    `start_replay`): each half judges its namespaces' lines, together exactly the whole's problems,
    in the same order. Generated ledgers of five namespaces, whose random lines the door would
    refuse by the hundred (every rule that compares priors is met)."""
    data = _LEDGERS[seed]
    whole = replay(data)
    assert {p.code for p in whole} >= {"DUPLICATE", "RERAISE", "AGENT_AFTER_BINDING", "CALL_OUT_OF_SEQUENCE",
                                        "DISTINCT_FROM_UNKNOWN", "SUPERSEDES_NOT_LESSON", "SELF_ASSIGNED_AUTHORITY"}
    halves = in_order(replay(data, Share(names, inside=True)) + replay(data, Share(names, inside=False)))
    assert halves == whole
    needed = survey(data)[1]  # as verify splits it: each half leaves other namespaces' blocks unfolded
    skipping = in_order(replay(data, Share(names, inside=True), needed) + replay(data, Share(names, inside=False), needed))
    assert skipping == whole


def _hand_written(line: bytes) -> bytes:
    """A ledger line as a person's editor might leave it: valid JSON, keys in another order, spaces."""
    return json.dumps(dict(reversed(list(json.loads(line).items())))).encode()


@settings(max_examples=8, deadline=None)
@given(st.sampled_from(sorted(_LEDGERS)), st.sets(st.sampled_from(["api", "docs", "infra", "mobile", "web"]), min_size=1))
def test_a_half_that_skipped_a_block_a_hand_made_line_names_starts_again(seed: int, names) -> None:
    """A half leaves another namespace's block unfolded unless the ledger's bytes show another line
    naming one of its priors (`survey`, which reads lines as the keeper writes them). A decision
    written by hand in another form is not seen there: the half meets it during the replay, starts
    again folding every line, and still names exactly what the whole replay names."""
    lines = _LEDGERS[seed].splitlines(keepends=True)
    decided = [i for i, line in enumerate(lines) if line.startswith(b'{"action":"decide"')]
    assert decided
    for i in decided:
        lines[i] = _hand_written(lines[i]) + b"\n"
    data = b"".join(lines)
    needed = survey(data)[1]
    assert not any(json.loads(lines[i])["id"] in needed for i in decided)  # (the search misses every one)
    whole = replay(data)
    assert any(p.code == "RERAISE" for p in whole)  # (a decision in another namespace still holds)
    for inside in (True, False):
        assert replay(data, Share(names, inside), needed) == replay(data, Share(names, inside))
    assert in_order(replay(data, Share(names, True), needed) + replay(data, Share(names, False), needed)) == whole


def _edited(data: bytes, kind: str, at: float) -> bytes:
    """`data` with one hand edit of the kind a half reading a block as text (`half_records`) must not
    be fooled by, at the prior line nearest `at` (a fraction of the ledger)."""
    lines = data.splitlines(keepends=True)
    priors = [i for i, line in enumerate(lines) if line.startswith(b'{"born":')]
    i = priors[min(int(at * len(priors)), len(priors) - 1)]
    rec = json.loads(lines[i])
    names = sorted({json.loads(lines[j])["ns"] for j in priors})
    other = names[(names.index(rec["ns"]) + 1) % len(names)]  # (a namespace that has priors of its own)
    event = {"t": "event", "action": "disposition", "by": "agent", "run": rec["born"], "to": "fixed"}
    edits = {
        "escape": lambda: [dumps(dict(rec, claim=rec["claim"] + ' "quoted"'))],
        "control": lambda: [dumps(rec).replace('","facets"', '\t","facets"', 1)],
        "raw control": lambda: [dumps(rec).replace('","facets"', '\x01","facets"', 1)],
        "crlf": lambda: [dumps(rec) + "\r"],
        "another namespace": lambda: [dumps(dict(rec, ns=other))],
        "no namespace": lambda: [dumps({k: v for k, v in rec.items() if k != "ns"})],
        "twice a key": lambda: [dumps(rec)[:-1] + ',"ns":"' + other + '"}'],
        "another run": lambda: [dumps(dict(rec, born="run-999"))],
        "facets no JSON": lambda: [dumps(rec).replace('"facets":{', '"facets":{"x":,', 1)],
        "verdict on an unknown prior": lambda: [dumps(rec), dumps(dict(event, id="P-9999"))],
        "verdict on itself": lambda: [dumps(rec), dumps(dict(event, id=rec["id"]))],
        "verdict on another namespace": lambda: [dumps(rec), dumps(dict(event, id=_first_of(lines, other)))],
        "moved": lambda: [dumps(rec), dumps(dict(event, action="moved", to=rec.get("scope_ref", "x") + "#m"))],
        "a person's verdict": lambda: [dumps(rec), dumps(dict(event, id=rec["id"], by="human", action="decide"))],
        "blank": lambda: [dumps(rec), ""],
        "not JSON": lambda: [dumps(rec), "{not json"],
    }
    lines[i:i + 1] = [(line + "\n").encode() for line in edits[kind]()]
    return b"".join(lines)


def _first_of(lines: List[bytes], ns: str) -> str:
    return next(json.loads(line)["id"] for line in lines if line.startswith(b'{"born":') and json.loads(line)["ns"] == ns)


_EDITS = ["escape", "control", "raw control", "crlf", "another namespace", "no namespace", "twice a key", "another run",
          "facets no JSON", "verdict on an unknown prior", "verdict on itself", "verdict on another namespace", "moved",
          "a person's verdict", "blank", "not JSON"]


def _with_door(data: bytes) -> bytes:
    """The seals as today's keeper writes them: `door` before `ns` (the generated ledgers write none)."""
    return data.replace(b'{"action":"commit","ns":', b'{"action":"commit","door":7,"ns":')


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(_LEDGERS)), st.sampled_from(_EDITS), st.floats(0, 1),
       st.sets(st.sampled_from(["api", "docs", "infra", "mobile", "web"]), min_size=1, max_size=4), st.booleans())
@example(3, "verdict on another namespace", 0.5, {"api"}, False)  # (a ledger with no prior in `mobile`'s neighbour)
def test_a_half_reading_another_half_s_blocks_as_text_names_what_the_whole_replay_names(seed, kind, at, names,
                                                                                        door) -> None:
    """A half that skips what it can reads another half's block as text where every line is a prior
    or verdict written as the keeper writes them (`half_records`): a hand edit in such a block —
    an escape, a control character, a line of another namespace or run, a key twice, facets that
    are no JSON, a verdict on a prior the half has not seen, a move — is parsed as before, and the
    two halves still name exactly what the whole replay names."""
    data = _edited(_with_door(_LEDGERS[seed]) if door else _LEDGERS[seed], kind, at)
    needed = survey(data)[1]
    assert in_order(replay(data, Share(names, True), needed) + replay(data, Share(names, False), needed)) == replay(data)


@pytest.mark.parametrize("ns", [["api"], None, 7])
def test_a_verdict_read_as_text_on_a_prior_whose_namespace_is_no_string_is_no_crash(ns) -> None:
    """A hand-made prior whose `ns` is a list, missing or a number, skipped in another half's block, and a
    later keeper-written verdict on it read as text: the halves still name what the whole names (a
    list was looked up in a set of names: a `TypeError` out of `verify`)."""
    lines = _LEDGERS[1].splitlines(keepends=True)
    i = next(i for i, line in enumerate(lines) if line.startswith(b'{"born":"run-002"'))
    rec = json.loads(lines[i])
    lines[i] = (dumps({k: v for k, v in rec.items() if k != "ns"} if ns is None else dict(rec, ns=ns)) + "\n").encode()
    j = next(j for j in range(i, len(lines)) if lines[j].startswith(b'{"action":"commit"') and b'"run":"run-003"' in lines[j])
    verdict = {"t": "event", "action": "disposition", "by": "agent", "id": rec["id"], "run": "run-003", "to": "fixed"}
    lines.insert(j, (dumps(verdict) + "\n").encode())
    data = b"".join(lines)
    needed = survey(data)[1]
    for names in ({"web"}, {"api"}, {"docs", "infra"}):
        assert in_order(replay(data, Share(names, True), needed) + replay(data, Share(names, False), needed)) == replay(data)


@pytest.mark.parametrize("pid", [["P-0001"], {"id": "P-0001"}, 7, None])
def test_a_verdict_whose_id_is_no_string_is_no_crash_in_a_half(pid) -> None:
    """A hand-made verdict whose `id` is a list or an object (unhashable), a number or missing, in an agent's
    block: each half asks which namespace the line is of (`ns_of`) and names what the whole names (a list
    or an object was looked up in the priors: a `TypeError` out of `verify` on a ledger split between
    two processes — hostile pass 27an)."""
    lines = _LEDGERS[1].splitlines(keepends=True)
    j = next(j for j, line in enumerate(lines) if line.startswith(b'{"action":"commit"') and b'"run":"run-003"' in line)
    verdict = {"t": "event", "action": "disposition", "by": "agent", "id": pid, "run": "run-003", "to": "fixed"}
    lines.insert(j, (dumps({k: v for k, v in verdict.items() if v is not None}) + "\n").encode())
    data = b"".join(lines)
    needed = survey(data)[1]
    whole = replay(data)
    for names in ({"web"}, {"api"}, {"docs", "infra"}):
        assert in_order(replay(data, Share(names, True)) + replay(data, Share(names, False))) == whole
        assert in_order(replay(data, Share(names, True), needed) + replay(data, Share(names, False), needed)) == whole


@pytest.mark.parametrize("door", [False, True])
def test_a_half_parses_only_the_lines_it_may_need(monkeypatch, door) -> None:
    """Another half's keeper-written blocks are read as text, not parsed: a half judging one namespace
    parses its own blocks, the seals, a person's decisions and the priors they name — far fewer lines
    than the ledger holds — and names what it names when it parses every line; whether the seals
    name their door, as the keeper's do (hostile pass 27am: a seal's `door` came before its `ns`),
    or not, as the reference's."""
    from priors.core import replay_split

    data = _with_door(_LEDGERS[1]) if door else _LEDGERS[1]
    assert (b'{"action":"commit","door":7,"ns":' in data) == door
    needed = survey(data)[1]
    parsed = []
    scan = replay_split.scanner()
    monkeypatch.setattr(replay_split, "_SCANNER", [lambda text, at: parsed.append(text) or scan(text, at)])
    half = replay(data, Share({"docs"}, True), needed)
    assert half == replay(data, Share({"docs"}, True))
    docs = sum(1 for line in data.splitlines() if b'"ns":"docs"' in line)
    assert len(parsed) < docs + 0.25 * (len(data.splitlines()) - docs)
    assert any('"ns":"docs"' in text for text in parsed)


def test_the_split_puts_the_heaviest_namespaces_where_there_is_least_to_do() -> None:
    weights = namespace_weights([_LEDGERS[1]])
    assert set(weights) == {"api", "docs", "infra", "mobile", "web"}
    mine = split_namespaces(weights, 0.4)  # this half also checks the lines: the other takes the heaviest
    assert mine and "web" not in mine and mine != set(weights)
    assert split_namespaces({"web": 100}, 0.4) == set()  # one namespace: the other half does it all


def test_the_namespaces_are_weighed_on_whole_lines_sampled_across_the_ledger(tmp_path) -> None:
    """`ledger_sample`: the whole ledger when it is small; else whole lines from spots spread over it,
    so the weights of a namespace that only comes late still count (the split's balance rests on them)."""
    paths = Paths(tmp_path)
    paths.dir.mkdir()
    lines = [dumps({"t": "prior", "id": f"P-{i:04d}", "ns": "early" if i < 600 else "late", "claim": "x" * (i % 97)})
             for i in range(1000)]
    paths.ledger.write_text("".join(line + "\n" for line in lines[:5]))
    assert ledger_sample(paths) == [paths.ledger.read_bytes()]
    paths.ledger.write_text("".join(line + "\n" for line in lines))
    pieces = ledger_sample(paths, places=4, each=2048)
    assert len(pieces) == 4 and all(len(piece) <= 2048 for piece in pieces)
    whole = set(lines)
    assert all(line in whole for piece in pieces for line in piece.decode().splitlines())
    weights = namespace_weights(pieces)
    assert weights["early"] > 0 and weights["late"] > 0


@pytest.mark.parametrize("decided", [{"severity": "major"},  # a finding, and (hostile pass 27c) what is held by its
                                     {"facets": dict(k.BEHAVIORAL)},  # words alone: lessons, a floor
                                     {"facets": dict(LESSON)},
                                     {"facets": dict(k.CONCLUSION, activation="propose-gate"), "depth": "major"}])
def test_a_half_that_skips_a_move_of_a_person_s_decision_still_finds_it_where_it_went(decided) -> None:
    """A person's decision in one namespace moves with its code (a `moved` event in that namespace's
    run); a re-raise of it in another namespace at its new place is named by a split replay too: the
    half that does not judge the moving namespace still finds the decision at its new ref — a lesson or
    a floor too, which the replay holds by its words (`decided_words`), not by its scope."""
    h = "bbbbbbbbbbbb"
    records = [
        k.prior("P-0001", "run-001", "the total skips the tax", ns="api", ref="src/a.py#total", scope_hash=h,
                **decided),
        k.commit("run-001", ns="api"),
        k.decide("P-0001", "wontfix", "policy"),
        {"t": "event", "action": "moved", "id": "P-0001", "run": "run-002", "by": "agent", "from": "src/a.py#total",
         "to": "src/b.py#total", "scope_hash": h},
        k.commit("run-002", ns="api"),
        k.prior("P-0002", "run-003", "the total skips the tax", ns="web", ref="src/b.py#total", scope_hash=h,
                severity="major"),
        k.commit("run-003", ns="web"),
    ]
    data = k.to_bytes(records)
    whole = replay(data)
    assert [(p.line, p.code) for p in whole] == [(6, "RERAISE")]
    needed = survey(data)[1]
    for names in ({"api"}, {"web"}):
        assert in_order(replay(data, Share(names, True)) + replay(data, Share(names, False))) == whole
        assert in_order(replay(data, Share(names, True), needed) + replay(data, Share(names, False), needed)) == whole
    if "facets" in decided:  # at the old ref a lesson or floor no longer stands
        assert replay(k.to_bytes(records[:5] + [dict(records[5], scope_ref="src/a.py#total"), records[6]])) == []


def test_the_line_checks_name_every_prior_the_survey_finds_and_the_hand_written_ones_too() -> None:
    """verify's own half takes the priors other lines name from its line checks (`Checked.named`),
    which parse every line the byte search reads as text: all the survey finds, and the decisions a
    person's editor rewrote, which the survey misses (so that half need not start again)."""
    from priors.core.ledger_checks import check_ledger
    for data in _LEDGERS.values():
        assert check_ledger(data).named >= survey(data)[1] and survey(data)[1]
        lines = data.splitlines(keepends=True)
        decided = [i for i, line in enumerate(lines) if line.startswith(b'{"action":"decide"')]
        for i in decided:
            lines[i] = _hand_written(lines[i]) + b"\n"
        edited = b"".join(lines)
        ids = {json.loads(lines[i])["id"] for i in decided}
        assert ids <= check_ledger(edited).named and not ids & survey(edited)[1]


def test_the_survey_reads_a_ledger_cut_anywhere_as_its_lines() -> None:
    """verify --no-git hands the survey the ledger as it reads it, a megabyte at a time, cut anywhere:
    a person's decision cut in two is still found (else the half that skipped its prior would find
    it only while replaying, and replay the whole ledger a second time)."""
    data = _LEDGERS[1]
    at = data.find(b'{"action":"decide"')
    assert at > 0
    for cut in (at + 3, at + 25, at + 40):
        assert survey([data[:cut], data[cut:]]) == survey(data)


@pytest.mark.parametrize("pid", [["P-0001"], {"a": 1}])
def test_a_moved_event_whose_id_is_no_string_is_named_not_a_crash(pid: Any) -> None:
    """Hostile pass 27e: a hand-made `moved` event with a list (or object) for `id` crashed the replay
    (`unhashable type`), and `verify` with it — exit 3 instead of the BAD_FIELD the line checks name."""
    move = {"t": "event", "action": "moved", "id": pid, "run": "run-002", "from": "src/a.py#f", "to": "src/a.py#g"}
    data = k.to_bytes([k.prior("P-0001", "run-001", "x is y", ref="src/a.py#f"), k.commit("run-001"), move,
                       k.commit("run-002")])
    assert replay(data) == []


def test_a_ledger_sealed_by_a_door_comparing_lessons_by_meaning_is_split_for_it() -> None:
    """Where runs are sealed by a door comparing lessons by meaning (door 5 on: every ledger this keeper
    writes), judging costs several times what verify's line checks do, so this process, which does the
    checks, takes a larger share of the namespaces than where the seals name an older door or none."""
    from priors.core.replay_split import judged_by_meaning, split_namespaces
    from priors.ops.verify import HEAD_START, HEAD_START_BY_MEANING

    plain = _LEDGERS[1]  # (the generated ledger's seals name no door, as the reference's)
    assert judged_by_meaning(_with_door(plain).splitlines()) and not judged_by_meaning(plain.splitlines())
    assert not judged_by_meaning(plain.replace(b'{"action":"commit","ns":', b'{"action":"commit","door":4,"ns":').splitlines())
    weights = {"web": 42, "api": 25, "infra": 17, "docs": 9, "mobile": 7}  # (the bench ledger's shares)
    assert split_namespaces(weights, HEAD_START) == {"api", "docs"}  # 34 of 100 here, beside the line checks
    assert split_namespaces(weights, HEAD_START_BY_MEANING) == {"api", "infra", "mobile"}  # 49
