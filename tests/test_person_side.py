"""The person's side, polished (issue 31): one chart per namespace whose numbers are `status`'s,
`-o -` printing for every verb that writes a file, mistyped namespaces named, and the wording."""

from __future__ import annotations

import json
import re
from typing import Dict, List

from conftest import Keeper


def _two_namespaces(k: Keeper) -> None:
    """code-review: three runs (2 findings, one fixed, one more); ruff: two runs (4 findings, 1 fixed)."""
    k.write("src/a.py", "def total(cart):\n    return sum(cart)\n")
    k.write("src/b.py", "def tax():\n    return 0.2\n")
    scopes = json.loads(k.ok("snapshot", "src"))

    def run(ns: str, claims: List[str], fixed: List[str] = ()) -> None:
        rel = json.loads(k.ok("relevant", "--ns", ns, "--scopes", k.scopes(scopes)))
        for item in rel["verify"]:
            k.ok("disposition", item["id"], "fixed" if item["id"] in fixed else "still-open", "--run", rel["run"])
        for i, claim in enumerate(claims):
            k.ok("propose", k.candidate({"type": "conclusion", "claim": claim, "scope_ref": "src/a.py" if i % 2
                                         else "src/b.py", "severity": "major"}), "--run", rel["run"], "--ns", ns)
        k.ok("commit", "--run", rel["run"])

    k.ok("init")
    run("code-review", ["total ignores discounts", "tax rate is hard-coded"])
    run("ruff", ["F401 os imported but unused", "E501 line too long", "F841 x assigned but never used",
                 "B006 mutable default argument"])
    run("code-review", [], fixed=["P-0001"])
    run("ruff", [], fixed=["P-0003"])
    run("code-review", ["the cart is never emptied"])


def _open_points(svg: str) -> Dict[str, List[int]]:
    """Per chart (its title's namespace), the open counts its line plots, run by run."""
    out: Dict[str, List[int]] = {}
    for chunk in svg.split("<svg ")[1:]:
        title = re.search(r"<title id=\"[^\"]+\">[^<]*— ([a-z0-9._-]+)</title>", chunk)
        if title:
            out[title.group(1)] = [int(n) for n in re.findall(r"<title>run-\d+: (\d+) open</title>", chunk)]
    return out


def test_history_draws_one_chart_per_namespace_whose_open_line_is_status(keeper):
    _two_namespaces(keeper)
    status = {n["ns"]: n["open"] for n in json.loads(keeper.ok("status", "--json"))["namespaces"]}
    assert status == {"code-review": 2, "ruff": 3}
    svg = keeper.ok("history", "--svg", "-")
    assert svg.startswith("<?xml") and "wrote" not in svg
    points = _open_points(svg)
    # each line is its own namespace's truth: never 2 → 4 → 1 → 3 zigzagging between them
    assert points == {"code-review": [2, 1, 2], "ruff": [4, 3]}, points
    assert {ns: line[-1] for ns, line in points.items()} == status
    one = keeper.ok("history", "--ns", "ruff", "--svg", "-")
    assert _open_points(one) == {"ruff": [4, 3]}
    keeper.usage("history", "--svg", "-", "--json")


def test_the_report_shows_a_chart_per_namespace_and_narrows_to_ns(keeper):
    _two_namespaces(keeper)
    page = keeper.ok("report", "-o", "-")
    assert page.startswith("<!DOCTYPE html>") and not (keeper.root / "-").exists()
    assert page.count('<figure data-ns="') == 2
    wide = {m for m in re.findall(r'<figure data-ns="([^"]+)">', page)}
    assert wide == {"code-review", "ruff"}
    for ns, line in _open_points(page.replace('class="chart narrow"', 'class="x"')).items():
        assert line[-1] == {"code-review": 2, "ruff": 3}[ns]
    only = keeper.ok("report", "-o", "-", "--ns", "ruff")
    assert only.count("<figure") == 1 and 'data-ns="ruff"' in only
    assert "total ignores discounts" not in only and "E501 line too long" in only
    assert "did you mean ruff?" in keeper.usage("report", "-o", "-", "--ns", "rufff")


