"""Human decisions can be proven human (issue 27): with `.priors/allowed_signers` committed, a person's
verbs sign their lines with git's SSH signing key and `verify` checks every one; without it,
`verify --since` shows the reviewer the person's lines a change adds and a changed config.

End to end, with real `ssh-keygen` keys made in a temp folder and git config in a temp repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import Keeper
from priors.core.canonical import dumps, loads, sha12
from priors.core.merge_rules import merge
from priors.core.signing import armor, coverage, dearmor, describe, human_lines, limited_entries, payload

KEYGEN = shutil.which("ssh-keygen")
needs_keygen = pytest.mark.skipif(KEYGEN is None, reason="ssh-keygen is not installed")
ALICE = "alice@example.com"


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=str(root), capture_output=True, text=True)
    assert out.returncode == 0, out
    return out.stdout.strip()


def make_key(folder: Path, name: str) -> Path:
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return path


def allowed_line(principal: str, key: Path) -> str:
    kind, blob = Path(str(key) + ".pub").read_text(encoding="utf-8").split()[:2]
    return f"{principal} {kind} {blob}\n"


def sign_as(key: Path, rec: Dict[str, Any], signer: str) -> Dict[str, Any]:
    """`rec` signed by `key` outside the keeper, as a forger holding some key would."""
    rec = dict(rec, signer=signer)
    out = subprocess.run(["ssh-keygen", "-Y", "sign", "-n", "priors", "-f", str(key)], input=payload(rec),
                         capture_output=True, check=True)
    rec["sig"] = dearmor(out.stdout.decode("ascii"))
    return rec


def human(keeper: Keeper) -> List[Dict[str, Any]]:
    return [r for r in keeper.ledger() if r.get("by") == "human"]


def append(keeper: Keeper, rec: Dict[str, Any]) -> int:
    """Append one canonical line by hand; returns its line number."""
    p = keeper.root / ".priors" / "ledger.jsonl"
    with open(p, "ab") as fh:
        fh.write((dumps(rec) + "\n").encode("utf-8"))
    return len(keeper.ledger())


def problems(r) -> List[Dict[str, Any]]:
    return json.loads(r.out)["problems"]


@pytest.fixture
def repo(tmp_path):
    """A git repository with the keeper, a committed base; alice's key configured for SSH signing."""
    root = tmp_path / "repo"
    root.mkdir()
    keys = tmp_path / "keys"
    keys.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "Alice")
    git(root, "config", "user.email", ALICE)
    git(root, "config", "commit.gpgsign", "false")
    kp = Keeper(root)
    kp.ok("init")
    kp.keys = keys  # type: ignore[attr-defined]
    if KEYGEN is not None:
        alice = make_key(keys, "alice")
        git(root, "config", "gpg.format", "ssh")
        git(root, "config", "user.signingkey", str(alice))
        kp.alice = alice  # type: ignore[attr-defined]
    return kp


def commit(kp: Keeper, msg: str) -> str:
    git(kp.root, "add", "-A")
    git(kp.root, "commit", "-q", "--no-verify", "-m", msg)
    return git(kp.root, "rev-parse", "HEAD")


def turn_signing_on(kp: Keeper, *extra: str) -> str:
    kp.write(".priors/allowed_signers", allowed_line(ALICE, kp.alice) + "".join(extra))  # type: ignore[attr-defined]
    return commit(kp, "signing on")


# ------------------------------------------------------------------ signed lines verify


@needs_keygen
def test_signed_decide_verifies(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "reopen", "--because", "too strict for parsers")
    lines = human(repo)
    assert [r.get("action", r["t"]) for r in lines] == ["commit", "decide", "decide"]
    assert all(r["signer"] == ALICE and isinstance(r["sig"], str) for r in lines)
    r = repo("verify", "--since", base, "--json")
    assert r.code == 0, r
    body = json.loads(r.out)
    assert [h["says"] for h in body["human_lines"]] == ["add run-001 in web", "decide P-0001 accepted",
                                                         "decide P-0001 reopen"]
    assert {h["signer"] for h in body["human_lines"]} == {ALICE}
    text = repo.ok("verify", "--since", base)
    assert "3 decisions by a person in this change" in text
    assert f"line 4: decide P-0001 reopen — signed by {ALICE}" in text
    assert repo("verify").code == 0  # against HEAD
    assert "warning" not in repo("decide", "P-0001", "keep").err  # the committed list holds the key: no warning
    commit(repo, "decided")
    assert repo("verify", "--no-git").code == 0


@needs_keygen
def test_a_key_whose_validity_ended_is_named_as_such_not_as_unlisted(repo):
    """A key allowed_signers holds with a `valid-before` in the past: the message named the temporary
    copy verify checks against (`/tmp/priors-verify-…/allowed_signers:1: key has expired`), and where
    OpenSSH says only "Could not verify signature." it read "does not list" for a key listed right
    there. It names .priors/allowed_signers and the entry's limits."""
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    line = allowed_line(ALICE, repo.alice)  # type: ignore[attr-defined]
    repo.write(".priors/allowed_signers", line.replace(f"{ALICE} ", f'{ALICE} valid-before="20200101" ', 1))
    r = repo("verify", "--no-git", "--json")
    assert r.code == 1, r
    assert {p["code"] for p in problems(r)} == {"BAD_SIGNATURE"}
    for p in problems(r):
        said = p["message"]
        assert "priors-verify-" not in said and (
            ".priors/allowed_signers:1: key has expired" in said  # OpenSSH 8.9 and later say why
            or 'or lists it with options that exclude it now (line 1: valid-before="20200101"' in said), said
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "reopen", "--because", "x")
    assert "mend your entry there" in body["hint"] and str(repo.root) not in body["hint"], body
    repo.write(".priors/allowed_signers", line)
    assert repo("verify", "--no-git").code == 0


def test_an_entry_s_limits_are_named_for_a_signature_that_does_not_verify():
    """Where OpenSSH says only "Could not verify signature.", the entries that could explain it."""
    data = (b'a@x valid-before="20200101" ssh-ed25519 AAA\nb@x namespaces="git,priors" ssh-ed25519 BBB\n'
            b'b@x namespaces="git,file",valid-after=20990101 ssh-ed25519 CCC\n# c\nc@x ssh-ed25519 D\n')
    assert limited_entries(data, "a@x") == ['line 1: valid-before="20200101"']
    assert limited_entries(data, "b@x") == ['line 3: namespaces="git,file",valid-after=20990101']
    assert limited_entries(data, "c@x") == []


