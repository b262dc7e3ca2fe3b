"""`verify` at 100k priors within 120 MB (docs/reliability.md, "Every verb at 100k, measured"): what it holds
less of gives the same answers. A prior the replay packs (core/replay_kept.py) reads as the record it kept; a
ledger read a block at a time gives the person's lines its bytes whole give (core/signing.py); the comparison
with a git revision read beside the working file (store/ledger_base.py) says what `check_since` and
`change_start` say of the two whole; and verify in a git work tree answers alike whether a change that only
added lines is read a block at a time or — as a rewrite is — whole. Each well under a second."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any, Dict, List

from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Keeper
from priors.core.canonical import dumps, split_lines
from priors.core.fold import new_prior
from priors.core.ledger_growth import check_since
from priors.core.replay_kept import KEEP_ORDER, Kept, Shapes, pack, stored, unpacked
from priors.core.signing import coverage, human_lines, numbered
from priors.ops import verify as verify_op
from priors.store import ledger_base
from priors.store.paths import Paths
from priors.store.signing import line_count

TEXT = st.text(alphabet=st.sampled_from("ab —é\ud800\U0001f600\\\"\n"), max_size=8)
VALUE = st.one_of(TEXT, st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=False),
                  st.lists(TEXT, max_size=2), st.dictionaries(TEXT, TEXT, max_size=2))
FIXED = st.sampled_from(["prior", "conclusion", "gate", "minor", "deep"])


# A prior's record as the replay keeps it (`stored`): any of the kept keys, any JSON value — the few-valued fields
# mostly one of a handful of words, the facets mostly a dict, the id a string (a state is only ever one's).
RECORDS = st.fixed_dictionaries({"id": st.text(alphabet="0123456789", min_size=4, max_size=5).map(lambda n: "P-" + n)},
                                optional={k: st.one_of(FIXED, VALUE) if k in ("t", "type", "severity", "depth") else
                                          st.one_of(st.dictionaries(st.sampled_from(["activation", "scope"]), TEXT), VALUE)
                                          if k == "facets" else VALUE for k in KEEP_ORDER if k != "id"}).map(stored)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(RECORDS, min_size=1, max_size=4))
def test_a_packed_prior_reads_as_the_record_it_kept(recs: List[Dict[str, Any]]) -> None:
    shapes, words = Shapes(), {}
    for rec in recs:
        want = dict(rec)
        kept = new_prior(rec["id"], dict(rec), "open", None)
        p = new_prior(rec["id"], rec, "open", None)
        packed = pack(p, rec, shapes, words)
        assert packed == (type(p[11]) is Kept)
        for field in ("claim", "ns", "scope_ref", "review_every"):
            assert getattr(p, field) == getattr(kept, field), field
        for name in ("activation", "scope"):
            assert p.facet(name) == kept.facet(name)
        got = p.record()
        assert got == want and list(got) == list(want)  # (key for key, in the same order)
        unpacked(p)
        assert p[5] == want and p[6] is None and p.claim == kept.claim


LINES = st.sampled_from([
    b'{"action":"decide","by":"human","id":"P-0001","t":"event","to":"keep"}',
    b'{"action":"commit","by":"human","run":"run-002","t":"run","via":"add"}',
    b'{"born":"run-002","claim":"a","id":"P-0002","t":"prior"}',
    b'{"born":"run-001","claim":"b\\u00e9","id":"P-0001","t":"prior"}',
    b'{"by":"human",', b"", b"not json", b'{"t":"event","by":"human","action":"redact","id":"P-0002"}',
])


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.lists(LINES, max_size=12), st.booleans(), st.lists(st.integers(1, 40), max_size=8))
def test_a_ledger_read_a_block_at_a_time_gives_the_person_s_lines_its_bytes_give(lines: List[bytes], final: bool,
                                                                               cuts: List[int]) -> None:
    data = b"\n".join(lines) + (b"\n" if final and lines else b"")
    pieces, at = [], 0
    for n in cuts:
        pieces.append(data[at:at + n])
        at += n
    pieces.append(data[at:])
    assert list(numbered(iter(pieces))) == list(enumerate(data.split(b"\n"), 1))
    whole, read = human_lines(data), human_lines(iter(pieces))
    assert [(h.no, h.rec) for h in read] == [(h.no, h.rec) for h in whole]
    assert coverage(iter(pieces), read) == coverage(data, whole)
    assert line_count(iter(pieces)) == len(split_lines(data))


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(LINES, max_size=6), st.lists(LINES, max_size=4), st.booleans(), st.integers(0, 3),
       st.lists(st.integers(1, 30), max_size=6))
def test_the_revision_read_beside_the_working_ledger_says_what_the_two_whole_say(
        old_lines: List[bytes], more: List[bytes], final: bool, edit: int, cuts: List[int]) -> None:
    old = b"\n".join(old_lines) + (b"\n" if final and old_lines else b"")
    new = old + b"".join(x + b"\n" for x in more)
    if edit == 1 and old:
        new = b"x" + new[1:]  # (a hand edit)
    elif edit == 2:
        new = new[:len(new) // 2]  # (lines taken away)
    blocks, at = [], 0
    for n in cuts:
        blocks.append(old[at:at + n])
        at += n
    blocks.append(old[at:])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ledger.jsonl"
        path.write_bytes(new)
        base = ledger_base.Base(tmp, "rev", "the ledger at rev")
        base.compare(iter([b for b in blocks if b]), path)
    assert (base.size, base.lines, base.work_size) == (len(old), len(split_lines(old)), len(new))
    assert base.grown == (new.startswith(old) and (not old or old.endswith(b"\n")))
    if base.grown:
        assert check_since(old, new) == []
        assert verify_op.change_start(new, old) == ((len(old), base.lines + 1) if len(old) < len(new) else None)


def _git(root: Path, *args: str) -> None:
    import subprocess

    subprocess.run(["git", *args], cwd=str(root), check=True, capture_output=True)


def _answers(keeper: Keeper, monkeypatch: Any, since: Any = None) -> List[Any]:
    """verify's answer read as it reads a change that only adds lines, and with both ledgers whole."""
    got, compare = [], ledger_base.Base.compare

    def forced(self: Any, blocks: Any, ledger: Path) -> None:
        compare(self, blocks, ledger)
        self.grown = False

    for whole in (False, True):
        monkeypatch.setattr(ledger_base.Base, "compare", forced if whole else compare)
        answer, notes = verify_op.verify(Paths(keeper.root), since, False)
        got.append((answer.code, answer.text, json.loads(dumps(answer.obj)), notes))
    monkeypatch.setattr(ledger_base.Base, "compare", compare)
    return got