def test_dash_means_stdout_for_every_verb_that_writes_a_file(keeper):
    _two_namespaces(keeper)
    snap = keeper.ok("snapshot", "src", "-o", "-")
    assert json.loads(snap)["src/a.py"] and not (keeper.root / "-").exists()
    assert json.loads(keeper.ok("export", "-o", "-"))["lessons"] == []
    assert keeper.ok("history", "--svg", "-").startswith("<?xml")
    assert keeper.ok("report", "-o", "-").startswith("<!DOCTYPE html>")
    assert not (keeper.root / "-").exists()


def test_a_mistyped_namespace_is_a_usage_error_on_every_verb_that_reads_one(keeper):
    _two_namespaces(keeper)
    for args in (["list", "--ns", "rufff"], ["list", "--lessons", "--ns", "rufff"], ["history", "--ns", "rufff"],
                 ["lessons", "--ns", "rufff"], ["export", "--ns", "rufff"], ["export", "--sarif", "--ns", "rufff"],
                 ["reflect", "--ns", "rufff"], ["report", "-o", "r.html", "--ns", "rufff"]):
        err = keeper.usage(*args)
        assert "rufff" in err and "did you mean ruff?" in err, (args, err)
    assert "(it holds code-review, ruff)" in keeper.usage("list", "--ns", "nothing-like-it")
    # a capital letter, a lowercase id, a misspelt status: each named with what was meant
    for args in (["report", "-o", "r.html", "--ns", "Ruff"], ["list", "--ns", "RUFF"]):
        assert "did you mean ruff?" in keeper.usage(*args), args
    assert "did you mean P-0004?" in keeper.usage("show", "p-0004")
    assert "did you mean open?" in keeper.usage("list", "--status", "opne")
    assert "did you mean" not in keeper.usage("list", "--status", "xyzzy")
    # a namespace the ledger knows only from a sealed run that found nothing is known
    keeper.ok("commit", "--run", json.loads(keeper.ok("relevant", "--ns", "quiet", "--scopes", keeper.scopes({})))["run"])
    assert keeper.ok("list", "--ns", "quiet") == "no priors match\n"


def test_wording_counts_and_hints(keeper):
    _two_namespaces(keeper)
    # show of an id the ledger lacks says which ids there are
    body = keeper.refused("UNKNOWN_PRIOR", "show", "P-9999")
    assert body["hint"] == "the ledger's priors are P-0001 … P-0007: `priors list` shows them"
    # a misspelt global option is not called a verb
    err = keeper.usage("--versoin")
    assert "unknown option --versoin — did you mean `--version`?" in err and "unknown verb" not in err
    assert "RUN|last" in keeper.ok("score", "--help")
    # importing a bundle of one lesson that is already here
    keeper.ok("add", "--ns", "dev", "Run the narrowest test first.")
    keeper.ok("export", "--ns", "dev", "-o", "one.json")
    assert keeper.ok("import", "one.json", "--ns", "dev").startswith(
        "imported nothing into dev — its one lesson is already here\n")
    # a usage error in a candidate file names the file
    rel = json.loads(keeper.ok("relevant", "--ns", "dev", "--scopes", keeper.scopes({})))
    err = keeper.usage("propose", keeper.candidate({"type": "conclusion"}, "broken-one.json"), "--run", rel["run"],
                       "--ns", "dev")
    assert "(in broken-one.json)" in err


def test_the_lessons_table_keeps_its_columns_with_a_challenged_lesson(keeper):
    keeper.ok("init")
    keeper.ok("add", "--ns", "dev", "Run the narrowest test first.")
    keeper.ok("add", "--ns", "dev", "--open", "--type", "behavioral", "--scope-ref", "pytest", "--scope-hash",
              "abc123abc123", "Pass -x to stop at the first failure.")
    rel = json.loads(keeper.ok("relevant", "--ns", "dev", "--scopes", keeper.scopes({"pytest": "abc123abc123"})))
    keeper.ok("disposition", "P-0002", "challenged", "--run", rel["run"])
    keeper.ok("commit", "--run", rel["run"])
    lines = keeper.ok("lessons").splitlines()
    assert any(" challenged " in line for line in lines), lines
    claim_at = lines[0].index("lesson")  # every lesson's text starts under the heading, after two spaces
    assert sorted(line[claim_at:claim_at + 4] for line in lines[1:]) == ["Pass", "Run "], lines
    assert all(line[claim_at - 2:claim_at] == "  " for line in lines[1:]), lines


