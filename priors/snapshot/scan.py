"""Take a snapshot: hash every listed file (reusing the stat cache), on one or more cores.
"""

from __future__ import annotations

import json
import marshal
import os
import stat as _stat
import sys
import time
from pathlib import Path

from priors.core.canonical import JSONError, loads, sha12_bytes
from priors.core.errors import MachineError, UsageError
from priors.core.vocabulary import MAX_INPUT_BYTES
from priors.snapshot.anchors import VERSION, anchors_for, language_of
from priors.snapshot.hashing import (
    ROOT_REF,
    IndentedLines,
    combine,
    dumps_map,
    indent_counts,
    is_binary,
    link_hash,
    pack,
    read_or_stream,
    squeezable,
    squeeze,
    text_hash,
    tree_entries,
)
from priors.snapshot.listing import Selection, list_tree, resolve_paths
from priors.snapshot.maptext import anchor_json, map_text, packed_json
from priors.store.files import atomic_write, read_bytes, read_stdin

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~5 ms per CLI call
    from multiprocessing.context import BaseContext
    from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

    Progress = Callable[[int, int], None]
    Job = Tuple[str, str, bool]  # (ref, absolute path, want anchors)
    # (ref, hash, packed anchors, problem, the anchors' JSON text: `maptext.anchor_json`)
    Result = Tuple[str, Optional[str], Optional[str], Optional[str], Optional[str]]


CACHE_FORMAT = 1
RACY_NS = 2_000_000_000  # an entry modified this close to the snapshot is never cached (racy-git)


def file_result(rel: str, data: bytes, want_anchors: bool) -> Tuple[str, Optional[str]]:
    """(file hash, packed anchors or None) for one file's bytes; anchors only for supported text files."""
    h, defs = file_anchors(rel, data, want_anchors)
    return h, None if defs is None else pack(defs)


def file_anchors(rel: str, data: bytes, want_anchors: bool) -> Tuple[str, Optional[List[Tuple[str, str]]]]:
    """(file hash, `[(name, hash)]` of its definitions or None when not wanted) for one file's bytes."""
    if is_binary(data):
        return sha12_bytes(data), ([] if want_anchors else None)
    if want_anchors and language_of(rel) is not None:  # the file's hash and its definitions' share one pass
        if not indent_counts(rel):
            if squeezable(data):
                squeezed = squeeze(data)
                return sha12_bytes(squeezed.strip(b" ")), anchors_for(rel, data.decode("utf-8"), squeezed)
        elif IndentedLines.fits(data):
            lines = IndentedLines(data)
            return sha12_bytes(lines.whole()), anchors_for(rel, data.decode("utf-8"), lines=lines)
    h = text_hash(data, rel)
    if not want_anchors:
        return h, None
    if language_of(rel) is None:
        return h, []
    return h, anchors_for(rel, data.decode("utf-8", "replace"))


# ---------------------------------------------------------------- the cache (shell)

def _cache_path(root: Path) -> Optional[Path]:
    priors_dir = root / ".priors"
    return priors_dir / "cache" / "snapshot.json" if priors_dir.is_dir() else None


def _cache_tag() -> str:
    return f"{CACHE_FORMAT}/{VERSION}"


def load_cache(path: Optional[Path]) -> Dict[str, list]:
    """Entries `ref -> [size, mtime_ns, ino, ctime_ns, hash, anchors|None]`; anything wrong → empty."""
    if path is None:
        return {}
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read().decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != _cache_tag():
            return {}
        entries = doc.get("entries")
        if not isinstance(entries, dict):
            return {}
        return entries
    except Exception:  # a corrupt cache is only a slower run, never an error
        return {}


def cache_hit(entry, key: List[int], anchors: bool) -> bool:
    """Trust an entry only when it is well-formed, its stat identity matches, and it has what we need."""
    return (
        type(entry) is list and len(entry) == 6 and entry[:4] == key and type(entry[4]) is str
        and (entry[5] is None or (type(entry[5]) is str and (entry[5] == "" or entry[5].count("\t") % 2 == 1)))
        and (not anchors or entry[5] is not None)
    )


