"""The fold cache never changes a result: exact or ignored, rebuilt after a rewrite, emptied by redact."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import shutil
from pathlib import Path
from typing import Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Keeper, gen_ledger, run_priors
from priors.cli.main import Context
from priors.core import canonical as canonical
from priors.core import controls, ledger_parse, record_text, selection
from priors.core import fold as fold
from priors.core.errors import DamagedLedger
from priors.core.grammar import aliased_refs, ref_alias
from priors.ops import opening
from priors.snapshot.hashing import indent_counts, indented_refs
from priors.store import background, ledger_digest
from priors.store import fold_cache as cache
from priors.store.ledger import load_ledger
from priors.store.paths import Paths

pytestmark = pytest.mark.one_cache_mode


@pytest.fixture(scope="module")
def ledger_bytes(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("gen")
    gen_ledger().generate(600, out, seed=3)
    return (out / ".priors" / "ledger.jsonl").read_bytes()


@pytest.fixture
def pdir(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("PRIORS_CACHE_MIN_BYTES", "0")
    monkeypatch.setenv("PRIORS_CACHE_REFRESH_BYTES", "0")
    monkeypatch.delenv("PRIORS_NO_CACHE", raising=False)
    d = tmp_path / ".priors"
    d.mkdir()
    return d


def _check(pdir: Path, data: bytes) -> bool:
    """Load through the cache and compare with a fresh fold, records included."""
    (pdir / "ledger.jsonl").write_bytes(data)
    got = cache.load(pdir, pdir / "ledger.jsonl", want_data=True)
    want = fold.fold(fold.parse_lines(data))
    assert got.data == data
    assert got.state == want
    for pid, p in want.priors.items():
        assert got.state.priors[pid].rec == p.rec
        assert got.state.priors[pid].ns == p.ns
        for f in ("scope", "activation", "obligation", "authority", "lifecycle"):
            assert got.state.priors[pid].facet(f) == p.facet(f)
    return got.from_cache


@pytest.mark.parametrize("rows", ["", "7"])
def test_appends_fold_only_the_tail_and_stay_exact(pdir: Path, ledger_bytes: bytes, monkeypatch, rows) -> None:
    monkeypatch.setenv("PRIORS_CACHE_ROWS", rows)  # 7: many row chunks, most of them copied on each rewrite
    lines = ledger_bytes.splitlines(keepends=True)
    rng = random.Random(5)
    cuts = sorted(rng.sample(range(1, len(lines)), 12)) + [len(lines)]
    hits = [_check(pdir, b"".join(lines[:n])) for n in cuts]
    assert hits[0] is False and all(hits[1:])  # first builds, then every append is incremental


def test_short_tails_are_folded_without_rewriting_the_snapshot(pdir: Path, ledger_bytes: bytes, monkeypatch) -> None:
    monkeypatch.setenv("PRIORS_CACHE_REFRESH_BYTES", "20000")
    lines = ledger_bytes.splitlines(keepends=True)
    f = pdir / "cache" / cache.CACHE_FILE
    _check(pdir, b"".join(lines[:300]))
    built = f.read_bytes()
    for n in (301, 320, 340):  # a few small appends: the snapshot stays, the tail is folded each time
        assert _check(pdir, b"".join(lines[:n])) is True
        assert f.read_bytes() == built
    n = 340
    while len(b"".join(lines[300:n])) < 20000:
        n += 1
    assert _check(pdir, b"".join(lines[:n])) is True  # a tail past the threshold refreshes it
    assert f.read_bytes() != built
    assert _check(pdir, b"".join(lines[:n + 5])) is True


def test_a_refresh_after_a_tail_touching_old_priors_loads_exactly(pdir: Path, ledger_bytes: bytes, monkeypatch) -> None:
    """A tail that touches old priors, adds new ones and re-asserts one: the refreshed snapshot is exact."""
    monkeypatch.setenv("PRIORS_CACHE_ROWS", "16")
    lines = ledger_bytes.splitlines(keepends=True)
    head = b"".join(lines[:-200])
    _check(pdir, head)
    f = pdir / "cache" / cache.CACHE_FILE
    before = f.read_bytes()
    again = next(x for x in lines[:50] if x.startswith(b'{"born"') and b'"redacted"' not in x)
    tail = b"".join(lines[-200:]) + again.replace(b'"claim":"', b'"claim":"asserted again: ')
    assert _check(pdir, head + tail) is True
    assert f.read_bytes() != before  # refreshed
    assert _check(pdir, head + tail + lines[0]) is True  # and the refreshed snapshot loads exactly


def test_rewrite_or_truncation_rebuilds(pdir: Path, ledger_bytes: bytes) -> None:
    lines = ledger_bytes.splitlines(keepends=True)
    _check(pdir, ledger_bytes)
    assert _check(pdir, b"".join(lines[:-40])) is False          # shorter: not a prefix
    _check(pdir, ledger_bytes)
    edited = ledger_bytes.replace(b'"to":"fixed"', b'"to":"stale"', 1)
    assert len(edited) == len(ledger_bytes)
    assert _check(pdir, edited) is False                          # same length, other bytes
    swapped = b"".join([lines[1], lines[0]] + lines[2:])
    assert _check(pdir, swapped) is False


def test_records_are_read_from_the_ledger_file_that_was_loaded(pdir: Path, ledger_bytes: bytes) -> None:
    """The snapshot holds where each record's line is, not the record: a ledger replaced after the
    load (an append or a redact renames a new file into place) cannot change what was loaded."""
    _check(pdir, ledger_bytes)
    got = cache.load(pdir, pdir / "ledger.jsonl")
    assert got.from_cache
    other = pdir / "other.jsonl"
    other.write_bytes(b'{"t":"prior","id":"P-0001"}\n' * 3)
    os.replace(str(other), str(pdir / "ledger.jsonl"))
    want = fold.fold(fold.parse_lines(ledger_bytes))
    for pid, p in want.priors.items():
        assert got.state.priors[pid].rec == p.rec


def test_a_record_read_back_is_the_line_parsed_whole_or_a_changed_ledger_named() -> None:
    """`LedgerSource.inflate` calls the C scanner itself (a third of a record's parse was `decode`'s own
    steps around it); a line that is not one object alone goes through the full parse, which accepts
    what it accepted before (space around the object) and refuses the rest as a ledger changed in place."""
    rec = {"claim": "ünï \\ \"q\"", "id": "P-0001", "n": [1, 2.5, None], "t": "prior"}
    line = canonical.dumps(rec).encode("utf-8")
    cases = {line: rec, b"  " + line + b" \t": rec, b"\n" + line: rec}
    bad = [line + b"{}", line[:-1], b"[" + line + b"]", line.replace(b"2.5", b"NaN"), b"\xff" + line, b"",
           canonical.dumps({**rec, "id": "P-0002"}).encode("utf-8"), canonical.dumps({**rec, "t": "event"}).encode("utf-8")]
    for raw, want in [*cases.items(), *((b, None) for b in bad)]:
        src = cache.LedgerSource(data=b"x" + raw + b"\n")
        p = fold.PriorState(("P-0001", "open", None, 0, -1, None, (1, len(raw)), None, None, None, None, src))
        if want is None:
            with pytest.raises(DamagedLedger, match="changed in place"):
                src.inflate(p)
        else:
            assert src.inflate(p) == want and p.rec == want


def test_a_ledger_changed_in_place_under_a_reader_is_named_not_misread(pdir: Path, ledger_bytes: bytes) -> None:
    """Overwritten in place (same file) after the load: reading a record then refuses, clearly."""
    _check(pdir, ledger_bytes)
    got = cache.load(pdir, pdir / "ledger.jsonl")
    with open(str(pdir / "ledger.jsonl"), "r+b") as fh:
        fh.write(b"x" * len(ledger_bytes))
    with pytest.raises(DamagedLedger, match="changed in place"):
        [p.rec for p in got.state.priors.values()]


def test_the_snapshot_holds_no_record_text(pdir: Path, ledger_bytes: bytes) -> None:
    """Claims stay in the ledger: fold.bin points at their lines (so a redact has nothing to scrub there)."""
    import json

    _check(pdir, ledger_bytes)
    snap = (pdir / "cache" / cache.CACHE_FILE).read_bytes()
    claims = [json.loads(x)["claim"] for x in ledger_bytes.splitlines() if b'"claim":"' in x and b'"t":"prior"' in x]
    assert claims and not any(c.encode("utf-8") in snap for c in claims)


@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage", "extra"])
def test_damaged_cache_is_ignored(pdir: Path, ledger_bytes: bytes, damage: str) -> None:
    _check(pdir, ledger_bytes)
    f = pdir / "cache" / cache.CACHE_FILE
    raw = bytearray(f.read_bytes())
    if damage == "flip":
        raw[200] ^= 0xFF  # in the CRC-checked chunks
    elif damage == "truncate":
        raw = raw[: len(raw) // 3]
    elif damage == "empty":
        raw = bytearray()
    elif damage == "garbage":
        raw = bytearray(os.urandom(len(raw)))
    else:
        raw += b"x"
    f.write_bytes(bytes(raw))
    assert _check(pdir, ledger_bytes) is False


def test_cache_from_other_code_is_ignored(pdir: Path, ledger_bytes: bytes, monkeypatch) -> None:
    _check(pdir, ledger_bytes)
    monkeypatch.setattr(cache, "_SIG", b"\0" * 32)
    assert _check(pdir, ledger_bytes) is False


def test_damage_in_the_tail_is_named_with_its_true_line(pdir: Path, ledger_bytes: bytes) -> None:
    lines = ledger_bytes.splitlines(keepends=True)
    _check(pdir, b"".join(lines[:100]))
    bad = b"".join(lines[:100]) + lines[100] + b"<<<<<<< HEAD\n" + lines[101]
    (pdir / "ledger.jsonl").write_bytes(bad)
    with pytest.raises(DamagedLedger) as with_cache:
        cache.load(pdir, pdir / "ledger.jsonl")
    with pytest.raises(DamagedLedger) as without:
        fold.parse_lines(bad)
    assert str(with_cache.value) == str(without.value)
    assert "line 102" in str(with_cache.value)


def test_disabled_by_env(pdir: Path, ledger_bytes: bytes, monkeypatch) -> None:
    monkeypatch.setenv("PRIORS_NO_CACHE", "1")
    assert _check(pdir, ledger_bytes) is False
    assert not (pdir / "cache").exists()


def test_unwritable_cache_is_silent(pdir: Path, ledger_bytes: bytes) -> None:
    (pdir / "cache").write_text("not a directory")
    assert _check(pdir, ledger_bytes) is False
    assert _check(pdir, ledger_bytes) is False
    (pdir / "cache").unlink()
    outside = pdir.parent / "elsewhere"
    outside.mkdir()
    (pdir / "cache").symlink_to(outside)
    assert _check(pdir, ledger_bytes) is False
    assert list(outside.iterdir()) == []  # never writes through a symlink


def test_small_ledgers_skip_the_cache(pdir: Path, monkeypatch) -> None:
    monkeypatch.delenv("PRIORS_CACHE_MIN_BYTES")
    (pdir / "ledger.jsonl").write_bytes(b'{"t":"x"}\n')
    assert cache.load(pdir, pdir / "ledger.jsonl").from_cache is False
    assert not (pdir / "cache").exists()


def _clean(data: bytes):
    out: list = []
    return out if ledger_parse.each_clean(data, lambda rec, at, n: out.append((rec, at, n))) else None


def test_fast_parse_agrees_with_strict(ledger_bytes: bytes, monkeypatch) -> None:
    strict = ledger_parse.parse_strict(ledger_bytes, "x")
    assert _clean(ledger_bytes) == strict
    monkeypatch.setattr(ledger_parse, "BLOCK", 333)  # many blocks, each ending at a line's end
    assert _clean(ledger_bytes) == strict
    assert all(fold.parse_lines(ledger_bytes[at:at + n]) == [rec] for rec, at, n in strict[:200])
    for bad in (b'{"a":\n1}\n', b'{"a":1}\n\n', b'{"a":1} \n', b'[1]\n', b'{"a":1}', b"\xef\xbb\xbf{}\n",
                b'{"a":1}{"b":2}\n', b'{"a":NaN}\n', b'{"a":1}\r\n', '{"a":"\u00e9"}\n{"b":1} \n'.encode()):
        assert _clean(bad) is None


# ------------------------------------------------------------------ through the CLI


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(str(src), str(dst))


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tree")
    gen_ledger().generate(800, out, seed=11)
    return out


def _ritual(root: Path, env) -> list:
    """status, relevant, every disposition, proposals, commit, decide, status: all outputs and the ledger."""
    import json

    k = Keeper(root)
    outs = []
    for args in (["status", "--calls"], ["relevant", "--ns", "web", "--scopes", "bench-scopes.json"]):
        r = k(*args, env=env)
        outs.append((r.code, r.out, r.err))
    rel = json.loads(outs[-1][1])
    run = rel["run"]
    pairs = [[item["id"], "fixed" if item["scopeState"] == "unchanged" else "stale"]
             for item in rel["verify"] if item["scopeState"] != "missing"]
    for pid, verdict in pairs[:4]:  # one call each: every call loads the cache with a new tail
        r = k("disposition", pid, verdict, "--run", run, env=env)
        outs.append((r.code, r.out))
    r = k("disposition", "--run", run, *[w for pair in pairs[4:] for w in pair], env=env)  # the rest at once
    outs.append((r.code, r.out))
    cands = sorted(str(p.relative_to(root)) for p in (root / "bench-cands").iterdir())
    r = k("propose", *cands[:5], "--run", run, "--ns", "web", env=env)
    outs.append((r.code, r.out))
    for c in cands[5:8]:
        r = k("propose", c, "--run", run, "--ns", "web", env=env)
        outs.append((r.code, r.out))
    r = k("commit", "--run", run, env=env)
    outs.append((r.code, r.out))
    r = k("decide", rel["verify"][0]["id"] if rel["verify"] else "P-0001", "wontfix", "--because", "bench", env=env)
    outs.append((r.code, r.out))
    r = k("redact", "P-0002", "--because", "secret", env=env)
    outs.append((r.code, r.out))
    r = k("status", "--calls", env=env)
    outs.append((r.code, r.out))
    outs.append((root / ".priors" / "ledger.jsonl").read_bytes())
    outs.append((root / ".priors" / "PRIORS.md").read_bytes())
    return outs


def test_cli_results_identical_with_and_without_cache(generated: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _copy_tree(generated, a)
    _copy_tree(generated, b)
    with_cache = _ritual(a, {"PRIORS_CACHE_MIN_BYTES": "0", "PRIORS_NO_CACHE": "", "PRIORS_CACHE_ROWS": "9"})
    without = _ritual(b, {"PRIORS_NO_CACHE": "1"})
    assert with_cache == without
    assert not (b / ".priors" / "cache").exists()


@pytest.mark.parametrize("where", ["first", "middle", "in the tail", "unique facets"])
def test_redact_leaves_nothing_in_the_cache(generated: Path, tmp_path: Path, where: str, monkeypatch) -> None:
    """redact writes the snapshot of the redacted ledger (every line offset carried over): the
    result is exact, and neither the old record, nor its facets when no other prior has them, stay behind."""
    import json

    root = tmp_path / "r"
    _copy_tree(generated, root)
    ledger = root / ".priors" / "ledger.jsonl"
    env = {"PRIORS_CACHE_MIN_BYTES": "0", "PRIORS_CACHE_ROWS": "5"}
    lines = ledger.read_bytes().splitlines(keepends=True)
    live = [json.loads(x) for x in lines if b'"t":"prior"' in x and b'"redacted"' not in x]
    victim = live[0] if where == "first" else live[len(live) // 2]
    secret = victim["claim"]
    if where == "unique facets":
        victim = dict(victim, facets=dict(victim["facets"], scope="only-here-xyzzy"))
        secret = "only-here-xyzzy"
        lines = [json.dumps(victim, sort_keys=True, separators=(",", ":")).encode() + b"\n" if
                 json.loads(x).get("id") == victim["id"] and json.loads(x).get("t") == "prior" else x for x in lines]
        ledger.write_bytes(b"".join(lines))
    assert run_priors(root, "status", env=env).code == 0
    assert (root / ".priors" / "cache" / cache.CACHE_FILE).exists()
    if where == "in the tail":  # asserted again after the snapshot was written: two versions to scrub
        again = dict(victim, claim=victim["claim"] + " — and again")
        with open(str(ledger), "ab") as fh:
            fh.write(json.dumps(again, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    from priors.cli.main import main

    assert main(["-C", str(root), "redact", victim["id"], "--because", "leak"]) == 0
    for dirpath, _dirs, files in os.walk(str(root / ".priors")):
        for name in files:
            assert secret.encode("utf-8") not in Path(dirpath, name).read_bytes(), name
    cached = run_priors(root, "status", "--calls", env=env)
    assert cached.out == run_priors(root, "status", "--calls", env={"PRIORS_NO_CACHE": "1"}).out
    pdir = root / ".priors"
    got = cache.load(pdir, pdir / "ledger.jsonl")
    assert got.from_cache
    want = fold.fold(fold.parse_lines(ledger.read_bytes()))
    assert got.state == want
    assert {k: p.rec for k, p in got.state.priors.items()} == {k: p.rec for k, p in want.priors.items()}


# ------------------------------------------------------------------ the other speed paths are exact too


_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(),
                  st.sampled_from(["\ud800", "\U0001f600", "\ue000", "…", "\u2028", "a\"b\\c\n"]))
_json = st.recursive(_leaf, lambda k: st.one_of(st.lists(k, max_size=5),
                                                st.dictionaries(st.one_of(st.text(), _leaf.filter(
                                                    lambda x: isinstance(x, str))), k, max_size=5)), max_leaves=30)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_json)
def test_canonical_fast_path_is_byte_identical(value) -> None:
    out: list = []
    canonical._encode(value, out)
    assert canonical.dumps(value) == "".join(out)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.one_of(st.dictionaries(st.text(), st.text(), max_size=8), st.dictionaries(
    st.sampled_from(["a", "b/c.py", "é", "\U0001f600", "\ue000", "\ud800", 'q"', "back\\", "\x7f", "\u00a0", "tab\t"]),
    st.one_of(st.text(max_size=3), st.sampled_from(['"', "\\", "\n", "\u2028", "…"]), _leaf), max_size=6)))
def test_a_flat_object_of_strings_is_written_canonically(value) -> None:
    """`canonical.flat_strings` (a snapshot's scopes): the general encoder's text, or None."""
    out: list = []
    canonical._encode(value, out)
    got = canonical.flat_strings(value)
    assert got is None or got == "".join(out)
    if value and all(type(k) is str and type(v) is str and (k + v).isalnum() and (k + v).isascii() for k, v in value.items()):
        assert got is not None  # (the common case is taken)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.dictionaries(st.text(max_size=6), _json, max_size=4), max_size=6), st.sampled_from(["", " ", "\n", "\r"]),
       st.sampled_from([1, 5, 40, 1 << 20]))
def test_clean_parse_matches_strict(records, sep, block) -> None:
    """The block-wise clean parse (ASCII blocks as one string, others line by line) gives the strict
    parse's records and byte offsets, or gives up; each offset's bytes are that record's line."""
    data = "".join(canonical.dumps(r) + sep + "\n" for r in records).encode("utf-8", "surrogatepass")
    saved = ledger_parse.BLOCK
    ledger_parse.BLOCK = block
    try:
        fast = _clean(data)
    finally:
        ledger_parse.BLOCK = saved
    try:
        strict = ledger_parse.parse_strict(data, "x")
    except DamagedLedger:
        assert fast is None
        return
    assert fast is None or fast == strict
    for rec, at, n in strict:
        assert canonical.loads(data[at:at + n].decode("utf-8")) == rec


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(st.text(), _json, max_size=8))
def test_object_from_encoded_values_is_canonical(value) -> None:
    """Each value encoded already — or, for a list, each of its items — and the object joined in UTF-8."""
    parts = {k: [canonical.dumps(x).encode("utf-8") for x in v] if isinstance(v, list) else canonical.dumps(v).encode("utf-8")
             for k, v in value.items()}
    assert canonical.dumps_object_utf8(parts, b"\n") == canonical.line(value).encode("utf-8")


