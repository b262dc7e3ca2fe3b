"""`priors verify`: prove `.priors/` is sound — the ledger line by line (core/ledger_checks.py), the
files around it (PRIORS.md current, no staging of sealed runs, no stray temp files) and, in a git
work tree, that the ledger only grew since HEAD (or since `--since REV`).
"""

from __future__ import annotations

import os

from priors.core.answer import Answer
from priors.core.canonical import dumps
from priors.core.controls import one_line
from priors.core.errors import UsageError
from priors.core.fold import fold_data
from priors.core.ledger_checks import (
    LEDGER_NAME,
    Checked,
    Problem,
    check_ledger,
)
from priors.core.ledger_growth import check_since
from priors.core.ledger_parse import records, whole_line_pieces
from priors.core.ledger_replay import in_order, replay
from priors.core.merge_rules import merged_marks
from priors.core.moves import is_file_ref
from priors.core.replay_split import Share, judged_by_meaning, namespace_weights, split_namespaces, survey
from priors.core.sameness import differs_from
from priors.core.unseen import UNSEEN, is_seal
from priors.snapshot.scan import rehash
from priors.snapshot.shapes import NEAR, blind_hashes, definition_shapes, shape_similarity
from priors.store.background import start, worth_it
from priors.store.config import read_config
from priors.store.files import file_size, read_bytes
from priors.store.git import (
    UPSTREAM_REVS,
    commit_graph,
    lacks_upstream,
    ledger_at,
    merge_base,
    pushed_over,
    remote_bases,
    rev_id,
    shallow_commits,
)
from priors.store.ledger import ledger_blocks, ledger_readable, ledger_sample, ledger_tail, read_ledger_bytes
from priors.store.ledger_base import Base, base_at, committed_base
from priors.store.lock import writer_alive
from priors.store.paths import Paths, ledger_missing, require_init
from priors.store.signing import review, signing_on

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple


# ------------------------------------------------------------------ the files around the ledger


def check_files(root: Any, data: bytes, checked: Optional[Checked] = None) -> List[Problem]:
    """PRIORS.md up to date, no staging of committed runs, no stray temp files (`checked`: what
    `check_ledger(data, render=True)` found, so no line is parsed twice)."""
    paths = Paths(root)
    problems: List[Problem] = []
    if checked is None:
        checked = check_ledger(data, render=True)
    committed = checked.committed_runs()
    if not checked.damaged:  # a damaged ledger has no rendering to compare with
        have = read_bytes(paths.rendered)
        if have is None:
            problems.append(Problem(0, "RENDER_MISSING", "missing — run `priors render` and commit it", ".priors/PRIORS.md"))
        elif checked.renders_as(have) is False:
            problems.append(Problem(0, "RENDER_STALE", "out of date with the ledger — run `priors render` and commit it",
                                    ".priors/PRIORS.md"))
    try:  # a config every verb that reads it refuses stops agents' runs and the lessons hooks (newcomer pass 27w)
        read_config(paths)
    except UsageError as exc:
        why = str(exc).replace("priors: ", "", 1).replace(" — nothing was changed. ", " — ")
        why = why[len(".priors/config.json"):].lstrip(": ") if why.startswith(".priors/config.json") else why
        problems.append(Problem(0, "CONFIG_INVALID", one_line(why), ".priors/config.json"))  # (a key may hold a line feed)
    try:
        runs = sorted(os.listdir(str(paths.runs)))
    except OSError:
        runs = []
    for name in runs:
        if name in committed:
            problems.append(Problem(0, "STAGING_OF_COMMITTED_RUN", f"staging left for {name}, which is committed — run "
                                    f"`priors commit --run {name}` to clear it", f".priors/runs/{name}"))
    for dirpath, _dirs, files in os.walk(str(paths.dir)):
        for name in sorted(files):
            if name.endswith(".tmp") and not writer_alive(name):  # a live writer's file is work in progress
                rel = os.path.relpath(os.path.join(dirpath, name), str(root)).replace(os.sep, "/")
                problems.append(Problem(0, "STRAY_TEMP_FILE", "a temporary file left by an interrupted write — delete it", rel))
    return problems