def save_cache(path: Optional[Path], entries: Dict[str, list]) -> None:
    """Write atomically; failing to write a cache is never an error."""
    if path is None:
        return
    try:

        path.parent.mkdir(exist_ok=True)
        body = json.dumps({"format": _cache_tag(), "entries": entries}, separators=(",", ":"), sort_keys=True)
        atomic_write(path, body.encode("utf-8"))
    except Exception:
        pass


def stat_key(st: os.stat_result) -> List[int]:
    """A file's identity the way git's index sees it: size, mtime, inode, ctime."""
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


# ---------------------------------------------------------------- hashing many files (shell)


def hash_job(job: Job) -> Result:
    """One file's hash and anchors (a file too large to read whole gets none: it is its own
    scope). Opened without blocking and refused unless regular: a FIFO swapped in after the
    listing would otherwise hang the snapshot. The anchors come packed (for the cache) and as the
    map's JSON text (`maptext.anchor_json`): written here, on whichever core hashed the file."""
    ref, path, want = job
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        st = os.fstat(fd)
        if not _stat.S_ISREG(st.st_mode):
            os.close(fd)
            return ref, None, None, f"cannot read {ref}: not a regular file", None
        h, data = read_or_stream(fd, "content", ref, st.st_size)
    except OSError as exc:
        return ref, None, None, f"cannot read {ref}: {exc.strerror or exc}", None
    if data is None:
        return ref, h, ("" if want else None), None, ""
    h, defs = file_anchors(ref, data, want)
    if defs is None:
        return ref, h, None, None, ""
    return ref, h, pack(defs), None, anchor_json(ref, defs)


def hash_chunk(jobs: List[Job]) -> List[Result]:
    return [hash_job(j) for j in jobs]


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


POOL_MIN_WEIGHT = 4_000_000  # bytes of work (Python parsing counted heavier) below which one process wins


def _weight(job: Job, size: int) -> int:
    return size * (40 if job[2] and job[0].endswith((".py", ".pyi")) else 1)


def run_jobs(jobs: List[Job], sizes: Dict[str, int], progress: Optional[Progress]) -> List[Result]:
    """Hash in two processes when the work is big enough to pay for them; same results either way."""
    total = len(jobs)
    weight = sum(_weight(j, sizes.get(j[0], 0)) for j in jobs)
    workers = _workers()
    if workers > 1 and weight >= POOL_MIN_WEIGHT and total >= 8:
        try:
            if hasattr(os, "fork") and sys.platform.startswith("linux"):
                got = _run_forked(jobs, sizes, workers, progress)
            else:
                got = _run_pool(jobs, sizes, workers, progress)
        except Exception:
            pass  # no processes here (sandbox, frozen app…): fall back to one
        else:  # in the jobs' order, as one process gives them: which process took which file is chance, and the
            place = {job[0]: i for i, job in enumerate(jobs)}  # problems are told in this order (hostile pass 27am)
            return sorted(got, key=lambda result: place[result[0]])
    out: List[Result] = []
    for n, job in enumerate(jobs, 1):
        out.append(hash_job(job))
        if progress and (n % 200 == 0 or n == total):
            progress(n, total)
    return out


def _run_forked(jobs: List[Job], sizes: Dict[str, int], workers: int, progress: Optional[Progress]) -> List[Result]:
    """Fork helpers that hash what they take and send it back through a pipe (marshal).

    Forking costs a few milliseconds, where importing concurrent.futures and
    starting a pool costs over a hundred — and the snapshot runs on every
    agent call. Every process takes the next job, heaviest first, from a
    counter they share (`_Counter`): shares dealt in advance by a guessed
    weight ended up to half a second apart on the standard library. A job a
    helper took but did not send back (it failed for any reason) is done here.
    """
    order = sorted(jobs, key=lambda j: (-_weight(j, sizes.get(j[0], 0)), j[0]))
    counter = _Counter()
    children = []
    try:
        for _ in range(workers - 1):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the helper: never returns
                code = 1
                try:
                    os.close(r)
                    payload = marshal.dumps(_take_jobs(order, counter, None))
                    with os.fdopen(w, "wb") as fh:
                        fh.write(payload)
                    code = 0
                finally:
                    os._exit(code)
            os.close(w)
            children.append((pid, r))
        out = _take_jobs(order, counter, progress)
    finally:
        counter.close()
    for pid, r in children:
        with os.fdopen(r, "rb") as fh:
            payload = fh.read()
        _, status = os.waitpid(pid, 0)
        try:
            got = marshal.loads(payload) if status == 0 else None
        except (EOFError, ValueError, TypeError):
            got = None
        if isinstance(got, list):
            out.extend(got)
    done = {result[0] for result in out}
    out.extend(hash_job(job) for job in order if job[0] not in done)
    if progress:
        progress(len(jobs), len(jobs))
    return out