def test_background_work_runs_again_in_the_caller_when_its_thread_fails(capfd) -> None:
    calls: list = []

    def flaky(x: int) -> int:
        calls.append(x)
        if len(calls) == 1:
            raise MemoryError("in the thread")
        return x * 2

    assert ledger_digest.Background(flaky, (21,), True).result() == 42
    assert calls == [21, 21]
    assert ledger_digest.Background(lambda: 7, (), True).result() == 7
    assert ledger_digest.Background(lambda: 8, (), False).result() == 8  # small: no thread at all
    assert capfd.readouterr().err == ""  # no thread traceback


# ------------------------------------------------------------------ a first call that only reads


@pytest.mark.parametrize("block", [97, 4096, 1 << 20])
@pytest.mark.parametrize("variant", ["clean", "non-ascii", "blank line", "crlf", "no final newline", "damaged", "empty"])
def test_a_first_read_only_call_folds_the_ledger_as_reading_it_whole_would(pdir: Path, ledger_bytes: bytes, monkeypatch,
                                                                          variant: str, block: int) -> None:
    """A verb that only reads folds the ledger a block at a time from one open file; any ledger ends
    as reading it whole would: the same state, records, length, digest and line count — or the same
    refusal naming the same line — and the snapshot it leaves serves the next call."""
    lines = ledger_bytes.splitlines(keepends=True)[:400]
    if variant == "non-ascii":
        lines.insert(7, b'{"born":"run-001","claim":"caf\xc3\xa9 \xe2\x80\x94 \\"x\\" \xf0\x9f\x98\x80","id":"P-9001",'
                        b'"ns":"w\xc3\xa9b","t":"prior","type":"conclusion"}\n')
    elif variant == "blank line":
        lines.insert(50, b"\n")
    elif variant == "crlf":
        lines[60] = lines[60].rstrip(b"\n") + b"\r\n"
    elif variant == "no final newline":
        lines[-1] = lines[-1].rstrip(b"\n")
    elif variant == "damaged":
        lines.insert(200, b'{"t":"event",\n')
    elif variant == "empty":  # as `priors init` leaves it: no snapshot describes it
        lines = []
    data = b"".join(lines)
    ledger = pdir / "ledger.jsonl"
    ledger.write_bytes(data)
    monkeypatch.setattr(ledger_parse, "BLOCK", block)
    try:
        want = fold.fold(fold.parse_lines(data))
    except DamagedLedger as exc:
        with pytest.raises(DamagedLedger) as got:
            cache.load(pdir, ledger, want_data=False)
        assert str(got.value) == str(exc)
        return
    got = cache.load(pdir, ledger, want_data=False)
    assert got.data is None and got.from_cache is False
    assert (got.length, got.digest, got.lines) == (len(data), hashlib.sha256(data).digest(), data.count(b"\n"))
    assert got.ends_with_newline is data.endswith(b"\n")
    assert (pdir / "cache" / cache.CACHE_FILE).exists() is data.endswith(b"\n")
    assert got.state == want
    assert {k: p.rec for k, p in got.state.priors.items()} == {k: p.rec for k, p in want.priors.items()}
    again = cache.load(pdir, ledger, want_data=False)
    assert again.from_cache is (variant in ("clean", "non-ascii", "blank line", "crlf")) and again.state == want