# ------------------------------------------------------------------ the check


def verify(paths: Paths, since: Optional[str], no_git: bool) -> Tuple[Answer, List[str]]:
    """(every problem in `.priors/` — exit code 1 when there is any —, each problem as a GitHub
    Actions `::error` workflow command, for the caller to print where the workflow reads them)."""
    require_init(paths)
    note, also = _push_base(paths, since)
    if note is not None:
        since = also.pop(0) if also else None
    if not no_git and ledger_missing(paths) is None:
        ledger_readable(paths)  # (what the ledger's file is refused for, before git is asked anything)

    def source() -> Any:  # the ledger read a block at a time, never held whole
        return ledger_blocks(paths)

    against = None
    base: Optional[Base] = None  # the ledger at the revision compared with: `--since`, else HEAD's
    if since is not None:
        base = base_at(paths.root, since, paths.ledger)
    elif not no_git:
        base = committed_base(paths.root, paths.ledger)  # a hand edit of a committed line is caught before it is committed
        against = "the last commit (HEAD)" if base is not None else None
    held = Ledgers(paths, base)
    code, added_from = on_the_code(paths.root, held)
    # what a change says its runs did not see is held to the merge that wrote it (a mark none wrote: ignored)
    marked, unseen_runs = merge_marks(paths.root, held.data(), held.old(), since if since is not None else "HEAD") \
        if base is not None and (held.whole or held.adds(b'"unseen"')) else ([], [])
    replayed = start_replay(source, file_size(paths.ledger), lambda: ledger_sample(paths), code, added_from,
                            frozenset(p.line for p in marked if p.code == "UNSEEN_UNFOUNDED"))
    checked = check_ledger(source(), render=True)  # every line parsed once, for every check below
    files = check_files(paths.root, b"", checked)
    checked.table = None  # PRIORS.md's rows, compared: not held while this process replays (its peak memory)
    problems, warnings = list(checked.problems), checked.warnings
    problems += replay_problems(checked, lambda: replayed(checked.named)) + marked
    gone = ledger_missing(paths)
    if gone is not None:
        problems.append(Problem(0, "LEDGER_MISSING", f"missing, but {gone} — restore it "
                                "(`git checkout -- .priors/ledger.jsonl`)", LEDGER_NAME))
    problems += files
    if since is not None and base is not None:
        problems += held.grew_since(base, since)
        for rev in also:  # HEAD's history left the remotes' at several places: it grew only since each
            problems += held.grew_since(base_at(paths.root, rev, paths.ledger), rev)
    elif base is not None and against is not None:
        problems += held.grew_since(base, against)
    # a person's lines: signatures (when .priors/allowed_signers asks), and those this change adds
    read = held.lines() if not no_git or (signing_on(paths.root) and ledger_missing(paths) is None) else lambda: b""
    people = review(paths.root, read, base.lines if base is not None else None,
                    since if since is not None else ("HEAD" if against else None), since or against or "")
    problems += people.problems
    warnings = warnings + people.warnings
    problems.sort(key=lambda p: (p.file != LEDGER_NAME, p.file, p.line))
    calls = awaiting_calls(held) if not problems else []
    body: Dict[str, Any] = {"ok": not problems, "problems": [p.as_dict() for p in problems]}
    if calls:
        body["awaiting_call"] = calls
    if note is not None:
        body["note"] = note
    if warnings:
        body["warnings"] = [w.as_dict() for w in warnings]
    if people.added:
        body["human_lines"] = people.added
    if unseen_runs:
        body["unseen_runs"] = unseen_runs
    lines = ([f"note: {note}"] if note is not None else []) + [one_line(p.text()) for p in problems]
    lines += ["warning: " + one_line(w.text()) for w in warnings]
    n = checked.lines
    if not problems:
        grew = f", grew only since {since}" if since else (f", grew only since {against}" if against else "")
        lines.append(f"ledger sound: {n} line{'s' if n != 1 else ''}" + grew)
    else:
        lines.append(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in .priors/ — what to do: "
                     f"{FAILS_HELP}")
    lines += [one_line(x) for x in human_summary(people.added, since or "HEAD",
                                                 [*people.problems, *people.warnings])]  # after the verdict
    lines += [one_line(x) for x in unseen_summary(unseen_runs)]
    lines += [one_line(x) for x in calls_summary(calls)]
    return (Answer(1 if problems else 0, body, "\n".join(lines), encoded=dumps(body)),
            [github_annotation(p) for p in problems] + [github_annotation(w, "warning") for w in warnings]
            + [github_annotation(Problem(line, "PARALLEL_RUN", text), "notice") for line, text in unseen_notes(unseen_runs)])