def _take_jobs(order: List[Job], counter: "_Counter", progress: Optional[Progress]) -> List[Result]:
    """Hash the next job `counter` gives, until there is none."""
    out: List[Result] = []
    while True:
        i = counter.take()
        if i >= len(order):
            return out
        out.append(hash_job(order[i]))
        if progress and len(out) % 100 == 0:
            progress(i, len(order))


class _Counter:
    """The next job's number, shared by forked processes: in a memory file (`memfd`), moved under a
    POSIX lock, which the kernel drops if its holder dies (no helper can leave the others waiting)."""

    def __init__(self) -> None:
        self.fd = os.memfd_create("priors-snapshot-jobs")
        os.pwrite(self.fd, (0).to_bytes(8, "little"), 0)

    def take(self) -> int:
        os.lockf(self.fd, os.F_LOCK, 0)
        try:
            i = int.from_bytes(os.pread(self.fd, 8, 0), "little")
            os.pwrite(self.fd, (i + 1).to_bytes(8, "little"), 0)
        finally:
            os.lockf(self.fd, os.F_ULOCK, 0)
        return i

    def close(self) -> None:
        os.close(self.fd)


def _run_pool(jobs: List[Job], sizes: Dict[str, int], workers: int, progress: Optional[Progress],
              mp_context: Optional[BaseContext] = None) -> List[Result]:
    """A process pool (where there is no fork: macOS, Windows start helpers by spawning them);
    `mp_context` is for tests, which hold the spawned path to the serial one."""
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ordered = sorted(jobs, key=lambda j: -_weight(j, sizes.get(j[0], 0)))
    nchunks = min(len(ordered), workers * 8)
    chunks = [ordered[i::nchunks] for i in range(nchunks)]
    out: List[Result] = []
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp_context) as pool:
        futures = [pool.submit(hash_chunk, c) for c in chunks]
        for fut in as_completed(futures):
            out.extend(fut.result())
            if progress:
                progress(len(out), len(jobs))
    return out


# ---------------------------------------------------------------- the engine

def take_snapshot(
    root: Path,
    paths: Optional[List[str]] = None,
    anchors: bool = True,
    tools: Optional[Dict[str, str]] = None,
    merge: Optional[dict] = None,
    progress: Optional[Progress] = None,
    problems: Optional[List[str]] = None,
    use_cache: bool = True,
    cwd: Optional[str] = None,
) -> Dict[str, str]:
    """The scope map of `root` (or of `paths` under it); refs are always relative to the root.

    `paths` are PATH arguments as a user types them: relative to `cwd`
    (default: the current directory) or absolute, and inside the root —
    otherwise a UsageError. With them, only entries under those paths are
    present, and `*` only when the root itself was named: a partial `*` or
    ancestor `dir/` would lie about what it covers. Problems (unreadable
    files, undecodable names) are appended to `problems` when given, else
    written to stderr.
    """
    taken = _Taken(root, paths, anchors, progress, problems, use_cache, cwd)
    out = taken.mapping(tools, merge)
    taken.finish()
    return out