def test_a_ledger_rewritten_in_place_after_a_first_read_is_named_not_misread(pdir: Path, ledger_bytes: bytes) -> None:
    ledger = pdir / "ledger.jsonl"
    ledger.write_bytes(ledger_bytes)
    got = cache.load(pdir, ledger, want_data=False)
    pid = next(iter(got.state.priors))
    with open(ledger, "r+b") as fh:  # another program writes into the very file (not a rename)
        fh.write(b" " * len(ledger_bytes))
    with pytest.raises(DamagedLedger, match="changed in place"):
        _ = got.state.priors[pid].rec  # reading the record re-reads the changed file


# ------------------------------------------------------------------ relevant's answer, assembled from the ledger's bytes


_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "a\"b", "back\\slash", "line\nfeed", "tab\t", "\x1b[2J", "caf\u00e9 \u2014 \U0001f600", "\u2028", "\u202e",
     "\ue000", "%s %%", "/", "P-0001"])
_value = st.one_of(_text, st.none(), st.integers(-3, 3), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                   st.lists(_text, max_size=2), st.dictionaries(_text, _text, max_size=2))
_FIELDS = ("born", "claim", "content_hash", "depth", "direction", "evidence", "facets", "fingerprint", "id", "ns",
           "review_every", "rule", "scope_hash", "scope_ref", "severity", "supersedes", "t", "type", "other")