FAILS_HELP = 'docs/ci.md in the priors repository, "When verify fails"'


def _push_base(paths: Paths, since: Optional[str]) -> Tuple[Optional[str], List[str]]:
    """For the pre-push hook's `--since @{upstream}`: (a note saying what the push is checked against
    instead, the revisions to check against — none: HEAD), or (None, []) to use `since` as given.

    The remote's ref being pushed over when pre-commit names it; else, with no upstream (a branch's
    first push, a detached HEAD — `git push origin HEAD:main`), where HEAD's history leaves the
    remote-tracking refs'; only with no remote ref at all, or none sharing HEAD's history (an orphan
    branch), HEAD (said so, each in its own words: nothing the remote holds is compared). Exit 2 would
    block the push, and HEAD alone would let a rewritten ledger through. The hook is the person's
    early warning, not the proof: `git push --no-verify` skips it, CI's `--since <base>` does not."""
    if since not in UPSTREAM_REVS:
        return None, []
    pushed = pushed_over(paths.root)
    if pushed is not None:
        return f"checked against the remote's commit this push replaces ({pushed[:12]}, PRE_COMMIT_FROM_REF)", [pushed]
    if not lacks_upstream(paths.root):
        return None, []
    bases, any_remote = remote_bases(paths.root)
    if bases:
        return (f"no upstream (a first push, or a detached HEAD): checked against where this history leaves the"
                f" remote-tracking refs' ({', '.join(b[:12] for b in bases)}) instead of {since}"), bases
    if any_remote:
        return (f"no upstream, and HEAD shares no history with any remote-tracking ref (an orphan branch):"
                f" checked against HEAD instead of {since} — nothing a remote holds was compared; CI's"
                " `verify --since <base>` compares the change"), []
    return (f"no upstream and no remote-tracking refs at all: checked against HEAD instead of {since} —"
            " nothing a remote holds was compared"), []


def human_summary(added: List[Dict[str, Any]], label: str, signing: Sequence[Problem] = ()) -> List[str]:
    """The lines a person wrote that this change adds, for the reviewer to see (docs/ci.md). A line
    says "signed by" only when its signature was checked and holds (`signing`: the signature
    problems verify found)."""
    if not added:
        return []
    bad = {p.line for p in signing if p.code == "BAD_SIGNATURE"}
    unchecked = any(p.code in ("SIGNING_UNAVAILABLE", "SIGNING_OFF") for p in signing)  # (no list: 27ad)
    n = len(added)
    out = [f"{n} decision{'s' if n != 1 else ''} by a person in this change (since {label}):"]
    for item in added:
        if "signer" not in item:
            extra = " — unsigned"
        elif item["line"] in bad:
            extra = f" — its signature as {item['signer']} does not hold"
        elif unchecked:
            extra = f" — says it is signed by {item['signer']}, not checked"
        else:
            extra = f" — signed by {item['signer']}"
        if "same_as" in item:
            extra += f", the same signature as line {item['same_as']}"
        out.append(f"  line {item['line']}: {item['says']}{extra}")
    if any("signer" not in item for item in added):  # (a newcomer could not tell what "unsigned" asks of them)
        out.append('  (unsigned: anyone who can push could have written the line — docs/ci.md, "Human lines are'
                   ' signed", says how a repository proves its person\'s lines)')
    return out