def snapshot_line(
    root: Path,
    paths: Optional[List[str]] = None,
    anchors: bool = True,
    tools: Optional[Dict[str, str]] = None,
    merge: Optional[dict] = None,
    progress: Optional[Progress] = None,
    use_cache: bool = True,
    cwd: Optional[str] = None,
) -> Tuple[str, bool]:
    """(`hashing.dumps_map(take_snapshot(…))` — the line `priors snapshot` prints —, whether that line is
    known to be printable ASCII). Joined from each file's ready piece of JSON (`maptext`) where that
    provably gives the same text: encoding a dict of every ref after the hashing was a sixth of a
    first snapshot's wall time, on one core. A line so joined is printable ASCII — `map_text` showed
    every key and value to be — so the command line writes it unchecked (looking at 5 MB for controls
    cost ~20 ms, serial)."""
    taken = _Taken(root, paths, anchors, progress, None, use_cache, cwd)
    text = None
    if not tools and not merge and not taken.hidden:
        text = map_text(taken.plan.files, taken.pieces(), taken.tree())
    plain = text is not None
    if text is None:
        text = dumps_map(taken.mapping(tools, merge))
    taken.finish()
    return text, plain


class _Taken:
    """One snapshot's hashes, before they are assembled into a map (`mapping`, `snapshot_line`)."""

    def __init__(self, root: Path, paths: Optional[List[str]], anchors: bool, progress: Optional[Progress],
                 problems: Optional[List[str]], use_cache: bool, cwd: Optional[str]) -> None:
        self.root = root = Path(os.path.abspath(str(root)))
        self.anchors = anchors
        self.problems = problems
        started = time.time_ns()
        self.sel = sel = Selection(resolve_paths(root, paths, cwd))
        report: List[str] = [] if problems is None else problems
        self.report = report
        listing = list_tree(root, None if sel.whole else sel.prefixes)  # a large tree is not walked for one file
        report.extend(listing.problems)
        refs = [r for r in listing.refs if sel.wants(r)]

        self.cache_file = cache_file = _cache_path(root) if use_cache else None
        self.cache = cache = load_cache(cache_file)
        self.plan = plan = _plan(root, refs, cache, anchors, report)
        self.new_cache: Dict[str, list] = {} if sel.whole else dict(cache)
        self.new_cache.update(plan.reused)
        self.changed = _absorb(run_jobs(plan.jobs, plan.sizes, progress), plan, cache, started, self.new_cache,
                               report)
        self.hidden = hidden = ambiguous_refs(plan.files, () if sel.whole else _listed_heads(root, plan.files))
        for ref, head in hidden.items():
            report.append(f"{ref}: left out of the map — its name reads as a definition in {head}"
                          " (`file#name`); rename it to give it a scope of its own (its folder's hash still counts it)")

    def mapping(self, tools: Optional[Dict[str, str]], merge: Optional[dict]) -> Dict[str, str]:
        """The map as a dict: files, anchors, folders, `*`, then the tools' and merged refs."""
        plan, sel = self.plan, self.sel
        out = combine(plan.files, plan.defs if self.anchors else {}, sel.full_dir, sel.whole, self.hidden)
        _add_extras(out, "--tool", tool_hashes(tools or {}, self.root))
        _add_extras(out, "--merge", merge or {})
        return out

    def pieces(self) -> Dict[str, Optional[str]]:
        """Each file's anchors as the map's JSON text: from its job, or (a cache hit) from its packed anchors."""
        if not self.anchors:
            return {}
        plan = self.plan
        pieces = dict(plan.pieces)
        for ref, packed in plan.defs.items():
            if ref not in pieces:
                pieces[ref] = packed_json(ref, packed)
        return pieces

    def tree(self) -> Dict[str, str]:
        return tree_entries(self.plan.files, self.sel.full_dir, self.sel.whole)

    def finish(self) -> None:
        """Save the cache when it changed, and tell the problems (to stderr unless the caller collects them)."""
        if self.cache_file is not None and (self.changed or len(self.new_cache) != len(self.cache)):
            save_cache(self.cache_file, self.new_cache)
        if self.problems is None:
            for p in self.report:
                sys.stderr.write(f"priors snapshot: {p}\n")