@st.composite
def _prior_line(draw):
    """A prior's record and a line spelling it: canonical, or with spaces, escapes, keys out of order,
    a key twice — the shapes another keeper or a hand edit may leave."""
    rec = {"id": draw(st.sampled_from(["P-0001", "P-0002", "P-\u00e9"])), "t": "prior"}
    for key in draw(st.lists(st.sampled_from(_FIELDS), max_size=9, unique=True)):
        if key == "facets":
            rec[key] = draw(st.dictionaries(st.sampled_from(["scope", "activation"]), _text, max_size=2))
        elif key == "review_every":
            rec[key] = draw(st.integers(0, 30))
        elif key not in ("id", "t"):
            rec[key] = draw(_text) if draw(st.booleans()) else draw(_value)
    how = draw(st.sampled_from(["canonical", "ascii", "spaced", "shuffled", "twice"]))
    if how == "canonical":
        line = canonical.dumps(rec)
    elif how == "ascii":  # every non-ASCII character an escape
        line = json.dumps(rec, sort_keys=True, separators=(",", ":"))
    elif how == "spaced":
        line = json.dumps(rec, sort_keys=True, ensure_ascii=False)
    elif how == "shuffled":
        keys = draw(st.permutations(list(rec)))
        line = "{" + ",".join(canonical.dumps(k) + ":" + canonical.dumps(rec[k]) for k in keys) + "}"
    else:  # the claim written twice: JSON keeps the last
        line = canonical.dumps(dict(rec, claim="first"))[:-1] + ',"claim":' + canonical.dumps(rec.get("claim")) + "}"
    return line, how


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(_prior_line(), st.sampled_from(["P-0001", "P-0002", "P-\u00e9"]))
def test_a_priors_fields_read_from_its_line_are_what_parsing_it_gives(drawn, want) -> None:
    """`line_texts` gives each field's canonical JSON exactly as parsing the line and encoding the value
    would — or None, and the caller parses; the plain canonical line, the common one, is read as text."""
    line, how = drawn
    raw = line.encode("utf-8", "surrogatepass")
    got = record_text.line_texts([raw], [want])[0]
    rec = json.loads(line)
    if got is not None:
        assert rec["id"] == want and rec["t"] == "prior"
        for key, text in zip(("claim", "depth", "id", "scope_ref", "severity"), got):
            assert text == (canonical.dumps(rec[key]).encode("utf-8") if key in rec else None)
            assert record_text.value_of(text) == rec.get(key)
    plain = (how in ("canonical", "shuffled") and rec["id"] == want and not set(rec) - set(_FIELDS) - {"other"}
             and "other" not in rec and all(type(v) is str for k, v in rec.items() if k not in ("facets", "review_every"))
             and all(type(v) is str for v in rec.get("facets", {}).values()))
    if plain and how == "canonical":
        assert got is not None  # the keepers' own shape: never parsed
    if how == "twice" and got is not None:
        assert got[0] == canonical.dumps(rec["claim"]).encode("utf-8")  # the last one, as the parser keeps


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(_value, st.none() | _text, _text, st.sampled_from(["changed", "unchanged", "missing", "moved"]), _value, _value,
       st.booleans(), st.none() | _value, st.booleans())
