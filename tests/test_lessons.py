"""The lessons loop end to end through the real CLI: add, config, budgets, score, reflect, supersedes,
export/import between two repos, the secret guard, and require_review."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import Keeper

CONTRACT_KEYS = {"run", "ns", "inject", "verify", "nudges", "settled", "archived", "floors"}
GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def add(k: Keeper, text: str, *extra: str, ns: str = "dev") -> str:
    return k.ok("add", "--ns", ns, *extra, text)


def run_once(k: Keeper, ns: str = "dev", *opts: str, propose=None) -> dict:
    out = json.loads(k.ok("relevant", "--ns", ns, *opts))
    for cand in propose or []:
        r = k.propose(out["run"], ns, cand)
        assert r.code == 0, r
    k.ok("commit", "--run", out["run"])
    return out


def ids(items):
    return [x["id"] for x in items]


# ------------------------------------------------------------------ add


def test_add_seals_an_accepted_lesson_as_a_run_of_its_own(keeper: Keeper):
    out = add(keeper, "Run the narrowest test first.", "--tag", "testing", "--tag", "CI".lower())
    assert out.strip() == "P-0001 added to dev as run-001 — accepted (binding)"
    prior, seal, decide = keeper.ledger()  # human decisions stand between runs, after the seal
    assert prior == {"t": "prior", "id": "P-0001", "ns": "dev", "type": "calibration", "born": "run-001",
                     "claim": "Run the narrowest test first.", "tags": ["ci", "testing"],
                     "facets": {"scope": "repo-wide", "activation": "run-start", "obligation": "inject-as-instruction",
                                "authority": "advisory", "lifecycle": "only-by-supersession"}}
    assert decide == {"t": "event", "id": "P-0001", "action": "decide", "to": "accepted", "by": "human"}
    assert seal["t"] == "run" and seal["action"] == "commit" and seal["run"] == "run-001" and seal["ns"] == "dev"
    assert seal["summary"] == ["Added by you: 1 lesson (P-0001) — accepted"]
    # a conforming keeper replays it: the commit of run-001 prints the stored summary
    assert keeper.ok("commit", "--run", "run-001") == "Added by you: 1 lesson (P-0001) — accepted\n"
    assert keeper.ok("status") == "dev: 0 open · 0 fixed · 0 decided by you · 1 lesson locked\n"
    rel = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert rel["run"] == "run-002"
    assert rel["inject"] == [{"id": "P-0001", "claim": "Run the narrowest test first.", "status": "accepted"}]
    assert "P-0001" in (keeper.root / ".priors" / "PRIORS.md").read_text(encoding="utf-8")


def test_add_options_and_refusals(keeper: Keeper):
    keeper.usage("add", "--ns", "dev")
    keeper.usage("add", "dev", "text")
    keeper.usage("add", "--ns", "dev", "--type", "conclusion", "x")
    keeper.usage("add", "--ns", "dev", "--type", "behavioral", "Use uv for installs")
    keeper.usage("add", "--ns", "dev", "--scope-ref", "x", "repo-wide lesson")
    keeper.usage("add", "--ns", "dev", "--tag", "Not A Tag", "x")
    keeper.usage("add", "--ns", "dev", "--review-every", "0", "x")
    keeper.usage("add", "--ns", "dev", "--supersedes", "P-0009", "x")
    out = add(keeper, "Use uv for installs", "--type", "behavioral", "--scope-ref", "tool:uv",
              "--scope-hash", "abc123abc123", "--review-every", "3", "--open")
    assert "open" in out
    rec = keeper.ledger()[0]
    assert rec["type"] == "behavioral" and rec["scope_ref"] == "tool:uv" and rec["review_every"] == 3
    assert [r["t"] for r in keeper.ledger()] == ["prior", "run"]
    body = keeper.refused("DUPLICATE", "add", "--ns", "dev", "Use  uv for installs")
    assert body["of"] == "P-0001"
    add(keeper, "Use uv for installs", ns="other")  # another namespace is another library
    body = keeper.refused("SECRET_SUSPECTED", "add", "--ns", "dev", f"deploy with {GH}")
    assert body["field"] == "claim" and GH not in json.dumps(body)
    rel = json.loads(keeper.ok("relevant", "--ns", "dev"))
    body = keeper.refused("ACTIVE_RUN_EXISTS", "add", "--ns", "dev", "between runs only")
    assert body["run"] == rel["run"]


def test_add_supersedes_retires_the_old_lesson_in_the_same_write(keeper: Keeper):
    add(keeper, "Run the whole suite before pushing.")
    out = add(keeper, "Run the narrowest test, then the suite before pushing.", "--supersedes", "P-0001")
    assert "P-0001 → obsolete (superseded by P-0002)" in out
    lines = keeper.ledger()[3:]
    assert [(r["t"], r.get("id"), r.get("to")) for r in lines] == [
        ("prior", "P-0002", None), ("run", None, None), ("event", "P-0002", "accepted"), ("event", "P-0001", "obsolete")]
    assert lines[0]["supersedes"] == "P-0001"
    assert "1 retired" in keeper.ok("status")


# ------------------------------------------------------------------ config and budgets


def test_config_verb(keeper: Keeper):
    assert keeper.ok("config") == "{}\n"
    assert keeper.ok("config", "max_inject", "3") == "max_inject = 3\n"
    assert keeper.ok("config", "require_review", "on") == "require_review = true\n"
    assert keeper.ok("config") == '{"max_inject":3,"require_review":true}\n'
    assert keeper.ok("config", "max_inject") == "3\n"
    assert keeper.ok("config", "max_chars") == "none\n"
    assert keeper.ok("config", "max_inject", "none") == "max_inject = none\n"
    keeper.usage("config", "colour", "blue")
    keeper.usage("config", "max_chars", "lots")
    keeper.usage("config", "max_chars", "0")
    keeper.usage("config", "require_review", "perhaps")
    keeper.usage("config", "a", "b", "c")
    (keeper.root / ".priors" / "config.json").write_text("{nope", encoding="utf-8")
    assert "config.json" in keeper.usage("relevant", "--ns", "dev")
    (keeper.root / ".priors" / "config.json").write_text('{"max_inject": -1}', encoding="utf-8")
    keeper.usage("config")


def _library(k: Keeper):
    add(k, "Keep the README short and scannable.", "--tag", "docs")  # accepted: binding
    add(k, "Run the narrowest relevant test before the full suite.", "--tag", "testing", "--open")
    add(k, "Prefer small commits with honest messages.", "--open")
    add(k, "Cache lint results between runs; they are slow.", "--tag", "lint", "--open")


def test_relevant_without_options_is_the_contract(keeper: Keeper):
    _library(keeper)
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert set(out) == CONTRACT_KEYS | {"settled_here", "settled_here_more"}  # ours adds what is settled here
    assert ids(out["inject"]) == ["P-0001", "P-0002", "P-0003", "P-0004"]


def test_budgets_rank_and_list_what_did_not_fit(keeper: Keeper):
    _library(keeper)
    out = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", "run the lint", "--max-inject", "2"))
    assert ids(out["inject"]) == ["P-0001", "P-0004"]  # binding first, then the best match
    assert out["inject_omitted"] == ["P-0002", "P-0003"]
    keeper.ok("abort", "--run", out["run"])
    out = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", "slow lint", "--max-chars", "90"))
    assert ids(out["inject"]) == ["P-0001", "P-0004"] and out["inject_omitted"] == ["P-0002", "P-0003"]
    keeper.ok("abort", "--run", out["run"])
    # a person's accepted lesson is never dropped by a budget, even one it alone exceeds (36 characters)
    out = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", "slow lint", "--max-chars", "10"))
    assert ids(out["inject"]) == ["P-0001"] and out["inject_omitted"] == ["P-0004", "P-0002", "P-0003"]
    keeper.ok("abort", "--run", out["run"])
    keeper.usage("relevant", "--ns", "dev", "--max-inject", "none")
    keeper.usage("relevant", "--ns", "dev", "--max-chars", "-3")
    keeper.ok("config", "max_inject", "1")
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert ids(out["inject"]) == ["P-0001"] and len(out["inject_omitted"]) == 3
    keeper.ok("abort", "--run", out["run"])
    out = json.loads(keeper.ok("relevant", "--ns", "dev", "--max-inject", "4"))  # options beat config
    assert len(out["inject"]) == 4 and out["inject_omitted"] == []
    keeper.ok("abort", "--run", out["run"])
    add(keeper, "Never force-push a shared branch.")  # a second binding lesson: both stay over max_inject 1
    out = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", "lint"))
    assert ids(out["inject"]) == ["P-0001", "P-0005"] and out["inject_omitted"] == ["P-0004", "P-0002", "P-0003"]


def test_a_budgeted_run_records_what_it_was_shown_and_only_that_is_scored(keeper: Keeper):
    _library(keeper)
    before = len(keeper.ledger())
    run_once(keeper, "dev")  # no budget: nothing extra after the seal
    assert [r["t"] for r in keeper.ledger()[before:]] == ["run"]
    out = run_once(keeper, "dev", "--max-inject", "2", "--query", "lint")
    assert ids(out["inject"]) == ["P-0001", "P-0004"]  # the binding lesson, then the best match
    shown, seal = keeper.ledger()[-2:]
    assert seal["t"] == "run" and shown == {"t": "injected", "run": out["run"], "ids": ["P-0001", "P-0004"]}
    assert (keeper.ok("score", out["run"], "success").strip()
            == f"{out['run']} → success (credits 2 lessons: P-0001, P-0004)")
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--json"))}
    assert rows["P-0004"]["wins"] == 1 and rows["P-0002"]["wins"] == 0
    assert rows["P-0004"]["uses"] == 2 and rows["P-0002"]["uses"] == 1


def test_require_review_injects_agent_lessons_only_after_a_human_accepts(keeper: Keeper):
    run_once(keeper, "dev", propose=[{"type": "calibration", "claim": "Agents like small diffs."}])
    keeper.ok("config", "require_review", "on")
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert out["inject"] == [] and out["awaiting_review"] == ["P-0001"]
    keeper.ok("abort", "--run", out["run"])
    calls = keeper.ok("status", "--calls")
    assert "P-0001 — Agents like small diffs. — a proposed lesson, not injected until you accept it" in calls
    keeper.ok("decide", "P-0001", "accepted")
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert ids(out["inject"]) == ["P-0001"] and out["awaiting_review"] == []


# ------------------------------------------------------------------ score


def test_score_credits_what_the_run_was_shown(keeper: Keeper):
    add(keeper, "Lesson one.")
    r2 = run_once(keeper)["run"]
    add(keeper, "Lesson two, born after run-002.")
    r4 = run_once(keeper)["run"]
    assert keeper.ok("score", r2, "failure", "--because", "tests were skipped").strip() == \
        f"{r2} → failure (credits 1 lesson: P-0001)"
    rec = keeper.ledger()[-1]
    assert rec == {"t": "score", "run": r2, "outcome": "failure", "by": "human", "injected": ["P-0001"],
                   "reason": "tests were skipped"}
    keeper.refused("ALREADY_SCORED", "score", r2, "success")
    keeper.ok("score", r2, "success", "--replace")
    assert keeper.ledger()[-1]["replaces"] is True
    keeper.ok("score", "last", "partial")
    assert keeper.ledger()[-1]["run"] == r4
    keeper.ok("score", r4, "success", "--again")
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--json"))}
    assert {k: rows["P-0001"][k] for k in ("uses", "wins", "partials", "losses", "score")} == \
        {"uses": 2, "wins": 2, "partials": 1, "losses": 0, "score": "0.83"}
    assert {k: rows["P-0002"][k] for k in ("uses", "wins", "partials", "losses", "score")} == \
        {"uses": 1, "wins": 1, "partials": 1, "losses": 0, "score": "0.75"}
    table = keeper.ok("lessons")
    assert table.splitlines()[0].startswith("id") and "P-0001" in table
    status = keeper.ok("status")
    assert "  · P-0001 score 0.83 — 2 uses: 2 wins · 1 partial · 0 losses" in status


def test_score_refusals_and_usage(keeper: Keeper):
    keeper.refused("UNKNOWN_RUN", "score", "last", "success")
    add(keeper, "A lesson.")
    keeper.refused("NOT_SCORABLE", "score", "run-001", "success")
    keeper.refused("UNKNOWN_RUN", "score", "run-777", "success")
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    keeper.refused("RUN_OPEN", "score", out["run"], "success")
    keeper.ok("commit", "--run", out["run"])
    keeper.refused("NOT_SCORED", "score", out["run"], "success", "--replace")
    keeper.usage("score", out["run"], "great")
    keeper.usage("score", "run-2", "success")
    keeper.usage("score", out["run"], "success", "--again", "--replace")
    keeper.usage("score", out["run"])
    body = keeper.refused("SECRET_SUSPECTED", "score", out["run"], "failure", "--because",
                          'the env had password = "hunter2hunter2xyz"')
    assert body["field"] == "reason"


def test_a_losing_lesson_becomes_your_call(keeper: Keeper):
    add(keeper, "Always rebuild the cache from scratch.")
    for _ in range(3):
        r = run_once(keeper)["run"]
        keeper.ok("score", r, "failure")
    calls = keeper.ok("status", "--calls")
    assert ("  ? P-0001 — Always rebuild the cache from scratch. scored 0.00 over 3 runs — keep it or retire it?\n"
            "      priors decide P-0001 keep\n      priors decide P-0001 obsolete\n") in calls
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert out["nudges"] == [{"id": "P-0001", "claim": "Always rebuild the cache from scratch.",
                              "ask": "scored 0.00 over 3 runs — keep or retire? reply: decide P-0001 keep — "
                                     "or decide P-0001 obsolete"}]
    summary = keeper.ok("commit", "--run", out["run"])
    assert "? 1 need your call" in summary
    assert json.loads(keeper.ok("lessons", "--json"))[0]["your_call"] is True
    keeper.ok("decide", "P-0001", "keep")  # the human has seen it: quiet until new evidence
    assert "scored" not in keeper.ok("status", "--calls").split("locked")[1].split("·")[0]
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    assert out["nudges"] == []


# ------------------------------------------------------------------ reflect


def test_reflect_writes_a_time_travel_safe_packet_and_marks_runs_learned(keeper: Keeper):
    assert "nothing to reflect on" in keeper.ok("reflect")
    add(keeper, "Lesson one.")
    r2 = run_once(keeper, propose=[{"type": "calibration", "claim": "Found in run two."}])["run"]
    keeper.ok("score", r2, "failure", "--because", "forgot the changelog")
    add(keeper, "Write the changelog entry first.")  # learned from run-002: born after it
    r4 = run_once(keeper)["run"]
    keeper.ok("score", r4, "success")
    out = keeper.ok("reflect", "--dry-run")
    assert "dry run" in out
    packet = (keeper.root / ".priors" / "reflection" / f"reflect-{r4}.md").read_text(encoding="utf-8")
    part2 = packet.split(f"### {r2}")[1].split("### ")[0]
    assert "forgot the changelog" in part2 and "P-0002 (calibration, now open) — Found in run two." in part2
    assert "- lessons injected at that time:\n  - P-0001 — Lesson one." in part2
    assert "P-0003" not in part2.split("lessons born after")[0]
    assert "born after this run (it could not have used them): P-0003\n" in part2  # P-0002 is its own finding
    part4 = packet.split(f"### {r4}")[1]
    assert "P-0001" in part4 and "P-0002" in part4 and "P-0003" in part4
    assert "priors propose" in packet and "supersedes" in packet
    assert not [r for r in keeper.ledger() if r["t"] == "learned"]
    out = keeper.ok("reflect", "1")
    assert f"marked learned: {r4}" in out
    assert keeper.ledger()[-1] == {"t": "learned", "runs": [r4]}
    out = keeper.ok("reflect")
    assert f"({r2})" in out and keeper.ledger()[-1] == {"t": "learned", "runs": [r2]}
    assert "nothing to reflect on" in keeper.ok("reflect")
    out = keeper.ok("reflect", "--include-learned", "--dry-run")
    assert f"({r2}, {r4})" in out
    keeper.ok("score", r2, "partial", "--replace")  # a corrected score revives the run
    assert f"({r2})" in keeper.ok("reflect", "--dry-run")
    assert ".priors/reflection" not in (keeper.root / ".gitignore").read_text() if (keeper.root / ".gitignore").exists() else True
    assert "reflection/" in (keeper.root / ".priors" / ".gitignore").read_text(encoding="utf-8")
    keeper.ok("redact", "P-0002", "--because", "private")
    assert not any("P-0002" in p.read_text(encoding="utf-8")
                   for p in (keeper.root / ".priors" / "reflection").glob("*.md"))


def test_reflect_writes_a_lone_surrogate_a_hand_put_in_a_claim_as_its_escape(keeper: Keeper):
    """A ledger line written by hand may spell a lone surrogate (`\\udc80`) in a lesson's claim: the packet
    quotes it as that escape — it stopped `reflect` with an unexpected error."""
    add(keeper, "Lesson one.")
    r2 = run_once(keeper)["run"]
    keeper.ok("score", r2, "failure")
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes().replace(b'"claim":"Lesson one."', b'"claim":"Lesson \\udc80one."', 1))
    keeper.ok("reflect", "--dry-run")
    packet = (keeper.root / ".priors" / "reflection" / f"reflect-{r2}.md").read_text(encoding="utf-8")
    assert "P-0001 — Lesson \\udc80one." in packet


def test_reflect_mark_existing_and_ns(keeper: Keeper):
    add(keeper, "A.")
    add(keeper, "B.", ns="docs")
    runs = [run_once(keeper)["run"] for _ in range(3)] + [run_once(keeper, "docs")["run"]]
    for r in runs:
        keeper.ok("score", r, "success")
    assert keeper.ok("reflect", "--mark-existing", "2", "--dry-run").startswith("would mark 2 runs")
    assert keeper.ok("reflect", "--mark-existing", "2").strip() == f"marked 2 runs as learned: {runs[2]}, {runs[3]}"
    out = keeper.ok("reflect", "--ns", "dev")
    assert f"({runs[0]}, {runs[1]})" in out
    assert (keeper.root / ".priors" / "reflection" / f"reflect-{runs[1]}-dev.md").is_file()
    keeper.usage("reflect", "0")
    keeper.usage("reflect", "many")
    keeper.usage("reflect", "--mark-existing", "--include-learned")


# ------------------------------------------------------------------ propose: tags, supersedes, secrets


def test_propose_tags_supersedes_and_the_secret_guard(keeper: Keeper):
    add(keeper, "Old advice.", "--open")  # open: its successor's acceptance retires it (a binding one only if named)
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    run = out["run"]
    body = keeper.refused("SECRET_SUSPECTED", "propose", keeper.candidate(
        {"type": "calibration", "claim": "Use the deploy key", "evidence": f"found {GH} in ci.yml"}),
        "--run", run, "--ns", "dev")
    assert body == {"refused": "SECRET_SUSPECTED", "field": "evidence", "kind": "GitHub token",
                    "hint": body["hint"]}
    assert not (keeper.root / ".priors" / "runs" / run / "staged.jsonl").exists()
    keeper.usage("propose", keeper.candidate({"type": "calibration", "claim": "x", "tags": ["Bad Tag"]}),
                 "--run", run, "--ns", "dev")
    keeper.usage("propose", keeper.candidate({"type": "calibration", "claim": "x", "supersedes": "P-0099"}),
                 "--run", run, "--ns", "dev")
    keeper.usage("propose", keeper.candidate({"type": "calibration", "claim": "x", "supersedes": "old"}),
                 "--run", run, "--ns", "dev")
    r = keeper.propose(run, "dev", {"type": "calibration", "claim": "Better advice.", "tags": ["ci", "ci", "docs"],
                                    "supersedes": "P-0001",
                                    "evidence": "def f(x):\n    return hashlib.sha256(x).hexdigest()[:12]"})
    assert r.code == 0, r
    keeper.ok("commit", "--run", run)
    rec = [x for x in keeper.ledger() if x.get("id") == "P-0002" and x["t"] == "prior"][0]
    assert rec["tags"] == ["ci", "docs"] and rec["supersedes"] == "P-0001"
    out = keeper.ok("decide", "P-0002", "accepted")
    assert out == "P-0002 → accepted (your call — this sticks)\nP-0001 → obsolete (superseded by P-0002)\n"
    last = keeper.ledger()[-2:]
    assert last[1] == {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human",
                       "reason": "superseded by P-0002"}
    assert keeper.ok("decide", "P-0002", "keep").count("\n") == 1  # already retired: nothing more


# ------------------------------------------------------------------ export / import


def test_export_import_round_trip_between_two_repos(tmp_path: Path):
    src = Keeper(tmp_path / "src")
    dst = Keeper(tmp_path / "dst")
    for k in (src, dst):
        k.root.mkdir()
        k.ok("init")
    add(src, "Keep the README short.", "--tag", "docs")
    add(src, "Run the narrowest test first.", "--type", "behavioral", "--scope-ref", "tool:pytest",
        "--scope-hash", "0123456789ab")
    add(src, "Retired one.")
    add(src, "Secret project detail.")
    src.ok("decide", "P-0003", "obsolete")
    src.ok("redact", "P-0004", "--because", "private")
    r = run_once(src)["run"]
    src.ok("score", r, "success", "--because", "private note")
    bundle_text = src.ok("export")
    bundle = json.loads(bundle_text)
    assert bundle["format"] == "priors-lessons" and bundle["version"] == 1
    assert [x["claim"] for x in bundle["lessons"]] == ["Keep the README short.", "Run the narrowest test first."]
    assert bundle["lessons"][0]["score"] == {"uses": 1, "wins": 1, "partials": 0, "losses": 0}
    assert bundle["lessons"][0]["origin"] == {"id": "P-0001", "ns": "dev", "born": "run-001", "status": "accepted"}
    assert "private" not in bundle_text and "Secret project" not in bundle_text and "Retired" not in bundle_text
    assert json.loads(src.ok("export", "--type", "behavioral"))["lessons"][0]["type"] == "behavioral"
    assert "no namespace of that name (it holds dev)" in src.usage("export", "--ns", "nope")
    assert "outside the repository" in src.usage("export", "-o", str(tmp_path / "b.json"))  # - and a redirect do that
    bundle_file = src.root / "b.json"
    assert src.ok("export", "-o", str(bundle_file)).strip() == f"exported 2 lessons to {bundle_file}"
    (tmp_path / "b.json").write_bytes(bundle_file.read_bytes())

    add(dst, "Keep  the README short.")  # already here, normalized
    out = dst.ok("import", str(tmp_path / "b.json"), "--ns", "team")
    assert "imported 2 lessons into team as run-002 (open, awaiting your review): P-0002, P-0003" in out
    out = dst.ok("import", str(tmp_path / "b.json"), "--ns", "dev", "--accept")
    assert "imported 1 lesson into dev as run-003 (accepted): P-0004" in out
    assert "skipped lessons[0] (already here as P-0001, accepted)" in out
    assert "imported nothing" in dst.ok("import", str(tmp_path / "b.json"), "--ns", "dev")
    led = dst.ledger()
    imported = [x for x in led if x["t"] == "prior" and x["born"] == "run-003"][0]
    assert imported["scope_ref"] == "tool:pytest" and imported["type"] == "behavioral"
    assert "origin" not in imported and "score" not in imported
    assert not [x for x in led if x["t"] == "score"]  # scores never travel
    rows = {r["id"]: r for r in json.loads(dst.ok("lessons", "--json"))}
    assert rows["P-0004"]["status"] == "accepted" and rows["P-0004"]["uses"] == 0
    assert rows["P-0002"]["status"] == "open" and rows["P-0002"]["tags"] == ["docs"]
    # and back again: the round trip is stable
    again = json.loads(dst.ok("export", "--ns", "team"))
    assert [x["claim"] for x in again["lessons"]] == [x["claim"] for x in bundle["lessons"]]


def test_import_refusals_and_bad_bundles(keeper: Keeper, tmp_path: Path):
    def bundle(lessons):
        p = tmp_path / "x.json"
        p.write_text(json.dumps({"format": "priors-lessons", "version": 1, "lessons": lessons}), encoding="utf-8")
        return str(p)

    keeper.usage("import", bundle([]))  # --ns missing
    keeper.usage("import", str(tmp_path / "missing.json"), "--ns", "dev")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    keeper.usage("import", str(tmp_path / "bad.json"), "--ns", "dev")
    (tmp_path / "other.json").write_text('{"lessons": []}', encoding="utf-8")
    keeper.usage("import", str(tmp_path / "other.json"), "--ns", "dev")
    keeper.usage("import", bundle([{"type": "conclusion", "claim": "x", "scope_ref": "a"}]), "--ns", "dev")
    keeper.usage("import", bundle([{"type": "calibration", "claim": ""}]), "--ns", "dev")
    keeper.usage("import", bundle([{"type": "calibration", "facets": {"authority": "binding"}, "claim": "x"}]),
                 "--ns", "dev")
    keeper.usage("import", bundle([{"type": "behavioral", "claim": "x"}]), "--ns", "dev")
    body = keeper.refused("SECRET_SUSPECTED", "import",
                          bundle([{"type": "calibration", "claim": "ok"},
                                  {"type": "calibration", "claim": "-----BEGIN RSA PRIVATE KEY-----"}]), "--ns", "dev")
    assert body["field"] == "lessons[1].claim" and body["kind"] == "private key"
    good = bundle([{"type": "calibration", "claim": "fine", "tags": ["ok"]}])
    out = json.loads(keeper.ok("relevant", "--ns", "dev"))
    keeper.refused("ACTIVE_RUN_EXISTS", "import", good, "--ns", "dev")
    keeper.ok("commit", "--run", out["run"])
    assert "imported 1 lesson" in keeper.ok("import", good, "--ns", "dev")


def test_lessons_listing_filters_and_help(keeper: Keeper):
    assert "no lessons yet" in keeper.ok("lessons")
    add(keeper, "Alpha lesson.", "--tag", "alpha")
    add(keeper, "Beta lesson.", ns="docs")
    add(keeper, "Gamma lesson.", "--supersedes", "P-0001")
    rows = json.loads(keeper.ok("lessons", "--json"))
    assert [r["id"] for r in rows] == ["P-0002", "P-0003"]
    assert rows[0] == {"id": "P-0002", "ns": "docs", "type": "calibration", "status": "accepted",
                       "claim": "Beta lesson.", "score": "0.50", "uses": 0, "wins": 0, "partials": 0, "losses": 0}
    assert [r["id"] for r in json.loads(keeper.ok("lessons", "--all", "--ns", "dev", "--json"))] == ["P-0001", "P-0003"]
    text = keeper.ok("lessons", "--all")
    assert "P-0001" in text and "#alpha" in text and "obsolete" in text
    keeper.usage("lessons", "extra")
    for verb in ("add", "score", "reflect", "lessons", "export", "import", "config"):
        r = keeper(verb, "--help")
        assert r.code == 0 and r.out.startswith("usage: priors " + verb), r
    assert "Lessons:" in keeper.ok("--help")


def test_recomputed_injections_equal_what_relevant_printed(keeper: Keeper):
    """The exactness claim behind scoring: re-folding the ledger gives back each run's inject list."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from priors.core.lessons import Ledger

    printed = {}
    add(keeper, "First.")
    add(keeper, "Elsewhere.", ns="docs")
    out = run_once(keeper, propose=[{"type": "calibration", "claim": "Agent one."}])
    printed[out["run"]] = ids(out["inject"])
    keeper.ok("decide", "P-0001", "obsolete")
    add(keeper, "Second.", "--open")
    out = run_once(keeper, "dev", "--scopes", keeper.scopes({"tool:x": "0123456789ab"}),
                   propose=[{"type": "behavioral", "claim": "Tool one.", "scope_ref": "tool:x"}])
    printed[out["run"]] = ids(out["inject"])
    keeper.ok("redact", "P-0003", "--because", "private")
    out = run_once(keeper, "docs")
    printed[out["run"]] = ids(out["inject"])
    out = run_once(keeper, "dev", "--max-inject", "1")
    printed[out["run"]] = ids(out["inject"])
    out = run_once(keeper)
    printed[out["run"]] = ids(out["inject"])
    shown = Ledger.of(keeper.ledger()).shown
    assert len(printed) == 5 and any("P-0003" in got for got in printed.values())
    for run, got in printed.items():
        expected = [i for i in got if i != "P-0003"]  # a redacted lesson drops out of recomputed lists
        assert shown[run] == expected, (run, shown[run], got)


