"""PRIORS.md patched row by row is byte for byte the full render — or the full render is made."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import Keeper, gen_ledger
from priors.core.canonical import dumps
from priors.core.fold import fold, named_in, parse_lines
from priors.core.views import render_markdown
from priors.store import cache_key as cache_key
from priors.store import rendered as rendered
from priors.store.paths import Paths

pytestmark = pytest.mark.one_cache_mode


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tree")
    gen_ledger().generate(500, out, seed=5)
    return out


@pytest.fixture
def root(generated: Path, tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.delenv("PRIORS_NO_CACHE", raising=False)
    dst = tmp_path / "r"
    shutil.copytree(str(generated), str(dst))
    return dst


def _mark(data: bytes):
    return len(data), hashlib.sha256(data).digest()


def _full(data: bytes) -> bytes:
    return render_markdown(fold(parse_lines(data))).encode("utf-8")


def _random_records(rng: random.Random, ids: List[str], next_id: int) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        pid = rng.choice(ids)
        if kind < 0.3:
            out.append({"t": "event", "id": pid, "action": "disposition", "run": "run-900",
                        "to": rng.choice(["fixed", "still-open", "stale", "challenged", "obsolete-proposed"])})
        elif kind < 0.5:
            out.append({"t": "event", "id": pid, "action": "decide", "by": "human",
                        "to": rng.choice(["keep", "wontfix", "obsolete", "reopen", "accepted"])})
        elif kind < 0.65:
            out.append({"t": "event", "id": pid, "action": "scope-missing", "run": "run-900"})
        elif kind < 0.75:  # a second record for an existing id: its row must change in place
            out.append({"t": "prior", "id": pid, "ns": rng.choice(["web", "a|b\\", ""]),
                        "type": rng.choice(["conclusion", "odd | type \\|", ""]), "claim": f"again | {pid}\nx",
                        "born": "run-900"})
        elif kind < 0.8:
            out.append({"t": "event", "id": pid, "action": "redact", "by": "human", "reason": "gone"})
        elif kind < 0.9:
            new = f"P-{next_id + len(out):05d}"
            ids.append(new)
            out.append({"t": "prior", "id": new, "ns": rng.choice(["web", "api", "new|ns"]), "type": "conclusion",
                        "claim": "a " * rng.randint(1, 60), "scope_ref": f"src/{new}.py", "born": "run-900"})
        else:
            out.append({"t": "call", "call_id": "run-900-C-01", "kind": "reversal", "run": "run-900",
                        "ns": "web", "conflicts_with": pid, "claim": "no"})
    return out


def test_patched_rows_equal_the_full_render(root: Path, monkeypatch) -> None:
    """40 random appends, each patched onto the previous PRIORS.md: always the full render's bytes,
    whether the patch is made in one pass or (IN_PLACE_ROWS = 0, a third of the steps) line by line."""
    paths = Paths(root)
    data = paths.ledger.read_bytes()
    st = fold(parse_lines(data))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    assert paths.rendered.read_bytes() == _full(data)
    rng = random.Random(7)
    ids = list(st.priors)
    for step in range(40):
        monkeypatch.setattr(rendered, "IN_PLACE_ROWS", 0 if step % 3 == 0 else 256)  # a third split into lines
        recs = _random_records(rng, ids, 90000 + step * 10)
        new = data + "".join(dumps(r) + "\n" for r in recs).encode("utf-8")
        paths.ledger.write_bytes(new)
        st = fold(parse_lines(new))
        rendered.write(paths, st, _mark(data), named_in(recs), _mark(new))
        assert paths.rendered.read_bytes() == _full(new), step
        assert rendered.read_mark(paths.dir)[:2] == _mark(new), step  # the mark follows, so the next step patches
        data = new


def test_a_commit_sized_patch_is_made_in_place(root: Path) -> None:
    """Hundreds of rows and new priors at once (a commit, up to IN_PLACE_ROWS) patched: the full render's bytes."""
    paths = Paths(root)
    data = paths.ledger.read_bytes()
    st = fold(parse_lines(data))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    rng = random.Random(11)
    ids = list(st.priors)
    recs: List[Dict[str, Any]] = []
    while len(recs) < 240:
        recs += _random_records(rng, ids, 95000 + len(recs) * 10)
    new = data + "".join(dumps(r) + "\n" for r in recs).encode("utf-8")
    paths.ledger.write_bytes(new)
    named = named_in(recs)
    assert 100 < len(named) <= rendered.IN_PLACE_ROWS
    rendered.write(paths, fold(parse_lines(new)), _mark(data), named, _mark(new))
    assert paths.rendered.read_bytes() == _full(new)


def test_priors_md_changed_while_patching_is_written_whole(root: Path, monkeypatch) -> None:
    """Another program rewrites PRIORS.md between our read and our write: no error (the ledger is
    already written), the whole table instead of a patch over the wrong file."""
    from priors.store import files as store

    paths = Paths(root)
    data = paths.ledger.read_bytes()
    st = fold(parse_lines(data))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    real = store.read_bytes

    def read_then_edit(path):
        got = real(path)
        if path == paths.rendered:
            path.write_bytes(got + b"a hand edit\n")
        return got

    monkeypatch.setattr(store, "read_bytes", read_then_edit)
    rec = {"t": "event", "id": next(iter(st.priors)), "action": "decide", "to": "keep", "by": "human"}
    new = data + (dumps(rec) + "\n").encode()
    rendered.write(paths, fold(parse_lines(new)), _mark(data), named_in([rec]), _mark(new))
    assert paths.rendered.read_bytes() == _full(new)


