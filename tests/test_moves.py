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
    k.ok("propose", k.candidate(conclusion("parse_key accepts an empty name", scope_ref="src/keys.py#parse_key")),
         "--run", "run-001", "--ns", NS)
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
    assert [(s["id"], s["scope_ref"]) for s in rel["settled_here"]] == [("P-0002", "src/keys.py#read_key")]
    keeper.refused("PRIOR_OBLIGATIONS_OPEN", "propose", keeper.candidate(conclusion(
        "read_key leaks a file handle", scope_ref="src/keys.py#read_key")), "--run", "run-002", "--ns", NS)
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
    # the next run: unchanged under the new name, the decision still settled there
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert rel["verify"][0]["scopeState"] == "unchanged" and rel["verify"][0]["scope_ref"] == "src/keys.py#read_key"
    assert [s["id"] for s in rel["settled_here"]] == ["P-0002"]
    keeper.ok("disposition", "P-0001", "still-open", "--run", "run-003")
    keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The separator is hard coded.", scope_ref="src/keys.py#read_key")), "--run", "run-003", "--ns", NS)
    keeper.ok("abort", "--run", "run-003")
    keeper.ok("verify")