@needs_keygen
def test_forged_unsigned_human_line_fails_naming_the_line(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "lesson")
    n = append(repo, {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human"})
    repo.ok("render")
    for args in (("verify", "--json"), ("verify", "--since", base, "--json"), ("verify", "--no-git", "--json")):
        r = repo(*args)
        assert r.code == 1, (args, r)
        assert [(p["line"], p["code"]) for p in problems(r)] == [(n, "UNSIGNED_HUMAN_LINE")], args
        assert "decide P-0001 obsolete" in problems(r)[0]["message"]
    assert f"line {n} (UNSIGNED_HUMAN_LINE): decide P-0001 obsolete: a person's line without a signature" in repo("verify").out


@needs_keygen
def test_line_signed_by_a_key_not_allowed_fails(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    mallory = make_key(repo.keys, "mallory")
    line = {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human"}
    n = append(repo, sign_as(mallory, line, ALICE))  # claims to be alice
    n2 = append(repo, sign_as(mallory, dict(line, to="wontfix"), "mallory@example.com"))
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1
    assert [(p["line"], p["code"]) for p in problems(r)] == [(n, "BAD_SIGNATURE"), (n2, "BAD_SIGNATURE")]
    assert "signed as alice@example.com" in problems(r)[0]["message"]
    # why, in words: ssh-keygen says only "Could not verify signature." (on stdout), never its exit code
    assert "a key that .priors/allowed_signers does not list for alice@example.com" in problems(r)[0]["message"]
    assert "for mallory@example.com" in problems(r)[1]["message"]
    assert "ssh-keygen exit" not in r.out
    # and the keeper refuses to sign with a key allowed_signers does not list: nothing written
    git(repo.root, "config", "user.signingkey", str(mallory))
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "keep")
    assert "does not verify against .priors/allowed_signers" in body["hint"]
    assert "a key that .priors/allowed_signers does not list for alice@example.com" in body["hint"]
    assert "ssh-keygen exit" not in body["hint"]
    assert "nothing was written" in body["hint"]


@needs_keygen
def test_many_signed_lines_are_checked_at_once_and_each_failure_named(repo):
    """Verify checks many signatures on several threads (`signing.each`, one ssh-keygen per check):
    twelve of a person's decisions verify, and forged lines among them are each named at their line."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    for i in range(12):
        repo.ok("decide", "P-0001", "reopen" if i % 2 == 0 else "keep", "--because", f"round {i}")
    assert repo("verify", "--since", base).code == 0
    mallory = make_key(repo.keys, "mallory")
    line = {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human"}
    bad = [append(repo, sign_as(mallory, dict(line, because=f"forged {i}"), ALICE)) for i in range(3)]
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1
    assert [(p["line"], p["code"]) for p in problems(r)] == [(n, "BAD_SIGNATURE") for n in bad]


def test_each_keeps_order_and_raises_what_a_call_raised():
    from priors.store.signing import each

    items = [(i,) for i in range(40)]
    assert each(lambda i: i * i, items) == [i * i for i in range(40)]
    assert each(lambda i: -i, items[:3]) == [0, -1, -2]  # (few: in this thread)

    def boom(i):
        if i == 17:
            raise ValueError("seventeen")
        return i

    try:
        each(boom, items)
    except ValueError as exc:
        assert str(exc) == "seventeen"
    else:
        raise AssertionError("the error was lost")


@needs_keygen
def test_tampered_decision_field_fails(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("add", "--ns", "web", "Name tests after behaviour.")
    repo.ok("decide", "P-0001", "obsolete", "--because", "we split parsers")
    assert repo("verify", "--since", base).code == 0
    p = repo.root / ".priors" / "ledger.jsonl"
    good = p.read_bytes()
    head, last = good.rstrip(b"\n").rsplit(b"\n", 1)
    for old, new in ((b'"to":"obsolete"', b'"to":"wontfix"'), (b'"id":"P-0001"', b'"id":"P-0002"'),
                     (b'"reason":"we split parsers"', b'"reason":"we split lexers"'), (b'"nonce":"', b'"nonce":"0')):
        assert last.count(old) == 1, old
        p.write_bytes(head + b"\n" + last.replace(old, new) + b"\n")
        repo.ok("render")
        r = repo("verify", "--since", base, "--json")
        assert r.code == 1, (old, r)
        bad = [(x["line"], x["code"]) for x in problems(r)]
        assert bad == [(len(repo.ledger()), "BAD_SIGNATURE")], (old, bad)


@needs_keygen
def test_redact_keeps_other_signatures_valid(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "reopen", "--because", "the parser team objected")
    repo.ok("add", "--ns", "web", "Name tests after behaviour.")
    before = [r["sig"] for r in human(repo)]
    redacted_before = (repo.root / ".priors" / "ledger.jsonl").read_bytes()
    prior_text = redacted_before.decode().splitlines()[0]
    repo.ok("redact", "P-0001", "--because", "named a customer")
    after = human(repo)
    assert [r["sig"] for r in after[:-1]] == before  # every earlier signature kept as it was
    reopen = next(r for r in after if r.get("to") == "reopen")
    assert "reason" not in reopen and reopen["reason_redacted"] is True
    assert after[-1]["action"] == "redact" and after[-1]["signer"] == ALICE
    r = repo("verify", "--since", base, "--json")
    assert r.code == 0, r
    assert repo("verify").code == 0
    # what the signatures cover (version 2: the priors decided or sealed) reads the same off the
    # redacted ledger: the tombstone keeps the hash of the line it replaced
    lines = human_lines(redacted_before)
    assert coverage(redacted_before, lines) == coverage((repo.root / ".priors" / "ledger.jsonl").read_bytes(), lines)
    assert coverage(redacted_before, lines)[lines[0].no] == [["P-0001", sha12(prior_text)]]


@needs_keygen
def test_missing_ssh_keygen_is_said_clearly(repo, tmp_path):
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    only_git = tmp_path / "bin"
    only_git.mkdir()
    os.symlink(shutil.which("git"), str(only_git / "git"))
    env = {"PATH": str(only_git)}
    before = repo.ledger_bytes()
    r = repo("decide", "P-0001", "obsolete", env=env)
    assert r.code == 1, r
    body = json.loads(r.out)
    assert body["refused"] == "SIGNING_FAILED"
    assert "ssh-keygen was not found" in body["hint"] and "nothing was written" in body["hint"]
    assert repo.ledger_bytes() == before
    r = repo("redact", "P-0001", "--because", "x", env=env)
    assert r.code == 1 and json.loads(r.out)["refused"] == "SIGNING_FAILED"
    assert repo.ledger_bytes() == before
    r = repo("verify", "--json", env=env)
    assert r.code == 1, r
    assert [(p["code"], p.get("file")) for p in problems(r)] == [("SIGNING_UNAVAILABLE", ".priors/allowed_signers")]
    assert "ssh-keygen was not found" in problems(r)[0]["message"]


@needs_keygen
def test_signing_set_up_missing_pieces_are_refusals(repo):
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    git(repo.root, "config", "--unset", "gpg.format")
    assert "git config gpg.format ssh" in repo.refused("SIGNING_FAILED", "decide", "P-0001", "keep")["hint"]
    git(repo.root, "config", "gpg.format", "ssh")
    git(repo.root, "config", "user.signingkey", str(repo.keys / "nope"))
    assert "not a file" in repo.refused("SIGNING_FAILED", "decide", "P-0001", "keep")["hint"]
    git(repo.root, "config", "user.signingkey", str(repo.alice))
    git(repo.root, "config", "user.email", "bob@example.com")  # a principal allowed_signers does not list
    assert "does not verify" in repo.refused("SIGNING_FAILED", "decide", "P-0001", "keep")["hint"]
    git(repo.root, "config", "user.email", ALICE)
    repo.ok("decide", "P-0001", "keep")


@needs_keygen
def test_lines_before_signing_are_listed_not_failed(repo):
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "keep")
    commit(repo, "before signing")
    assert all("sig" not in r for r in human(repo))
    turn_signing_on(repo)
    r = repo("verify", "--json")
    assert r.code == 0, r
    warn = json.loads(r.out)["warnings"]
    assert [w["code"] for w in warn] == ["UNSIGNED_BEFORE_SIGNING"]
    assert "3 unsigned lines" in warn[0]["message"] and "(lines 2, 3, 4)" in warn[0]["message"]
    repo.ok("decide", "P-0001", "obsolete")
    assert repo("verify").code == 0
    commit(repo, "signed")
    # after the first signed line, an unsigned one fails even once committed
    n = append(repo, {"t": "event", "id": "P-0001", "action": "decide", "to": "keep", "by": "human"})
    repo.ok("render")
    commit(repo, "forged")
    r = repo("verify", "--json")
    assert [(p["line"], p["code"]) for p in problems(r)] == [(n, "UNSIGNED_HUMAN_LINE")]
    assert "signing began at line 5" in problems(r)[0]["message"]


@needs_keygen
def test_a_change_cannot_add_unsigned_lines_before_the_first_signed_one(repo):
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    base = commit(repo, "one signed lesson")
    ledger = repo.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(b"")  # a ledger rebuilt without signatures, from the start
    git(repo.root, "rm", "-q", "--cached", ".priors/allowed_signers")
    (repo.root / ".priors" / "allowed_signers").unlink()
    commit(repo, "signing off")
    repo.ok("add", "--ns", "web", "Prefer small functions.")  # unsigned: signing is off here
    here = commit(repo, "unsigned")
    turn_signing_on(repo)
    r = repo("verify", "--since", here, "--json")  # lines before the range and before any signature: tolerated
    assert r.code == 0, r
    r = repo("verify", "--since", f"{here}~1", "--json")  # the range adds them: refused
    assert {p["code"] for p in problems(r)} == {"UNSIGNED_HUMAN_LINE"}
    assert base


@needs_keygen
def test_signatures_are_checked_against_the_list_at_the_base(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    mallory = make_key(repo.keys, "mallory")
    repo.write(".priors/allowed_signers", allowed_line(ALICE, repo.alice) + allowed_line("mallory@example.com", mallory))
    git(repo.root, "config", "user.email", "mallory@example.com")
    git(repo.root, "config", "user.signingkey", str(mallory))
    d = repo("decide", "P-0001", "obsolete")  # the working tree's list allows mallory: signed, with a warning
    assert d.code == 0 and "your key verifies against .priors/allowed_signers only as you changed it, not as HEAD" \
        " holds it" in d.err and "(BAD_SIGNATURE)" in d.err, d  # (newcomer pass 27w: it was silent)
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1
    body = json.loads(r.out)
    assert [(p["line"], p["code"]) for p in body["problems"]] == [(4, "BAD_SIGNATURE")]
    changed = [w for w in body["warnings"] if w["code"] == "SIGNERS_CHANGED"]
    assert changed and "+ mallory@example.com ssh-ed25519" in changed[0]["message"]
    # the reviewer's list never says "signed by" for a signature that does not hold
    assert "line 4: decide P-0001 obsolete — its signature as mallory@example.com does not hold" in \
        repo("verify", "--since", base).out


# ------------------------------------------------------------------ a copy replays nothing; a signature covers the content


def codes(r) -> List[Any]:
    return [(x["line"], x["code"]) for x in problems(r)]


@needs_keygen
def test_a_copied_signed_decision_cannot_reopen_a_prior(repo):
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "wontfix")
    repo.ok("decide", "P-0001", "reopen", "--because", "the parser team objected")
    repo.ok("decide", "P-0001", "wontfix")  # the same verdict again: its own signature (a new nonce)
    base = commit(repo, "decided")
    assert repo("verify", "--since", base).code == 0
    reopen = next(i for i, r in enumerate(repo.ledger(), 1) if r.get("to") == "reopen")
    n = append(repo, repo.ledger()[reopen - 1])  # the agent's byte copy of the person's signed reopen
    repo.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = repo(*args)
        assert r.code == 1, (args, r)
        assert codes(r) == [(n, "REPLAYED_SIGNATURE")], args
        msg = problems(r)[0]["message"]
        assert f"a copy of line {reopen}'s signature" in msg and "from wontfix to open" in msg, msg


@needs_keygen
def test_a_person_s_add_signs_the_lesson_s_content(repo):
    base = turn_signing_on(repo)
    p = repo.root / ".priors" / "ledger.jsonl"
    before = p.read_bytes()
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    assert repo("verify", "--since", base).code == 0
    good = p.read_bytes()
    prior_line, seal, accepted = good[len(before):].decode().splitlines()
    assert loads(prior_line)["t"] == "prior" and "sig" not in loads(prior_line)
    first = len(before.splitlines()) + 1
    # the claim edited after the person's add
    p.write_bytes(good.replace(b"Prefer small functions.", b"Skip the tests when in a hurry."))
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert codes(r) == [(first + 1, "BAD_SIGNATURE"), (first + 2, "BAD_SIGNATURE")], r
    # an agent's own prior line, followed by copies of the person's two signed lines
    forged = dict(loads(prior_line), claim="Never run the linter.")
    p.write_bytes(before + (dumps(forged) + "\n" + seal + "\n" + accepted + "\n").encode("utf-8"))
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert codes(r) == [(first + 1, "BAD_SIGNATURE"), (first + 2, "BAD_SIGNATURE")], r
    assert "add run-001 in web" in problems(r)[0]["message"]
    # the person's own lines, untouched, verify
    p.write_bytes(good)
    repo.ok("render")
    assert repo("verify", "--since", base).code == 0


@needs_keygen
def test_a_line_signed_before_version_2_still_verifies(repo):
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    line = {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human", "reason": "split"}
    append(repo, sign_as(repo.alice, line, ALICE))  # version 1: its own fields only, not the content
    repo.ok("render")
    assert repo("verify", "--since", base).code == 0


@needs_keygen
def test_a_merge_s_restatements_and_a_repeated_keep_stay_clean(repo):
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("add", "--ns", "web", "Name tests after behaviour.")
    base = commit(repo, "lessons")
    p = repo.root / ".priors" / "ledger.jsonl"
    base_bytes = p.read_bytes()
    repo.ok("decide", "P-0001", "wontfix", "--because", "legacy code")
    repo.ok("redact", "P-0002", "--because", "named a customer")
    ours = p.read_bytes()
    agent = [{"t": "event", "id": pid, "action": "disposition", "to": "still-open", "run": "run-003", "by": "agent"}
             for pid in ("P-0001", "P-0002")]
    theirs = base_bytes + "".join(dumps(r) + "\n" for r in agent + [
        {"t": "run", "action": "commit", "run": "run-003", "ns": "web", "summary": ["sealed run-003"]}]).encode()
    merged = merge(base_bytes, ours, theirs)
    assert isinstance(merged, bytes)
    p.write_bytes(merged)
    repo.ok("render")
    restated = [r for r in repo.ledger() if r.get("restated") is True]
    assert [(r["action"], r["id"]) for r in restated] == [("decide", "P-0001"), ("redact", "P-0002")]
    r = repo("verify", "--since", base, "--json")
    assert r.code == 0, r
    assert sum(1 for h in json.loads(r.out)["human_lines"] if "same_as" in h) == 2
    # a person's keep, and a copy of it: it restates the latest verdict, so it changes nothing
    repo.ok("decide", "P-0001", "keep")
    append(repo, repo.ledger()[-1])
    repo.ok("render")
    assert repo("verify", "--since", base).code == 0
    # a copy of an add's seal is no restatement
    seal = next(i for i, r in enumerate(repo.ledger(), 1) if r.get("t") == "run" and r.get("by") == "human")
    n = append(repo, repo.ledger()[seal - 1])
    r = repo("verify", "--since", base, "--json")
    assert (n, "REPLAYED_SIGNATURE") in codes(r), r


# ------------------------------------------------------------------ without signing: the reviewer sees


def test_a_duplicate_decision_is_listed_as_the_person_typed_it():
    """Newcomer pass 27o F9: `decide P-0004 duplicate --of P-0002` was listed to the reviewer as
    `decide P-0004 obsolete`, hiding which finding the person called it the same as."""
    rec = {"action": "decide", "by": "human", "id": "P-0004", "same_as": "P-0002", "t": "event", "to": "obsolete"}
    assert describe(rec) == "decide P-0004 duplicate of P-0002 (obsolete)"
    assert describe(dict(rec, same_as=None)) == "decide P-0004 obsolete"


def test_since_lists_human_lines_and_flags_a_config_change(repo):
    repo.ok("config", "require_review", "on")
    base = commit(repo, "base")
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "wontfix", "--because", "legacy code")
    repo.ok("config", "require_review", "none")
    r = repo("verify", "--since", base, "--json")
    assert r.code == 0, r
    body = json.loads(r.out)
    assert [(h["line"], h["says"]) for h in body["human_lines"]] == [
        (2, "add run-001 in web"), (3, "decide P-0001 accepted"), (4, "decide P-0001 wontfix")]
    assert all("signer" not in h for h in body["human_lines"])
    cfg = [w for w in body["warnings"] if w["code"] == "CONFIG_CHANGED"]
    assert cfg == [{"code": "CONFIG_CHANGED", "file": ".priors/config.json", "line": 0,
                    "message": f"changed since {base}: require_review: true → unset"}]
    text = repo("verify", "--since", base)
    assert text.code == 0
    assert "3 decisions by a person in this change" in text.out
    assert "line 4: decide P-0001 wontfix — unsigned" in text.out
    assert '(unsigned: anyone who can push could have written the line — docs/ci.md, "Human lines are signed"' in text.out
    assert "warning: .priors/config.json (CONFIG_CHANGED): changed since" in text.out
    gha = repo("verify", "--since", base, env={"GITHUB_ACTIONS": "true"})
    assert "::warning file=.priors/config.json,title=priors CONFIG_CHANGED::" in gha.out
    commit(repo, "decided")
    assert "human_lines" not in json.loads(repo.ok("verify", "--json"))  # nothing new since HEAD
    # a number no float holds reads as what it is, not as `null` (which says the key was cleared)
    repo.write(".priors/config.json", '{"max_inject": 1e400}')
    body = json.loads(repo("verify", "--since", base, "--json").out)
    (cfg,) = [w for w in body["warnings"] if w["code"] == "CONFIG_CHANGED"]
    assert "max_inject: unset → Infinity (a number no float holds: every verb refuses this config)" in cfg["message"]


def test_a_line_feed_in_a_config_key_or_a_ledger_id_cannot_start_a_line_of_verify_s_answer(repo):
    """Hostile pass 27n: a config key (or an id in a hand-made line) holding a line feed was printed
    raw, so the text answer held a line the agent wrote — under GitHub Actions a workflow command
    (`::add-mask::require_review` hides the very key the CONFIG_CHANGED warning names)."""
    repo.ok("config", "require_review", "on")
    base = commit(repo, "base")
    repo.write(".priors/config.json", json.dumps({"a\n::add-mask::require_review\nledger sound: 0 lines": 1}))
    for args in (("verify",), ("verify", "--since", base)):
        r = repo(*args, env={"GITHUB_ACTIONS": "true"})
        assert r.code == 1, r  # (a key the keeper does not know: CONFIG_INVALID)
        lines = r.out.splitlines()
        assert not any(ln.startswith("::add-mask::") or ln.startswith("ledger sound") for ln in lines), r.out
        assert "a\\u000a::add-mask::require_review\\u000aledger sound: 0 lines: unset → 1; require_review: true → unset" in r.out
        assert "unknown key 'a\\n::add-mask::require_review\\nledger sound: 0 lines'" in r.out, r.out  # (its repr)
    repo.write(".priors/config.json", '{"require_review":true}')
    append(repo, {"action": "disposition", "by": "agent", "id": "P-0001\n::error::forged", "run": "run-009",
                  "t": "event", "to": "fixed"})
    r = repo("verify")
    assert r.code == 1 and not any(ln.startswith("::error::forged") for ln in r.out.splitlines()), r.out
    assert "P-0001\\u000a::error::forged" in r.out


# ------------------------------------------------------------------ what a signature covers


def test_payload_covers_decision_fields_not_scrubbable_text():
    rec = {"t": "event", "id": "P-0001", "action": "decide", "to": "reopen", "by": "human",
           "reason": "the parser team objected", "signer": ALICE}
    from priors.core.canonical import reason_hash

    redacted = {k: v for k, v in rec.items() if k != "reason"}
    redacted.update(reason_redacted=True, reason_hash=reason_hash(rec["reason"]))
    assert payload(redacted) == payload(rec)  # a redaction keeps the signature
    assert payload(dict(rec, restated=True, sig="AAAA")) == payload(rec)  # a merge's restatement too
    for key, value in (("to", "keep"), ("id", "P-0002"), ("by", "agent"), ("signer", "bob@example.com"),
                       ("reason", "other")):
        assert payload(dict(rec, **{key: value})) != payload(rec), key
    assert payload(rec).startswith(b"priors signed line v1\n")


def test_armor_round_trip():
    body = "U1NIU0lH" + "A" * 150 + "=="
    assert dearmor(armor(body)) == body
    assert dearmor("not a signature") is None


@needs_keygen
def test_signing_key_spellings_git_accepts(repo, tmp_path):
    """user.signingkey as a relative or ~/ path, a public key held by ssh-agent, a literal `key::`;
    gpg.ssh.program is the signing program when the person set it (globally) — set in the repository's
    own .git/config, which an agent can write, it is refused and nothing is written (hostile pass 27l)."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    git(repo.root, "config", "user.signingkey", "../keys/alice")  # from the repository's root
    repo.ok("decide", "P-0001", "keep")
    git(repo.root, "config", "user.signingkey", "~/alice")
    r = repo("decide", "P-0001", "keep", env={"HOME": str(repo.keys)})
    assert r.code == 0, r
    log = tmp_path / "program.log"
    wrapper = tmp_path / "keygen-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec ssh-keygen "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    git(repo.root, "config", "user.signingkey", str(repo.alice))
    glob = tmp_path / "person.gitconfig"
    glob.write_text(f"[gpg \"ssh\"]\n\tprogram = {wrapper}\n", encoding="utf-8")
    r = repo("decide", "P-0001", "keep", env={"GIT_CONFIG_GLOBAL": str(glob)})
    assert r.code == 0, r
    assert "-Y sign -n priors" in log.read_text(encoding="utf-8")
    git(repo.root, "config", "gpg.ssh.program", str(wrapper))
    before, calls = repo.ledger_bytes(), log.read_text(encoding="utf-8")
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "keep")
    assert "set in this repository's own git config" in body["hint"], body
    assert repo.ledger_bytes() == before and log.read_text(encoding="utf-8") == calls  # (never run)
    git(repo.root, "config", "--unset", "gpg.ssh.program")
    sock = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if sock.exists():
                break
            subprocess.run(["sleep", "0.05"])
        env = {"SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(repo.alice)], env=dict(os.environ, **env), check=True,
                       capture_output=True)
        git(repo.root, "config", "user.signingkey", str(repo.alice) + ".pub")
        assert repo("decide", "P-0001", "keep", env=env).code == 0
        literal = Path(str(repo.alice) + ".pub").read_text(encoding="utf-8").strip()
        git(repo.root, "config", "user.signingkey", "key::" + literal)
        r = repo("decide", "P-0001", "keep", env=env)
        assert r.code == 0, r
    finally:
        agent.terminate()
        agent.wait(timeout=10)
    r = repo("verify", "--since", base, "--json")
    assert r.code == 0, r
    listed = json.loads(r.out)["human_lines"]
    keeps = [h for h in listed if h["says"] == "decide P-0001 keep"]
    assert len(keeps) == 5 and all(h["signer"] == ALICE for h in keeps)
    # ed25519 signs identical bytes to identical signatures: each line's nonce keeps five decisions five
    assert [h.get("same_as") for h in keeps] == [None] * 5
    assert len({r["nonce"] for r in human(repo)}) == len(human(repo))
    # a copy carries its original's signature: the list says so, and a repeated keep changes nothing
    n = append(repo, repo.ledger()[keeps[-1]["line"] - 1])
    repo.ok("render")
    assert f"line {n}: decide P-0001 keep — signed by {ALICE}, the same signature as line {keeps[-1]['line']}" \
        in repo.ok("verify", "--since", base)


@needs_keygen
def test_signers_added_by_the_change_itself_are_flagged(repo):
    """With no allowed_signers at the base, a change that adds one vouches for its own signatures
    (an agent can make a key and list it): `verify --since` says so, as a warning for the reviewer."""
    base = commit(repo, "the keeper, no signing yet")
    repo.write(".priors/allowed_signers", allowed_line(ALICE, repo.alice))
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "signing on, with a decision")
    body = json.loads(repo("verify", "--since", base, "--json").out)
    added = [w for w in body["warnings"] if w["code"] == "SIGNERS_CHANGED"]
    assert added and "vouched for by the change itself" in added[0]["message"], body["warnings"]


@needs_keygen
def test_a_signers_line_without_a_key_is_named(repo):
    """`ssh-keygen -f ~/.ssh/id_ed25519` failing (no ~/.ssh) left `alice@example.com ` alone in the
    file; ssh-keygen skips such a line, so nobody could sign with it, silently."""
    turn_signing_on(repo, "bob@example.com \n")
    body = json.loads(repo("verify", "--json").out)
    named = [(w["file"], w["line"]) for w in body["warnings"] if w["code"] == "SIGNERS_LINE_UNREADABLE"]
    assert named == [(".priors/allowed_signers", 2)], body


@needs_keygen
def test_a_certificate_authority_or_a_principal_pattern_is_named(repo):
    """Hostile pass 27m: `*@example.com cert-authority <the agent's CA>` in the committed list lets every key
    that CA certifies sign as anyone at example.com; a change adding it got only the generic warning.
    Such lines (a CA, a principal pattern) are named on every `verify`; a plain key for one person is not."""
    _, blob = Path(str(repo.alice) + ".pub").read_text(encoding="utf-8").split()[:2]  # type: ignore[attr-defined]
    turn_signing_on(repo, f"*@example.com cert-authority ssh-ed25519 {blob}\n",
                    f'bob@example.com cert-authority,namespaces="priors" ssh-ed25519 {blob}\n')
    body = json.loads(repo("verify", "--json").out)
    broad = [(w["line"], w["message"]) for w in body["warnings"] if w["code"] == "SIGNERS_BROAD"]
    assert [line for line, _ in broad] == [2, 3], body
    assert "certificate authority" in broad[0][1] and "every principal matching '*@example.com'" in broad[0][1]
    assert "certificate authority" in broad[1][1] and "'bob@example.com'" in broad[1][1]


@needs_keygen
def test_signed_ledgers_are_deterministic(repo, tmp_path):
    """Same inputs, same key ⇒ the same ledger bytes: the nonce that tells two equal decisions apart
    comes from where the line goes, not from chance (ed25519 itself is deterministic)."""
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    for key, value in (("user.email", ALICE), ("gpg.format", "ssh"), ("user.signingkey", str(repo.alice))):
        git(other, "config", key, value)
    twin = Keeper(other)
    twin.ok("init")
    twin.alice = repo.alice  # type: ignore[attr-defined]
    for kp in (repo, twin):
        turn_signing_on(kp)
        kp.ok("add", "--ns", "web", "Prefer small functions.")
        kp.ok("decide", "P-0001", "keep")
        kp.ok("decide", "P-0001", "keep")
    assert repo.ledger_bytes() == twin.ledger_bytes()
    nonces = [r["nonce"] for r in human(repo)]
    assert len(set(nonces)) == len(nonces) == 4  # the seal, the acceptance, two keeps


@needs_keygen
def test_a_copy_with_a_re_encoded_signature_is_still_a_copy(repo):
    """ed25519 as OpenSSH checks it accepts S + L for S (L the group order): a copied line with its
    `sig` so re-encoded verified, and the copy rule (which compared `sig` texts) did not see a copy.
    A copy is known by what it says signed."""
    import base64

    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "wontfix", "--because", "style")
    repo.ok("decide", "P-0001", "reopen", "--because", "too strict for parsers")
    wontfix = next(r for r in repo.ledger() if r.get("to") == "wontfix")
    blob = bytearray(base64.b64decode(wontfix["sig"]))
    order = 2 ** 252 + 27742317777372353535851937790883648493
    blob[-32:] = (int.from_bytes(bytes(blob[-32:]), "little") + order).to_bytes(32, "little")
    n = append(repo, dict(wontfix, sig=base64.b64encode(bytes(blob)).decode("ascii")))
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1 and [c for line, c in codes(r) if line == n] in (["REPLAYED_SIGNATURE"], ["BAD_SIGNATURE"]), r


