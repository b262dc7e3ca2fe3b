"""`priors verify`: every check has a ledger that trips it; sound ledgers pass; the CLI exits 0/1/2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import ledgerkit as k
from conftest import Keeper
from priors.core.canonical import dumps
from priors.core.ledger_checks import Problem, check
from priors.core.ledger_growth import check_since, rewrite_problem
from priors.ops.verify import github_annotation

ROOT = Path(__file__).resolve().parent.parent


def codes(data: bytes) -> List[str]:
    return [p.code for p in check(data)[0]]


def lines_of(records: List[Dict[str, Any]]) -> bytes:
    return k.to_bytes(records)


def test_sample_is_sound():
    assert check(lines_of(k.sample())) == ([], [])
    assert check(b"") == ([], [])


def test_redacted_sample_is_sound():
    recs = k.sample() + [k.call("run-004", 1, "P-0002"), k.commit("run-004")]
    assert check(lines_of(k.redact(recs, "P-0002")))[0] == []


def mutate(fn) -> bytes:
    recs = k.sample()
    fn(recs)
    return lines_of(recs)


# --- every line parses and is canonical


def test_damaged_line_named_with_number():
    data = lines_of(k.sample()).replace(b'{"action":"commit","ns":"web","run":"run-002"', b"<<<<<<< HEAD\n{", 1)
    damaged = [p for p in check(data)[0] if p.code == "DAMAGED_LINE"]
    assert damaged[0].line == 8
    assert "merge-conflict marker" in damaged[0].message


@pytest.mark.parametrize("raw", [b"[1,2]", b"nope", b"\xff\xfe", b'"str"'])
def test_damaged_kinds(raw):
    assert codes(raw + b"\n") == ["DAMAGED_LINE"]


def test_not_canonical_spaces_order_escapes_crlf():
    rec = k.commit("run-001")
    assert "NOT_CANONICAL" in codes(json.dumps(rec).encode() + b"\n")
    assert "NOT_CANONICAL" in codes(dumps(rec).encode() + b"\r\n")
    p = k.prior("P-0001", "run-001", claim="café")
    esc = json.dumps(p, sort_keys=True, separators=(",", ":")).encode()  # \u00e9 escapes
    assert "NOT_CANONICAL" in codes(esc + b"\n" + dumps(k.commit("run-001")).encode() + b"\n")


def test_blank_line_and_final_newline():
    data = lines_of(k.sample())
    assert "BLANK_LINE" in codes(data.replace(b"\n", b"\n\n", 1))
    assert codes(data[:-1]) == ["NO_FINAL_NEWLINE"]


# --- record types and required fields


def test_missing_t_and_fields():
    assert "MISSING_FIELD" in codes(b'{"id":"P-0001"}\n')
    assert "MISSING_FIELD" in codes(mutate(lambda r: r[0].pop("claim")))
    assert "MISSING_FIELD" in codes(mutate(lambda r: r[3].pop("summary")))
    assert "MISSING_FIELD" in codes(mutate(lambda r: r[4].pop("run")))
    assert "BAD_FIELD" in codes(mutate(lambda r: r[0].update(claim="  not   normalized ")))
    assert "BAD_FIELD" in codes(mutate(lambda r: r[0].update(severity="huge")))
    assert "BAD_FIELD" in codes(mutate(lambda r: r[0].update(review_every=0)))
    assert "BAD_FIELD" in codes(mutate(lambda r: r[0].update(born="yesterday")))
    assert "MISSING_FIELD" in codes(mutate(lambda r: r[0].pop("scope_ref")))


def test_unknown_types_and_actions_are_tolerated_with_a_warning():
    recs = k.sample() + [{"t": "lesson-note", "x": 1}, {"t": "event", "id": "P-0001", "action": "ponder"}]
    probs, warns = check(lines_of(recs))
    assert probs == []
    assert [w.code for w in warns] == ["UNKNOWN_TYPE", "UNKNOWN_ACTION"]


# --- prior ids


def test_prior_ids():
    assert "BAD_ID" in codes(mutate(lambda r: r[0].update(id="P-1")))
    assert "DUPLICATE_ID" in codes(mutate(lambda r: r[1].update(id="P-0001")))
    assert "ID_NOT_INCREASING" in codes(mutate(lambda r: (r[0].update(id="P-0005"))))


# --- facets


def test_facets():
    assert "BAD_FACETS" in codes(mutate(lambda r: r[0]["facets"].update(scope="galaxy")))
    assert "BAD_FACETS" in codes(mutate(lambda r: r[0]["facets"].pop("lifecycle")))
    assert "BAD_FACETS" in codes(mutate(lambda r: r[0]["facets"].update(mood="calm")))
    assert "BAD_FACETS" in codes(mutate(lambda r: r[0].update(facets="conclusion")))
    assert "INCOHERENT_FACETS" in codes(mutate(lambda r: r[0]["facets"].update(activation="run-start")))
    assert "INCOHERENT_FACETS" in codes(mutate(lambda r: r[0]["facets"].update(scope="repo-wide")))
    bad = codes(mutate(lambda r: r[0]["facets"].update(authority="binding")))
    assert "BINDING_FACET" in bad


def test_binding_message_names_the_rule():
    probs = check(mutate(lambda r: r[0]["facets"].update(authority="binding")))[0]
    assert any("authority is never self-assigned" in p.message for p in probs)


# --- events


def test_events_refer_to_earlier_priors():
    recs = k.sample()
    recs.insert(0, k.decide("P-0003", "keep"))
    assert codes(lines_of(recs))[0] == "UNKNOWN_PRIOR"


def test_verdicts_and_actors():
    assert "BAD_VERDICT" in codes(mutate(lambda r: r[4].update(to="accepted")))
    assert "WRONG_ACTOR" in codes(mutate(lambda r: r[4].update(by="human")))
    assert "BAD_VERDICT" in codes(mutate(lambda r: r[8].update(to="fixed")))
    assert "WRONG_ACTOR" in codes(mutate(lambda r: r[8].update(by="agent")))


def test_reopen_needs_reason():
    assert "REOPEN_WITHOUT_REASON" in codes(mutate(lambda r: r.__setitem__(8, k.decide("P-0002", "reopen"))))
    assert codes(mutate(lambda r: r.__setitem__(8, k.decide("P-0002", "reopen", "try again")))) == []


def test_duplicate_disposition_in_one_run():
    assert "DUPLICATE_DISPOSITION" in codes(mutate(lambda r: r.insert(5, k.disp("P-0001", "run-002", "fixed"))))


# --- run blocks


def test_unsealed_run():
    assert codes(mutate(lambda r: r.pop())) == ["UNSEALED_RUN"]


def test_duplicate_commit():
    assert "DUPLICATE_COMMIT" in codes(mutate(lambda r: r.append(k.commit("run-003"))))


def test_line_after_its_seal():
    assert "RUN_ALREADY_SEALED" in codes(mutate(lambda r: r.append(k.disp("P-0001", "run-003", "fixed"))))


def test_interleaved_blocks():
    def f(r):
        r.insert(5, k.disp("P-0003", "run-003", "still-open"))
    assert "RUN_NOT_CONTIGUOUS" in codes(mutate(f))


def test_decide_inside_a_block():
    assert "INSIDE_RUN_BLOCK" in codes(mutate(lambda r: r.insert(5, k.decide("P-0001", "keep"))))


def test_block_order():
    def f(r):
        r[4], r[5] = r[5], r[4]
        r.insert(4, k.prior("P-0004", "run-002"))
    assert "BLOCK_ORDER" in codes(mutate(f))


def test_run_namespace_mismatch():
    assert "RUN_NS_MISMATCH" in codes(mutate(lambda r: r[3].update(ns="api")))


# --- calls


def test_calls():
    base = k.sample()
    assert check(lines_of(base + [k.call("run-004", 1, "P-0001"), k.commit("run-004")]))[0] == []
    assert "UNKNOWN_PRIOR" in codes(lines_of(base + [k.call("run-004", 1, "P-0099"), k.commit("run-004")]))
    bad = k.call("run-004", 1, "P-0001")
    bad["call_id"] = "run-003-C-01"
    assert "BAD_CALL_ID" in codes(lines_of(base + [bad, k.commit("run-004")]))
    c = k.call("run-004", 1, "P-0001")
    assert "DUPLICATE_ID" in codes(lines_of(base + [c, dict(c), k.commit("run-004")]))
    assert "MISSING_FIELD" in codes(lines_of(base + [{k2: v for k2, v in c.items() if k2 != "claim"}, k.commit("run-004")]))


# --- tombstones


def test_tombstone_needs_redact_event():
    red = k.redact(k.sample(), "P-0002")
    assert check(lines_of(red))[0] == []
    assert codes(lines_of(red[:-1])) == ["TOMBSTONE_WITHOUT_REDACT"]


def test_tombstone_shape():
    red = k.redact(k.sample(), "P-0002")
    red[1]["claim"] = "leaked"
    assert "BAD_TOMBSTONE" in codes(lines_of(red))
    red = k.redact(k.sample(), "P-0002")
    red[1]["content_hash"] = "XYZ"
    assert "BAD_TOMBSTONE" in codes(lines_of(red))


def test_redact_without_tombstone_and_leftover_reason():
    recs = k.sample() + [{"t": "event", "id": "P-0002", "action": "redact", "by": "human", "reason": "x"}]
    assert "REDACT_WITHOUT_TOMBSTONE" in codes(lines_of(recs))
    red = k.redact(k.sample(), "P-0002")
    red[8] = k.decide("P-0002", "wontfix", "we like it")
    assert "REASON_NOT_REDACTED" in codes(lines_of(red))


def test_call_against_redacted_prior_must_be_cut():
    recs = k.redact(k.sample(), "P-0002")
    recs += [k.call("run-004", 1, "P-0002"), k.commit("run-004")]
    assert "CALL_NOT_REDACTED" in codes(lines_of(recs))


def test_event_after_redaction():
    recs = k.redact(k.sample(), "P-0002") + [k.decide("P-0002", "keep")]
    assert "EVENT_AFTER_REDACT" in codes(lines_of(recs))


# --- growth since an older version


def test_since_prefix():
    old = lines_of(k.sample()[:8])
    new = lines_of(k.sample())
    assert check_since(old, new) == []
    assert check_since(b"", new) == []
    assert [p.code for p in check_since(new, old)] == ["LEDGER_SHRANK"]
    edited = new.replace(b"still-open", b"fixed", 1)
    probs = check_since(new, edited)
    assert [p.code for p in probs] == ["NOT_APPEND_ONLY"] and probs[0].line == 6


def test_a_line_removed_or_put_in_is_named_once_where_it_is():
    """Newcomer pass 27aw deleted one line by hand: `verify` named every later line changed and the ledger shrunk
    (30 problems). A run of lines removed or put in between is one problem, where it is, with the way back;
    the lines after it are still compared with their old selves."""
    recs = k.sample()
    old = lines_of(recs)
    gone = lines_of(recs[:4] + recs[5:] + [k.commit("run-009")])
    (p,) = check_since(old, gone, "HEAD")
    assert (p.code, p.line) == ("NOT_APPEND_ONLY", 5) and p.message.startswith("1 line removed here (line 5 at HEAD was")
    assert "`git checkout HEAD -- .priors/ledger.jsonl` puts the ledger back as it was" in p.message
    two = lines_of(recs[:4] + recs[6:])
    assert [(p.code, p.line) for p in check_since(old, two)] == [("NOT_APPEND_ONLY", 5)]
    put = lines_of(recs[:3] + [k.commit("run-008")] + recs[3:])
    (p,) = check_since(old, put)
    assert (p.code, p.line) == ("NOT_APPEND_ONLY", 4) and p.message.startswith("1 line put in here, after line 3 of")
    # an edit further on is named at its own line, as the ledger has it now
    later = [dict(r) for r in recs[:4] + recs[5:]]
    i = next(j for j, r in enumerate(later) if r.get("to") == "still-open")
    later[i]["to"] = "fixed"
    probs = check_since(old, lines_of(later))
    assert [(p.code, p.line) for p in probs] == [("NOT_APPEND_ONLY", 5), ("NOT_APPEND_ONLY", i + 1)], probs
    # hostile pass 27ax: an edit before the run, or after a line put in, no longer hides it or the lines after
    big = [k.prior(f"P-{n:04d}", "run-001", f"claim {n}") for n in range(1, 61)]
    swapped = big[:3] + [big[4], big[3]] + big[5:30] + big[31:]
    assert [(p.code, p.line) for p in check_since(lines_of(big), lines_of(swapped))] == [
        ("NOT_APPEND_ONLY", 4), ("NOT_APPEND_ONLY", 5), ("NOT_APPEND_ONLY", 31)]
    edited = big[:10] + [big[40]] + big[10:59] + [dict(big[59], claim="claim 60, edited")]
    assert [(p.code, p.line) for p in check_since(lines_of(big), lines_of(edited))] == [
        ("NOT_APPEND_ONLY", 11), ("NOT_APPEND_ONLY", 61)]
    many = big[:5] + big[25:]  # a run of twenty removed at once
    assert [(p.code, p.line) for p in check_since(lines_of(big), lines_of(many))] == [("NOT_APPEND_ONLY", 6)]


def test_since_accepts_redaction_rewrites():
    old = lines_of(k.sample() + [k.call("run-004", 1, "P-0002"), k.commit("run-004")])
    new = lines_of(k.redact(k.sample() + [k.call("run-004", 1, "P-0002"), k.commit("run-004")], "P-0002"))
    assert check_since(old, new) == []


def test_since_rejects_forged_tombstone():
    old = lines_of(k.sample())
    red = k.redact(k.sample(), "P-0002")
    red[1]["content_hash"] = "000000000000"
    probs = check_since(old, lines_of(red))
    assert [p.code for p in probs] == ["NOT_APPEND_ONLY"] and "content_hash" in probs[0].message
    red = k.redact(k.sample(), "P-0002")
    red[8]["reason_hash"] = "000000000000"
    probs = check_since(old, lines_of(red))
    assert [p.code for p in probs] == ["NOT_APPEND_ONLY"] and "reason_hash" in probs[0].message


def test_rewrite_problem_plain_change():
    assert rewrite_problem(b'{"t":"x"}', b'{"t":"y"}') is not None
    assert rewrite_problem(b'{"t":"x"}', b'{"t":"x"}') is None


def test_github_annotation_escapes():
    line = github_annotation(Problem(3, "BAD_FIELD", "a: b, c\n100%"))
    assert line == "::error file=.priors/ledger.jsonl,line=3,title=priors BAD_FIELD::a: b, c%0A100%25"


# --- property: the checker never crashes


def test_never_crashes_on_garbage():
    """Whatever the bytes, check() answers, names real lines, and flags every line that is not a
    canonical JSON object."""
    pytest.importorskip("hypothesis")
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from priors.core.canonical import split_lines

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.one_of(st.binary(max_size=40), st.sampled_from([dumps(r).encode() for r in k.sample()])), max_size=12))
    def run(chunks):
        data = b"\n".join(chunks)
        probs, warns = check(data)
        lines = split_lines(data)
        assert all(isinstance(p.line, int) and 0 <= p.line <= len(lines) + 1 and p.code for p in probs + warns)
        flagged = {p.line for p in probs}
        for no, raw in enumerate(lines, 1):
            try:
                obj = json.loads(raw.decode("utf-8"))
                ok = isinstance(obj, dict) and dumps(obj).encode("utf-8") == raw
            except (UnicodeDecodeError, ValueError):
                ok = False
            if not ok:
                assert no in flagged, (no, raw, probs)

    run()


# ------------------------------------------------------------------ end to end through the real verbs


def git_env(home: Path) -> Dict[str, str]:
    return {
        "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
    }


def git(root: Path, *args: str) -> str:
    env = dict(os.environ)
    env.update(git_env(root))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(["git", *args], cwd=str(root), capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def one_run(k: Keeper) -> None:
    k.write("a.py", "x = 1\n")
    k.open_run("review", {"a.py": k.hash("a.py")})
    k.ok("propose", k.candidate({"type": "conclusion", "claim": "x is magic", "scope_ref": "a.py", "direction": "terser"}),
         "--run", "run-001", "--ns", "review")
    k.ok("commit", "--run", "run-001")


def test_verify_sound_ledger(keeper):
    assert keeper.ok("verify") == "ledger sound: 0 lines\n"
    one_run(keeper)
    keeper.ok("decide", "P-0001", "reopen", "--because", "try again")
    assert keeper.ok("verify") == "ledger sound: 3 lines\n"
    assert keeper.ok("verify", "--json") == '{"ok":true,"problems":[]}\n'
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})  # an open run's staging is fine
    assert keeper("verify").code == 0


def test_verify_after_real_redaction_and_calls(keeper):
    one_run(keeper)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "secret reason")
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    keeper.refused("REVERSAL", "propose",
                   keeper.candidate({"type": "conclusion", "claim": "expand x", "scope_ref": "a.py", "direction": "expand"}),
                   "--run", "run-002", "--ns", "review")
    keeper.ok("commit", "--run", "run-002")
    assert keeper("verify").code == 0
    old = keeper.ledger_bytes()
    keeper.ok("redact", "P-0001", "--because", "private")
    assert keeper("verify").code == 0, keeper("verify")
    assert check_since(old, keeper.ledger_bytes()) == []


def test_a_failing_verify_says_where_to_read_what_to_do(keeper):
    """The count line points to docs/ci.md's "When verify fails", which exists; --json stays the problems."""
    one_run(keeper)
    md = keeper.root / ".priors" / "PRIORS.md"
    md.write_text(md.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    r = keeper("verify")
    assert r.code == 1
    assert r.out.splitlines()[-1] == ('1 problem in .priors/ — what to do: docs/ci.md in the priors repository, '
                                      '"When verify fails"')
    assert "### When `verify` fails" in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    assert "what to do" not in keeper("verify", "--json").out
    keeper.ok("render")
    assert "what to do" not in keeper.ok("verify")


def test_verify_file_problems(keeper):
    one_run(keeper)
    md = keeper.root / ".priors" / "PRIORS.md"
    md.write_text(md.read_text(encoding="utf-8") + "hand edit\n", encoding="utf-8")
    r = keeper("verify")
    assert r.code == 1 and ".priors/PRIORS.md (RENDER_STALE): out of date" in r.out
    assert json.loads(keeper("verify", "--json").out)["problems"] == [
        {"code": "RENDER_STALE", "file": ".priors/PRIORS.md", "line": 0,
         "message": "out of date with the ledger — run `priors render` and commit it"}]
    md.unlink()
    r = keeper("verify", "--json")
    assert r.code == 1 and json.loads(r.out)["problems"][0]["code"] == "RENDER_MISSING"
    keeper.ok("render")
    (keeper.root / ".priors" / "runs" / "run-001").mkdir(parents=True)
    live = keeper.root / ".priors" / f".ledger.jsonl.{os.getpid()}.tmp"  # a live writer's work in progress
    live.write_bytes(b"x")
    dead = _dead_pid()
    (keeper.root / ".priors" / f".ledger.jsonl.{dead}.tmp").write_bytes(b"x")
    r = keeper("verify", "--json")
    body = json.loads(r.out)
    assert r.code == 1 and r.out == dumps(body) + "\n"
    assert sorted(p["code"] for p in body["problems"]) == ["STAGING_OF_COMMITTED_RUN", "STRAY_TEMP_FILE"]
    assert [p["file"] for p in body["problems"] if p["code"] == "STRAY_TEMP_FILE"] == [
        f".priors/.ledger.jsonl.{dead}.tmp"]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_verify_damaged_line_is_a_problem_not_a_crash(keeper):
    one_run(keeper)
    with open(keeper.root / ".priors" / "ledger.jsonl", "ab") as fh:
        fh.write(b'{"t":"event","id":"P-0001"\n')
    r = keeper("verify")
    assert r.code == 1 and "line 3 (DAMAGED_LINE): not one JSON object" in r.out
    # every other verb names the line and the way back (newcomer pass 27av), and writes nothing
    err = keeper.usage("status")
    assert "line 3: not one JSON object" in err and "`priors verify` names every damaged line" in err, err
    assert "`git checkout -- .priors/ledger.jsonl`" in err, err


def test_verify_usage_errors(keeper, tmp_path):
    keeper.usage("verify", "extra")
    keeper.usage("verify", "--since")
    keeper.usage("verify", "--since", "HEAD")  # not a git repository
    (tmp_path / "elsewhere").mkdir()
    Keeper(tmp_path / "elsewhere").usage("verify")  # no .priors/


def test_verify_github_annotations(keeper):
    one_run(keeper)
    data = keeper.ledger_bytes().replace(b'"advisory"', b'"binding"')
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data)
    keeper.ok("render")
    r = keeper("verify", env={"GITHUB_ACTIONS": "true"})
    assert r.code == 1
    assert "line 1 (BINDING_FACET): prior P-0001: authority is never self-assigned" in r.out
    assert ("::error file=.priors/ledger.jsonl,line=1,title=priors BINDING_FACET::prior P-0001: authority is never self-assigned"
            in r.out)
    r = keeper("verify", "--json", env={"GITHUB_ACTIONS": "true"})
    assert r.out.startswith('{"ok":false') and r.err.startswith("::error file=")
    r = keeper("verify", env={"GITHUB_ACTIONS": "false"})
    assert "::error" not in r.out + r.err