def rehash(root: Path, refs: List[str], whole_files: bool = False) -> Dict[str, str]:
    """The keeper's own hashes of `refs` (files, definitions `f.py#X`, folders `d/`, `*`), from what is
    on disk now: exactly what a snapshot of them says. A ref that names nothing on disk (or a path
    outside the root) is absent from the answer. Only the files the refs name are read, so checking a
    few scopes costs a few files, not a snapshot — and they are read whole, never through the stat
    cache: `.priors/cache/` is anyone's to write, and a hash it held for a person's scope would make
    the decision look out of date. `whole_files`: every ref of the files the refs name, not only theirs."""
    root = Path(os.path.abspath(str(root)))
    want = sorted(set(refs))
    paths = set()
    for ref in want:
        for base in {ref.split("#", 1)[0].rstrip("/"), ref.rstrip("/")} if ref != ROOT_REF else {""}:
            parts = base.split("/") if base else []
            if any(p in ("", ".", "..") or "\\" in p for p in parts) or os.path.isabs(base):
                continue
            full = os.path.join(str(root), *parts)
            if os.path.lexists(full):
                paths.add(full)
    if not paths:
        return {}
    try:
        snap = take_snapshot(root, sorted(paths), problems=[], cwd=str(root), use_cache=False)
    except UsageError:  # a path that left the root through a link: the keeper has no hash for it
        return {}
    return dict(snap) if whole_files else {r: snap[r] for r in want if r in snap}


def ambiguous_refs(files: Dict[str, str], elsewhere: Iterable[str] = ()) -> Dict[str, str]:
    """Files whose path reads as a definition ref: `src/a.py#f` beside a file `src/a.py`. Such a ref
    would name the file and the definition `f` of src/a.py at once (one hash silently replacing the
    other), so the file gets no ref of its own. Every `#` counts: `x#y.py#f` beside a file `x#y.py`
    reads as its definition `f` (hostile pass 32c). `elsewhere`: the tree's files outside a
    snapshot of some paths, which a ref of it may read as a definition of all the same. Each, in
    order, with the file it reads as a definition of."""
    also = set(elsewhere)
    out: Dict[str, str] = {}
    for r in sorted(r for r in files if "#" in r):
        head = next((h for h in _heads(r) if h in files or h in also), None)
        if head is not None:
            out[r] = head
    return out


def _heads(ref: str) -> Iterator[str]:
    """`a#b#c` → `a`, `a#b`: what `ref` would be a definition of, read at each `#`."""
    at = ref.find("#")
    while at >= 0:
        yield ref[:at]
        at = ref.find("#", at + 1)


def _listed_heads(root: Path, files: Dict[str, str]) -> List[str]:
    """The files of the whole tree's listing that a `#` ref of this snapshot of some paths would be read
    as a definition of: listed as the whole snapshot lists them, so a ref means what it means there."""
    heads = sorted({h for r in files if "#" in r for h in _heads(r) if h and h not in files})
    return [r for r in list_tree(root, heads).refs if r in heads] if heads else []


class _Plan:
    """What one snapshot must do: hashes already known (links, cache hits) and the files left to read."""

    def __init__(self) -> None:
        self.files: Dict[str, str] = {}
        self.defs: Dict[str, str] = {}
        self.reused: Dict[str, list] = {}
        self.jobs: List[Job] = []
        self.keys: Dict[str, List[int]] = {}
        self.sizes: Dict[str, int] = {}
        self.pieces: Dict[str, Optional[str]] = {}  # ref -> its anchors' JSON text (`maptext.anchor_json`)


def _plan(root: Path, refs: List[str], cache: Dict[str, list], anchors: bool, report: List[str]) -> _Plan:
    """lstat every ref: symlinks hash their target, cache hits are reused, regular files become jobs."""
    plan = _Plan()
    prefix = os.path.join(str(root), "")  # (a ref has no empty, `.` or `..` part: joined by hand, not by os.path.join)
    for ref in refs:
        full = prefix + (ref if os.sep == "/" else ref.replace("/", os.sep))
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue  # tracked but deleted in the work tree: it is gone
        except OSError as exc:
            report.append(f"cannot stat {ref}: {exc.strerror or exc}")
            continue
        if _stat.S_ISLNK(st.st_mode):
            try:
                plan.files[ref] = link_hash(os.readlink(full).replace(os.sep, "/"))
            except OSError as exc:
                report.append(f"cannot read link {ref}: {exc.strerror or exc}")
            continue
        if not _stat.S_ISREG(st.st_mode):
            continue  # submodules, sockets, fifos: not content we can hash
        key = stat_key(st)
        hit = cache.get(ref)
        if hit is not None and cache_hit(hit, key, anchors):
            plan.files[ref] = hit[4]
            if anchors:
                plan.defs[ref] = hit[5]
            plan.reused[ref] = hit
            continue
        plan.keys[ref] = key
        plan.sizes[ref] = st.st_size
        plan.jobs.append((ref, full, anchors))
    return plan