@needs_keygen
def test_a_removed_signers_file_is_said_when_nothing_compares_it(repo):
    """With the file gone from HEAD and the work tree, nothing checks a person's lines: verify still
    passes (signing is off), but warns that signed lines are there (the push of a new branch runs
    verify against HEAD alone); --since a base holding the file fails."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "lesson")
    (repo.root / ".priors" / "allowed_signers").unlink()
    n = append(repo, {"t": "event", "id": "P-0001", "action": "decide", "to": "obsolete", "by": "human"})
    repo.ok("render")
    commit(repo, "signing off, and a forged decision")
    r = repo("verify", "--json")  # against HEAD, which lacks the file too (--no-git reads no person's line)
    assert r.code == 0, r
    assert [(w["code"], w["file"]) for w in json.loads(r.out)["warnings"]] == [
        ("SIGNING_OFF", ".priors/allowed_signers")]
    assert "missing, yet the ledger holds 2 signed lines by a person" in repo("verify").out
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1 and [(p["line"], p["code"]) for p in problems(r)] == [(n, "UNSIGNED_HUMAN_LINE")]


@needs_keygen
def test_replace_refs_do_not_change_what_the_base_holds(repo):
    """An agent that can write `.git` puts another commit in place of the base with `git replace`
    (`refs/replace/*`): one whose `allowed_signers` lists the agent's own key, or whose ledger drops a
    person's decision. `verify --since base` reads the base's own objects, not the substitute."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "obsolete", "--because", "old")
    base = commit(repo, "decided")
    mallory = make_key(repo.keys, "mallory")  # type: ignore[attr-defined]
    signers = repo.root / ".priors" / "allowed_signers"
    signers.write_text(signers.read_text(encoding="utf-8") + allowed_line("m@example.com", mallory), encoding="utf-8")
    n = append(repo, sign_as(mallory, {"t": "event", "id": "P-0001", "action": "decide", "to": "reopen",
                                       "by": "human", "reason": "forged"}, "m@example.com"))
    repo.ok("render")
    # the substitute base: the same commit, with today's allowed_signers in its tree
    blob = git(repo.root, "hash-object", "-w", str(signers))
    idx = str(repo.keys / "idx")  # type: ignore[attr-defined]
    env = dict(os.environ, GIT_INDEX_FILE=idx)
    subprocess.run(["git", "read-tree", base], cwd=str(repo.root), env=env, check=True)
    subprocess.run(["git", "update-index", "--cacheinfo", f"100644,{blob},.priors/allowed_signers"],
                   cwd=str(repo.root), env=env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=str(repo.root), env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    body = git(repo.root, "cat-file", "commit", base).split("\n")
    body[0] = f"tree {tree}"
    fake = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=str(repo.root),
                          input="\n".join(body) + "\n", capture_output=True, text=True, check=True).stdout.strip()
    git(repo.root, "replace", base, fake)
    assert "m@example.com" in git(repo.root, "show", f"{base}:.priors/allowed_signers")  # git itself is fooled
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1, r
    assert [(p["line"], p["code"]) for p in problems(r)] == [(n, "BAD_SIGNATURE")]
    # and a substitute ledger at the base (the decision taken out) does not pass for the base's
    git(repo.root, "replace", "-d", base)
    lines = (repo.root / ".priors" / "ledger.jsonl").read_bytes().splitlines(keepends=True)
    kept = [ln for ln in lines if b'"obsolete"' not in ln and b'"forged"' not in ln]
    (repo.root / ".priors" / "ledger.jsonl").write_bytes(b"".join(kept))
    blob = git(repo.root, "hash-object", "-w", ".priors/ledger.jsonl")
    subprocess.run(["git", "read-tree", base], cwd=str(repo.root), env=env, check=True)
    subprocess.run(["git", "update-index", "--cacheinfo", f"100644,{blob},.priors/ledger.jsonl"],
                   cwd=str(repo.root), env=env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=str(repo.root), env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    body[0] = f"tree {tree}"
    fake = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=str(repo.root),
                          input="\n".join(body) + "\n", capture_output=True, text=True, check=True).stdout.strip()
    git(repo.root, "replace", base, fake)
    repo.ok("render")
    r = repo("verify", "--since", base, "--json")
    assert r.code == 1, r
    assert {p["code"] for p in problems(r)} & {"LEDGER_SHRANK", "NOT_APPEND_ONLY"}, r