def test_verify_since_git_revision(keeper):
    git(keeper.root, "init", "-q")
    one_run(keeper)
    git(keeper.root, "add", "-A")
    git(keeper.root, "commit", "-qm", "one run")
    env = git_env(keeper.root)
    assert keeper("verify", "--since", "HEAD", env=env).code == 0
    keeper.ok("decide", "P-0001", "keep", "--because", "ok")
    r = keeper("verify", "--since", "HEAD", env=env)
    assert r.code == 0 and "grew only since HEAD" in r.out
    keeper.ok("redact", "P-0001", "--because", "private")
    assert keeper("verify", "--since", "HEAD", env=env).code == 0
    git(keeper.root, "add", "-A")
    git(keeper.root, "commit", "-qm", "redacted")
    # a hand edit of history is caught against the older revision
    lines = keeper.ledger_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"summary":[', b'"summary":["forged",')
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(b"\n".join(lines))
    r = keeper("verify", "--since", "HEAD~1", "--json", env=env)
    body = json.loads(r.out)
    assert r.code == 1 and {"line": 2, "code": "NOT_APPEND_ONLY"}.items() <= body["problems"][0].items()
    keeper.usage("verify", "--since", "no-such-rev")
    keeper.usage("verify", "--since", "--json")


def test_verify_since_a_revision_without_a_ledger(keeper):
    git(keeper.root, "init", "-q")
    (keeper.root / "README").write_text("x")
    git(keeper.root, "add", "README")
    git(keeper.root, "commit", "-qm", "no ledger yet")
    one_run(keeper)
    assert keeper("verify", "--since", "HEAD", env=git_env(keeper.root)).code == 0


def test_the_pre_push_hook_on_a_first_push_checks_against_head_and_says_so(keeper, tmp_path):
    """`verify --since @{upstream}` (the pre-push hook) on a branch with no upstream yet: not exit 2 (which
    blocked the push), but the check without --since, with a note; with an upstream it compares with it."""
    git(keeper.root, "init", "-q", "-b", "main")
    one_run(keeper)
    git(keeper.root, "add", "-A")
    git(keeper.root, "commit", "-qm", "one run")
    env = git_env(keeper.root)
    for rev in ("@{upstream}", "@{u}"):
        r = keeper("verify", "--since", rev, env=env)
        assert r.code == 0, r
        assert r.out.startswith("note: no upstream and no remote-tracking refs at all: checked against HEAD instead of "
                                f"{rev} — nothing a remote holds was compared\n"), r.out
        assert "grew only since the last commit (HEAD)" in r.out
    body = json.loads(keeper("verify", "--since", "@{upstream}", "--json", env=env).out)
    assert body["ok"] is True and body["note"].startswith("no upstream and no remote-tracking refs")  # no "note: note:"
    # a hand edit of a committed line is still caught on that first push
    data = keeper.ledger_bytes()
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data.replace(b"x is magic", b"x is fine"))
    assert keeper("verify", "--since", "@{upstream}", env=env).code == 1
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data)
    # once the branch tracks a remote, @{upstream} is what it compares with, with no note
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(keeper.root, "remote", "add", "origin", str(remote))
    git(keeper.root, "push", "-q", "-u", "origin", "main")
    r = keeper("verify", "--since", "@{upstream}", env=env)
    assert r.code == 0 and "note:" not in r.out and "grew only since @{upstream}" in r.out, r
    keeper.usage("verify", "--since", "no-such-rev")


