"""Issue 13: similar findings are the same finding; locations; settled_here; scopes; withdraw;
strict candidates; namespaces are names. Every promise docs/protocol.md makes about them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Tuple

from priors.core.similarity import SIMILAR_AT, norm_direction, opposite, scopes_related, similarity
from priors.core.vocabulary import DOOR

DATA = Path(__file__).resolve().parent / "data"
NS = "code-review"
SHOP = ("def to_text(str):\n    return str\n\n\nclass Cart:\n    def total(self):\n        rate = 0.2\n"
        "        return rate\n\n    def checkout(self):\n        try:\n            pay()\n        except Exception:\n"
        "            pass\n")


def conclusion(claim, **kw):
    return dict({"type": "conclusion", "claim": claim}, **kw)


def _seed(k):
    """run-001 stages three findings; the human marks two wontfix; run-002 is open with P-0003 carried."""
    k.write("src/shop.py", SHOP)
    k.ok("init")
    k.ok("relevant", "--ns", NS, "--snapshot")
    for c in (conclusion("uses the builtin name 'str' as a parameter name", scope_ref="src/shop.py#to_text",
                         direction="Shadow_Builtin"),
              conclusion("tax rate is hard-coded", at="src/shop.py:7"),
              conclusion("Checkout() swallows payment errors", file="src/shop.py", line=13)):
        k.ok("propose", k.candidate(c), "--run", "run-001", "--ns", NS)
    k.ok("commit", "--run", "run-001")
    k.ok("decide", "P-0001", "wontfix", "--because", "fine")
    k.ok("decide", "P-0002", "wontfix", "--because", "fine")
    rel = json.loads(k.ok("relevant", "--ns", NS, "--snapshot"))
    k.ok("disposition", "P-0003", "still-open", "--run", "run-002")
    return rel


# ------------------------------------------------------------------ the corpus


def figures(name, first=None):
    """(rewordings caught, rewordings, different findings refused, different findings) on a labelled set."""
    pairs = json.loads((DATA / name).read_text(encoding="utf-8"))["pairs"][:first]
    same = [similarity(a, b, s) >= SIMILAR_AT for s, a, b, lab in pairs if lab]
    diff = [similarity(a, b, s) >= SIMILAR_AT for s, a, b, lab in pairs if not lab]
    return sum(same), len(same), sum(diff), len(diff)


def test_corpus_figures_hold():
    """docs/protocol.md reports these figures; ≥ 90 % of rewordings caught, ≤ 3 % of different findings refused."""
    caught, same, refused, diff = figures("similarity_corpus.json")
    assert (caught, same, refused, diff) == (43, 47, 0, 61)  # the figures docs/protocol.md reports
    assert caught / same >= 0.90 and refused / diff <= 0.03
    assert figures("similarity_corpus.json", 99) == (40, 44, 0, 55)  # the pairs before the negation rule: no worse
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "43 of 47 rewordings (91.5 % recall)" in doc and "0 of 61 different findings (0 %)" in doc
    assert "(40 of 44, 0 of 55)" in doc
    assert f"{SIMILAR_AT:.2f}" in doc


def test_held_out_figures_hold(capsys):
    """tests/data/similarity_heldout.json, not tuned on until the concept lexicon (tuning data since):
    the figures docs/protocol.md reports, asserted so a change to the measure that moves them has to
    say so there."""
    caught, same, refused, diff = figures("similarity_heldout.json")
    with capsys.disabled():
        print(f"\nheld out: {caught}/{same} rewordings caught ({100 * caught / same:.1f} %), "
              f"{refused}/{diff} different findings refused ({100 * refused / diff:.1f} %)")
    assert same >= 20 and diff >= 20 and same + diff >= 40
    assert (caught, same, refused, diff) == (23, 24, 0, 25)
    assert refused / diff <= 0.03  # a refusal by meaning is rarely wrong
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "23 of 24 rewordings (95.8 % recall)" in doc and "0 of 25 different findings (0 %)" in doc
    tuned = {(a, b) for _, a, b, _ in json.loads((DATA / "similarity_corpus.json").read_text(encoding="utf-8"))["pairs"]}
    held = json.loads((DATA / "similarity_heldout.json").read_text(encoding="utf-8"))["pairs"]
    assert not any((a, b) in tuned or (b, a) in tuned for _, a, b, _ in held)  # no pair shared with the calibration set


def test_a_claim_that_denies_the_other_is_not_its_rewording():
    scope = "src/users.py#register"
    for a, b in (("the email address is validated", "the email address is not validated"),
                 ("register() retries the confirmation mail", "register() doesn't retry the confirmation mail"),
                 ("register() fails to hash the password", "register() hashes the password"),
                 ("the password is unsalted", "the password is salted")):
        assert similarity(a, b, scope) < SIMILAR_AT and similarity(b, a, scope) < SIMILAR_AT, (a, b)
        assert opposite(a, b) and opposite(b, a)
    # the same negation on both sides, or a negation moved into another word, is still a rewording
    for a, b in (("the email address is not validated", "register() never validates the email address"),
                 ("the password is unsalted", "the password is not salted"),
                 ("the connection is never closed", "register() leaks the connection")):
        assert not opposite(a, b), (a, b)
        assert similarity(a, b, scope) >= SIMILAR_AT, (a, b)


def test_similarity_is_symmetric_enough_and_deterministic():
    a, b = "tax rate is hard-coded", "The tax rate is hard coded"
    assert similarity(a, b) == similarity(a, b) == 1.0
    assert similarity("checkout() swallows payment errors", "refund() swallows payment errors", "src/shop.py") < SIMILAR_AT


def test_directions_and_scope_relations():
    assert norm_direction("Hoist_Resource") == norm_direction("hoist resource") == "hoist-resource"
    assert scopes_related("src/a.py", "src/a.py#C.m") and scopes_related("src/a.py#C", "src/a.py#C.m")
    assert scopes_related("src/", "src/a.py#f") and scopes_related("*", "x.py") and scopes_related("a.py", "a.py")
    assert not scopes_related("src/a.py", "src/a.pyc") and not scopes_related("src/a.py#C", "src/a.py#Cx")
    assert not scopes_related("src/a.py#f", "src/a.py#g")


# ------------------------------------------------------------------ refusals through the CLI


def test_rewordings_are_refused_like_identical_claims(keeper):
    _seed(keeper)
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "Parameter `str` shadows the built-in str type", scope_ref="src/shop.py#to_text")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0001" and body["similar"] is True and body["similarity"] >= SIMILAR_AT
    assert "distinct_from" in body["hint"]
    # a file contains its definitions
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The tax rate is hard coded", scope_ref="src/shop.py")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0002" and body["similar"] is True
    body = keeper.refused("DUPLICATE", "propose", keeper.candidate(conclusion(
        "checkout() swallows payment errors", scope_ref="src/shop.py#Cart.checkout")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0003" and body["status"] == "open" and "similarity" not in body  # equal but for case: identical
    # directions compare after folding case and _ - space
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "something else entirely", scope_ref="src/shop.py#to_text", direction="shadow builtin")),
        "--run", "run-002", "--ns", NS)
    assert "similar" not in body


def test_different_findings_and_distinct_from_are_staged_and_shown(keeper):
    _seed(keeper)
    out = keeper.ok("propose", keeper.candidate(conclusion(
        "checkout() charges the card twice when the user double-clicks", scope_ref="src/shop.py#Cart.checkout")),
        "--run", "run-002", "--ns", NS)
    assert out == "P-0004 staged (new)\n"
    out = keeper.ok("propose", keeper.candidate(conclusion(
        "checkout() silently ignores errors from payment", scope_ref="src/shop.py#Cart.checkout",
        distinct_from=["P-0003"])), "--run", "run-002", "--ns", NS)
    assert out == "P-0005 staged (new)\n"
    keeper.ok("commit", "--run", "run-002")
    rec = [r for r in keeper.ledger() if r.get("id") == "P-0005" and r["t"] == "prior"][0]
    assert rec["distinct_from"] == ["P-0003"]
    assert "distinct from: P-0003" in keeper.ok("show", "P-0005")
    assert "(distinct from P-0003)" in keeper.read(".priors/PRIORS.md")
    keeper.assert_rendered()
    keeper.ok("verify")


def test_the_opposite_claim_is_staged_not_refused_as_similar(keeper):
    _seed(keeper)
    out = keeper.ok("propose", keeper.candidate(conclusion(
        "the tax rate is not hard-coded", scope_ref="src/shop.py#Cart.total", distinct_from=["P-0002"])),
        "--run", "run-002", "--ns", NS)
    assert out == "P-0004 staged (new)\n"  # P-0002 "tax rate is hard-coded" is wontfix: not a re-raise
    body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
        "The tax rate is hard coded", scope_ref="src/shop.py#Cart.total")), "--run", "run-002", "--ns", NS)
    assert body["of"] == "P-0002" and body["similar"] is True


def test_distinct_from_names_only_priors_of_the_runs_namespace_or_a_persons_decision(keeper):
    _seed(keeper)
    # a prior of another namespace (committed through its own run), so P-0004 exists but is not ours; on the
    # file where a person settled P-0001 and P-0002 it must say it differs from them (another namespace's
    # decisions: `distinct_from` may name those), which puts it to the person
    keeper.ok("abort", "--run", "run-002")
    keeper.ok("relevant", "--ns", "other", "--snapshot")
    body = keeper.refused("SETTLED_NEARBY", "propose", keeper.candidate(conclusion(
        "checkout() logs the card number", scope_ref="src/shop.py")), "--run", "run-002", "--ns", "other")
    assert [(s["id"], s["ns"]) for s in body["settled"]] == [("P-0001", NS), ("P-0002", NS)]
    keeper.ok("propose", keeper.candidate(conclusion("checkout() logs the card number", scope_ref="src/shop.py",
                                                     distinct_from=["P-0001", "P-0002"])),
              "--run", "run-002", "--ns", "other")
    keeper.ok("commit", "--run", "run-002")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("disposition", "P-0003", "still-open", "--run", "run-003")
    staged = keeper.root / ".priors/runs/run-003/staged.jsonl"

    def distinct(ids):
        return keeper.candidate(conclusion("checkout() silently ignores errors from payment",
                                           scope_ref="src/shop.py#Cart.checkout", distinct_from=ids))

    body = keeper.refused("DISTINCT_FROM_UNKNOWN", "propose", distinct(["P-0003", "P-0099"]), "--run", "run-003", "--ns", NS)
    assert body["unknown"] == ["P-0099"] and "other_namespace" not in body and body["ns"] == NS
    body = keeper.refused("DISTINCT_FROM_UNKNOWN", "propose", distinct(["P-0004", "P-0098"]), "--run", "run-003", "--ns", NS)
    assert body["other_namespace"] == ["P-0004"] and body["unknown"] == ["P-0098"]
    assert not staged.exists() or staged.read_text() == ""  # refused: nothing staged
    # a prior staged by this very run may be named; so may the similar finding the refusal named
    keeper.ok("propose", keeper.candidate(conclusion("checkout() retries the payment forever",
                                                     scope_ref="src/shop.py#Cart.checkout")), "--run", "run-003", "--ns", NS)
    assert keeper.ok("propose", distinct(["P-0003", "P-0005"]), "--run", "run-003", "--ns", NS) == "P-0006 staged (new)\n"


def test_a_changed_scope_is_not_compared(keeper):
    _seed(keeper)
    keeper.ok("abort", "--run", "run-002")
    keeper.write("src/shop.py", SHOP.replace("rate = 0.2", "rate = 0.25"))
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("disposition", "P-0003", "still-open", "--run", "run-002")
    out = keeper.ok("propose", keeper.candidate(conclusion("The tax rate is hard coded", scope_ref="src/shop.py#Cart.total")),
                    "--run", "run-002", "--ns", NS)
    assert "staged (new)" in out  # neither by meaning nor as settled ground: the person decided on other code


# ------------------------------------------------------------------ locations, scopes, settled_here


def test_locations_resolve_to_the_innermost_definition(keeper):
    _seed(keeper)
    refs = {r["id"]: r["scope_ref"] for r in keeper.ledger() if r["t"] == "prior"}
    assert refs["P-0002"] == "src/shop.py#Cart.total" and refs["P-0003"] == "src/shop.py#Cart.checkout"
    assert (keeper.root / ".priors" / "runs" / "run-002").is_dir()
    out = keeper.ok("propose", keeper.candidate(conclusion("module has no docstring", at="src/shop.py:4",
                                                           distinct_from=["P-0001", "P-0002"])), "--run", "run-002", "--ns", NS)
    staged = json.loads((keeper.root / ".priors/runs/run-002/staged.jsonl").read_text().splitlines()[-1])
    assert "staged" in out and staged["scope_ref"] == "src/shop.py" and "at" not in staged
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(conclusion("x", scope_ref="src/shop.py#Cart.chekout")),
                          "--run", "run-002", "--ns", NS)
    assert body["nearest"][0] == "src/shop.py#Cart.checkout"
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(conclusion("x", at="src/shp.py:3")),
                          "--run", "run-002", "--ns", NS)
    assert "src/shop.py" in body["nearest"]
    keeper.write("src/shop.py", SHOP + "\n# edited\n")
    keeper.refused("SCOPE_MISMATCH", "propose", keeper.candidate(conclusion("y", at="src/shop.py:2")),
                   "--run", "run-002", "--ns", NS)


def test_a_location_in_a_symbolic_link_points_at_what_it_leads_to(keeper):
    """The snapshot records a link itself and never follows it (docs/snapshot.md): a line of it is refused,
    naming the file it leads to; the link stays a scope of its own."""
    import os

    keeper.write("src/shop.py", SHOP)
    try:
        os.symlink("shop.py", str(keeper.root / "src" / "link.py"))
        os.symlink("../../elsewhere.py", str(keeper.root / "src" / "out.py"))
    except (OSError, NotImplementedError):
        import pytest

        pytest.skip("no symbolic links here")
    keeper.ok("init")
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(conclusion("total() returns a rate", at="src/link.py:7")),
                          "--run", "run-001", "--ns", NS)
    assert body["link_to"] == "src/shop.py" and body["nearest"] == ["src/shop.py"] and body["scope_ref"] == "src/link.py:7"
    assert "symbolic link" in body["hint"] and '"at": "src/shop.py:7"' in body["hint"]
    body = keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(conclusion("x is read", file="src/out.py", line=1)),
                          "--run", "run-001", "--ns", NS)
    assert body["link_to"] == "outside the target" and body["nearest"] == []
    # what the hint says works: the file it leads to, or the link itself
    keeper.ok("propose", keeper.candidate(conclusion("total() returns a rate", at="src/shop.py:7")),
              "--run", "run-001", "--ns", NS)
    keeper.ok("propose", keeper.candidate(conclusion("the link hides which module is imported", file="src/link.py")),
              "--run", "run-001", "--ns", NS)
    refs = [json.loads(x)["scope_ref"] for x in (keeper.root / ".priors/runs/run-001/staged.jsonl").read_text().splitlines()]
    assert refs == ["src/shop.py#Cart.total", "src/link.py"]


def test_scopes_verb_and_settled_here(keeper):
    rel = _seed(keeper)
    assert [x["id"] for x in rel["settled_here"]] == ["P-0001", "P-0002"] and rel["settled_here_more"] == 0
    assert set(rel["settled_here"][0]) == {"id", "status", "scope_ref", "claim", "scopeState"}
    out = keeper.ok("scopes", "--run", "run-002", "src/shop.py", "--lines")
    assert "src/shop.py#Cart.checkout  10-14\n" in out and "src/shop.py\n" in out and "*" not in out
    assert json.loads(keeper.ok("scopes", "--run", "run-002", "--json"))["src/shop.py"]
    # a path under which nothing lies (a typo) is said so; its JSON is the empty map
    assert keeper.ok("scopes", "--run", "run-002", "nope/") == "no scope of run-002's snapshot lies under nope/\n"
    assert json.loads(keeper.ok("scopes", "--run", "run-002", "nope/", "--json")) == {}
    assert keeper.ok("scopes", "--run", "run-002", "x\n::error::boom").count("\n") == 1  # (no line of its own)
    keeper.ok("abort", "--run", "run-002")
    rel = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot", "--settled", "1"))
    assert [x["id"] for x in rel["settled_here"]] == ["P-0001"] and rel["settled_here_more"] == 1
    keeper.usage("relevant", "--ns", NS, "--settled", "many")


def test_relevant_keeps_every_existing_key_byte_for_byte(keeper):
    keeper.write("a.py", "def f():\n    return 1\n")
    keeper.ok("init")
    out = json.loads(keeper.ok("relevant", "--ns", NS, "--snapshot"))
    assert list(out)[-2:] == ["settled_here", "settled_here_more"] or set(out) >= {"settled_here", "settled_here_more"}
    old = {k: v for k, v in out.items() if not k.startswith("settled_here")}
    assert set(old) == {"run", "ns", "inject", "verify", "nudges", "settled", "archived", "floors"}


# ------------------------------------------------------------------ withdraw


def test_withdraw_removes_staged_priors_only(keeper):
    _seed(keeper)
    before = keeper.ledger_bytes()
    keeper.ok("propose", keeper.candidate(conclusion("total() rounds each line", scope_ref="src/shop.py#Cart.total",
                                                     distinct_from=["P-0002"])), "--run", "run-002", "--ns", NS)
    keeper.refused("NOT_STAGED", "withdraw", "--run", "run-002", "P-0004", "P-0001")
    assert "P-0004" in (keeper.root / ".priors/runs/run-002/staged.jsonl").read_text()
    assert "withdrawn" in keeper.ok("withdraw", "--run", "run-002", "P-0004")
    assert (keeper.root / ".priors/runs/run-002/staged.jsonl").read_text() == ""
    assert keeper.ledger_bytes() == before
    keeper.usage("withdraw", "--run", "run-002", "nope")
    keeper.refused("UNKNOWN_RUN", "withdraw", "--run", "run-009", "P-0004")
    # ids are not renumbered: the next proposal takes the number after the highest staged or withdrawn
    for claim in ("checkout() charges the card twice", "the order id is never logged", "a declined card is retried forever"):
        keeper.ok("propose", keeper.candidate(conclusion(claim, scope_ref="src/shop.py#Cart.checkout")),
                  "--run", "run-002", "--ns", NS)  # P-0005, P-0006, P-0007: P-0004 was withdrawn, never reused
    assert "P-0005, P-0007 withdrawn from run-002" in keeper.ok("withdraw", "--run", "run-002", "P-0005", "P-0007", "P-0005")
    out = keeper.ok("propose", keeper.candidate(conclusion("the cart is not emptied after payment", scope_ref="src/shop.py",
                                                           distinct_from=["P-0001", "P-0002"])), "--run", "run-002", "--ns", NS)
    assert out == "P-0008 staged (new)\n"  # an id withdrawn (P-0007) is never handed to another finding
    keeper.ok("withdraw", "--run", "run-002", "P-0006", "P-0008")
    keeper.ok("commit", "--run", "run-002")
    assert not any(r.get("id") in ("P-0004", "P-0005", "P-0006", "P-0007", "P-0008") for r in keeper.ledger())
    keeper.assert_rendered()


# ------------------------------------------------------------------ strict candidates, namespaces


def test_strict_candidates(keeper):
    _seed(keeper)
    # an unknown field is named on stderr with the nearest known one, and dropped: `sevrity` is not a
    # severity, so the finding is staged without one (the reference keeper ignores it silently)
    r = keeper("propose", keeper.candidate(conclusion("x was read twice", sevrity="major", scope_ref="src/shop.py",
                                                      distinct_from=["P-0001", "P-0002"])),  # (settled ground)
               "--run", "run-002", "--ns", NS)
    assert r.code == 0 and "staged (new)" in r.out, r
    assert "'sevrity'" in r.err and "did you mean 'severity'?" in r.err
    keeper.ok("withdraw", "--run", "run-002", r.out.split()[0])
    for key in ("authority", "status", "by", "t", "id", "born", "redacted"):
        err = keeper.usage("propose", keeper.candidate(dict(conclusion("x", scope_ref="src/shop.py"), **{key: "x"})),
                           "--run", "run-002", "--ns", NS)
        assert f"`{key}`" in err
    keeper.usage("propose", keeper.candidate(conclusion("x", at="src/shop.py")), "--run", "run-002", "--ns", NS)
    keeper.usage("propose", keeper.candidate(conclusion("x", at="src/shop.py:2", scope_ref="src/shop.py")),
                 "--run", "run-002", "--ns", NS)
    keeper.usage("propose", keeper.candidate(conclusion("x", scope_ref="src/shop.py", distinct_from="P-0001")),
                 "--run", "run-002", "--ns", NS)


def test_namespaces_are_names(keeper):
    keeper.ok("init")
    for bad in ("../../etc", "Code", "a\nb", "", "-x", "a" * 65, "a b"):
        keeper.usage("relevant", "--ns", bad)
    keeper.usage("list", "--ns", "../x")
    keeper.ok("relevant", "--ns", "docs.v2_x-1")


# ------------------------------------------------------------------ ledgers stay what they were


PLAIN_SESSION = [  # only what the keeper understood before issue 13: scope_ref, no location, nothing similar
    ("init",),
    ("relevant", "--ns", NS, "--snapshot"),
    ("propose", {"type": "conclusion", "claim": "uses the builtin name 'str' as a parameter name",
                 "scope_ref": "src/shop.py#to_text", "direction": "shadow-builtin"}, "--run", "run-001", "--ns", NS),
    ("propose", {"type": "conclusion", "claim": "tax rate is hard-coded", "scope_ref": "src/shop.py#Cart.total",
                 "severity": "minor"}, "--run", "run-001", "--ns", NS),
    ("commit", "--run", "run-001"),
    ("decide", "P-0001", "wontfix", "--because", "fine"),
    ("relevant", "--ns", NS, "--snapshot"),
    ("disposition", "P-0002", "still-open", "--run", "run-002"),
    ("propose", {"type": "conclusion", "claim": "checkout() charges the card twice when the user double-clicks",
                 "scope_ref": "src/shop.py#Cart.checkout", "severity": "major"}, "--run", "run-002", "--ns", NS),
    ("propose", {"type": "conclusion", "claim": "total() rounds each line instead of the final sum",
                 "scope_ref": "src/shop.py#Cart.total"}, "--run", "run-002", "--ns", NS),
    ("propose", {"type": "conclusion", "claim": "to_text() decodes bytes as latin-1 instead of utf-8",
                 "scope_ref": "src/shop.py", "distinct_from": ["P-0001"]}, "--run", "run-002", "--ns", NS),
    ("commit", "--run", "run-002"),
]


def plain_session(k) -> bytes:
    k.write("src/shop.py", SHOP)
    for step in PLAIN_SESSION:
        args = [k.candidate(x) if isinstance(x, dict) else x for x in step]
        k.ok(*args)
    return k.ledger_bytes()


def test_ledger_bytes_unchanged_when_nothing_is_similar(keeper):
    """This session's ledger, byte for byte, as the keeper wrote it before issue 13
    (tests/data/ledger_no_similar.jsonl was written by `main`'s code at df6a645, before this rule) — but
    for what issue 28 adds: each run's seal names today's door (`door: 8`), and the finding on the file where a person
    settled P-0001 names it in `distinct_from` (SETTLED_NEARBY refuses it otherwise), which its run's
    summary counts as a call for the person; and a seal keeps
    the shapes of the definitions its findings stand on, while a Python file's hashes keep its
    indentation (each hash of before stands for exactly one of today's)."""
    got = plain_session(keeper)
    assert got.count(b'"shapes":{"P-') == 2
    got = re.sub(rb',"shapes":\{[^}]*\}', b"", got)
    want = (DATA / "ledger_no_similar.jsonl").read_bytes()
    hashes = re.compile(rb'"scope_hash":"([0-9a-f]{12})"')
    pairs = set(zip(hashes.findall(want), hashes.findall(got)))
    assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(pairs)
    for old, new in pairs:
        want = want.replace(old, new)
    want = want.replace(b'{"action":"commit",', b'{"action":"commit","door":%d,' % DOOR)
    want = want.replace(b'"claim":"to_text() decodes bytes as latin-1 instead of utf-8",',
                        b'"claim":"to_text() decodes bytes as latin-1 instead of utf-8","distinct_from":["P-0001"],')
    want = want.replace('(same identities, current scope state)","New this run: 3"'.encode(),
                        '(same identities, current scope state)",'
                        '"  ? 1 need your call \u2014 `priors status --calls` to review","New this run: 3"'.encode())
    assert got == want, hashlib.sha256(got).hexdigest()


def test_thin_claims_and_stale_priors_are_not_matched_by_meaning(keeper):
    assert similarity("b is magic", "b is theirs", "b.py") < SIMILAR_AT  # too little content to judge
    _seed(keeper)
    keeper.ok("abort", "--run", "run-002")
    keeper.write("src/shop.py", SHOP.replace("pass", "log()"))
    keeper.ok("relevant", "--ns", NS, "--snapshot")
    keeper.ok("disposition", "P-0003", "stale", "--run", "run-002")
    out = keeper.ok("propose", keeper.candidate(conclusion(
        "checkout() silently ignores exceptions raised by the payment gateway", scope_ref="src/shop.py#Cart.checkout")),
        "--run", "run-002", "--ns", NS)
    assert "staged (new)" in out  # a stale finding's rewording is its remedy


def test_one_thing_swapped_is_a_different_finding():
    """The same frame about other things is not a rewording (found by a hostile pass): refused only by `distinct_from` before."""
    scope = "src/cart.py#Cart.total"
    assert similarity("total() ignores discounts", "total() ignores taxes", scope) < SIMILAR_AT
    assert similarity("total() ignores discounts", "total() ignores the quantity of each item", scope) < SIMILAR_AT
    assert similarity("seed finding 0", "seed finding 1", "seed.txt") < SIMILAR_AT
    assert similarity("listens on port 80", "listens on port 443", "server.py") < SIMILAR_AT
    # a rewording of the same thing still is one
    assert similarity("tax rate is hard-coded", "The tax rate is hard coded", "tax.py") >= SIMILAR_AT


def test_blank_lines_added_after_the_snapshot_move_the_lines_a_location_means(keeper):
    """The snapshot's hash ignores whitespace, the agent's line numbers do not (found by a hostile pass)."""
    _seed(keeper)
    keeper.ok("propose", keeper.candidate(conclusion("module has no docstring", at="src/shop.py:4",
                                                     distinct_from=["P-0001", "P-0002"])),
              "--run", "run-002", "--ns", NS)  # spans of the file as snapshotted are now kept beside the run
    keeper.write("src/shop.py", "\n\n\n\n\n\n" + SHOP)  # six blank lines on top: line 6 of before is line 12
    keeper.ok("propose", keeper.candidate(conclusion("total() returns a rate, not a total", at="src/shop.py:13",
                                                     distinct_from=["P-0002"])), "--run", "run-002", "--ns", NS)
    staged = json.loads((keeper.root / ".priors/runs/run-002/staged.jsonl").read_text().splitlines()[-1])
    assert staged["scope_ref"] == "src/shop.py#Cart.total"


def test_a_location_must_name_a_line_of_a_file(keeper):
    """`at` past the end, or on a folder or the whole target, is refused, not staged on the file (hostile pass)."""
    _seed(keeper)
    for at in ("src/shop.py:999", "src/:1", "*:1"):
        keeper.refused("UNKNOWN_SCOPE", "propose", keeper.candidate(conclusion("x is wrong somewhere", at=at)),
                       "--run", "run-002", "--ns", NS)
    assert not (keeper.root / ".priors/runs/run-002/staged.jsonl").exists() or \
        "x is wrong" not in (keeper.root / ".priors/runs/run-002/staged.jsonl").read_text()


def test_distinct_from_never_admits_the_named_priors_own_claim(keeper):
    """`distinct_from` naming a person's wontfix with its very claim — on its scope or the enclosing
    file's, in another case or punctuation — was staged and committed: a way around a person."""
    _seed(keeper)
    before = keeper.ledger_bytes()
    for claim, scope in (("Tax rate is hard-coded", "src/shop.py"), ("tax RATE: is hard coded!", "src/shop.py#Cart.total"),
                         ("Tax-rate is hard coded.", "*")):
        body = keeper.refused("RERAISE", "propose", keeper.candidate(conclusion(
            claim, scope_ref=scope, distinct_from=["P-0002"])), "--run", "run-002", "--ns", NS)
        assert body["of"] == "P-0002" and "never the same claim" in body["hint"], body
    assert keeper.ledger_bytes() == before
    assert not (keeper.root / ".priors/runs/run-002/staged.jsonl").exists() or \
        "hard" not in keeper.read(".priors/runs/run-002/staged.jsonl")


# ------------------------------------------------------------------ issue 28: the held-out set, round two


def _judge_on_settled_ground(scope, settled, claim, distinct=False):
    """What the door does with `claim` on `scope` where a person made `settled` wontfix: the refusal
    code, or "call" when it is staged naming the person's prior (put to the person)."""
    from priors.core.errors import Refusal
    from priors.core.fold import new_prior
    from priors.core.grammar import validate
    from priors.core.protocol import judge_pool

    rec = {"t": "prior", "id": "P-0001", "ns": NS, "type": "conclusion", "claim": settled, "scope_ref": scope,
           "scope_hash": "h", "born": "run-001",
           "facets": {"scope": "content-hash", "activation": "verify-phase", "obligation": "disposition-required",
                      "authority": "advisory", "lifecycle": "stale-on-scope-change"}}
    cand = validate(dict(conclusion(claim, scope_ref=scope), **({"distinct_from": ["P-0001"]} if distinct else {})))
    try:
        judge_pool([new_prior("P-0001", rec, "wontfix", "h")], cand, "h", {scope: "h"})
    except Refusal as r:
        return r.code
    return "call" if distinct else "staged"


def test_held_out_round_two_figures_hold(capsys):
    """tests/data/similarity_heldout2.json, written before issue 28's tuning and never edited after (the
    concept lexicon was tuned on it): every rewording of a settled finding is refused or put to the
    person (by construction), the share refused outright, and different findings refused by meaning —
    the figures docs/protocol.md reports."""
    pairs = json.loads((DATA / "similarity_heldout2.json").read_text(encoding="utf-8"))["pairs"]
    assert len(pairs) >= 60
    same = [(s, a, b) for s, a, b, lab in pairs if lab]
    diff = [(s, a, b) for s, a, b, lab in pairs if not lab]
    outright = sum(_judge_on_settled_ground(s, a, b) == "RERAISE" for s, a, b in same)
    # refused or surfaced: refused (RERAISE, SETTLED_NEARBY); named in distinct_from, refused or a call
    for s, a, b in same:
        assert _judge_on_settled_ground(s, a, b) in ("RERAISE", "SETTLED_NEARBY"), (a, b)
        assert _judge_on_settled_ground(s, a, b, distinct=True) in ("RERAISE", "call"), (a, b)
    wrong = sum(_judge_on_settled_ground(s, a, b, distinct=True) == "RERAISE" for s, a, b in diff)
    legacy = (sum(similarity(a, b, s, legacy=True) >= SIMILAR_AT for s, a, b in same),
              sum(similarity(a, b, s, legacy=True) >= SIMILAR_AT for s, a, b in diff))
    with capsys.disabled():
        print(f"\nheld out, round two: {len(same)}/{len(same)} rewordings refused or surfaced, {outright}/{len(same)}"
              f" refused outright ({100 * outright / len(same):.1f} %), {wrong}/{len(diff)} different findings refused"
              f" ({100 * wrong / len(diff):.1f} %); before issue 28: {legacy[0]}/{len(same)}, {legacy[1]}/{len(diff)}")
    assert (outright, len(same), wrong, len(diff)) == (39, 40, 0, 28)  # (tuned on: see round three for the blind figure)
    assert legacy == (10, 3)  # no more wrong refusals than before
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "40 of 40 rewordings refused or put to the person" in doc
    assert "39 of 40 (97.5 %) refused outright" in doc and "0 of 28 different findings (0.0 %)" in doc
    assert "10 of 40 and 3 of 28 before" in doc


def held_out_figures(name: str) -> Tuple[int, int, int, int, int, int]:
    """(rewordings refused or put to the person, refused outright, rewordings, different findings refused
    by meaning, different findings, rewordings the rules before issue 28 caught) on a labelled set,
    each pair's first claim taken as a person's wontfix."""
    pairs = json.loads((DATA / name).read_text(encoding="utf-8"))["pairs"]
    same = [(s, a, b) for s, a, b, lab in pairs if lab]
    diff = [(s, a, b) for s, a, b, lab in pairs if not lab]
    surfaced = sum(_judge_on_settled_ground(s, a, b) in ("RERAISE", "SETTLED_NEARBY")
                   and _judge_on_settled_ground(s, a, b, distinct=True) in ("RERAISE", "call") for s, a, b in same)
    outright = sum(_judge_on_settled_ground(s, a, b) == "RERAISE" for s, a, b in same)
    wrong = sum(_judge_on_settled_ground(s, a, b, distinct=True) == "RERAISE" for s, a, b in diff)
    return surfaced, outright, len(same), wrong, len(diff), sum(similarity(a, b, s, legacy=True) >= SIMILAR_AT
                                                               for s, a, b in same)


def test_held_out_round_three_figures_hold(capsys):
    """tests/data/similarity_heldout3.json was written blind — by someone who never saw the measure —
    after the concept lexicon was tuned, and measured once: the honest figures issue 28 asks for, which
    docs/protocol.md reports (the goals, 85 % refused outright and at most 2 % wrongly, are not met)."""
    surfaced, outright, n_same, wrong, n_diff, legacy = held_out_figures("similarity_heldout3.json")
    with capsys.disabled():
        print(f"\nheld out, round three (blind): {surfaced}/{n_same} refused or surfaced, {outright}/{n_same} refused"
              f" outright ({100 * outright / n_same:.1f} %), {wrong}/{n_diff} different findings refused"
              f" ({100 * wrong / n_diff:.1f} %)")
    assert (surfaced, outright, n_same, wrong, n_diff) == (69, 18, 69, 7, 55)
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert "69 of 69 rewordings refused or put to the person" in doc
    assert "18 of 69 (26.1 %) refused outright" in doc and "7 of 55 different findings (12.7 %)" in doc


# ------------------------------------------------------------------ the concept lexicon, denials


def test_review_vocabulary_matches_and_denials_do_not():
    """The concept lexicon folds the words reviewers use for one idea; a claim that denies what the
    other says, names another value of one contrast or orders two things the other way round is not
    its rewording (docs/protocol.md, "Similar findings")."""
    same = (("src/db.py#query", "the connection is never closed", "query() leaks the database connection"),
            ("src/http.py#fetch", "fetch() has no timeout", "fetch() can block forever because no timeout is set"),
            ("src/cache.py#Cache.put", "the cache grows without bound", "the cache has no size limit"),
            ("src/users.py#create_user", "the password is stored in plain text", "create_user saves the password unencrypted"),
            ("src/queue.py#Queue.pop", "pop() is not thread-safe", "two threads can pop the same item: there is no lock"),
            ("src/conf.py#load", "load() reads the config on every call",
             "the configuration is re-read each time load() is called; cache it"),
            ("src/store.py#save", "save() swallows IOError", "IO errors in save() are caught and silently dropped"))
    for scope, a, b in same:
        assert similarity(a, b, scope) >= SIMILAR_AT and similarity(b, a, scope) >= SIMILAR_AT, (a, b)
    different = (("src/queue.py#Worker.run", "failed jobs are retried without backoff", "failed jobs are never retried"),
                 ("src/img.py#resize", "aspect ratio is not preserved", "aspect ratio is preserved but the image is cropped"),
                 ("src/date.py#parse", "parse() returns None on bad input instead of raising",
                  "parse() raises on an empty string instead of returning None"),
                 ("src/pager.py#paginate", "the first page is skipped", "the last page is skipped"),
                 ("src/csv.py#write", "the header row is written twice", "the header row is missing"),
                 ("src/date.py#fmt", "fmt() uses the month before the day", "fmt() uses the day before the month"),
                 ("src/date.py#fmt", "fmt() formats dates in local time instead of UTC",
                  "fmt() formats dates in UTC instead of local time"),
                 ("src/tax.py#rate", "the tax rate is hard-coded", "the rounding precision is hard-coded"),
                 ("src/search.py#query", "the search term is formatted into the SQL string (injection)",
                  "the search term is not lower-cased, so search is case-sensitive"))
    for scope, a, b in different:
        assert similarity(a, b, scope) < SIMILAR_AT and similarity(b, a, scope) < SIMILAR_AT, (a, b)
    # the rules of a run sealed before issue 28 are kept: no lexicon there
    assert similarity("the connection is never closed", "query() leaks the database connection", "src/db.py#query",
                      legacy=True) == 0.88


def test_the_lexicon_size_is_what_the_docs_say():
    from priors.core.lexicon import size

    ideas, words, phrases = size()
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "protocol.md").read_text(encoding="utf-8").split())
    assert f"{ideas} ideas, {words} words and {phrases} phrases" in doc