@needs_keygen
def test_a_work_tree_elsewhere_does_not_hide_the_base(repo, tmp_path):
    """`core.worktree` in `.git/config` pointing elsewhere made `REV:./.priors/…` name nothing: the base
    seemed to hold no ledger and no allowed_signers, so a ledger with a person's decision cut out (and
    a line signed by any key the work tree listed) passed `verify` and `verify --since`. Now both say
    they cannot compare (exit 2)."""
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    repo.ok("decide", "P-0001", "obsolete", "--because", "old")
    base = commit(repo, "decided")
    ledger = repo.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(b"".join(ln for ln in ledger.read_bytes().splitlines(keepends=True) if b'"obsolete"' not in ln))
    repo.ok("render")
    assert repo("verify", "--since", base).code == 1  # the cut is seen
    (tmp_path / "elsewhere").mkdir()
    # a work tree elsewhere, and the same said another way: no work tree at all
    for key, value, undo in (("core.worktree", str(tmp_path / "elsewhere"), ("--unset", "core.worktree")),
                             ("core.bare", "true", ("core.bare", "false"))):
        git(repo.root, "config", key, value)
        for args in (("verify",), ("verify", "--since", base)):
            r = repo(*args)
            assert r.code == 2, (args, r)
            assert key in r.err, r
        git(repo.root, "config", *undo)
        assert repo("verify", "--since", base).code == 1


