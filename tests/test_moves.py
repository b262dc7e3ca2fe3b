"""Issue 28, items 2 and 3: findings and decisions follow renamed and moved code; indentation counts
in Python, YAML and Makefiles — and a ledger written before keeps its hashes (compared both ways)."""

from __future__ import annotations

import json

NS = "code-review"
KEY = ("import os\n\n\ndef parse_key(text):\n    parts = text.split('=')\n    if len(parts) != 2:\n"
       "        raise ValueError(text)\n    name, value = parts\n    return name.strip(), value.strip()\n\n\n"
       "def other():\n    return 1\n")


def conclusion(claim, **kw):
    return dict({"type": "conclusion", "claim": claim}, **kw)


def _two_priors(k):
    """run-001: a finding on parse_key (open) and one the person marks wontfix; run-002 open? no."""
    k.write("src/keys.py", KEY)
    k.ok("init")
    k.ok("relevant", "--ns", NS, "--snapshot")
    k.ok("propose", k.candidate(conclusion("parse_key accepts an empty name", scope_ref="src/keys.py#parse_key",
                                           evidence="src/keys.py:5")), "--run", "run-001", "--ns", NS)
    k.ok("propose", k.candidate(conclusion("the separator is hard-coded", scope_ref="src/keys.py#parse_key")),
         "--run", "run-001", "--ns", NS)
    k.ok("commit", "--run", "run-001")
    k.ok("decide", "P-0002", "wontfix", "--because", "the format is fixed by the spec")


def test_a_rename_in_place_is_followed(keeper):
    _two_priors(keeper)
    keeper.write("src/keys.py", KEY.replace("parse_key", "read_key"))
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    item = rel["verify"][0]
    assert item["id"] == "P-0001" and item["scopeState"] == "moved" and item["scope_ref"] == "src/keys.py#read_key"
    assert item["moved_from"] == "src/keys.py#parse_key" and "changed" not in item
    assert [(s["id"], s["scope_ref"], s.get("moved_from")) for s in rel["settled_here"]] == [
        ("P-0002", "src/keys.py#read_key", "src/keys.py#parse_key")]  # (where it was: newcomer pass 27ai)
    keeper.refused("PRIOR_OBLIGATIONS_OPEN", "propose", keeper.candidate(conclusion(
        "read_key leaks a file handle", scope_ref="src/keys.py#read_key")), "--run", "run-002", "--ns", NS)
    body = keeper.refused("REAFFIRM_REQUIRES_CHANGE", "disposition", "P-0001", "reaffirmed", "--run", "run-002")
    assert body["hint"].startswith("its code moved to src/keys.py#read_key unedited: say still-open"), body
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002")  # moved, not edited: as unchanged
    # the person's decision holds under the new name: the same words, and a rewording, are refused
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "the separator is hard-coded", scope_ref="src/keys.py#read_key")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0002"
    keeper.refused("DUPLICATE", "propose", keeper.candidate(conclusion(
        "parse_key accepts an empty name", scope_ref="src/keys.py#read_key")), "--run", "run-002", "--ns", NS)
    keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(
        "the split character cannot be configured", scope_ref="src/keys.py#read_key")), "--run", "run-002", "--ns", NS)
    out = keeper.ok("commit", "--run", "run-002")
    assert "↪ 2 moved with their code — P-0001 to src/keys.py#read_key, P-0002 to src/keys.py#read_key" in out
    moved = [r for r in keeper.ledger() if r.get("action") == "moved"]
    assert [(m["id"], m["from"], m["to"], "scope_hash" in m) for m in moved] == [
        ("P-0001", "src/keys.py#parse_key", "src/keys.py#read_key", True),
        ("P-0002", "src/keys.py#parse_key", "src/keys.py#read_key", True)]
    show = keeper.ok("show", "P-0002")
    assert "its code moved: src/keys.py#parse_key → src/keys.py#read_key" in show
    assert "before its code moved" not in keeper.ok("show", "P-0001")  # (renamed in its own file: the evidence holds)
    # the next run: unchanged under the new name, the decision still settled there
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged" and rel["verify"][0]["scope_ref"] == "src/keys.py#read_key"
    assert [s["id"] for s in rel["settled_here"]] == ["P-0002"]
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-003")
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The separator is hard coded.", scope_ref="src/keys.py#read_key")), "--run", "run-003", "--ns", NS)
    keeper.ok("abort", "--run", "run-003")
    keeper.ok("verify")