# --- the lessons loop's own records


def test_lessons_records():
    recs = k.sample()
    recs.insert(10, {"t": "injected", "run": "run-003", "ids": ["P-0002"]})
    recs += [{"t": "score", "run": "run-003", "outcome": "success", "by": "human", "injected": ["P-0002"]},
             {"t": "learned", "runs": ["run-003"]}]
    assert check(lines_of(recs)) == ([], [])
    bad = [dict(r) for r in recs]
    bad[-2] = dict(bad[-2], outcome="meh", by="agent", run="run-009")
    assert {"BAD_FIELD", "WRONG_ACTOR", "UNKNOWN_RUN"} <= set(codes(lines_of(bad)))
    bad = [dict(r) for r in recs]
    bad[-1] = {"t": "learned", "runs": ["run-042"]}
    assert codes(lines_of(bad)) == ["UNKNOWN_RUN"]
    bad = [dict(r) for r in recs]
    bad[10] = {"t": "injected", "run": "run-003", "ids": ["P-0099"]}
    assert codes(lines_of(bad)) == ["UNKNOWN_PRIOR"]
    bad = [dict(r) for r in recs]
    bad.insert(9, bad.pop(10))  # injected before the run's dispositions
    assert "BLOCK_ORDER" in codes(lines_of(bad))