@needs_keygen
@pytest.mark.parametrize("how", ["deleted", "a folder"])
def test_a_committed_list_missing_from_the_work_tree_keeps_signing_on(repo, how):
    """Hostile pass 27y: an agent deleting the work tree's allowed_signers (HEAD still holding it) turned
    signing off — the person's next decision went unsigned and, once committed, failed verify for good."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "a lesson")
    listed = repo.root / ".priors" / "allowed_signers"
    listed.unlink()
    if how == "a folder":
        listed.mkdir()
    before = repo.ledger_bytes()
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "obsolete", "--because", "no")
    assert "so signing stays on, but .priors/allowed_signers is not in the work tree" in body["hint"], body
    assert "git checkout HEAD -- .priors/allowed_signers" in body["hint"], body
    assert repo.ledger_bytes() == before
    d = repo("doctor")
    assert d.code == 1 and ("signing stays on" in d.out if how == "deleted"
                            else "allowed_signers cannot be read" in d.out), d.out
    assert "Traceback" not in repo("verify").out
    if how == "a folder":
        listed.rmdir()
    git(repo.root, "checkout", "HEAD", "--", ".priors/allowed_signers")
    repo.ok("decide", "P-0001", "obsolete", "--because", "no")
    assert repo("verify", "--since", base).code == 0


@needs_keygen
@pytest.mark.parametrize("how", ["core.bare", "core.worktree", "unborn HEAD", "orphan HEAD"])
def test_git_unable_to_show_the_committed_list_keeps_signing_on(repo, tmp_path, how):
    """Hostile pass 27aa: with the list deleted, an agent's line in .git/config (or HEAD pointed elsewhere)
    left git unable to show the committed list, and the person's next decision went unsigned. When git cannot
    say, a ledger holding a person's signed lines keeps signing on."""
    turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "a lesson")
    (repo.root / ".priors" / "allowed_signers").unlink()
    if how == "core.bare":
        git(repo.root, "config", "core.bare", "true")
    elif how == "core.worktree":
        git(repo.root, "config", "core.worktree", str(tmp_path / "elsewhere"))
    elif how == "unborn HEAD":
        git(repo.root, "symbolic-ref", "HEAD", "refs/heads/elsewhere")
    else:
        tree = subprocess.run(["git", "mktree"], cwd=str(repo.root), input=b"", capture_output=True, check=True)
        orphan = git(repo.root, "commit-tree", tree.stdout.decode().strip(), "-m", "x")
        (repo.root / ".git" / "HEAD").write_text(orphan + "\n")
    before = repo.ledger_bytes()
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "obsolete", "--because", "no")
    assert "the ledger holds a person's signed lines, so signing stays on" in body["hint"], body
    assert repo.ledger_bytes() == before