def test_list_lessons_is_the_lessons_view(keeper: Keeper):
    add(keeper, "Alpha lesson.")
    assert keeper.ok("list", "--lessons") == keeper.ok("lessons")
    assert keeper.ok("list", "--lessons", "--json", "--ns", "dev") == keeper.ok("lessons", "--json", "--ns", "dev")
    keeper.usage("list", "--lessons", "--status", "open")


def test_a_symlinked_reflection_or_runs_folder_is_never_followed(keeper: Keeper, tmp_path: Path):
    """`.priors/reflection` or `.priors/runs` leading outside the repository: `reflect` refuses to
    write through it and `redact` leaves what it leads to alone (it used to delete those files)."""
    outside = tmp_path / "outside"
    (outside / "reflection").mkdir(parents=True)
    (outside / "runs" / "run-900").mkdir(parents=True)
    kept = outside / "reflection" / "notes-P-0002.md"
    kept.write_text("P-0002 is mentioned here\n", encoding="utf-8")
    staged = outside / "runs" / "run-900" / "staged.jsonl"
    staged.write_text('{"id":"P-0002","claim":"mine"}\n', encoding="utf-8")
    add(keeper, "Lesson one.")
    r2 = run_once(keeper, propose=[{"type": "calibration", "claim": "Found in run two."}])["run"]
    keeper.ok("score", r2, "failure")
    (keeper.root / ".priors" / "reflection").symlink_to(outside / "reflection", target_is_directory=True)
    ledger = keeper.ledger_bytes()
    assert "is a symlink" in keeper.usage("reflect")
    assert keeper.ledger_bytes() == ledger and sorted(p.name for p in (outside / "reflection").iterdir()) == [kept.name]
    runs = keeper.root / ".priors" / "runs"
    shutil.rmtree(runs)
    runs.symlink_to(outside / "runs", target_is_directory=True)
    keeper.ok("redact", "P-0002", "--because", "private")
    assert kept.read_text(encoding="utf-8") == "P-0002 is mentioned here\n"
    assert staged.read_text(encoding="utf-8") == '{"id":"P-0002","claim":"mine"}\n'