def pushed_to_a_remote(keeper, tmp_path) -> Dict[str, str]:
    """One run committed on `main` and pushed to a bare remote it tracks; the git environment."""
    git(keeper.root, "init", "-q", "-b", "main")
    one_run(keeper)
    git(keeper.root, "add", "-A")
    git(keeper.root, "commit", "-qm", "one run")
    env = git_env(keeper.root)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(keeper.root, "remote", "add", "origin", str(remote))
    git(keeper.root, "push", "-q", "-u", "origin", "main")
    return env


def test_the_pre_push_hook_compares_with_what_the_remote_holds_without_an_upstream(keeper, tmp_path):
    """A rewritten ledger committed on a new local branch or a detached HEAD (`git push origin HEAD:main`)
    is caught: with no upstream, `verify --since @{upstream}` compares with where HEAD's history leaves the
    remote-tracking refs, and under pre-commit with the remote's commit the push replaces."""
    env = pushed_to_a_remote(keeper, tmp_path)
    data = keeper.ledger_bytes()
    git(keeper.root, "checkout", "-q", "-b", "topic")
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data.replace(b"x is magic", b"x is fine"))
    keeper.ok("render")
    git(keeper.root, "commit", "-qam", "rewrite the ledger")
    for how in ("a new local branch", "a detached HEAD"):
        if how == "a detached HEAD":
            git(keeper.root, "checkout", "-q", "--detach")
        r = keeper("verify", "--since", "@{upstream}", env=env)
        # the commit alone looked sound against HEAD
        assert r.code == 1 and "changed (and is not a redaction rewrite) since" in r.out, (how, r)
        assert "no upstream (a first push, or a detached HEAD): checked against where this history leaves" in r.out
        assert keeper("verify", env=env).code == 0  # (against HEAD, the rewrite is invisible)
    # under pre-commit's pre-push stage: the remote's commit this push replaces
    r = keeper("verify", "--since", "@{upstream}", env=dict(env, PRE_COMMIT_FROM_REF="main"))
    assert r.code == 1 and "changed (and is not a redaction rewrite) since" in r.out and "PRE_COMMIT_FROM_REF)" in r.out, r


