"""The run verbs read a run's staging compactly (docs/reliability.md, "Every verb at 100k, measured"):
`relevant.json` a block at a time, its large lists an item at a time (core/json_stream.py), what the
rules read of them kept small (core/staged_snapshot.py), the verdicts as (id, verdict, hash) each
(core/verdicts.py). Staging is the agent's to write, so each of these must read exactly what the
strict parse of the whole file reads — on any text, hand-edited or forged — and the verbs must
answer as they did. Pure readers are held to a straightforward reading on generated texts; the
verbs, through the CLI, to the same run's answers with its snapshot written another way."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Keeper
from priors.core import json_stream, verdicts
from priors.core.canonical import JSONError, dumps, loads
from priors.core.staged_snapshot import Scopes
from priors.core.verdicts import Verdicts, read_verdicts
from priors.ops.digest import hash_text
from priors.store.paths import Paths
from priors.store.staging import read_numbered, read_run

# ------------------------------------------------------------------ the block reader


class _List:
    def __init__(self) -> None:
        self.items: List[Any] = []

    def add_all(self, items: Any) -> None:
        self.items.extend(items)


class _Dict:
    def __init__(self) -> None:
        self.d: Dict[Any, Any] = {}

    def add_pairs(self, pairs: Dict[Any, Any]) -> None:
        self.d.update(pairs)


_TRICKY = ['},{', '","', '"', '\\', '[', ']', '{', '}', ',', ':', 'é', '\U0001f600', '\u2028', ' ', 'a', 'P-0001']


def _text(rnd: random.Random) -> str:
    return "".join(rnd.choice(_TRICKY) for _ in range(rnd.randint(0, 4)))


def _value(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randint(0, 9 if depth < 3 else 5)
    if kind <= 5:
        return rnd.choice([None, True, False, rnd.randint(-10 ** 20, 10 ** 20), rnd.random() * 1e6, _text(rnd), 0.5, -0.0])
    if kind <= 7:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {_text(rnd): _value(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}


def _item(rnd: random.Random) -> Any:
    if rnd.random() < 0.15:
        return _value(rnd)
    keys = rnd.sample(["id", "claim", "scopeState", "changed", "scope_ref", "x"], rnd.randint(0, 5))
    return {k: _value(rnd, 2) for k in keys}


def _member(rnd: random.Random) -> Any:
    kind = rnd.randint(0, 2)
    if kind == 0:
        return [_item(rnd) for _ in range(rnd.randint(0, 12))]
    if kind == 1:
        return {_text(rnd): _text(rnd) for _ in range(rnd.randint(0, 12))}
    return _value(rnd)


def _cut(data: bytes, rnd: random.Random) -> List[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rnd.randint(1, 40)
        out.append(data[i:i + n])
        i += n
    return out


def _object_text(rnd: random.Random, pairs: List[Any], spaced: bool, damage: int) -> bytes:
    """A JSON object of `pairs` (a key may come twice), spaced or not, its strings escaped or not — damaged
    by `damage`: 1 cut short, 2 a stray character, 3 a BOM before it, 4 something after it."""
    sep = (", ", ": ") if spaced else (",", ":")
    text = "{" + sep[0].join(json.dumps(k) + sep[1] + json.dumps(v, ensure_ascii=rnd.random() < 0.5, separators=sep)
                             for k, v in pairs) + "}"
    if damage == 1:
        text = text[:rnd.randint(0, len(text))]
    elif damage == 2 and len(text) > 2:
        at = rnd.randint(1, len(text) - 1)
        text = text[:at] + rnd.choice([",", "]", "}", "{", "[", '"', "x", "NaN", "1e400"]) + text[at:]
    elif damage == 3:
        text = "\ufeff" + text
    elif damage == 4:
        text += rnd.choice(["x", "{}", " \n", ","])
    return text.encode("utf-8", "surrogatepass")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32), spaced=st.booleans(), damage=st.integers(0, 9))
def test_the_block_reader_reads_what_the_strict_parser_reads(seed, spaced, damage):
    """Any text, cut into any blocks, parsed a run of items at a time (SPAN made tiny, so every list
    and object is read in many runs): the lists' items and the objects' pairs reach their sinks in order,
    as the strict parse of the whole text holds them, or the reader gives the text up (None) — always
    when the strict parse refuses it."""
    rnd = random.Random(seed)
    keys = ["verify", "inject", "scopes", "ns", "run", "moves", "other"]
    data = _object_text(rnd, [(rnd.choice(keys), _member(rnd)) for _ in range(rnd.randint(0, 6))], spaced, damage)
    try:
        want = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, JSONError):
        want = None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_stream, "SPAN", 8)
        got = json_stream.read_object(iter(_cut(data, rnd)), {"verify": _List, "inject": _List, "scopes": _Dict})
    if want is None or not isinstance(want, dict):
        assert got is None
        return
    if got is None:
        return  # (given up: the caller parses it whole)
    assert list(got) == list(want)
    for key, value in want.items():
        held = got[key]
        if isinstance(held, _List):
            assert held.items == value and isinstance(value, list)
        elif isinstance(held, _Dict):
            assert list(held.d.items()) == list(value.items()) and isinstance(value, dict)
        else:
            assert held == value and type(held) is type(value)


def test_a_run_of_items_ends_where_a_string_holds_their_separator(monkeypatch):
    """A claim holding `},{` (or a scope ref holding `","`) where a run would be cut: read all the same."""
    monkeypatch.setattr(json_stream, "SPAN", 4)
    verify = [{"claim": 'a},{"id":"P-0009"},{', "id": f"P-{i:04d}"} for i in range(30)]
    scopes = {f'r{i:02d}","x': "0123456789ab" for i in range(30)}
    text = dumps({"ns": "web", "scopes": scopes, "verify": verify})
    got = json_stream.read_object(iter([text.encode()]), {"verify": _List, "scopes": _Dict})
    assert got is not None and got["verify"].items == verify and got["scopes"].d == scopes


def test_a_value_nested_deeper_than_the_reader_goes_is_left_to_the_whole_parse():
    deep = {"x": []}
    for _ in range(json_stream.DEPTH + 5):
        deep = {"x": [deep]}
    text = dumps({"verify": [deep], "ns": "web"})
    assert json_stream.read_object(iter([text.encode()]), {"verify": _List}) is None
    assert json_stream.read_object(iter([dumps({"other": deep}).encode()]), {}) is None


# ------------------------------------------------------------------ scopes


@settings(max_examples=100, deadline=None)
@given(refs=st.lists(st.sampled_from(["a.py", "a.py#f", "b/", "b/c.py", "é.py", "\U0001f600.py", "z"]), max_size=12),
       hashes=st.lists(st.sampled_from(["0123456789ab", "0123456789AB", "abc", "", "ffffffffffff"]), min_size=12,
                       max_size=12),
       cuts=st.lists(st.integers(1, 4), max_size=12))
def test_scopes_are_read_as_the_parsed_dict(refs, hashes, cuts):
    """Scopes fed as runs of parsed pairs read as the dict the whole parse makes — order, lookups,
    values — held compactly or not."""
    pairs = [(r, hashes[i]) for i, r in enumerate(refs)]
    want = dict(pairs)
    s, i = Scopes(), 0
    for n in cuts + [len(pairs)]:
        s.add_pairs(dict(pairs[i:i + n]))
        i += n
    assert list(s) == list(want) and len(s) == len(want) and list(s.values()) == list(want.values())
    assert s == want and dict(s) == want and s.small() == want and list(s.small()) == list(want)
    for ref in ["a.py", "a.py#f", "nope", "", "z"]:
        assert (ref in s) == (ref in want) and s.get(ref) == want.get(ref)
    with pytest.raises(TypeError):
        s.get(["unhashable"])


# ------------------------------------------------------------------ verdicts


_LINES = st.sampled_from([
    '{"action":"disposition","by":"agent","id":"P-0001","run":"run-002","scope_hash":"0123456789ab","t":"event","to":"fixed"}',
    '{"action":"disposition","by":"agent","id":"P-0002","run":"run-002","t":"event","to":"challenged"}',
    '{"action":"disposition","by":"agent","id":"P-0001","run":"run-002","scope_hash":"0123456789AB","t":"event","to":"stale"}',
    '{"action":"disposition","by":"agent","id":"P-0003","run":"run-001","t":"event","to":"fixed"}',
    '{"action":"disposition","by":"agent","id":"P-0003","run":"run-002","t":"event","to":"accepted"}',
    '{"to":"still-open","t":"event","run":"run-002","id":"P-0004","by":"agent","action":"disposition"}',
    '{"action": "disposition", "by": "agent", "id": "P-0005", "run": "run-002", "t": "event", "to": "reaffirmed"}',
    '{"action":"disposition","by":"agent","id":"P-\\u0030006","run":"run-002","t":"event","to":"fixed"}',
    '{"action":"disposition","by":"agent","id":"P-0007","line":3,"run":"run-002","t":"event","to":"fixed"}',
    '{"action":"disposition","by":"agent","id":"P-0001","run":"run-002","t":"event","to":"fixed"}\r',
    '{"action":"disposition","by":"agent","id":"P-é","run":"run-002","t":"event","to":"fixed"}',
    '{"id":"P-0009","redacted":true,"content_hash":"0123456789ab"}',
    '{"action":"disposition","by":"agent","id":["P-0001"],"run":"run-002","t":"event","to":"fixed"}',
    '{"action":"disposition","by":"agent","id":"P-0008","run":"run-002","scope_hash":7,"t":"event","to":"fixed"}',
    'null', '[1, 2]', '"text"', 'not json', '{"action":', '', '   ', '\t\r',
])


@settings(max_examples=80, deadline=None)
@given(lines=st.lists(st.one_of(_LINES, st.just("\xff\xfe")), max_size=14), end=st.booleans(),
       seed=st.integers(0, 2 ** 16), pattern=st.booleans())
def test_verdicts_read_as_the_lines_parse(tmp_path_factory, lines, end, seed, pattern):
    """A dispositions file read compactly, from any blocks, is line for line what a line-by-line parse
    reads (the same values, the same line numbers), and written back byte for byte as those values."""
    data = "\n".join(lines).encode("utf-8", "surrogateescape") + (b"\n" if end and lines else b"")
    path = tmp_path_factory.mktemp("v") / "dispositions.jsonl"
    path.write_bytes(data)
    want, numbers = read_numbered(path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(verdicts, "PATTERN_MIN", 0 if pattern else 1 << 20)  # (each block by the pattern, or line by line)
        got, at = read_verdicts(iter(_cut(data, random.Random(seed))), "run-002")
    assert list(got) == want and len(got) == len(want)
    assert (at if at is not None else list(range(1, len(want) + 1))) == numbers
    assert "".join(got.text(batch=3)) == "".join(dumps(x) + "\n" for x in want)
    assert list(got.ids_of()) == [d.get("id") for d in want if isinstance(d, dict)]
    assert [(i, pid, to) for i, pid, to in got.verdicts()] == [
        (i, d.get("id"), d.get("to")) for i, d in enumerate(want) if isinstance(d, dict)]
    for i, d in enumerate(want):
        if isinstance(d, dict):
            assert got.effect(i) == (d.get("id"), d.get("to"), d.get("scope_hash"))
    again = Verdicts.of("run-002", want)
    assert list(again) == want and list(again.take(range(len(want) - 1, -1, -1))) == want[::-1]


# ------------------------------------------------------------------ a run's snapshot, as the rules read it


def _snapshot(rnd: random.Random) -> Dict[str, Any]:
    states = ["unchanged", "changed", "missing", "moved", "weird", None, 3]
    verify = []
    for _ in range(40):
        item: Dict[str, Any] = {"id": f"P-{rnd.randint(1, 30):04d}", "claim": rnd.choice(['x},{"id":"P-0001"', "a\\b", "ok"])}
        if rnd.random() < 0.9:
            item["scopeState"] = rnd.choice(states)
        if rnd.random() < 0.3:
            item["changed"] = rnd.choice([True, False, 1, "true"])
        if rnd.random() < 0.5:
            item["scope_ref"] = rnd.choice(["a.py", "b.py#f", 7])
        if rnd.random() < 0.1:
            item["redacted"] = rnd.choice([True, 1, 0, ""])
        verify.append(item if rnd.random() < 0.95 else rnd.choice([5, "P-0001", None, [item]]))
    inject = [rnd.choice([{"id": f"P-{i:04d}"}, {"id": 9}, "P-0001", {"claim": "c"}]) for i in range(12)]
    scopes = {f"src/{i:03d}.py": rnd.choice(["0123456789ab", "fedcba987654"]) for i in range(30)}
    if rnd.random() < 0.3:
        scopes["a_late.py"] = "0123456789AB"
    return {"archived": 3, "floors": [{"id": "P-0001"}, 4], "inject": inject, "ns": "web", "nudges": [{}, {"id": 1}, 2],
            "run": "run-002", "scopes": scopes, "verify": verify}


@pytest.mark.parametrize("seed", range(6))
def test_the_compact_read_answers_as_the_whole_parse(tmp_path: Path, seed: int):
    """`read_run(snapshot="compact")` (the run verbs') and the whole parse give the rules the same
    snapshot: the same verify states, inject ids, counts and scopes — on generated, forged snapshots,
    written canonically or otherwise."""
    rnd = random.Random(seed)
    snap = _snapshot(rnd)
    rdir = tmp_path / ".priors" / "runs" / "run-002"
    rdir.mkdir(parents=True)
    text = dumps(snap) if seed % 2 else json.dumps(snap, indent=1, ensure_ascii=False)
    (rdir / "relevant.json").write_text(text, encoding="utf-8")
    paths = Paths(tmp_path)
    whole, compact = read_run(paths, "run-002"), read_run(paths, "run-002", snapshot="compact")
    assert isinstance(compact.relevant, dict) and compact.relevant["ns"] == "web"
    snap = json.loads(text)  # (as the file holds it: its scopes in the file's order)
    items = {x["id"]: x for x in snap["verify"] if isinstance(x, dict) and isinstance(x.get("id"), str)
             and not x.get("redacted")}
    want = {pid: (x.get("scopeState"), x.get("scopeState") == "moved" and x.get("changed") is True,
                  x.get("scope_ref") if x.get("scopeState") == "moved" else None) for pid, x in items.items()}
    for rf in (whole, compact):
        got = {pid: (s[0], s[0] == "moved" and s[1], s[2] if s[0] == "moved" else None)
               for pid, s in rf.verify_states().items()}
        assert got == want and list(rf.verify_states()) == list(items)
        assert rf.inject_ids() == [x["id"] for x in snap["inject"] if isinstance(x, dict) and isinstance(x.get("id"), str)]
        assert rf.count("nudges") == 2 and dict(rf.scopes) == snap["scopes"] and list(rf.scopes) == list(snap["scopes"])
    assert whole.verify_items() == items
    with pytest.raises(TypeError):
        compact.items("verify")  # (a compact read keeps no list: a rule reading one would fail loudly)
    assert read_run(paths, "run-002", snapshot="none").relevant == {}


@pytest.mark.parametrize("text", ["{", '{"ns":"web",}', "[]", "\ufeff{}", '{"ns":NaN}', '{"a":1} x'])
def test_a_damaged_snapshot_is_refused_by_every_read_alike(tmp_path: Path, text: str):
    rdir = tmp_path / ".priors" / "runs" / "run-002"
    rdir.mkdir(parents=True)
    (rdir / "relevant.json").write_text(text, encoding="utf-8")
    said = set()
    for snapshot in ("whole", "compact", "none"):
        with pytest.raises(Exception) as got:
            read_run(Paths(tmp_path), "run-002", snapshot=snapshot)
        said.add((type(got.value), str(got.value)))
    assert len(said) == 1, said


# ------------------------------------------------------------------ the verbs


def _open_run(kp: Keeper) -> str:
    """Six open findings on a.py … f.py (run-001); a new run (run-002) where a.py and b.py changed,
    c.py is gone and the rest are as they were."""
    names = "abcdef"
    for n in names:
        kp.write(f"{n}.py", f"{n} = 1\n")
        kp.write(f"c{n}.json", json.dumps({"type": "conclusion", "claim": f"{n} is magic", "scope_ref": f"{n}.py"}))
    run = kp.open_run("web", {f"{n}.py": hash_text(f"{n} = 1\n") for n in names})["run"]
    kp.ok("propose", *[f"c{n}.json" for n in names], "--run", run, "--ns", "web")
    kp.ok("commit", "--run", run)
    scopes = {f"{n}.py": hash_text(f"{n} = {1 + (n in 'ab')}\n") for n in names if n != "c"}
    kp.write("a.py", "a = 2\n")
    kp.write("b.py", "b = 2\n")
    scopes["g.py"] = hash_text("g = 1\n")
    kp.write("g.py", "g = 1\n")
    return kp.open_run("web", scopes)["run"]


def _answers(kp: Keeper, run: str) -> List[Any]:
    """Every run verb on the run `_open_run` opened, refused and not: each answer, then what commit wrote."""
    kp.write("cg.json", json.dumps({"type": "conclusion", "claim": "g is new", "scope_ref": "g.py"}))
    kp.write("ca.json", json.dumps({"type": "conclusion", "claim": "a is two now", "scope_ref": "a.py"}))
    out = []
    for args in (["disposition", "P-0004", "stale", "P-0001", "still-open", "P-0003", "fixed", "P-0001", "stale",
                  "P-0002", "reaffirmed", "P-0005", "fixed", "P-0009", "fixed", "P-0004", "fixed"],
                 ["disposition", "P-0006", "still-open"], ["propose", "cg.json", "ca.json", "--ns", "web"],
                 ["withdraw", "P-0008"], ["commit"]):
        r = kp(*args, "--run", run)
        out.append((r.code, r.out, r.err))
    return out + [kp.ledger_bytes(), kp.read(".priors/PRIORS.md")]


def test_the_verbs_answer_alike_whatever_way_the_snapshot_is_written(keeper: Keeper, tmp_path: Path):
    """A run whose `relevant.json` is written another way — indented, its keys in another order, a
    claim holding `},{` — is the same run: every verb answers byte for byte as on the keeper's own file."""
    run = _open_run(keeper)
    other = Keeper(tmp_path / "other")
    shutil.copytree(keeper.root, other.root)
    path = other.root / ".priors" / "runs" / run / "relevant.json"
    snap = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(dict(reversed(list(snap.items()))), indent=2, ensure_ascii=True), encoding="utf-8")
    assert _answers(other, run) == _answers(keeper, run)