def test_verify_answers_alike_whether_a_change_is_read_a_block_at_a_time_or_whole(keeper: Keeper, monkeypatch: Any,
                                                                                 tmp_path: Path) -> None:
    for key, value in {"HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "T",
                       "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "T",
                       "GIT_COMMITTER_EMAIL": "t@example.com"}.items():
        monkeypatch.setenv(key, value)
    _git(keeper.root, "init", "-q")
    keeper.write("a.py", "x = 1\n")
    keeper.open_run("review", {"a.py": keeper.hash("a.py")})
    keeper.ok("propose", keeper.candidate({"type": "conclusion", "claim": "x is magic — twice", "scope_ref": "a.py"}),
              "--run", "run-001", "--ns", "review")
    keeper.ok("commit", "--run", "run-001")
    _git(keeper.root, "add", "-A")
    _git(keeper.root, "commit", "-qm", "one run")
    normal, whole = _answers(keeper, monkeypatch)
    assert normal == whole and normal[0] == 0 and "grew only since the last commit (HEAD)" in normal[1]
    keeper.ok("decide", "P-0001", "keep", "--because", "ok")  # (a person's line the change adds)
    normal, whole = _answers(keeper, monkeypatch)
    assert normal == whole and normal[2]["human_lines"], normal
    normal, whole = _answers(keeper, monkeypatch, "HEAD")
    assert normal == whole and "grew only since HEAD" in normal[1]
    data = keeper.ledger_bytes()  # a committed line edited by hand: named, whichever way it is read
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(data.replace(b"x is magic", b"x is fine"))
    normal, whole = _answers(keeper, monkeypatch)
    assert normal == whole and normal[0] == 1 and "NOT_APPEND_ONLY" in normal[1]