def unseen_notes(held: List[Dict[str, Any]]) -> List[Tuple[int, str]]:
    """(line, what its run did not see) of each marked run a change brings, for `unseen_summary` and for
    a `::notice` under GitHub Actions, so a reviewer of the pull request sees it beside the line."""
    return [(item["line"], f"{item['run']} came from a parallel branch and did not see a person's decision: "
             + _saw(item)) for item in held]


def _saw(item: Dict[str, Any]) -> str:
    return ", ".join(f"{pid} ({'not in its ledger' if status is None else 'it saw it ' + status})"
                     for pid, status in item["unseen"].items())


def unseen_summary(held: List[Dict[str, Any]]) -> List[str]:
    """The runs a change merged from a parallel branch, with the person's decisions each never saw
    (core/unseen.py): judged against what they saw, so their findings beside those decisions stand —
    and wait for the person's call (`status --calls`). The reviewer sees them here."""
    if not held:
        return []
    n = len(held)
    out = [f"{n} run{'s' if n != 1 else ''} from a parallel branch in this change did not see a person's decision"
           " (their findings and lessons beside one wait for your call: `priors status --calls`):"]
    for item in held:
        out.append(f"  line {item['line']}: {item['run']} — {_saw(item)}")
    return out  # (and as `unseen_notes`, one `::notice` a line under GitHub Actions)


def awaiting_calls(held: Ledgers) -> List[Dict[str, Any]]:
    """The findings a change adds that say they differ from a person's decision (`distinct_from`
    naming it) and that no person has answered yet: the door let each in on its word, so whether it is
    the same finding is the person's call (core/sameness.py) — the reviewer of the change sees them
    here, as `status --calls` shows them to the person. The ledger is folded only when such a line is
    among those the change adds."""
    start = held.start()
    if start is None or not (held.whole or held.adds(b'"distinct_from"')):
        return []
    data = held.data()
    at, added_from = start
    if data.find(b'"distinct_from"', at) < 0:
        return []
    tail = data[at:].split(b"\n")
    new: Dict[str, int] = {}
    for no, raw in enumerate(tail, added_from):
        if b'"distinct_from"' in raw and b'"t":"prior"' in raw:
            got = next(records(raw + b"\n"), None)
            rec = got[1] if got is not None else None
            if isinstance(rec, dict) and isinstance(rec.get("id"), str):
                new[rec["id"]] = no
    if not new:
        return []
    st = fold_data(data)
    out: List[Dict[str, Any]] = []
    for pid, no in new.items():
        p = st.priors.get(pid)
        waits = differs_from(st, p) if p is not None else []
        if p is not None and waits:
            out.append({"line": no, "id": pid, "differs_from": [
                dict({"id": q, "status": st.priors[q].status}, **({"ns": st.priors[q].ns} if st.priors[q].ns != p.ns else {}))
                for q in waits]})
    return out


def calls_summary(calls: List[Dict[str, Any]]) -> List[str]:
    """`awaiting_call` for people: each finding, and the decisions it says it differs from."""
    if not calls:
        return []
    n = len(calls)
    says = "finding in this change says it differs" if n == 1 else "findings in this change say they differ"
    out = [f"{n} {says} from a person's decision — your call whether the same (`priors status --calls`):"]
    for item in calls:
        named = ", ".join(f"{q['id']} ({q['status']}{', in ' + q['ns'] if 'ns' in q else ''})" for q in item["differs_from"])
        out.append(f"  line {item['line']}: {item['id']} differs from {named}")
    return out