def test_a_verify_row_is_the_canonical_text_of_its_item(claim, current, pid, state, ref, sev, resting, moved_from,
                                                        changed) -> None:
    def text(v):
        return None if v is None else canonical.dumps(v).encode("utf-8")
    item = {"id": pid, "claim": claim, "scope_ref": ref, "severity": sev, "scopeState": state, "current_hash": current}
    if resting:
        item["resurrected"] = True
    if moved_from is not None:
        item["moved_from"] = moved_from
    if changed:
        item["changed"] = True
    item = {k: v for k, v in item.items() if v is not None or k == "claim"}
    row = record_text.verify_row(text(claim), text(current), text(pid), state.encode(), text(ref), text(sev), resting,
                                 text(moved_from), changed)
    assert row == canonical.dumps(item).encode("utf-8")


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.dictionaries(st.sampled_from(["id", "claim", "status", "depth", "scope_ref", "%d", "k\u00e9y"]),
                                _text | _value, max_size=4), max_size=6))
def test_rows_written_by_their_keys_template_are_canonical(rows) -> None:
    got = record_text.plain_rows(rows)
    if got is not None:
        assert "[" + ",".join(got) + "]" == canonical.dumps(rows)
    if rows and all(r and all(type(v) is str and "\\" not in json.dumps(v) and '"' not in v and k.isascii()
                              for k, v in r.items()) for r in rows):
        assert got is not None


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.text(alphabet="/.#a\n", max_size=8), max_size=12))
def test_refs_checked_together_find_what_each_alone_finds(refs) -> None:
    assert aliased_refs(refs) == sorted(r for r in refs if ref_alias(r) is not None)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.text(alphabet="/.#\\apPyYmMkKlLeEfFgGnNuUi\n", max_size=14), max_size=12))
def test_indented_refs_looked_for_together_are_those_found_alone(refs) -> None:
    assert indented_refs(refs) == {r for r in refs if indent_counts(r.split("#", 1)[0])}


_PIECES = (b"a", b" ", b"{", b"\x7f", b"\n", b"\x01", "\u2014".encode(), "\u00e9".encode(), "\u2028".encode(),
           "\u200b".encode(), "\u00a0".encode(), "\U0001f600".encode(), b"\xe2", b"\x80", b"\xff", b"\xc3")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES), max_size=24), st.integers(0, 2))
def test_a_text_is_printable_in_utf8_exactly_when_its_decoded_text_is(pieces, megabytes) -> None:
    """`record_text.printable_utf8` decodes only a text's runs of non-ASCII bytes (an ASCII byte is never
    part of a longer sequence) and looks at its ASCII for controls: the same answer as decoding it whole —
    and the same `DamagedLedger` where it is not UTF-8 —, a megabyte at a time. (A text all
    ASCII is only looked at for DEL: no control reaches it unescaped.)"""
    text = b"x" * ((1 << 20) * megabytes - 3 if megabytes else 0) + b"".join(pieces)
    try:
        expected: object = b"\x7f" not in text if text.isascii() else text.decode("utf-8").isprintable()
    except UnicodeDecodeError:
        expected = DamagedLedger
    try:
        got: object = record_text.printable_utf8(text)
    except DamagedLedger:
        got = DamagedLedger
    assert got == expected, text[-60:]


def test_every_character_shown_escaped_is_not_printable() -> None:
    """`visible` passes a printable text without its search: that holds only if no character it
    escapes is printable — checked for every code point."""
    assert not [c for c in range(0x110000) if controls._SHOWN.match(chr(c)) and chr(c).isprintable()]
    text = "caf\u00e9 \u2014 \U0001f600"
    assert controls.visible(text) is text