# ------------------------------------------------------------------ what agents tried


def _decided_and_raised_again(k: Keeper, times: int = 2) -> None:
    """P-0001 found in run-001 and marked wontfix; then `times` runs each try to raise it again, reworded."""
    k.write("a.py", "def total(cart):\n    return sum(cart)\n")
    k.ok("init")
    scopes = json.loads(k.ok("snapshot"))
    rel = json.loads(k.ok("relevant", "--ns", "review", "--scopes", k.scopes(scopes)))
    k.ok("propose", k.candidate({"type": "conclusion", "claim": "total ignores discounts", "scope_ref": "a.py#total",
                                 "severity": "major"}), "--run", rel["run"], "--ns", "review")
    k.ok("commit", "--run", rel["run"])
    k.ok("decide", "P-0001", "wontfix", "--because", "discounts are applied upstream")
    for i in range(times):
        rel = json.loads(k.ok("relevant", "--ns", "review", "--scopes", k.scopes(scopes)))
        for words in (f"total ignores the discounts ({i})", "total ignores discounts"):
            r = k("propose", k.candidate({"type": "conclusion", "claim": words, "scope_ref": "a.py#total",
                                          "severity": "major"}), "--run", rel["run"], "--ns", "review")
            assert r.code == 1 and json.loads(r.out)["refused"] == "RERAISE", r
        k.ok("commit", "--run", rel["run"])


def test_a_runs_seal_keeps_what_its_agent_tried_and_the_person_sees_it(keeper):
    _decided_and_raised_again(keeper)
    seals = [r for r in keeper.ledger() if r["t"] == "run"]
    assert "attempts" not in seals[0]
    assert seals[1]["attempts"] == [{"claim": "total ignores the discounts (0)", "code": "RERAISE", "of": "P-0001"},
                                    {"claim": "total ignores discounts", "code": "RERAISE", "of": "P-0001"}]
    assert keeper("verify").code == 0
    show = keeper.ok("show", "P-0001")
    assert "agents re-raised in 2 runs since your wontfix — in these words:" in show  # runs, not lines
    assert "“total ignores the discounts (1)”" in show and "refused RERAISE" in show
    assert len(json.loads(keeper.ok("show", "P-0001", "--json"))["tried_since_decision"]) == 4
    # a call for the person in status --calls and the desk, with the commands that answer it; never automatic
    calls = keeper.ok("status", "--calls")
    assert "? P-0001 — total ignores discounts — agents re-raised in 2 runs since your wontfix: does it stand?" in calls
    assert "\n      priors decide P-0001 wontfix\n      priors decide P-0001 reopen --because " in calls
    ask = json.loads(keeper.ok("status", "--calls", "--json"))["calls"][0]
    assert ask["kind"] == "pressed" and ask["verdicts"] == ["wontfix", "reopen"]
    assert keeper.ledger()[-1]["t"] == "run"  # nothing was decided for the person
    page = keeper.ok("report", "-o", "-")
    assert '<section id="tried"><h2>Raised again since you decided (1)</h2>' in page
    assert "“total ignores the discounts (1)”" in page
    # the person looks again and says it stands: the count starts over from this decision
    keeper.ok("decide", "P-0001", "wontfix", "--because", "still applied upstream")
    assert "re-raised" not in keeper.ok("show", "P-0001") and "P-0001" not in keeper.ok("status", "--calls")


def test_one_attempt_is_shown_but_is_no_call(keeper):
    _decided_and_raised_again(keeper, times=0)
    rel = json.loads(keeper.ok("relevant", "--ns", "review", "--scopes", keeper.scopes(json.loads(keeper.ok("snapshot")))))
    r = keeper("propose", keeper.candidate({"type": "conclusion", "claim": "total ignores  discounts",
                                            "scope_ref": "a.py#total"}), "--run", rel["run"], "--ns", "review")
    assert r.code == 1 and json.loads(r.out)["refused"] == "RERAISE", r
    keeper.ok("commit", "--run", rel["run"])
    assert "agents re-raised in 1 run since your wontfix" in keeper.ok("show", "P-0001")
    assert "P-0001" not in keeper.ok("status", "--calls")  # once may be an accident: shown, not put to you