def test_a_first_push_of_an_orphan_branch_says_it_compared_nothing_the_remote_holds(keeper, tmp_path):
    """An orphan branch shares no history with the remote-tracking refs: the pre-push hook's
    `verify --since @{upstream}` checks against HEAD. Its note said "no remote-tracking refs at all",
    which was false with `origin/main` right there; it now says what happened and where the proof is."""
    env = pushed_to_a_remote(keeper, tmp_path)
    git(keeper.root, "checkout", "-q", "--orphan", "fresh")
    git(keeper.root, "commit", "-qm", "the same files, no history")
    r = keeper("verify", "--since", "@{upstream}", env=env)
    assert r.code == 0, r
    assert r.out.startswith("note: no upstream, and HEAD shares no history with any remote-tracking ref (an orphan"
                            " branch): checked against HEAD instead of @{upstream} — nothing a remote holds was"
                            " compared; CI's `verify --since <base>` compares the change\n"), r.out
    assert "no remote-tracking refs at all" not in r.out


def test_grafts_do_not_move_where_a_first_push_leaves_the_remote(keeper, tmp_path):
    """`.git/info/grafts` (which anyone who can write `.git` can create, and git still honours with
    replace refs off) gave the rewriting commit an older parent, so `merge-base HEAD refs/remotes/…`
    named a commit before the person's line the rewrite took out: the pre-push hook's
    `verify --since @{upstream}` on a first push passed the cut ledger. The keeper's git calls
    read no graft file."""
    env = pushed_to_a_remote(keeper, tmp_path)
    keeper.ok("decide", "P-0001", "keep", "--because", "ok")
    git(keeper.root, "add", "-A")
    git(keeper.root, "commit", "-qm", "decided")
    git(keeper.root, "push", "-q", "origin", "main")
    git(keeper.root, "checkout", "-q", "-b", "topic")
    ledger = keeper.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(b"".join(ln for ln in ledger.read_bytes().splitlines(keepends=True) if b'"keep"' not in ln))
    keeper.ok("render")
    git(keeper.root, "commit", "-qam", "cut the person's decision")
    assert keeper("verify", "--since", "@{upstream}", env=env).code == 1
    head, older = git(keeper.root, "rev-parse", "HEAD", "origin/main~1").split()
    (keeper.root / ".git" / "info").mkdir(exist_ok=True)
    (keeper.root / ".git" / "info" / "grafts").write_text(f"{head} {older}\n")
    r = keeper("verify", "--since", "@{upstream}", env=env)
    assert r.code == 1 and "lines were removed" in r.out, r