def test_an_answer_in_utf8_is_printed_as_its_text_would_be() -> None:
    for text in ('{"claim":"caf\u00e9 \u2014 \U0001f600"}', '{"claim":"\u202eevil \x7f"}'):
        printed = []
        for utf8 in (None, text.encode("utf-8")):
            raw = io.BytesIO()
            out = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
            ctx = Context(None, out=out)
            ctx.print("before")
            ctx.print(text, utf8)
            out.flush()
            printed.append(raw.getvalue())
        assert printed[0] == printed[1]
        assert printed[0].endswith(b"\n") and b"\xe2\x80\xae" not in printed[0]  # U+202E shown escaped either way


@pytest.mark.parametrize("mode", ["cache", "nocache"])
@pytest.mark.parametrize("open_heavy", [True, False])
def test_relevant_assembled_from_the_ledgers_bytes_is_what_parsed_records_give(tmp_path: Path, monkeypatch, mode: str,
                                                                              open_heavy: bool) -> None:
    """`relevant` on a ledger whose prior lines come in every spelling (escapes, spaces, keys out of
    order, a claim twice, values that are not strings, keys the line pattern does not know): the very
    bytes — answer and relevant.json — the parsed records give (the text path turned off), and
    every verify, inject and floor item holds its record's values."""
    monkeypatch.setenv("PRIORS_CACHE_MIN_BYTES", "0")
    if mode == "nocache":
        monkeypatch.setenv("PRIORS_NO_CACHE", "1")
    else:
        monkeypatch.delenv("PRIORS_NO_CACHE", raising=False)
    src = tmp_path / "src"
    gen_ledger().generate(400, src, seed=11, open_heavy=open_heavy)
    ledger = src / ".priors" / "ledger.jsonl"
    lines = ledger.read_bytes().decode("utf-8").split("\n")
    rng = random.Random(5)
    odd = ['caf\u00e9 "quoted" \\ back \U0001f600', "tab\tand\nnewline", "\u2028 \u202e bidi \x7f", "\ud800 lone"]
    for i, text in enumerate(lines):
        if not text.startswith('{"born"') or rng.random() > 0.25:
            continue
        rec = json.loads(text)
        how = i % 9
        if how == 0:
            rec["claim"] = odd[i % len(odd)]
        elif how == 1:
            text = json.dumps(rec, sort_keys=True, separators=(",", ":"))  # non-ASCII as escapes
        elif how == 2:
            text = json.dumps(rec, ensure_ascii=False)  # spaces, keys out of order
        elif how == 3:
            rec["severity"] = None if i % 2 else 3
        elif how == 4:
            rec["evidence"] = {"log": ["x"]}
        elif how == 5:
            rec["tool_note"] = "a key the pattern does not know"
        elif how == 6:
            rec["depth"] = "minor"
            rec.pop("scope_ref", None)
        elif how == 7:
            text = canonical.dumps(dict(rec, claim="first"))[:-1] + ',"claim":' + canonical.dumps(rec["claim"]) + "}"
        if how not in (1, 2, 7):
            text = canonical.dumps(rec)
        lines[i] = text
    ledger.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    scopes = json.loads((src / "bench-scopes.json").read_text())
    fresh = [rec for rec in ledger_parse.parse_lines(ledger.read_bytes())]
    records = {r["id"]: r for r in fresh if r.get("t") == "prior"}

    read_as_text = []

    def counted(lines, ids):
        got = record_text.line_texts(lines, ids)
        read_as_text.extend(t for t in got if t is not None)
        return got

    def run(where: str, text_path: bool, split: bool = False, spool: bool = False) -> Tuple[str, bytes]:
        root = tmp_path / where
        shutil.copytree(src, root)
        with monkeypatch.context() as m:
            m.setattr(selection, "line_texts", counted)
            # split: the verify items shared with a second process (ops/opening.py), whatever their number;
            # spool: written to private files as they are made, 7 at a time (the lessons' rows encoded so too)
            m.setenv("PRIORS_PARALLEL_MIN_BYTES", "0" if split else str(1 << 40))
            m.setattr(opening, "SPOOL_ITEMS", 0 if spool else 1 << 40)
            if spool:
                m.setattr(opening, "PIECE", 7)
            if not text_path:
                m.setattr(selection, "line_texts", lambda lines, ids: [None] * len(lines))
                m.setattr(opening, "plain_rows", lambda rows: None)
            answer = opening.open_run(Paths(root), "web", scopes, None, None)
        printed = io.BytesIO()
        stream = io.TextIOWrapper(printed, encoding="utf-8")
        assert Context(None, out=stream).print_utf8(answer.pieces)
        stream.flush()
        spooled = [p for p in answer.pieces if not isinstance(p, bytes)]
        assert len(spooled) == (2 if spool and hasattr(os, "O_TMPFILE") else 0)  # (Linux: both parts)
        text = answer.json()
        assert b"".join(map(bytes, answer.pieces)) == text.encode("utf-8")
        assert not answer.shown or printed.getvalue() == text.encode("utf-8") + b"\n"
        assert not answer.shown or controls.visible(text) is text  # printed as it is only when nothing is escaped
        rel = next((root / ".priors" / "runs").iterdir()) / "relevant.json"
        assert (root / ".priors" / "ledger.jsonl").read_bytes() == ledger.read_bytes()
        return text, rel.read_bytes()

    fast, slow = run("fast", True), run("slow", False)
    assert fast == slow == run("split", True, split=True) == run("spooled", True, spool=True)
    assert fast == run("split, spooled", True, split=True, spool=True)
    obj = json.loads(fast[0])
    assert canonical.dumps(obj) == fast[0]
    assert canonical.line(dict(json.loads(fast[1]), **obj)).encode("utf-8") == fast[1]
    assert len(obj["verify"]) > 20
    assert len(read_as_text) > len(obj["verify"]) // 2  # most items came from their lines as text
    for item in obj["verify"]:
        rec = records[item["id"]]
        assert item["claim"] == rec.get("claim")
        for key in ("scope_ref", "severity"):
            assert item.get(key) == rec.get(key)
    for item in obj["inject"]:
        assert item["claim"] == records[item["id"]].get("claim")
    for item in obj["floors"]:
        rec = records[item["id"]]
        assert (item.get("scope_ref"), item.get("depth")) == (rec.get("scope_ref"), rec.get("depth", "major"))