def _absorb(results: List[Result], plan: _Plan, cache: Dict[str, list], started: int,
            new_cache: Dict[str, list], report: List[str]) -> bool:
    """Take fresh hashes into the plan and the cache — except racy ones (changed within 2 s of the start)."""
    changed = False
    for ref, h, anc, problem, piece in results:
        if problem is not None or h is None:
            report.append(problem or f"cannot hash {ref}")
            continue
        plan.files[ref] = h
        if anc is not None:
            plan.defs[ref] = anc
            plan.pieces[ref] = piece
        key = plan.keys[ref]
        if max(key[1], key[3]) < started - RACY_NS:
            old = cache.get(ref)
            keep = anc if anc is not None else (old[5] if old is not None and cache_hit(old, key, True) else None)
            new_cache[ref] = key + [h, keep]
            changed = True
        else:
            new_cache.pop(ref, None)
    return changed


def _add_extras(out: Dict[str, str], flag: str, extra: Dict[str, str]) -> None:
    """Tool and merged refs join the map; silently replacing a computed hash would be a lie."""
    for k, v in extra.items():
        if k in out and out[k] != v:
            raise UsageError(f"priors snapshot: {flag} ref {k!r} clashes with the snapshot's own hash for it")
        out[k] = v


# ---------------------------------------------------------------- tools and merges (validation)

def parse_tool(spec: str) -> Tuple[str, str]:
    name, eq, command = spec.partition("=")
    name = name.strip()
    if not eq or not name or not command.strip():
        raise UsageError(f"priors snapshot: --tool expects NAME=COMMAND, got {spec!r}")
    return name, command


def tool_hashes(tools: Dict[str, str], root: Path) -> Dict[str, str]:
    """Run each tool command (through the shell, in the root) and hash its raw stdout."""
    if not tools:
        return {}
    import subprocess

    out: Dict[str, str] = {}
    for name in sorted(tools):
        command = tools[name]
        try:
            proc = subprocess.run(command, shell=True, cwd=str(root), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=120)
        except OSError as exc:  # the shell itself could not be started (no process, no memory): the machine's
            raise MachineError(f"priors snapshot: --tool {name}: cannot run {command!r}: {exc}") from None
        except subprocess.SubprocessError as exc:  # the caller's command timed out
            raise UsageError(f"priors snapshot: --tool {name}: cannot run {command!r}: {exc}") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit status {proc.returncode}"
            raise UsageError(f"priors snapshot: --tool {name}: {command!r} failed: {detail}")
        out[name] = sha12_bytes(proc.stdout)
    return out


def read_merge(arg: str) -> Dict[str, str]:
    """A --merge file: a JSON object of string refs to string hashes (`-` reads stdin)."""

    raw = read_stdin(MAX_INPUT_BYTES, "--merge") if arg == "-" else read_bytes(Path(arg), MAX_INPUT_BYTES, "--merge file")
    if raw is None:
        raise UsageError(f"priors snapshot: --merge {arg}: no such file")
    try:
        doc = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, JSONError) as exc:
        raise UsageError(f"priors snapshot: --merge {arg}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in doc.items()):
        raise UsageError(f"priors snapshot: --merge {arg}: expected a JSON object mapping refs to hash strings")
    return doc


def tty_progress(stream) -> Optional[Progress]:
    """A self-overwriting progress line, only for a human watching a terminal."""
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    state = {"shown": False, "last": 0.0}

    def show(done: int, total: int) -> None:
        if done < 0:
            if state["shown"]:
                stream.write("\r\x1b[K")
                stream.flush()
            return
        now = time.monotonic()
        if total < 500 or (now - state["last"] < 0.1 and done != total):
            return
        state["last"] = now
        state["shown"] = True
        stream.write(f"\rpriors snapshot: hashed {done}/{total} files")
        stream.flush()

    return show