def test_a_forged_verify_list_is_read_as_the_whole_parse_reads_it(keeper: Keeper):
    """The last item of an id wins, whatever an earlier one or a claim says: P-0001 (changed) written
    again as unchanged takes no stale verdict; a claim that spells another item is a claim."""
    run = _open_run(keeper)
    path = keeper.root / ".priors" / "runs" / run / "relevant.json"
    snap = json.loads(path.read_text(encoding="utf-8"))
    first = next(x for x in snap["verify"] if x["id"] == "P-0001")
    assert first["scopeState"] == "changed"
    snap["verify"].append(dict(first, scopeState="unchanged", claim='x"},{"id":"P-0003","scopeState":"changed'))
    path.write_text(dumps(snap), encoding="utf-8")
    body = keeper.refused("STALE_REQUIRES_CHANGE", "disposition", "P-0001", "stale", "--run", run)
    assert body["id"] == "P-0001"
    keeper.refused("MISSING_SCOPE", "disposition", "P-0003", "stale", "--run", run)


def test_a_comma_that_ends_a_block_is_read_past_before_the_next_item():
    """Hostile pass 32d: an item's comma as the last character read so far (space before it, so the items
    were read one at a time) was indexed past the text's end — an IndexError where the whole parse reads
    the file. A block of 1 MiB ending in the comma after a run of spaces, as an agent's edit can write it."""
    items = [{"id": f"P-{i}", "claim": "x" * 40} for i in range(3)]
    head = '{"verify":[' + json.dumps(items[0])
    first = head + " " * ((1 << 20) - 1 - len(head)) + ","
    rest = ",".join(json.dumps(x) for x in items[1:]) + '],"ns":"web"}'
    got = json_stream.read_object(iter([first.encode(), rest.encode()]), {"verify": _List})
    assert got is None or (got["verify"].items == items and got["ns"] == "web")


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2 ** 32), spaced=st.booleans(), damage=st.integers(0, 9), ordered=st.booleans())
def test_carry_rewrites_the_snapshot_as_the_whole_parse_would(tmp_path_factory, seed, spaced, damage, ordered):
    """`carry`'s `relevant.json` for the new run, its long lists and scopes kept as text a run at a time
    (SPAN made small): byte for byte the canonical JSON of the strict parse with `run` set — or refused as
    the whole parse refuses it. Scopes as the keeper writes them (ascending ASCII refs) and any others:
    unsorted, a key twice, refs past ASCII."""
    from priors.core.errors import UsageError
    from priors.store.staging import moved_relevant

    rnd = random.Random(seed)
    keys = ["verify", "inject", "floors", "nudges", "settled_here", "scopes", "ns", "run", "moves", "other"]
    pairs = [(rnd.choice(keys), _member(rnd)) for _ in range(rnd.randint(0, 7))]
    if ordered:  # (a snapshot's scopes as the keeper writes them, many: several runs of pairs)
        refs = sorted({f"src/{rnd.choice('abcxyz')}{i}.py" + rnd.choice(["", "#f", "#C.m"]) for i in range(rnd.randint(0, 40))})
        pairs.append(("scopes", {r: "%012x" % rnd.getrandbits(48) for r in refs}))
    data = _object_text(rnd, pairs, spaced, damage)
    try:
        whole = loads(data.decode("utf-8"))
    except (UnicodeDecodeError, JSONError):
        whole = None
    root = tmp_path_factory.mktemp("carry")
    paths = Paths(root)
    paths.run_dir("run-001").mkdir(parents=True)
    (paths.run_dir("run-001") / "relevant.json").write_bytes(data)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_stream, "SPAN", rnd.choice([8, 64, 4096]))  # (runs of one pair, of a few, of all)
        if not isinstance(whole, dict):
            with pytest.raises(UsageError):
                moved_relevant(paths, "run-001", "run-002")
            return
        got = moved_relevant(paths, "run-001", "run-002")
    assert got is not None and b"".join(got) == (dumps(dict(whole, run="run-002")) + "\n").encode("utf-8")