def test_verify_and_doctor_name_a_config_the_keeper_cannot_read(keeper):
    """Newcomer pass 27w: a broken .priors/config.json stops `relevant` and `lessons --inject` (the hooks),
    yet `verify` and `doctor` passed it."""
    keeper.ok("init")
    keeper.ok("suggest", "--ns", "dev", "Run the tests before committing")
    for text, why in (('{"max_inject": 0', "is not valid JSON"), ('{"max_inject": "x"}', "max_inject")):
        keeper.write(".priors/config.json", text)
        assert keeper("lessons", "--inject").code == 2
        r = keeper("verify", "--no-git")
        assert r.code == 1 and r.out.startswith(".priors/config.json (CONFIG_INVALID): "), r
        assert why in r.out.splitlines()[0] and "nothing was changed" not in r.out, r
        problems = json.loads(keeper("verify", "--no-git", "--json").out)["problems"]
        assert [(p["code"], p.get("file")) for p in problems] == [("CONFIG_INVALID", ".priors/config.json")], problems
        d = keeper("doctor")
        assert d.code == 1 and "problem in .priors/, the first .priors/config.json (CONFIG_INVALID)" in d.out, d.out
    (keeper.root / ".priors/config.json").unlink()
    assert keeper("verify", "--no-git").code == 0
    outside = keeper.root.parent / "elsewhere.json"
    outside.write_text('{"max_inject": 3}', encoding="utf-8")
    (keeper.root / ".priors/config.json").symlink_to(outside)  # read through a link outside (hostile pass 27ae)
    assert keeper("lessons", "--inject").code == 2 and "is a symlink" in keeper("lessons", "--inject").err
    r = keeper("verify", "--no-git")
    assert r.code == 1 and r.out.startswith(".priors/config.json (CONFIG_INVALID): ") and "is a symlink" in r.out, r
    (keeper.root / ".priors/config.json").unlink()
    (keeper.root / ".priors/config.json").mkdir()  # a folder where the file goes (hostile pass 27x): named, not a usage error
    subprocess.run(["git", "init", "-q"], cwd=str(keeper.root), check=True)
    for args in (("--no-git",), ()):
        r = keeper("verify", *args)
        assert r.code == 1 and r.out.startswith(".priors/config.json (CONFIG_INVALID): ") and "is a directory" in r.out, r