def test_a_move_to_another_file_with_an_edit_is_moved_and_changed(keeper):
    _two_priors(keeper)
    body = KEY.split("def other")[0].replace("import os\n\n\n", "")
    edited = body.replace("parse_key", "split_pair").replace("return name.strip(), value.strip()",
                                                             "return name.strip(), value")
    keeper.write("src/keys.py", "import os\n\n\ndef other():\n    return 1\n")
    keeper.write("src/pairs.py", edited)
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    item = rel["verify"][0]
    assert (item["scopeState"], item["scope_ref"], item["moved_from"], item.get("changed")) == (
        "moved", "src/pairs.py#split_pair", "src/keys.py#parse_key", True)
    # an edited move is re-judged like a changed scope
    keeper.refused("CHANGED_SCOPE_REQUIRES_REJUDGMENT", "disposition", "P-0001", "still-open", "--run", "run-002")
    keeper.ok("disposition", "P-0001", "reaffirmed", "--run", "run-002")
    # the person's decision is listed where the code went, though its code changed (not settled-nearby there)
    assert [(s["id"], s["scope_ref"]) for s in rel["settled_here"]] == [("P-0002", "src/pairs.py#split_pair")]
    out = keeper.ok("commit", "--run", "run-002")
    assert "↪ 2 moved with their code" in out
    moved = [r for r in keeper.ledger() if r.get("action") == "moved"]
    assert all("scope_hash" not in m for m in moved)  # edited: the old hash stays, the scope reads changed
    shown = keeper.ok("show", "P-0001")
    assert "moved and edited" in shown
    # its evidence names the file the code was in: said so (newcomer pass 27ai)
    assert "evidence: src/keys.py:5 (where it was seen, before its code moved)" in shown, shown
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scope_ref"] == "src/pairs.py#split_pair"
    assert rel["verify"][0]["scopeState"] == "unchanged"  # the verdict took the new hash
    keeper.ok("abort", "--run", "run-003")
    keeper.ok("verify")


def test_missing_items_are_in_the_summary(keeper):
    _two_priors(keeper)
    keeper.write("src/keys.py", "import os\n\n\ndef other():\n    return 1\n")  # parse_key is gone, found nowhere
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "missing"
    out = keeper.ok("commit", "--run", "run-002")
    assert "∅ 1 missing — their code is not in this snapshot: P-0001" in out
    seal = keeper.ledger()[-1]
    assert seal["shapes"] == {"P-0001": "", "P-0002": ""}  # looked for once, in the run that lost them
    keeper.ok("verify")


def test_verify_replays_a_reraise_on_the_new_name(keeper):
    """A re-raise of the person's decision typed into the ledger on the definition its code moved to
    is named by `verify`, as the door would have refused it."""
    test_a_rename_in_place_is_followed(keeper)
    from priors.core.canonical import dumps
    lines = keeper.ledger()
    prior = next(r for r in lines if r.get("id") == "P-0002" and r["t"] == "prior")
    fake = dict(prior, id="P-0003", born="run-004", scope_ref="src/keys.py#read_key",
                scope_hash=next(r for r in lines if r.get("action") == "moved")["scope_hash"])
    seal = {"t": "run", "action": "commit", "run": "run-004", "ns": NS, "summary": ["New this run: 1"], "door": 3}
    ledger = keeper.root / ".priors/ledger.jsonl"
    ledger.write_bytes(keeper.ledger_bytes() + (dumps(fake) + "\n" + dumps(seal) + "\n").encode())
    keeper.ok("render")
    r = keeper("verify", "--no-git")
    assert r.code != 0 and "RERAISE" in r.out and "P-0003" in r.out, r