def on_the_code(root: Any, held: Ledgers) -> Tuple[Dict[str, str], int]:
    """(the code's own hashes, from disk, of every scope in the files that the findings the compared
    change adds stand on, or that its `moved` events move a finding from; the change's first line) —
    for the replay to judge those lines as the door would have (core/on_the_code.py). Nothing without a
    change to compare (the first line 0); no hashes when it adds no finding on a scope: lines already
    at the base were judged when they were added, on the code then. The first line is given for any
    change: every run the change adds is held to today's door (`protocol.door_of`), a lesson's too."""
    start = held.start()
    if start is None:
        return {}, 0
    at, first = start
    found: List[str] = []
    shaped = False  # a seal's `shapes`: what a later run follows a person's decision by (core/on_the_code.py)
    for _no, rec in records(held.added(at)):
        if rec.get("t") == "prior" and isinstance(rec.get("scope_ref"), str):
            found.append(rec["scope_ref"])
        elif rec.get("t") == "event" and rec.get("action") == "moved" and isinstance(rec.get("from"), str):
            found.append(rec["from"])
        elif rec.get("t") == "run" and isinstance(rec.get("shapes"), dict) and rec["shapes"]:
            shaped = True
    if not found and not shaped:
        return {}, first
    refs = [r for r in found if r not in ("", "*") and not r.endswith("/")]
    return OnDisk(root, rehash(root, refs, whole_files=True) if refs else {}), first


class Ledgers:
    """The working ledger and the one at the revision compared with (`base`, store/ledger_base.py), as the checks
    read them: the lines a change adds from the working file, a block at a time (`added`, `adds`) — both whole
    (`data`, `old`) only for a change that does more than add lines, which `check_since` compares line by line,
    or one adding a line some check reads with the rest of the ledger (a merge's `unseen` mark, a finding that
    says it differs from a person's decision). At 100k priors the two whole were ~300 MB of the process."""

    def __init__(self, paths: Paths, base: Optional[Base]) -> None:
        self.paths, self.base = paths, base
        self.held: Optional[bytes] = None
        self.old_held: Optional[bytes] = None

    @property
    def whole(self) -> bool:
        """Whether the change does more than add lines (or compares with nothing)."""
        return self.base is not None and not self.base.grown

    def data(self) -> bytes:
        """The working ledger, whole (read once)."""
        if self.held is None:
            self.held = b"" if ledger_missing(self.paths) is not None else read_ledger_bytes(self.paths)
        return self.held

    def old(self) -> bytes:
        """The ledger at the revision, whole (read once)."""
        if self.old_held is None:
            self.old_held = self.base.whole() if self.base is not None else b""
        return self.old_held

    def start(self) -> Optional[Tuple[int, int]]:
        """`change_start`, of the comparison when the change only adds lines."""
        base = self.base
        if base is None:
            return None
        if not base.grown:
            return change_start(self.data(), self.old())
        return (base.size, base.lines + 1) if base.size < base.work_size else None

    def added(self, at: int) -> Any:
        """The working ledger from byte `at` on (whole, or a block at a time)."""
        return self.data()[at:] if self.whole or self.held is not None else ledger_tail(self.paths, at)

    def adds(self, marker: bytes) -> bool:
        """Whether a line the change adds (one only adding lines) spells `marker`."""
        base = self.base
        return base is not None and any(marker in piece for piece in whole_line_pieces(ledger_tail(self.paths, base.size)))

    def grew_since(self, base: Base, rev: str) -> List[Problem]:
        """`check_since` of the working ledger with `base` (the ledger at `rev`): nothing when it only grew."""
        return [] if base.grown else check_since(base.whole() if base is not self.base else self.old(), self.data(), rev)

    def lines(self) -> Callable[[], Any]:
        """What gives the working ledger for the human lines' review: whole when held, else a block at a time."""
        return (lambda: self.data()) if self.held is not None else (lambda: ledger_blocks(self.paths))


def change_start(data: bytes, old: Optional[bytes]) -> Optional[Tuple[int, int]]:
    """(the byte offset, the line number) of the first line the compared change adds to the ledger —
    None without a change to compare or when it adds none. A person's redaction may rewrite a base line
    in place (any other edit of one is named by `check_since`): the change's lines then follow the base's
    count of lines, and the ledger may be shorter than the base's."""
    if old is None:
        return None
    before = old.count(b"\n") + (0 if old.endswith(b"\n") or not old else 1)  # (the base's lines)
    at = len(old)
    if not data.startswith(old):
        at = 0
        for _ in range(before):
            at = data.find(b"\n", at) + 1
            if at == 0:
                return None
    return (at, before + 1) if at < len(data) else None