def test_a_query_copied_from_a_coloured_prompt_ranks_as_its_words(keeper: Keeper):
    """`--query` only ranks and is never stored: terminal escapes and control characters are dropped
    from it (the hooks and the Pi extension pass a person's prompt as it is), for `lessons --inject`
    and `relevant` alike; every other argument still refuses them."""
    add(keeper, "Run the parser tests first.", "--tag", "parser", "--open")  # open: ranked, and the budget applies
    add(keeper, "Keep the changelog current.", "--open")
    plain = keeper.ok("lessons", "--inject", "--query", "fix the parser", "--max-inject", "1", "--json")
    coloured = keeper.ok("lessons", "--inject", "--query", "\x1b[31mfix\x1b[0m the\x07 parser\x1b]0;title\x07",
                         "--max-inject", "1", "--json")
    assert json.loads(coloured)["inject"] == json.loads(plain)["inject"]
    assert [i["id"] for i in json.loads(plain)["inject"]] == ["P-0001"]
    rel = json.loads(keeper.ok("relevant", "--ns", "dev", "--query", "\x1b[1mparser\x1b[0m", "--max-inject", "1"))
    assert [i["id"] for i in rel["inject"]] == ["P-0001"]
    keeper.ok("abort", "--run", rel["run"])
    assert "control or bidirectional-format character" in keeper.usage("add", "--ns", "dev", "bad\x1b[31m lesson")


