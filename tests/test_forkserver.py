"""The suite's fork server (tests/forkserver.py) answers as a fresh `python -m priors` would.

Most CLI calls in the suite are forked from a server with priors imported rather than started as a
new interpreter (tests/conftest.py's run_priors). That is only sound while the two cannot be told
apart: the same exit code, the same bytes on stdout and stderr, the same ledger — for help, usage
errors, refusals, writes, input on a pipe, non-ASCII and control characters.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import Keeper, run_priors

pytestmark = [pytest.mark.one_cache_mode,
              pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork server needs os.fork (POSIX)")]


def both(root: Path, *args: str, stdin=None):
    """The call forked, then in a fresh interpreter from the same tree at the same path: (exit, out, err,
    ledger) each. The tree is left as the fresh interpreter left it."""
    import shutil

    before = root.parent / "before"
    shutil.rmtree(before, ignore_errors=True)
    shutil.copytree(root, before, symlinks=True)
    forked = run_priors(root, *args, stdin=stdin)
    forked_ledger = Keeper(root).ledger_bytes()
    shutil.rmtree(root)
    before.rename(root)
    fresh = run_priors(root, *args, stdin=stdin, fresh_process=True)
    return [(forked.code, forked.out, forked.err, forked_ledger),
            (fresh.code, fresh.out, fresh.err, Keeper(root).ledger_bytes())]


def test_a_forked_call_is_indistinguishable_from_a_fresh_interpreter(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    k = Keeper(root)
    k.write("a.py", "x = 1\n")
    k.scopes({"a.py": "a" * 12})
    k.candidate({"type": "conclusion", "claim": "naïve — «quoted» total", "scope_ref": "a.py", "severity": "major"})
    k.candidate({"type": "conclusion", "claim": "hidden \u202e reversal", "scope_ref": "a.py"}, "bidi.json")
    calls = [
        (("--help",), None), (("help", "propose"), None), (("--version",), None),
        (("status",), None),  # no .priors/ yet
        (("init",), None), (("init",), None), (("frobnicate",), None), ((), None),
        (("relevant", "--ns", "web", "--scopes", "scopes.json"), None),
        (("propose", "-", "--run", "run-001", "--ns", "web"), '{"type": "conclusion", "claim": "é'),  # torn JSON
        (("propose", "cand.json", "--run", "run-001", "--ns", "web"), None),
        (("propose", "cand.json", "--run", "run-001", "--ns", "web"), None),  # a duplicate
        (("propose", "bidi.json", "--run", "run-001", "--ns", "web"), None),  # a control character: refused
        (("commit", "--run", "run-001"), None),
        (("decide", "P-0001", "accepted", "--because", "agreed \u00a0 «here»"), None),
        (("decide", "P-0009", "accepted", "--because", "no such prior"), None),
        (("hash", "--stdin-raw"), "line one\r\nline two\rthree é\n"),
        (("relevant", "--ns", "web", "--scopes", "-"), "[" * 100000),
        (("status", "--calls"), None), (("show", "P-0001"), None),
    ]
    codes = set()
    for args, stdin in calls:
        forked, fresh = both(root, *args, stdin=stdin)
        assert forked == fresh, (args, forked, fresh)
        codes.add(forked[0])
    assert codes == {0, 1, 2}  # successes, refusals and usage errors were all compared
    assert "naïve".encode("utf-8") in Keeper(root).ledger_bytes()  # the write itself was compared too