class OnDisk(dict):
    """The code's own hashes (`on_the_code`): those of the files the change's findings name, read at
    once; a person's scope asked for that they do not hold — one a verdict of the change states, in
    a file no finding names — read from disk, with its file, when first asked (`rehash`). `blind`:
    a scope's hash as the keeper gave it before indentation counted (`shapes.blind_hashes`), which a
    person's decision made then still holds while the code is unchanged under that scheme."""

    def __init__(self, root: Any, known: Dict[str, str]) -> None:
        super().__init__(known)
        self.root = root
        self.asked: set = set()
        self.blinds: Dict[str, Optional[str]] = {}
        self.shapes: Dict[str, Dict[str, str]] = {}  # file -> the shapes of its definitions, read once

    def blind(self, ref: str) -> Optional[str]:
        if ref not in self.blinds:
            self.blinds[ref] = blind_hashes(self.root, [ref]).get(ref)
        return self.blinds[ref]

    def __bool__(self) -> bool:
        return True  # (a change's findings to judge, even before a hash is read)

    def fetch(self, refs: List[str]) -> None:
        """Read the refs not read yet, together (a finding on `*` stands around every person's scope)."""
        missing = sorted({r for r in refs if isinstance(r, str) and r not in self and r not in self.asked})
        if missing:
            self.asked.update(missing)
            self.update(rehash(self.root, missing, whole_files=True))

    def get(self, ref: Any, default: Any = None) -> Any:
        self.fetch([ref])
        return dict.get(self, ref, default)

    def inside(self, ref: str) -> List[str]:
        """The definitions and files the checkout holds inside `ref` (a file, a folder `d/`, `*`), read when
        first asked (core/on_the_code.py `followed_here`: where a person's decided code may have gone)."""
        if is_file_ref(ref):
            self.fetch([ref])  # (a file is read whole: its definitions come with it)
            return sorted(r for r in self if r.startswith(ref + "#"))
        if ref != "*" and not ref.endswith("/"):
            return []
        key = "\0inside:" + ref
        if key not in self.asked:
            self.asked.add(key)
            for r, h in rehash(self.root, [ref], whole_files=True).items():
                self.setdefault(r, h)
        return sorted(r for r in self if (ref == "*" or r.startswith(ref)) and r != ref and r != "*"
                      and not r.endswith("/") and not r.startswith("\0"))

    near = NEAR  # (how alike two shapes are to be "nearly the same": the keeper's own line, core/moves.py)

    def like(self, a: str, b: str) -> float:
        """How alike two definitions' shapes are, as the keeper weighs a move (`snapshot.shapes.shape_similarity`)."""
        return shape_similarity(a, b)

    def shape(self, ref: str) -> Optional[str]:
        """The shape of the definition `ref` in the checkout (snapshot/shapes.py), or None."""
        file = ref.split("#", 1)[0]
        if file not in self.shapes:
            h = self.get(file)
            self.shapes[file] = definition_shapes(self.root, [file], {file: h}) if h is not None else {}
        return self.shapes[file].get(ref)