@pytest.mark.parametrize("split, spool", [(False, False), (True, False), (False, True), (True, True)])
def test_a_ledger_changed_in_place_under_relevant_is_named_and_opens_no_run(tmp_path: Path, monkeypatch,
                                                                             split: bool, spool: bool) -> None:
    """Claims' bytes rewritten in place (not UTF-8 any more) after the fold read them: the answer's one
    decoding names it — or, for a lesson, the reading of its claim — and no run is left behind; the
    same when a second process made some of the verify items (`split`), and when the items are written
    to private files as they are made (`spool`)."""
    monkeypatch.setenv("PRIORS_PARALLEL_MIN_BYTES", "0" if split else str(1 << 40))
    monkeypatch.setattr(opening, "SPOOL_ITEMS", 0 if spool else 1 << 40)
    monkeypatch.setattr(opening, "PIECE", 5 if spool else opening.PIECE)
    monkeypatch.setenv("PRIORS_CACHE_MIN_BYTES", "0")
    children: list = []

    def started(*args):
        got = background.start(*args)
        if hasattr(got, "pid"):
            children.append(got)
        return got

    monkeypatch.setattr(opening, "start", started)
    monkeypatch.delenv("PRIORS_NO_CACHE", raising=False)
    gen_ledger().generate(200, tmp_path, seed=2, open_heavy=True)
    paths = Paths(tmp_path)
    scopes = json.loads((tmp_path / "bench-scopes.json").read_text())
    cache.load(paths.dir, paths.ledger)  # a snapshot to load from: the records are read from the file
    original = paths.ledger.read_bytes()
    for findings in (True, False):  # the open findings' claims (verify items), then the lessons'
        paths.ledger.write_bytes(original)
        st_ = load_ledger(paths, want_data=False).state
        hit = [p for p in st_.priors.values() if p.ns == "web" and (
            p.status == "open" and p.facet("activation") == "verify-phase" if findings
            else p.status in ("open", "accepted", "wontfix") and p.facet("activation") == "run-start")]
        with open(paths.ledger, "r+b") as fh:  # another program writes into the very file: each claim's first letter
            for p in hit:
                at, n = p[6]
                fh.seek(at + original[at:at + n].index(b'"claim":"') + len(b'"claim":"'))
                fh.write(b"\xff")
        if findings:
            assert len(selection.select(st_, "web", scopes, "run-x")["verify"]) >= len(hit) > 20  # bytes: none decoded yet
        with pytest.raises(DamagedLedger, match="changed in place"):
            opening.open_run_locked(paths, st_, "web", scopes, None, None, False)
        assert not list((paths.dir / "runs").iterdir())
        assert bool(children) == (split and hasattr(os, "fork"))
        for child in children:  # the second process was waited for or stopped: none is left behind
            with pytest.raises(ChildProcessError):
                os.waitpid(child.pid, os.WNOHANG)
        del children[:]


def _forged(keeper: Keeper, monkeypatch, pid: str, status: str) -> None:
    """A fold.bin written in the repository as an agent can write one: the ledger's own length and
    digest, this keeper's format and signature, a state saying `pid` is `status` — its MAC under a key
    of the agent's own, since this user's key is outside the repository."""
    pd = keeper.root / ".priors"
    data = (pd / "ledger.jsonl").read_bytes()
    st, lines = cache.fresh_fold(data)
    st.priors[pid].status = status
    with monkeypatch.context() as m:
        m.setattr(cache, "cache_key", lambda _dir: b"an agent's own key, 32 bytes...!")
        cache._write_snapshot(pd, len(data), hashlib.sha256(data).digest(), lines, st)
    assert (pd / "cache" / cache.CACHE_FILE).exists()


def test_a_fold_cache_written_in_the_repository_is_not_believed(keeper, monkeypatch):
    """Hostile pass 27av: the fold cache proved which ledger it was folded from, not who folded it, so a
    fold.bin forged with the ledger's digest had `status`, `relevant`, `PRIORS.md` and `render` read a
    person's `wontfix` as open, and `commit` sealed an agent's `fixed` on it (`verify` named the line).
    A cache file now carries a MAC under this user's key, kept outside the repository: one written
    without it is ignored, and every verb folds the ledger itself."""
    keeper.write("src/cart.py", "def total(items):\n    return sum(i.price for i in items)\n")
    scopes = {"src/cart.py": "aaaaaaaaaaaa"}
    run = keeper.open_run("cr", scopes)["run"]
    r = keeper.propose(run, "cr", {"type": "conclusion", "claim": "total() ignores discounts", "scope_ref": "src/cart.py",
                                   "severity": "major"})
    assert r.code == 0, r
    keeper.ok("commit", "--run", run)
    keeper.ok("decide", "P-0001", "wontfix", "--because", "discounts are applied upstream")
    _forged(keeper, monkeypatch, "P-0001", "open")
    assert "1 decided by you" in keeper.ok("status") and "open" not in keeper.ok("list", "--ns", "cr").split("P-0001")[1][:40]
    opened = keeper.open_run("cr", scopes)
    assert [x["id"] for x in opened["verify"]] == [], opened  # not offered to the agent as an open finding
    keeper.refused("BINDING_IMMUTABLE", "disposition", "P-0001", "fixed", "--run", opened["run"])
    keeper.ok("commit", "--run", opened["run"])
    _forged(keeper, monkeypatch, "P-0001", "fixed")
    keeper.ok("render")
    assert "wontfix" in (keeper.root / ".priors" / "PRIORS.md").read_text(encoding="utf-8")
    keeper.ok("verify", "--no-git")


def test_without_a_place_for_the_key_no_cache_is_kept_and_every_verb_works(keeper, tmp_path):
    """No folder outside the repository to keep the key in (here: `XDG_CACHE_HOME` relative, no home):
    no fold cache is read or written, and the verbs answer as with one."""
    env = {"XDG_CACHE_HOME": "relative/cache", "HOME": "relative", "LOCALAPPDATA": "relative"}
    keeper.write("src/a.py", "x = 1\n")
    run = json.loads(keeper("relevant", "--ns", "cr", "--scopes", keeper.scopes({"src/a.py": "aaaaaaaaaaaa"}),
                            env=env).out)["run"]
    r = keeper("propose", keeper.candidate({"type": "conclusion", "claim": "x is global", "scope_ref": "src/a.py",
                                            "severity": "minor"}), "--run", run, "--ns", "cr", env=env)
    assert r.code == 0, r
    assert keeper("commit", "--run", run, env=env).code == 0
    assert "1 open" in keeper("status", env=env).out
    assert keeper("verify", "--no-git", env=env).code == 0
    assert not (keeper.root / ".priors" / "cache" / cache.CACHE_FILE).exists()
    said = {c["check"]: c for c in json.loads(keeper("doctor", "--json", env=env).out)["checks"]}["cache key"]
    assert said["state"] == "–" and "every verb folds the ledger itself" in said["detail"], said