def test_redaction_takes_the_words_agents_tried(keeper):
    _decided_and_raised_again(keeper, times=1)
    rel = json.loads(keeper.ok("relevant", "--ns", "review", "--scopes", keeper.scopes(json.loads(keeper.ok("snapshot")))))
    keeper("propose", keeper.candidate({"type": "conclusion", "claim": "total ignores discounts again",
                                        "scope_ref": "a.py#total"}), "--run", rel["run"], "--ns", "review")
    assert "again" in keeper.read(f".priors/runs/{rel['run']}/attempts.jsonl")
    keeper.ok("abort", "--run", rel["run"])
    old = keeper.ledger_bytes()
    keeper.ok("redact", "P-0001", "--because", "private")
    for path in (keeper.root / ".priors").rglob("*"):
        if path.is_file():
            assert b"discounts" not in path.read_bytes(), path
    seal = [r for r in keeper.ledger() if r["t"] == "run"][1]
    assert all(a["claim_redacted"] is True and len(a["claim_hash"]) == 12 for a in seal["attempts"])
    assert keeper("verify").code == 0
    from priors.core.ledger_growth import check_since

    assert check_since(old, keeper.ledger_bytes()) == []
    assert "(words redacted)" in keeper.ok("show", "P-0001")


def test_a_forged_attempt_refuses_the_commit_and_verify_names_a_bad_one(keeper):
    _decided_and_raised_again(keeper, times=0)
    rel = json.loads(keeper.ok("relevant", "--ns", "review", "--scopes", keeper.scopes({})))
    staged = keeper.root / ".priors" / "runs" / rel["run"] / "attempts.jsonl"
    staged.write_text('{"claim":"total ignores discounts","code":"RERAISE","of":"P-0999"}\n', encoding="utf-8")
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", rel["run"])
    assert body["file"] == f".priors/runs/{rel['run']}/attempts.jsonl" and body["line"] == 1
    staged.write_text('{"claim":"ok","code":"RERAISE","of":"P-0001","by":"human"}\n', encoding="utf-8")
    keeper.refused("MALFORMED_STAGING", "commit", "--run", rel["run"])
    staged.unlink()
    keeper.ok("commit", "--run", rel["run"])
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines()
    lines[-1] = lines[-1].replace(b'"action":"commit",', b'"action":"commit","attempts":[{"code":"NOPE"}],')
    ledger.write_bytes(b"\n".join(lines) + b"\n")
    r = keeper("verify", "--no-git")
    assert r.code == 1 and "`attempts` must be a list of {code, of, claim}" in r.out, r


def test_the_merge_driver_renumbers_and_redacts_what_agents_tried():
    from priors.core.merge_rules import redact_refs, rewrite_refs

    seal = {"t": "run", "action": "commit", "run": "run-003", "ns": "review", "summary": [],
            "attempts": [{"claim": "x is bad", "code": "DUPLICATE", "of": "P-0004"}]}
    moved = rewrite_refs(seal, {"P-0004": "P-0009"}, {"run-003": "run-005"})
    assert moved["run"] == "run-005" and moved["attempts"][0]["of"] == "P-0009"
    gone = redact_refs(seal, {"P-0004"})
    assert gone["attempts"] == [{"claim_hash": gone["attempts"][0]["claim_hash"], "claim_redacted": True,
                                 "code": "DUPLICATE", "of": "P-0004"}]