@pytest.mark.parametrize("text", [
    '{"run":"run-001","scopes":{"a.py":"000000000001","b.py":"000000000002","c.py":"000000000003"}}',
    '{"scopes":{"b.py":"000000000002","a.py":"000000000001"},"run":"run-001"}',  # (unsorted: held as the dict)
    '{"scopes":{"a.py":"1","b.py":"2","a.py":"3"},"run":"run-001"}',  # (a key twice, apart: the last value)
    '{"scopes":{"é.py":"1","a.py":"2"},"verify":[{"id":"P-0001"},{"id":"P-0002"}],"run":"run-001"}',
    '{"verify":[],"scopes":{},"run":["run-001"]}',
    # (in code points U+FFFD comes first, in the UTF-16 order canonical JSON sorts by the emoji does)
    '{"scopes":{"\ufffd.py":"1","\U0001f600.py":"2"},"run":"run-001"}',
])
def test_carry_rewrites_these_snapshots_as_the_whole_parse_would(tmp_path, text):
    from priors.store.staging import moved_relevant

    paths = Paths(tmp_path)
    paths.run_dir("run-001").mkdir(parents=True)
    (paths.run_dir("run-001") / "relevant.json").write_text(text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(json_stream, "SPAN", 8)  # (a run of pairs each pair)
        got = moved_relevant(paths, "run-001", "run-002")
    assert got is not None and b"".join(got) == (dumps(dict(loads(text), run="run-002")) + "\n").encode("utf-8")