def test_the_cache_key_is_the_user_s_alone_made_once_outside_the_repository(tmp_path, monkeypatch):
    from priors.store import cache_key as ck

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "xdg"))
    monkeypatch.setattr(ck, "_KEY", [])
    key = ck.cache_key(tmp_path / "repo" / ".priors")
    path = tmp_path / "xdg" / "priors" / "cache.key"
    assert key is not None and len(key) == 32 and path.read_bytes() == key
    if os.name != "nt":
        assert path.stat().st_mode & 0o777 == 0o600
    monkeypatch.setattr(ck, "_KEY", [])
    assert ck.cache_key(tmp_path / "repo" / ".priors") == key  # read again by the next process, never made anew


def test_no_chunk_of_a_cache_whose_mac_does_not_check_is_unmarshalled(pdir, ledger_bytes, monkeypatch):
    """marshal is not meant for bytes it did not write: the MAC is checked over the whole file first."""
    _check(pdir, ledger_bytes)
    assert _check(pdir, ledger_bytes)  # (written by the first load, believed by the second)
    f = pdir / "cache" / cache.CACHE_FILE
    raw = bytearray(f.read_bytes())
    at = len(cache.MAGIC) + 32
    raw[at] ^= 1  # the MAC, one bit off
    f.write_bytes(bytes(raw))

    def refuse(_data):
        raise AssertionError("unmarshalled a cache whose MAC does not check")

    with monkeypatch.context() as m:
        m.setattr(cache.marshal, "loads", refuse)
        got = cache.load(pdir, pdir / "ledger.jsonl", want_data=True)
    assert not got.from_cache and got.state == fold.fold(fold.parse_lines(ledger_bytes))


def test_a_cache_file_too_long_for_its_ledger_is_never_hashed(pdir, ledger_bytes, monkeypatch):
    """Hostile pass 27aw: a sparse fold.bin of gigabytes behind a snapshot's head had every verb hash it all
    (the MAC) — minutes a call. Its length is weighed against what it describes first."""
    _check(pdir, ledger_bytes)
    assert _check(pdir, ledger_bytes)
    f = pdir / "cache" / cache.CACHE_FILE
    with open(f, "r+b") as fh:
        fh.truncate(1 << 30)  # (sparse where the file system allows it)

    def refuse(*_a):
        raise AssertionError("hashed a cache file too long to be a snapshot of its ledger")

    monkeypatch.setattr(cache, "_proven", refuse)
    got = cache.load(pdir, pdir / "ledger.jsonl", want_data=True)
    assert not got.from_cache and got.state == fold.fold(fold.parse_lines(ledger_bytes))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("where", ["cache/fold.bin", "cache/render.bin", "cache/lesson_keys.bin", "key"])
def test_a_fifo_in_a_cache_file_s_place_or_the_key_s_is_ignored_never_waited_on(keeper, tmp_path, where):
    """Hostile pass 27aw: a FIFO at .priors/cache/fold.bin (any file an agent may write) or at the key's place
    made `status`, `render`, `decide` and `doctor` wait for a writer for ever. Only a regular file is read."""
    import subprocess
    import sys

    from conftest import REPO

    home = tmp_path / "home"
    (home / ".cache" / "priors").mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "LOCALAPPDATA")}
    env.update(HOME=str(home), PYTHONPATH=str(REPO), PRIORS_CACHE_MIN_BYTES="0")
    keeper.ok("suggest", "--ns", "dev", "Run the narrowest test first")
    (keeper.root / ".priors" / "cache").mkdir(exist_ok=True)
    target = home / ".cache" / "priors" / "cache.key" if where == "key" else keeper.root / ".priors" / where
    if target.exists():
        target.unlink()
    os.mkfifo(str(target))
    for verb in (["status"], ["render"], ["decide", "P-0001", "accepted"], ["suggest", "--ns", "dev", "Pin tool versions"]):
        r = subprocess.run([sys.executable, "-m", "priors", *verb], cwd=str(keeper.root), env=env, capture_output=True,
                           text=True, timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (verb, r.stdout, r.stderr)
    assert "accepted" in keeper.ok("show", "P-0001")


def test_a_key_inside_the_repository_is_never_used(keeper, tmp_path):
    """Hostile pass 27aw: with the home folder the repository itself (a dotfiles repository, a container whose
    home is the project) the key lay in the work tree, where an agent reads it and MACs a state of its own.
    There no key is used — no cache is kept — and `doctor` says why."""
    env = {"HOME": str(keeper.root), "XDG_CACHE_HOME": "", "LOCALAPPDATA": ""}
    keeper.write("src/a.py", "x = 1\n")
    run = json.loads(keeper("relevant", "--ns", "cr", "--scopes", keeper.scopes({"src/a.py": "aaaaaaaaaaaa"}), env=env).out)
    assert keeper("commit", "--run", run["run"], env=env).code == 0
    assert keeper("status", env=env).code == 0
    assert not (keeper.root / ".priors" / "cache" / cache.CACHE_FILE).exists()
    assert not (keeper.root / ".cache" / "priors" / "cache.key").exists()
    said = {c["check"]: c for c in json.loads(keeper("doctor", "--json", env=env).out)["checks"]}["cache key"]
    assert said["state"] == "off" and "inside this repository" in said["detail"], said


def test_a_git_folder_planted_nearer_does_not_put_the_key_outside_the_repository(tmp_path, monkeypatch):
    """Hostile pass 27ax: with the home folder a git work tree and `.priors/` in a folder of it without a `.git`,
    the key was refused — until an agent wrote `sub/.git`, which made the nearest `.git` the repository's top.
    The outermost work tree above `.priors/` is the repository."""
    from priors.store import cache_key as ck

    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)
    priors_dir = home / "sub" / ".priors"
    priors_dir.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CACHE_HOME", "LOCALAPPDATA"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(ck, "_INSIDE", {})
    assert ck.key_inside(priors_dir) and ck.cache_key(priors_dir) is None
    (home / "sub" / ".git").write_text("gitdir: /nowhere\n")
    monkeypatch.setattr(ck, "_INSIDE", {})
    assert ck.key_inside(priors_dir) and ck.cache_key(priors_dir) is None
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "elsewhere"))  # a key outside every work tree is used
    monkeypatch.setattr(ck, "_INSIDE", {})
    monkeypatch.setattr(ck, "_KEY", [])
    assert not ck.key_inside(priors_dir) and ck.cache_key(priors_dir) is not None