def test_hand_edit_or_foreign_write_renders_everything(root: Path) -> None:
    paths = Paths(root)
    data = paths.ledger.read_bytes()
    st = fold(parse_lines(data))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    good = paths.rendered.read_bytes()
    # a hand edit of PRIORS.md: the next write renders the whole table again
    paths.rendered.write_bytes(good.replace(b"| open |", b"| OPEN |", 1))
    rec = {"t": "event", "id": next(iter(st.priors)), "action": "decide", "to": "keep", "by": "human"}
    new = data + (dumps(rec) + "\n").encode()
    rendered.write(paths, fold(parse_lines(new)), _mark(data), named_in([rec]), _mark(new))
    assert paths.rendered.read_bytes() == _full(new)
    # another keeper appended without rendering: our base is not the marked ledger
    rec2 = {"t": "event", "id": list(st.priors)[3], "action": "decide", "to": "obsolete", "by": "human"}
    newer = new + (dumps(rec) + "\n").encode() + (dumps(rec2) + "\n").encode()
    mid = new + (dumps(rec) + "\n").encode()
    rendered.write(paths, fold(parse_lines(newer)), _mark(mid), named_in([rec2]), _mark(newer))
    assert paths.rendered.read_bytes() == _full(newer)


def test_render_mark_from_other_code_or_by_hand_is_ignored(root: Path) -> None:
    """render.bin says "PRIORS.md (these bytes) is the render of this ledger". Written by this code with
    this user's key it is trusted (no rewrite); written by other code (another signature), or by hand in
    the repository — right signature, no key (hostile pass 27av) — it is not: a full render."""
    paths = Paths(root)
    data = paths.ledger.read_bytes()
    st = fold(parse_lines(data))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    mark = paths.dir / "cache" / rendered.RENDER_FILE
    good = mark.read_bytes()
    sig = slice(len(rendered.MAGIC), len(rendered.MAGIC) + 32)
    mac = slice(sig.stop, sig.stop + 32)
    md_sha = slice(mac.stop + 8 + 32, mac.stop + 8 + 32 + 32)

    def claim(signature: bytes, key: Optional[bytes]) -> None:  # a mark vouching for a PRIORS.md that is not the render
        paths.rendered.write_bytes(b"not the render\n")
        raw = bytearray(good)
        raw[sig] = signature
        raw[md_sha] = hashlib.sha256(b"not the render\n").digest()
        raw[mac] = cache_key.mac(key, [bytes(raw[mac.stop:])]) if key is not None else good[mac]
        mark.write_bytes(bytes(raw))

    claim(good[sig], cache_key.cache_key(paths.dir))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    assert paths.rendered.read_bytes() == b"not the render\n"  # our own mark is believed
    claim(good[sig], None)  # the signature copied, the MAC left as it was: written by hand
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    assert paths.rendered.read_bytes() == _full(data)
    claim(good[sig], b"k" * 32)  # a MAC under another key
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    assert paths.rendered.read_bytes() == _full(data)
    claim(b"x" * 32, cache_key.cache_key(paths.dir))
    rendered.write(paths, st, _mark(data), {}, _mark(data))
    assert paths.rendered.read_bytes() == _full(data)  # another code's mark is not


def test_cli_writes_keep_priors_md_equal_to_a_full_render(root: Path) -> None:
    k = Keeper(root)
    ledger = root / ".priors" / "ledger.jsonl"
    md = root / ".priors" / "PRIORS.md"

    def same() -> None:
        assert md.read_bytes() == _full(ledger.read_bytes())

    k.ok("render")
    same()
    before = md.stat()
    assert k.ok("render") == "rendered .priors/PRIORS.md\n"
    after = md.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)  # in step: nothing rewritten
    rel = json.loads(k.ok("relevant", "--ns", "web", "--scopes", "bench-scopes.json"))
    run = rel["run"]
    for item in rel["verify"]:
        if item["scopeState"] != "missing":
            k.ok("disposition", item["id"], "fixed" if item["scopeState"] == "unchanged" else "stale", "--run", run)
    cands = sorted(str(p.relative_to(root)) for p in (root / "bench-cands").iterdir())
    k("propose", *cands, "--run", run, "--ns", "web")
    k.ok("commit", "--run", run)
    same()
    assert (root / ".priors" / "cache" / rendered.RENDER_FILE).exists()
    k.ok("decide", rel["verify"][0]["id"], "wontfix", "--because", "not worth it")
    same()
    md.write_bytes(b"# hand edited\n")
    k.ok("render")
    same()
    k.ok("redact", rel["verify"][1]["id"], "--because", "leak")
    same()
    k.ok("decide", rel["verify"][2]["id"], "obsolete")
    same()
    k.ok("add", "--ns", "web", "Prefer | pipes \\ escaped in claims")  # a lessons verb: patched too
    same()
    k.ok("score", "last", "success")
    same()