@needs_keygen
@pytest.mark.parametrize("how", ["a commit removing it", "a nested repository"])
def test_signing_once_on_stays_on_whatever_git_shows(repo, how):
    """Hostile pass 27ab: an agent's commit removing the list (or, for a .priors in a subfolder, a repository
    nested there) made git show "no list" where the ledger holds a person's signed lines: the person's next
    line went unsigned and failed `verify --since` for good."""
    base = turn_signing_on(repo)
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    commit(repo, "a lesson")
    if how == "a commit removing it":
        git(repo.root, "rm", "-q", ".priors/allowed_signers")
        commit(repo, "tidy")
    else:  # (a git repository of its own where the keeper asks: here, the target root itself)
        (repo.root / ".priors" / "allowed_signers").unlink()
        os.rename(str(repo.root / ".git"), str(repo.root / "outer.git"))
        git(repo.root, "init", "-q")
        git(repo.root, "add", ".priors/ledger.jsonl")
        git(repo.root, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "nested")
    before = repo.ledger_bytes()
    body = repo.refused("SIGNING_FAILED", "decide", "P-0001", "obsolete", "--because", "no")
    assert "so signing stays on" in body["hint"] and "or from the last commit that holds it" in body["hint"], body
    assert repo.ledger_bytes() == before
    if how == "a commit removing it":
        git(repo.root, "checkout", base, "--", ".priors/allowed_signers")
        repo.ok("decide", "P-0001", "obsolete", "--because", "no")
        assert repo("verify", "--since", base).code == 0