def test_a_forged_redacted_attempt_or_one_naming_no_prior_is_refused_and_verify_names_it(keeper):
    """An agent writes its staging and may write ledger lines: an attempt in the redacted form on a prior
    nobody redacted counted as pressure whose words no person can read ("(words redacted)"), and a seal's
    attempt naming no prior passed verify, though commit refuses both."""
    _decided_and_raised_again(keeper, times=0)
    rel = json.loads(keeper.ok("relevant", "--ns", "review", "--scopes", keeper.scopes({})))
    staged = keeper.root / ".priors" / "runs" / rel["run"] / "attempts.jsonl"
    staged.write_text('{"claim_hash":"aaaaaaaaaaaa","claim_redacted":true,"code":"RERAISE","of":"P-0001"}\n',
                      encoding="utf-8")
    body = keeper.refused("MALFORMED_STAGING", "commit", "--run", rel["run"])
    assert "P-0001 is not redacted" in body["because"]["rule"] and body["line"] == 1
    staged.unlink()
    keeper.ok("commit", "--run", rel["run"])
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    sealed = ledger.read_bytes()
    forged = (b'{"claim_hash":"aaaaaaaaaaaa","claim_redacted":true,"code":"RERAISE","of":"P-0001"},'
              b'{"claim":"reopen it","code":"RERAISE","of":"P-0999"}')
    lines = sealed.splitlines()
    lines[-1] = lines[-1].replace(b'"action":"commit",', b'"action":"commit","attempts":[' + forged + b'],')
    ledger.write_bytes(b"\n".join(lines) + b"\n")
    r = keeper("verify", "--no-git")
    assert r.code == 1 and "an attempt on P-0001 is in its redacted form, but P-0001 is not redacted" in r.out, r
    assert "an attempt names P-0999, which no earlier line defines" in r.out, r
    # words kept on a redacted prior are what its redaction removes
    ledger.write_bytes(sealed)
    keeper.ok("redact", "P-0001", "--because", "private")
    lines = ledger.read_bytes().splitlines()
    lines.append(lines[-2].replace(b'"action":"commit",', b'"action":"commit","attempts":[{"claim":"total ignores'
                                   b' discounts","code":"RERAISE","of":"P-0001"}],').replace(b'"run-002"', b'"run-003"'))
    assert b"run-003" in lines[-1] and b'"t":"run"' in lines[-1]
    ledger.write_bytes(b"\n".join(lines) + b"\n")
    r = keeper("verify", "--no-git")
    assert r.code == 1 and "P-0001 is redacted but an attempt on it still carries its words" in r.out, r


def test_the_walk_names_many_runs_in_one_line():
    from priors.core.desk import _runs_note

    assert _runs_note([{"run": "run-1000"}, {"run": "run-999"}, {"run": "run-999"}]) == "runs run-999, run-1000"
    assert _runs_note([{"run": "run-002"}]) == "run run-002"
    assert _runs_note([{"run": f"run-{i:03d}"} for i in range(2, 3000)]) == "2998 runs, run-002 … run-2999"


def test_a_scope_ref_with_a_quote_shows_the_quote_not_its_escape():
    from priors.core.report_html import ref_html

    assert ref_html("it's<b>.py#a&b") == '<code class="ref">it&#x27;s&lt;b&gt;.<wbr>py#<wbr>a&amp;b</code>'
    assert ref_html("src/cart.py#add_item") == '<code class="ref">src/<wbr>cart.<wbr>py#<wbr>add_<wbr>item</code>'


def test_relevant_with_a_namespace_close_to_one_of_the_ledger_says_so(keeper):
    """A run opened in a mistyped namespace starts a namespace of its own, blind to what is settled in the one
    meant: legitimate for a new one, so not refused, but named on stderr with the one it looks like."""
    _decided_and_raised_again(keeper, times=0)
    r = keeper("relevant", "--ns", "reveiw", "--scopes", keeper.scopes({}))
    assert r.code == 0 and json.loads(r.out)["ns"] == "reveiw"
    run = json.loads(r.out)["run"]
    assert r.err == (f"priors: note: reveiw is a new namespace, close to review that the ledger holds — if you meant"
                     f" review, `priors abort --run {run}` and open the run with --ns review\n"), r.err
    keeper.ok("abort", "--run", run)
    for ns in ("review", "docs"):
        r = keeper("relevant", "--ns", ns, "--scopes", keeper.scopes({}))
        assert r.code == 0 and r.err == "", r
        keeper.ok("abort", "--run", json.loads(r.out)["run"])