def test_supersedes_names_only_a_lesson_and_says_what_it_retires(keeper: Keeper):
    """An agent's lesson with `supersedes` naming a person's wontfix *finding*: once the person
    accepted the lesson, the finding became obsolete and its re-raise new. `supersedes` now names a
    lesson only, and `show`, the walk's ask and the report say what accepting retires."""
    keeper.write("a.py", "x = 1\n")
    run = keeper.open_run("dev", {"a.py": keeper.hash("a.py")})["run"]
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": "x is a magic number", "scope_ref": "a.py"}),
              "--run", run, "--ns", "dev")
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "it is fine")
    add(keeper, "Name constants.", "--open")  # open: accepting its successor retires it (a binding one: below)
    run = keeper.open_run("dev", {"a.py": keeper.hash("a.py")})["run"]
    err = keeper.usage("propose", keeper.candidate({"type": "calibration", "claim": "Prefer named constants.",
                                                    "supersedes": "P-0001"}), "--run", run, "--ns", "dev")
    assert "P-0001, which is not a lesson" in err
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "Prefer named constants.",
                                           "supersedes": "P-0002"}), "--run", run, "--ns", "dev")
    keeper.ok("commit", "--run", run)
    assert "supersedes: P-0002 (accepting or keeping this lesson retires it)" in keeper.ok("show", "P-0003")
    keeper.ok("config", "require_review", "on")
    calls = json.loads(keeper.ok("status", "--calls", "--json"))["calls"]
    assert any(c["id"] == "P-0003" and c.get("supersedes") == "P-0002" for c in calls)
    keeper.ok("report", "-o", "r.html")
    assert "accepting it retires P-0002" in keeper.read("r.html")