def test_an_agent_s_field_holding_a_signature_s_mark_does_not_turn_signing_on(keeper):
    """Hostile pass 27ac: the signed-line check found the mark in an agent's `evidence` and refused every
    person's verb in a repository that never signed."""
    keeper.ok("init")
    run = keeper.open_run("web", {"a.py": "0" * 12})["run"]
    cand = {"type": "conclusion", "claim": "a is magic", "scope_ref": "a.py",
            "evidence": {"sig": "U1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAg"}}
    assert keeper.propose(run, "web", cand).code == 0
    keeper.ok("commit", "--run", run)
    assert '"sig":"U1NIU0lH' in keeper.ledger_bytes().decode()
    keeper.ok("decide", "P-0001", "wontfix", "--because", "by design")  # not refused: nothing was signed


@needs_keygen
def test_a_list_committed_before_the_first_signed_line_holds_while_head_is_unborn(repo):
    """Hostile pass 27ac: with nothing signed yet, an agent deleting the list and pointing HEAD at an unborn
    branch turned signing off; a list any ref's history holds counts."""
    turn_signing_on(repo)
    (repo.root / ".priors" / "allowed_signers").unlink()
    git(repo.root, "symbolic-ref", "HEAD", "refs/heads/elsewhere")
    before = repo.ledger_bytes()
    body = repo.refused("SIGNING_FAILED", "add", "--ns", "web", "Prefer small functions.")
    assert "the work tree's copy is missing or not a file" in body["hint"], body
    assert repo.ledger_bytes() == before