def merge_marks(root: Any, data: bytes, old: bytes, stop: str) -> Tuple[List[Problem], List[Dict[str, Any]]]:
    """Each seal the change adds (since `stop`, in the work tree) that says what its run did not see
    (core/unseen.py), traced back through git to the merge that wrote it: a line every commit on the
    way held just so, until one whose first parent lacks it — a merge, whose driver, given the same
    three ledgers, writes that very mark (the part it carried from their side traced on in turn), or
    the base (`stop`), whose lines are not judged again. A mark anything else wrote is named; one whose
    trace reaches where a shallow clone's history stops cannot be traced, and says so. With the problems,
    the runs whose marks hold (`unseen_runs`), for the reviewer to see what they did not see."""
    first = old.count(b"\n") + (0 if old.endswith(b"\n") or not old else 1) + 1
    tail = data[len(old):] if data.startswith(old) and old.endswith(b"\n") else data  # (the change's lines)
    if b'"unseen"' not in tail:
        return [], []
    skip = first - 1 if tail is not data else 0
    marked = [(no + skip, rec) for no, rec in records(tail) if no + skip >= first and is_seal(rec) and UNSEEN in rec]
    if not marked:
        return [], []
    head = rev_id(root, "HEAD")
    cut = set(shallow_commits(root))
    tips = [t for t in (head, rev_id(root, "MERGE_HEAD")) if t is not None]
    graph = (commit_graph(root, tips, stop) if tips else None) or {}
    merges: Dict[Tuple[str, str], List[Tuple[Any, Any]]] = {}
    # commit -> (its ledger's line count as split on newlines, the lines that may carry a mark by number):
    # the trace walks every commit since a merge, and keeping each one's whole ledger held commits x size
    kept: Dict[str, Tuple[int, Dict[int, bytes]]] = {}

    def ledger(commit: str) -> bytes:
        return ledger_at(root, commit)

    def shape(commit: str) -> Tuple[int, Dict[int, bytes]]:
        if commit not in kept:
            got = ledger(commit).split(b"\n")
            kept[commit] = (len(got), {n: raw for n, raw in enumerate(got, 1)  # (a key spelled with \u escapes too)
                                       if b"nseen" in raw or b"\\u" in raw})
        return kept[commit]

    def count(commit: str) -> int:
        return shape(commit)[0]

    def mark_at(commit: str, pos: int) -> Any:
        n, marked = shape(commit)
        raw = marked.get(pos)
        if pos > n or raw is None or not raw.startswith(b"{"):
            return None
        rec = next((r for _n, r in records(raw + b"\n")), None)
        return rec.get(UNSEEN) if rec is not None else None

    def founded(pos: int, mark: Any) -> Optional[bool]:
        parents: List[str] = tips  # (the work tree's: HEAD, and MERGE_HEAD during a merge)
        node = ""
        while True:
            if len(parents) == 2 and pos > count(parents[0]) - 1:  # their side's line, in a merge
                ours, theirs = parents
                base = merge_base(root, ours, theirs)
                if base is None:
                    return False
                n1, nb = count(ours) - 1, count(base) - 1
                if (ours, theirs) not in merges:  # (every mark of one merge, worked out once)
                    merges[(ours, theirs)] = merged_marks(ledger(base), ledger(ours), ledger(theirs))
                got = merges[(ours, theirs)]
                want, carried = got[pos - n1 - 1] if pos - n1 - 1 < len(got) else (None, None)
                if want is None or want != mark:
                    return False
                if not carried:
                    return True
                node, pos, mark = theirs, nb + pos - n1, carried  # what their side's line carried: on its way
            elif not parents and node in cut:
                return None  # (a shallow clone: the history that would found it is not here)
            elif not parents or len(parents) > 2 or mark_at(parents[0], pos) != mark:
                return False  # a plain commit (or an edit not yet committed) wrote it, or changed it
            else:
                node = parents[0]
            nxt = graph.get(node)
            if nxt is None:  # reachable from the base: only a line the base's ledger holds was judged (one an
                # older commit held beyond it — a branch merged `-s ours`, or a commit a later one undid — never was)
                return mark_at(node, pos) == mark and old.startswith(ledger(node))
            parents = nxt

    problems: List[Problem] = []
    held: List[Dict[str, Any]] = []
    for no, rec in marked:
        got = founded(no, rec.get(UNSEEN)) if rec.get(UNSEEN) is not None else False  # (`null`: no merge writes it, and
        # a trace would take it for the absent line every commit before the run's holds)
        if got:
            held.append({"line": no, "run": rec.get("run"), "unseen": rec.get(UNSEEN)})
        elif got is None:
            problems.append(Problem(no, "UNSEEN_UNTRACED", f"the run record of {rec.get('run')} says what its run did not"
                                    " see of a person's decisions (`unseen`), and this clone's history stops before the"
                                    " merge that wrote it (a shallow clone): fetch the whole history (`git fetch"
                                    " --unshallow`; in GitHub Actions, actions/checkout with `fetch-depth: 0`) and run"
                                    " verify again"))
        else:
            problems.append(Problem(no, "UNSEEN_UNFOUNDED", f"the run record of {rec.get('run')} says what its run did not"
                                    f" see of a person's decisions (`unseen`), but no merge since {stop} wrote that: the"
                                    " merge driver marks a parallel branch's runs with the decisions made on the other"
                                    " side, and nothing else writes it (core/unseen.py)"))
    return problems, held