def test_accepting_a_lesson_leaves_a_persons_lesson_in_force_unless_named(keeper: Keeper):
    """Issue 27: an agent's lesson with `supersedes` naming a lesson a person accepted. Accepting the
    new lesson used to retire the person's lesson as a side effect; now only the person's own word
    about that very lesson does (`decide NEW accepted --retires OLD`), and every view says so."""
    add(keeper, "Name constants.")  # P-0001, accepted by a person: binding
    run = keeper.open_run("dev", {})["run"]
    for claim in ("Prefer named constants.", "Give every magic number a name."):
        keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": claim, "supersedes": "P-0001"}),
                  "--run", run, "--ns", "dev")
    keeper.ok("commit", "--run", run)
    show = keeper.ok("show", "P-0002")
    assert ("supersedes: P-0001 (accepted by a person: accepting or keeping this lesson leaves it in force unless"
            " you name it — `priors decide P-0002 accepted --retires P-0001`)") in show
    keeper.ok("config", "require_review", "on")
    calls = {c["id"]: c for c in json.loads(keeper.ok("status", "--calls", "--json"))["calls"]}
    assert calls["P-0002"]["supersedes_binding"] == "accepted"
    assert "priors decide P-0002 accepted --retires P-0001" in calls["P-0002"]["commands"]
    keeper.ok("report", "-o", "r.html")
    assert "a person settled it (accepted): accepting this lesson leaves it in force" in keeper.read("r.html")
    # usage errors write nothing: a prior the lesson does not supersede, a verdict that accepts nothing
    assert "P-0002 does not supersede P-0003" in keeper.usage("decide", "P-0002", "accepted", "--retires", "P-0003")
    assert "--retires goes with accepted or keep" in keeper.usage("decide", "P-0002", "wontfix", "--retires", "P-0001")
    assert "P-0002" in keeper.usage("decide", "P-0001", "accepted", "--retires", "P-0002")
    # accepting without naming it: the person's lesson stays in force, and the answer says how to retire it
    before = len(keeper.ledger())
    out = keeper.ok("decide", "P-0002", "accepted")
    assert "P-0001 → obsolete" not in out
    assert 'P-0001 stays accepted — P-0002 supersedes it, but a person settled it' in out
    assert keeper.ledger()[before:] == [{"t": "event", "id": "P-0002", "action": "decide", "to": "accepted", "by": "human"}]
    rows = {r["id"]: r for r in json.loads(keeper.ok("lessons", "--json"))}
    assert rows["P-0001"]["status"] == "accepted"
    # naming it in the same decision retires it, in the same write
    out = keeper.ok("decide", "P-0003", "accepted", "--retires", "P-0001")
    assert "P-0001 → obsolete (superseded by P-0003)" in out
    assert [(r["id"], r["to"]) for r in keeper.ledger()[-2:]] == [("P-0003", "accepted"), ("P-0001", "obsolete")]
    assert keeper.ok("verify").startswith("ledger sound")