def test_a_signature_no_list_can_check_is_never_called_signed_by(repo):
    """Hostile pass 27ad: with no allowed_signers anywhere, `verify --since` listed a typed-in line as "signed
    by alice@example.com" — a signature nothing checked."""
    repo.ok("add", "--ns", "web", "Prefer small functions.")
    base = commit(repo, "base")
    append(repo, {"action": "decide", "by": "human", "id": "P-0001", "nonce": "0" * 16, "reason": "x",
                  "sig": "U1NIU0lHAAAAAQ", "signer": ALICE, "t": "event", "to": "obsolete"})
    out = repo("verify", "--since", base).out
    assert f"decide P-0001 obsolete — says it is signed by {ALICE}, not checked" in out, out
    assert f"— signed by {ALICE}" not in out, out


@needs_keygen
def test_a_list_whose_removal_was_committed_does_not_hold_on_an_unborn_head(repo):
    """Hostile pass 27ad: a list committed and then removed the documented way still locked a person out
    once HEAD was unborn (`ever_committed` counted the removal)."""
    turn_signing_on(repo)
    git(repo.root, "rm", "-q", ".priors/allowed_signers")
    commit(repo, "signing off, on purpose")
    git(repo.root, "checkout", "-q", "--orphan", "fresh-start")
    repo.ok("add", "--ns", "web", "Prefer small functions.")


def test_whether_a_person_signed_a_line_is_read_past_a_line_longer_than_any_buffer(tmp_path):
    """`ledger_signed` reads a block of whole lines at a time; a line longer than LONG_LINE is not held
    (hostile pass 32b: a 400 MB line grew the buffer to ~1 GB): the ledger is searched mapped instead,
    and a person's signed line after it — or in the first block, or straddling one — is still found."""
    from priors.store import signing

    signed = dumps({"by": "human", "sig": "U1NIU0lHAAAAAQAAxyz", "t": "disposition"}).encode()
    decoy = dumps({"by": "agent", "note": '"sig":"U1NIU0lH', "t": "disposition"}).encode()
    ledger = tmp_path / ".priors" / "ledger.jsonl"
    ledger.parent.mkdir()
    long_line = b'{"t":"prior","claim":"' + b"x" * (signing.LONG_LINE + 5) + b'"}'
    cases = {
        (long_line, decoy): False,
        (long_line, signed): True,
        (decoy, long_line, signed): True,
        (b"y" * ((1 << 20) - len(signed) // 2), signed, decoy): True,  # straddling the first block's end
        (decoy, long_line): False,
    }
    for lines, want in cases.items():
        ledger.write_bytes(b"\n".join(lines))  # (the last line without its line feed)
        assert signing.ledger_signed(tmp_path) is want, [len(x) for x in lines]


def test_a_huge_line_is_not_held_while_looking_for_a_persons_signed_line(tmp_path, monkeypatch):
    import tracemalloc

    from priors.store import signing

    monkeypatch.setattr(signing, "LONG_LINE", 1 << 20)
    ledger = tmp_path / ".priors" / "ledger.jsonl"
    ledger.parent.mkdir()
    ledger.write_bytes(b"x" * (40 << 20))  # 40 MB, no line feed: the buffer would double to 64 MB
    tracemalloc.start()
    try:
        assert signing.ledger_signed(tmp_path) is False
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, peak


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs and O_NOFOLLOW are POSIX")
def test_looking_for_a_persons_signed_line_neither_follows_a_link_nor_waits_on_a_fifo(tmp_path):
    """`ledger_signed` opens the ledger as every reader of it does (hostile pass 32b, a side note): a symlink in
    its place is not followed (the ledger it points to is not this repository's), and a FIFO there does not
    block a person's verb waiting for a writer — neither is a regular ledger, so neither holds a signed line."""
    from priors.store import signing

    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(dumps({"by": "human", "sig": "U1NIU0lHAAAAAQAAxyz", "t": "disposition"}).encode() + b"\n")
    ledger = tmp_path / ".priors" / "ledger.jsonl"
    ledger.parent.mkdir()
    ledger.symlink_to(elsewhere)
    assert signing.ledger_signed(tmp_path) is False
    ledger.unlink()
    os.mkfifo(ledger)
    assert signing.ledger_signed(tmp_path) is False  # (a blocking open would never return here)


def test_a_persons_signed_line_is_found_however_its_json_is_spelled(tmp_path):
    """Hostile pass 32c: a person's signed line re-spelled by hand (an escape for a letter, a space after a
    colon) was not found, so the person's next verb wrote an unsigned line where signing was to stay on.
    A line is judged as JSON reads it; an agent's line with an escape or the mark in a field of its own is
    still not a person's signed line."""
    from priors.store import signing

    ledger = tmp_path / ".priors" / "ledger.jsonl"
    ledger.parent.mkdir()
    plain = dumps({"t": "prior", "id": "P-0001", "claim": "x"})
    for line, want in {
        '{"by":"human","sig":"\\u00551NIU0lHAAAAAQAAxyz","t":"event"}': True,
        '{"by": "human", "sig": "U1NIU0lHAAAAAQAAxyz", "t": "event"}': True,
        '{"by":"h\\u0075man","sig":"U1NIU0lHAAAAAQAAxyz","t":"event"}': True,
        '{"\\u0062y":"human","s\\u0069g":"U1NIU0lHAAAAAQAAxyz","t":"event"}': True,
        '{"by":"agent","sig":"\\u00551NIU0lHAAAAAQAAxyz","t":"event"}': False,
        '{"by":"human","note":"U1NIU0lHAAAAAQAA","t":"event","claim":"a \\u0007 bell \\"q\\" \\\\"}': False,
        '{"by":"human","sig":"U1NIU0lHAAAAAQAA\\u0000","t":"event"': False,  # (not JSON: not a line anyone signed)
        '{"by":"human","sig":"U1NIU0lHxyz","t":"event"}': False,  # (no OpenSSH signature begins so)
        '{"claim":"\\\\\\"","t":"prior"}\n{"by":"human","sig":"U1NIU0lHAAAAAQAAx","t":"event"}': True,
    }.items():
        ledger.write_text(plain + "\n" + line + "\n" + plain + "\n", encoding="utf-8")
        assert signing.ledger_signed(tmp_path) is want, line