# ------------------------------------------------------------------ indentation (item 3)

LOOP = "def show(xs):\n    for x in xs:\n        print(x)\n        print('done')\n"


def test_python_dedent_is_a_change_and_reindent_is_not(keeper):
    keeper.write("src/show.py", LOOP)
    keeper.ok("init")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("propose", keeper.candidate(conclusion("show prints done once per item", scope_ref="src/show.py#show")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("commit", "--run", "run-001")
    # the whole file re-indented 4 → 2 spaces, with CRLF line ends: unchanged
    keeper.write("src/show.py", LOOP.replace("    ", "  ").replace("\n", "\r\n"))
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged"
    keeper.ok("abort", "--run", rel["run"])
    # tabs: unchanged too
    keeper.write("src/show.py", LOOP.replace("    ", "\t"))
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged"
    keeper.ok("abort", "--run", rel["run"])
    # print('done') moved out of the loop: a change of behaviour, so a change of the scope
    keeper.write("src/show.py", LOOP.replace("        print('done')", "    print('done')"))
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "changed"
    keeper.ok("abort", "--run", rel["run"])


def test_hash_stays_the_reference_for_other_files(keeper):
    text = "a  b\n\tc\r\n"
    keeper.write("notes.txt", text)
    keeper.write("Makefile", "all:\n\techo hi\n")
    keeper.write("Makefile2", "all:\necho hi\n")
    from priors.core.canonical import normalize, sha12
    assert keeper.ok("hash", "notes.txt").strip() == sha12(normalize(text))
    assert keeper.ok("hash", "--text", text).strip() == sha12(normalize(text))
    # a Makefile's recipe indentation counts: the same words without it are another file
    assert keeper.ok("hash", "Makefile").strip() != keeper.ok("hash", "Makefile2").strip()


def test_a_ledger_hashed_before_keeps_its_python_priors_unchanged(keeper):
    """A ledger whose Python priors carry the whitespace-blind hashes of before: on the first run
    after the upgrade they are compared under both schemes — unchanged, not every one `changed` —
    and the first verdict records the new hash; a person's decision still refuses its re-raise."""
    from priors.core.canonical import normalize, sha12
    keeper.write("src/show.py", LOOP)
    keeper.ok("init")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("propose", keeper.candidate(conclusion("show prints done once per item", scope_ref="src/show.py#show")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("propose", keeper.candidate(conclusion("show writes to stdout", scope_ref="src/show.py")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0002", "wontfix", "--because", "it is a CLI")
    # rewrite the ledger as the keeper of before hashed it (whitespace-blind)
    old_def, old_file = sha12(normalize(LOOP.rstrip("\n"))), sha12(normalize(LOOP))
    ledger = keeper.root / ".priors/ledger.jsonl"
    data = ledger.read_text()
    for r in keeper.ledger():
        if r.get("t") == "prior":
            data = data.replace(r["scope_hash"], old_def if "#" in r["scope_ref"] else old_file)
    ledger.write_text(data)
    keeper.ok("render")
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged"
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002")
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion("show writes to stdout", scope_ref="src/show.py")),
                   "--run", "run-002", "--ns", NS)
    keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(
        "show uses print instead of logging", scope_ref="src/show.py#show")), "--run", "run-002", "--ns", NS)
    keeper.ok("commit", "--run", "run-002")
    verdict = [r for r in keeper.ledger() if r.get("action") == "disposition"][-1]
    assert verdict["scope_hash"] != old_def  # the new hash is recorded: from now on one scheme
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged"
    keeper.ok("abort", "--run", "run-003")


def test_indented_hash_matches_its_spelled_out_definition():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from priors.core.canonical import sha12
    from priors.snapshot.hashing import text_hash
    from test_snapshot import indented_ref

    pieces = st.sampled_from(["def f():", "    ", "\t", "  ", "x = 1", "\n", "\r\n", "\r", " \u3000 ", "é", "if a:", "\x0b"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(pieces, max_size=30))
    def check(parts):
        text = "".join(parts)
        assert text_hash(text.encode(), "m.py") == sha12(indented_ref(text))

    check()


def test_a_rename_through_the_mcp_tools(tmp_path):
    """The agent's half of a rename through the MCP tools: the verify item says moved, the person's
    decision is settled under the new name, a re-raise there is refused, and a refusal's hint names
    the tool to call, not a command line."""
    from conftest import Keeper
    from test_mcp import _call, _init, serve

    root = tmp_path / "repo"
    root.mkdir()
    k = Keeper(root)
    _two_priors(k)
    k.write("src/keys.py", KEY.replace("parse_key", "read_key"))
    again = {"type": "conclusion", "claim": "the separator is hard-coded", "scope_ref": "src/keys.py#read_key"}
    replies, _, code = serve(root, [
        _init(),
        _call(1, "priors_relevant", {"ns": NS, "snapshot": True}),
        _call(2, "priors_propose", {"run": "run-002", "ns": NS, "candidates": [again]}),
        _call(3, "priors_disposition", {"run": "run-002", "verdicts": [{"id": "P-0001", "verdict": "still-open"}]}),
        _call(4, "priors_propose", {"run": "run-002", "ns": NS, "candidates": [again]}),
        _call(5, "priors_commit", {"run": "run-002"}),
        _call(6, "priors_show", {"id": "P-0001"}),
    ])
    assert code == 0
    res = {r["id"]: r["result"] for r in replies[1:]}
    rel = res[1]["structuredContent"]
    assert rel["verify"][0]["scopeState"] == "moved" and rel["verify"][0]["scope_ref"] == "src/keys.py#read_key"
    assert rel["settled_here"][0]["scope_ref"] == "src/keys.py#read_key"
    early = res[2]["structuredContent"]
    assert early["refused"] == "PRIOR_OBLIGATIONS_OPEN"
    assert "the `priors_disposition` tool" in early["hint"] and "`priors disposition" not in early["hint"]
    assert res[4]["structuredContent"]["refused"] == "RERAISE" and res[4]["structuredContent"]["of"] == "P-0002"
    assert any("moved with their code" in line for line in res[5]["structuredContent"]["summary"])
    assert "its code moved" in json.dumps(res[6]["structuredContent"], ensure_ascii=False)
    k.ok("verify")


def test_a_withdrawn_id_is_not_handed_to_another_finding(keeper):
    keeper.write("src/keys.py", KEY)
    keeper.ok("init")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("propose", keeper.candidate(conclusion("parse_key accepts an empty name", scope_ref="src/keys.py#parse_key")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("withdraw", "--run", "run-001", "P-0001")
    out = keeper.ok("propose", keeper.candidate(conclusion("other returns a constant", scope_ref="src/keys.py#other")),
                    "--run", "run-001", "--ns", NS)
    assert out == "P-0002 staged (new)\n"  # P-0001 named another finding a moment ago
    keeper.ok("commit", "--run", "run-001")
    assert [r["id"] for r in keeper.ledger() if r["t"] == "prior"] == ["P-0002"]
    keeper.ok("verify")


def test_priors_md_shows_a_moved_prior_where_it_went_however_it_is_rendered(keeper):
    """PRIORS.md after a run that moved priors is what a whole render writes (a fresh clone has no
    render mark, so `priors render` there renders whole), and verify holds it current either way:
    the row of a moved prior shows its new ref, as the fold has it."""
    _two_priors(keeper)
    keeper.write("src/keys.py", KEY.replace("parse_key", "read_key"))
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-002")
    keeper.ok("commit", "--run", "run-002")
    md = keeper.root / ".priors" / "PRIORS.md"
    patched = md.read_bytes()
    keeper.ok("verify", "--no-git")
    assert keeper("render", env={"PRIORS_NO_CACHE": "1"}).code == 0
    assert md.read_bytes() == patched
    assert b"src/keys.py#read_key" in patched and b"src/keys.py#parse_key" not in patched
    keeper.ok("verify", "--no-git")