def start_replay(source: Callable[[], Any], size: int, sample: Callable[[], List[bytes]],
                 code: Optional[Dict[str, str]] = None, added_from: int = 0,
                 distrust: FrozenSet[int] = frozenset()) -> Callable[[FrozenSet[str]], List[Problem]]:
    """The protocol replayed (core/ledger_replay.py), begun: what the returned function gives.

    On a large ledger where a second process is safe (store/background.py), the replay is split by
    namespace between a child, started now, and this process, which first checks the lines
    (`check_ledger`): each half judges only its namespaces and folds of the others only what a rule
    of its own can read (core/replay_split.py), and the child takes the larger half, so both end
    about together (the line checks weigh about `HEAD_START` of what judging every line adds to a
    replay; the namespaces are weighed on a `sample` of the ledger's lines). The child finds for
    itself the priors other lines name (`replay_split.survey`); this process is given them (`named`)
    by its line checks, which read every line anyway. Elsewhere the
    whole replay runs here, when its answer is asked for."""
    packed = size >= PACKED_FROM
    if not worth_it(size):
        return lambda named: replay(source(), disk=code, from_line=added_from, distrust=distrust, packed=packed)
    lines = sample()
    mine = split_namespaces(namespace_weights(lines), HEAD_START_BY_MEANING if judged_by_meaning(lines) else HEAD_START)
    child = start(lambda: [p.values() for p in replay(source, Share(mine, inside=False), survey(source(), weigh=False)[1],
                                                      code, added_from, distrust, packed)], size)

    def collect(named: FrozenSet[str]) -> List[Problem]:
        own = replay(source, Share(mine, inside=True), named, code, added_from, distrust, packed) if mine else []
        return in_order(own + [Problem(*v) for v in child()])

    return collect


PACKED_FROM = 8 << 20  # a ledger this large (~14k priors) has its priors packed in the replay: below, the ~2% more time
# packing costs buys memory no one misses (~40 MB at 10k priors, unpacked)
HEAD_START = 0.3  # verify's line checks take about 0.3 of what judging every line adds to a replay (docs/reliability.md)
HEAD_START_BY_MEANING = 0.06  # ... and about 0.06 where runs are sealed by a door comparing lessons by meaning (the same)


def replay_problems(checked: Checked, replayed: Callable[[], List[Problem]]) -> List[Problem]:
    """What the protocol replayed over the ledger found (core/ledger_replay.py): every line the door
    would have refused, less what the line checks already name. Nothing over a damaged ledger, which
    no verb reads (its damage is the problem named)."""
    if checked.damaged:
        return []  # (a replay in a second process is left to end with this one)
    named = {(p.line, p.code) for p in checked.problems}  # an agent verdict after a binding decision is named there too
    return [p for p in replayed() if (p.line, p.code) not in named]


def github_annotation(p: Problem, kind: str = "error") -> str:
    """`::error file=…,line=…,title=…::message` (or `::warning`) with GitHub's escaping."""

    def esc_data(s: str) -> str:
        return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def esc_prop(s: str) -> str:
        return esc_data(s).replace(":", "%3A").replace(",", "%2C")

    props = [f"file={esc_prop(p.file)}"]
    if p.line:
        props.append(f"line={p.line}")
    props.append(f"title={esc_prop('priors ' + p.code)}")
    return f"::{kind} {','.join(props)}::{esc_data(p.message)}"