def test_retiring_after_the_acceptance_writes_only_the_retirement(keeper: Keeper):
    """`decide NEW accepted` (the person's lesson kept), then the command README and `show` offer,
    `decide NEW accepted --retires OLD`: it once wrote a second, identical acceptance before the
    retirement, which the list of a change's human lines showed like a copy."""
    add(keeper, "Name constants.")
    run = keeper.open_run("dev", {})["run"]
    keeper.ok("propose", keeper.candidate({"type": "calibration", "claim": "Prefer named constants.",
                                           "supersedes": "P-0001"}), "--run", run, "--ns", "dev")
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0002", "accepted")
    before = len(keeper.ledger())
    out = keeper.ok("decide", "P-0002", "accepted", "--retires", "P-0001")
    assert "P-0002 stays accepted" in out and "P-0001 → obsolete (superseded by P-0002)" in out
    assert [(r["id"], r["to"]) for r in keeper.ledger()[before:]] == [("P-0001", "obsolete")]
    assert keeper.ok("verify").startswith("ledger sound")


def test_import_skips_a_lesson_a_person_retired_in_other_case_and_punctuation(keeper: Keeper, tmp_path: Path):
    """Hostile pass 27p: `suggest` refuses a case or punctuation variant of a lesson a person retired
    (DUPLICATE), but `import` compared claims only after normalizing spaces, so a bundle an agent wrote
    brought the variant back — open, and injected into every session at once. Import compares as the door
    does: case, spaces and punctuation folded."""
    keeper.ok("init")
    keeper.ok("suggest", "Always run the full test suite before committing a change", "--ns", "dev")
    keeper.ok("decide", "P-0001", "obsolete", "--because", "too slow, we run it in CI")
    keeper.refused("DUPLICATE", "suggest", "always run the FULL test-suite before committing a change!", "--ns", "dev")
    bundle = {"format": "priors-lessons", "version": 1, "lessons": [
        {"type": "calibration", "claim": "always run the FULL test-suite before committing a change!"},
        {"type": "calibration", "claim": "ALWAYS run the full test suite, before committing a change."}]}
    (tmp_path / "h.json").write_text(json.dumps(bundle))
    out = keeper.ok("import", str(tmp_path / "h.json"), "--ns", "dev")
    assert "imported nothing into dev" in out, out
    assert "skipped lessons[0] (already here as P-0001, obsolete)" in out
    assert "skipped lessons[1] (already here as P-0001, obsolete)" in out
    assert [r["id"] for r in keeper.ledger() if r["t"] == "prior"] == ["P-0001"]