def test_each_charts_line_ends_now_at_status_open_after_a_later_decision(keeper):
    _two_namespaces(keeper)
    keeper.ok("decide", "P-0004", "wontfix", "--because", "long lines are fine here")  # after ruff's last run
    status = {n["ns"]: n["open"] for n in json.loads(keeper.ok("status", "--json"))["namespaces"]}
    assert status == {"code-review": 2, "ruff": 2}

    def now_points(svg: str) -> Dict[str, int]:
        out = {}
        for chunk in svg.split("<svg ")[1:]:
            title = re.search(r"<title id=\"[^\"]+\">[^<]*— ([a-z0-9._-]+)( — [^<]*)?</title>", chunk)
            now = re.findall(r"<title>now: (\d+) open</title>", chunk)
            if title and now:
                out[title.group(1)] = int(now[-1])
        return out

    svg = keeper.ok("history", "--svg", "-")
    assert _open_points(svg)["ruff"] == [4, 3]  # after each run, as it was
    assert now_points(svg) == status  # then now: the decision taken since counts
    assert now_points(keeper.ok("history", "--ns", "ruff", "--svg", "-")) == {"ruff": 2}
    page = keeper.ok("report", "-o", "-")
    wide = page.split('class="chart narrow"')[0]
    assert sorted(int(n) for n in re.findall(r"<title>now: (\d+) open</title>", page)) == [2, 2, 2, 2]
    assert re.findall(r"<title>now: (\d+) open</title>", wide) == ["2"]


def test_an_agent_cannot_inflate_the_pressure_by_writing_its_attempts_file(keeper):
    """Forged lines in a run's attempts.jsonl (the agent's own file): a seal keeps at most three per prior,
    drops a re-raise whose words share none with the prior's claim, and the count is of runs, not lines."""
    _decided_and_raised_again(keeper, times=1)
    rel = json.loads(keeper.ok("relevant", "--ns", "review", "--scopes", keeper.scopes(json.loads(keeper.ok("snapshot")))))
    forged = [{"claim": f"total ignores discounts, take {i}", "code": "RERAISE", "of": "P-0001"} for i in range(500)]
    forged.insert(0, {"claim": "zebra quantum lorem", "code": "RERAISE", "of": "P-0001"})  # nothing like P-0001's claim
    keeper.write(f".priors/runs/{rel['run']}/attempts.jsonl",
                 "".join(json.dumps(a, sort_keys=True, separators=(",", ":")) + "\n" for a in forged))
    keeper.ok("commit", "--run", rel["run"])
    kept = keeper.ledger()[-1]["attempts"]
    assert [a["claim"] for a in kept] == [f"total ignores discounts, take {i}" for i in range(3)]
    show = keeper.ok("show", "P-0001")
    assert "agents re-raised in 2 runs since your wontfix" in show and "zebra" not in show
    # one timeline line per run, however many attempts its seal holds
    assert len([ln for ln in show.splitlines() if "raised it again" in ln]) == 2, show
    assert "an agent raised it again 3 times in this run" in show
    ask = json.loads(keeper.ok("status", "--calls", "--json"))["calls"][0]
    assert ask["kind"] == "pressed" and ask["reason"] == "agents re-raised in 2 runs since your wontfix"
    page = keeper.ok("report", "-o", "-")
    assert '<td class="n">2 runs</td>' in page and "the agents' own report" in page


def test_quiescent_is_said_per_namespace_and_touched_is_explained_once(keeper):
    """`quiescent since run-N` read across namespaces named a run of one namespace for all of them; each
    namespace's own streak is named, in `history` and the report's header. `touched` is said once."""
    _two_namespaces(keeper)
    # code-review's last run (run-005) found something new; ruff's next (run-006) carries everything
    rel = json.loads(keeper.ok("relevant", "--ns", "ruff", "--scopes", keeper.scopes(json.loads(keeper.ok("snapshot", "src")))))
    for item in rel["verify"]:
        keeper.ok("disposition", item["id"], "still-open", "--run", rel["run"])
    keeper.ok("commit", "--run", rel["run"])
    text = keeper.ok("history")
    assert "ruff: quiescent since run-006 (1 run in a row)" in text, text
    assert "code-review: quiescent" not in text and "\nquiescent since" not in text
    assert text.count("touched: a finding whose code changed since a run judged it") == 1
    page = keeper.ok("report", "-o", "-")
    sub = re.search(r'<p class="sub">([^<]*)</p>', page).group(1)
    assert "ruff: quiescent since run-006 (1 run in a row)" in sub and "code-review: quiescent" not in sub, sub
    assert page.count("touched: a finding whose code changed since a run judged it") == 1
    assert "\nquiescent since run-006 (1 run in a row)" in keeper.ok("history", "--ns", "ruff")  # one namespace: as before
