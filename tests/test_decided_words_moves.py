"""Hostile pass 27c: a person's decision held by its words (a lesson, a floor — `Replay.decided_words`)
is still found where the door finds it: on the code in the checkout when a change's line states a
made-up hash for its scope (core/on_the_code.py). (At the ref a `moved` event carried it to:
tests/test_verify_replay.py.)"""

from __future__ import annotations

import json
import subprocess

import ledgerkit as k
from priors.core.canonical import dumps

LESSON = {"scope": "content-hash", "activation": "run-start", "obligation": "inject-as-instruction",
          "authority": "advisory", "lifecycle": "stale-on-scope-change"}


def _git(root, *args):
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_a_made_up_hash_for_a_person_s_lesson_scope_is_judged_on_the_code(keeper) -> None:
    """A lesson on code (content-hash scope) a person decided: the door hashes its scope from disk
    (`settled_from_disk`), so its words in another namespace under a made-up hash are refused. The
    replay judged a change's line on the code only around decided findings: verify passed."""
    root = keeper.root
    keeper.write("src/a.py", "RATE = 0.2\n\n\ndef total(x):\n    return x * RATE\n")
    _git(root, "init", "-q")
    for key, v in (("user.name", "A"), ("user.email", "a@example.com"), ("commit.gpgsign", "false")):
        _git(root, "config", key, v)
    keeper.ok("relevant", "--ns", "api", "--snapshot")
    keeper.ok("propose", keeper.candidate({"type": "procedure", "claim": "the total skips the tax",
                                           "scope_ref": "src/a.py#total", "facets": LESSON}), "--run", "run-001",
              "--ns", "api")
    keeper.ok("commit", "--run", "run-001")
    keeper.ok("decide", "P-0001", "wontfix", "--because", "policy")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    base = _git(root, "rev-parse", "HEAD")
    forged = k.prior("P-0002", "run-002", "the total skips the tax", ref="src/a.py#total", scope_hash="deadbeef0000",
                     severity="major")
    ledger = root / ".priors/ledger.jsonl"
    n = keeper.ledger_bytes().count(b"\n")
    ledger.write_bytes(keeper.ledger_bytes() + (dumps(forged) + "\n" + dumps(dict(k.commit("run-002"), door=3))
                                                + "\n").encode())
    keeper.ok("render")
    for args in (("verify", "--since", base, "--json"), ("verify", "--json")):
        r = keeper(*args)
        got = [(p["line"], p["code"]) for p in json.loads(r.out)["problems"]]
        assert r.code == 1 and got == [(n + 1, "RERAISE")], (args, r)
        assert "the ledger says deadbeef0000, the code is " in json.loads(r.out)["problems"][0]["message"]
