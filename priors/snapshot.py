"""Scope snapshots: a canonical map from scope refs to 12-hex hashes of what they cover.

Refs (see docs/snapshot.md for the exact definitions):

- `path/to/file`        the file's content hash — text normalized exactly like `priors hash FILE`,
                        binary (a NUL in the first 8 KiB) as raw bytes, a symlink by its target
- `path/to/file#A.f`    one definition's normalized source (priors/anchors.py)
- `dir/`, `*`           a directory / the whole target: sha12 of the canonical JSON of its
                        children's sorted `[name, hash]` pairs (subdirectories named `sub/`)
- tool names, merged refs as given

The core (hashing, combining) is pure; listing the tree, reading files, the
cache and the process pool are the thin shell around it. Same tree, same
bytes — on every OS and whatever order the file system lists things in.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as _stat
import sys
import time
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from priors.canonical import dumps, normalize, sha12, sha12_bytes
from priors.errors import UsageError

ROOT_REF = "*"
SKIP_NAMES = (".git", ".priors")
BINARY_SNIFF = 8192
CACHE_FORMAT = 1
RACY_NS = 2_000_000_000  # an entry modified this close to the snapshot is never cached (racy-git)

Progress = Callable[[int, int], None]

# ---------------------------------------------------------------- pure: content hashing

_WS_BYTES = bytes.maketrans(b"\t\n\x0b\x0c\r", b"     ")
_SPACE_RUN = re.compile(rb"  +")
# UTF-8 encodings of the non-ASCII ECMAScript whitespace characters.
_NONASCII_WS = re.compile(
    rb"\xc2\xa0|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80|\xef\xbb\xbf"
)


def is_binary(data: bytes) -> bool:
    """Binary means a NUL byte in the first 8 KiB — git's own heuristic."""
    return b"\0" in data[:BINARY_SNIFF]


def normalized_utf8(data: bytes) -> bytes:
    """UTF-8 bytes of `normalize(decode_text(data))`, computed without a str round trip when possible.

    Valid UTF-8 never contains ASCII whitespace bytes inside a multi-byte
    sequence, so when no non-ASCII whitespace is present the ECMAScript
    collapse is a byte translation plus one run-squeeze — several times
    faster than a Unicode regex on the hot path.
    """
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            data = data.decode("utf-8", "replace").encode("utf-8")
        if _NONASCII_WS.search(data):
            return normalize(data.decode("utf-8")).encode("utf-8")
    return _SPACE_RUN.sub(b" ", data.translate(_WS_BYTES)).strip(b" ")


def text_hash(data: bytes) -> str:
    """sha12 of normalized text — identical to `priors hash FILE`."""
    return hashlib.sha256(normalized_utf8(data)).hexdigest()[:12]


def content_hash(data: bytes) -> str:
    """A file's hash: raw bytes for binary files, normalized text otherwise."""
    return sha12_bytes(data) if is_binary(data) else text_hash(data)


def link_hash(target: str) -> str:
    """A symlink is never followed: its hash is over its target string, marked so no file can collide."""
    return sha12_bytes(b"symlink\0" + target.encode("utf-8", "surrogateescape"))


def tree_hash(children: Iterable[Tuple[str, str]]) -> str:
    """A directory's hash: sha12 of the canonical JSON of its `[name, hash]` pairs sorted by name.

    Names are valid Unicode (undecodable ones never get this far) and lists
    keep their order, so the C encoder's output is the canonical one.
    """
    import json

    pairs = sorted([name, h] for name, h in children)
    return sha12(json.dumps(pairs, ensure_ascii=False, separators=(",", ":")))


def file_result(rel: str, data: bytes, want_anchors: bool) -> Tuple[str, Optional[str]]:
    """(file hash, packed anchors or None) for one file's bytes; anchors only for supported text files."""
    if is_binary(data):
        return sha12_bytes(data), ("" if want_anchors else None)
    h = text_hash(data)
    if not want_anchors:
        return h, None
    from priors.anchors import anchors_for, language_of

    if language_of(rel) is None:
        return h, ""
    return h, pack(anchors_for(rel, data.decode("utf-8", "replace")))


def pack(defs: List[Tuple[str, str]]) -> str:
    """Anchors as one string `name\thash\tname\thash…` — cheap to cache, ship between processes and expand."""
    return "\t".join(f"{q}\t{h}" for q, h in defs if "\t" not in q and "\n" not in q)


def combine(
    files: Dict[str, str],
    anchors: Dict[str, str],
    full_dirs: Callable[[str], bool],
    include_root: bool,
) -> Dict[str, str]:
    """Assemble the map: files, their anchors, every directory `full_dirs` accepts, and `*`.

    Directories are derived from file refs only, so an empty directory does
    not exist here — as in git — and a git and a plain tree of the same files
    give the same map.
    """
    out: Dict[str, str] = dict(files)
    for rel, packed in anchors.items():
        if packed:
            parts = packed.split("\t")
            prefix = rel + "#"
            out.update(zip([prefix + q for q in parts[0::2]], parts[1::2]))
    children: Dict[str, List[Tuple[str, str]]] = {"": []}
    dirs = set()
    for rel, h in files.items():
        parent, _, name = rel.rpartition("/")
        children.setdefault(parent, []).append((name, h))
        while parent and parent not in dirs:
            dirs.add(parent)
            parent = parent.rpartition("/")[0]
    for d in sorted(dirs, key=lambda p: -p.count("/")):  # deepest first: children are complete
        h = tree_hash(children.get(d, []))
        parent, _, name = d.rpartition("/")
        children.setdefault(parent, []).append((name + "/", h))
        if full_dirs(d):
            out[d + "/"] = h
    if include_root:
        out[ROOT_REF] = tree_hash(children[""])
    return out


def dumps_map(m: Dict[str, str]) -> str:
    """Canonical JSON of a flat str->str map; uses the C encoder when its order provably agrees."""
    import json

    text = json.dumps(m, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    if text.isascii() or not re.search("[\ud800-\udfff\U00010000-\U0010ffff]", text):
        return text  # code-point order equals UTF-16 order, and no escapes differ
    return dumps(m)


# ---------------------------------------------------------------- listing the tree

class Listing:
    """Files under the root as POSIX refs, plus the names we could not use (reported, not fatal)."""

    def __init__(self) -> None:
        self.refs: List[str] = []
        self.problems: List[str] = []


def list_tree(root: Path, prefixes: Optional[List[str]] = None) -> Listing:
    """Git's view inside a work tree (tracked + untracked-not-ignored), else a walk.

    With `prefixes` (refs under the root; "" is not one), only what lies under them is listed —
    exactly the whole listing's refs under them, without walking the rest of a large tree."""
    from priors.store import _git_top

    problems: List[str] = []
    if prefixes is not None:
        ps = sorted(set(prefixes))
        outer = [p for p in ps if not any(p.startswith(q + "/") for q in ps)]  # src/a is inside src
        problems = [f"undecodable name {os.fsencode(p)!r}" for p in outer if not _encodable(p)]
        prefixes = [p for p in outer if _listable(root, p)]
        if not prefixes:
            listing = Listing()
            listing.problems = problems
            return listing
    listing = _git_listing(root, prefixes) if _git_top(root) is not None else None
    if listing is None:
        listing = _walk_listing(root, prefixes)
    listing.problems[:0] = problems
    return listing


def _listable(root: Path, prefix: str) -> bool:
    """Can the whole listing hold anything under `prefix`? Not if a folder on its way is one we
    skip, or is not a real folder (a symlink is listed as itself, never entered)."""
    parts = prefix.split("/")
    if any(p in SKIP_NAMES for p in parts) or not _encodable(prefix):
        return False  # an undecodable name is reported, never listed
    for i in range(1, len(parts)):
        try:
            mode = os.lstat(os.path.join(str(root), *parts[:i])).st_mode
        except OSError:
            return False
        if not _stat.S_ISDIR(mode):
            return False
    return True


def _encodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _git_listing(root: Path, prefixes: Optional[List[str]] = None) -> Optional[Listing]:
    import subprocess

    specs = ["--"] + [f":(literal){p}" for p in prefixes] if prefixes is not None else []
    try:
        proc = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"] + specs,
            cwd=str(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        if msg and "not a git repository" not in msg[0]:
            sys.stderr.write(f"priors snapshot: git ls-files failed ({msg[0]}); walking the tree instead\n")
        return None
    listing = Listing()
    seen = set()
    for raw in proc.stdout.split(b"\0"):
        if not raw or raw in seen:
            continue
        seen.add(raw)
        try:
            ref = raw.decode("utf-8")
        except UnicodeDecodeError:
            listing.problems.append(f"undecodable name {raw!r}")
            continue
        parts = ref.split("/")
        if any(p in SKIP_NAMES for p in parts[:-1]) or parts[-1] in SKIP_NAMES:
            continue
        listing.refs.append(ref)
    listing.refs.sort()
    return listing


def _walk_listing(root: Path, prefixes: Optional[List[str]] = None) -> Listing:
    """Walk without following symlinks, skipping .git and .priors; order-independent by construction.
    With `prefixes`, from those only: a folder is walked, anything else is listed as itself."""
    listing = Listing()
    stack = [""]
    if prefixes is not None:
        stack = []
        for ref in prefixes:
            try:
                is_dir = _stat.S_ISDIR(os.lstat(os.path.join(str(root), *ref.split("/"))).st_mode)
            except OSError:
                continue
            if is_dir:
                stack.append(ref)
            else:
                listing.refs.append(ref)
    while stack:
        rel_dir = stack.pop()
        path = os.path.join(str(root), *rel_dir.split("/")) if rel_dir else str(root)
        try:
            entries = list(os.scandir(path))
        except OSError as exc:
            listing.problems.append(f"cannot list {rel_dir or '.'}: {exc.strerror or exc}")
            continue
        for entry in entries:
            name = entry.name
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                listing.problems.append(f"undecodable name in {rel_dir or '.'}: {os.fsencode(name)!r}")
                continue
            ref = f"{rel_dir}/{name}" if rel_dir else name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if name not in SKIP_NAMES:
                        stack.append(ref)
                    continue
            except OSError:
                pass
            listing.refs.append(ref)
    listing.refs = sorted(set(listing.refs))  # nested prefixes list a ref twice
    return listing


# ---------------------------------------------------------------- selecting PATHs

class Selection:
    """Which refs a PATH list covers, and which directories are wholly covered (so may be emitted)."""

    def __init__(self, prefixes: Optional[List[str]]) -> None:
        self.prefixes = prefixes  # None = everything; "" = the root itself

    @property
    def whole(self) -> bool:
        return self.prefixes is None or "" in self.prefixes

    def wants(self, ref: str) -> bool:
        if self.whole:
            return True
        return any(ref == p or ref.startswith(p + "/") for p in self.prefixes)  # type: ignore[union-attr]

    def full_dir(self, d: str) -> bool:
        return self.wants(d)


def resolve_paths(root: Path, paths: Optional[Sequence[str]], cwd: Optional[str] = None) -> Optional[List[str]]:
    """PATH arguments (relative to cwd, or absolute) → refs relative to the root; usage error when outside or missing."""
    if not paths:
        return None
    base = cwd or os.getcwd()
    root_abs = os.path.abspath(str(root))
    out: List[str] = []
    for p in paths:
        full = os.path.abspath(os.path.join(base, p))
        if not os.path.lexists(full):
            raise UsageError(f"priors snapshot: {p}: no such file or directory")
        rel = _relative(full, root_abs)
        if rel is None:
            rel = _relative(os.path.realpath(full), os.path.realpath(root_abs))
        if rel is None:
            raise UsageError(f"priors snapshot: {p} is outside the target root {root_abs}")
        out.append(rel)
    return sorted(set(out))


def _relative(full: str, root: str) -> Optional[str]:
    try:
        rel = os.path.relpath(full, root)
    except ValueError:  # another drive on Windows
        return None
    if rel == os.curdir:
        return ""
    parts = rel.split(os.sep)
    if parts[0] == os.pardir:
        return None
    return "/".join(parts)


# ---------------------------------------------------------------- the cache (shell)

def _cache_path(root: Path) -> Optional[Path]:
    priors_dir = root / ".priors"
    return priors_dir / "cache" / "snapshot.json" if priors_dir.is_dir() else None


def _cache_tag() -> str:
    from priors.anchors import VERSION

    return f"{CACHE_FORMAT}/{VERSION}"


def load_cache(path: Optional[Path]) -> Dict[str, list]:
    """Entries `ref -> [size, mtime_ns, ino, ctime_ns, hash, anchors|None]`; anything wrong → empty."""
    if path is None:
        return {}
    try:
        import json

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
        import json

        from priors.store import atomic_write

        path.parent.mkdir(exist_ok=True)
        body = json.dumps({"format": _cache_tag(), "entries": entries}, separators=(",", ":"), sort_keys=True)
        atomic_write(path, body.encode("utf-8"))
    except Exception:
        pass


def stat_key(st: os.stat_result) -> List[int]:
    """A file's identity the way git's index sees it: size, mtime, inode, ctime."""
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


# ---------------------------------------------------------------- hashing many files (shell)

Job = Tuple[str, str, bool]  # (ref, absolute path, want anchors)
Result = Tuple[str, Optional[str], Optional[str], Optional[str]]  # (ref, hash, packed anchors, problem)


def hash_job(job: Job) -> Result:
    ref, path, want = job
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ref, None, None, f"cannot read {ref}: {exc.strerror or exc}"
    h, defs = file_result(ref, data, want)
    return ref, h, defs, None


def hash_chunk(jobs: List[Job]) -> List[Result]:
    return [hash_job(j) for j in jobs]


def _workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


POOL_MIN_WEIGHT = 4_000_000  # bytes of work (Python parsing counted heavier) below which one process wins


def _weight(job: Job, size: int) -> int:
    return size * (20 if job[2] and job[0].endswith((".py", ".pyi")) else 1)


def run_jobs(jobs: List[Job], sizes: Dict[str, int], progress: Optional[Progress]) -> List[Result]:
    """Hash in two processes when the work is big enough to pay for them; same results either way."""
    total = len(jobs)
    weight = sum(_weight(j, sizes.get(j[0], 0)) for j in jobs)
    workers = _workers()
    if workers > 1 and weight >= POOL_MIN_WEIGHT and total >= 8:
        try:
            if hasattr(os, "fork") and sys.platform.startswith("linux"):
                return _run_forked(jobs, sizes, workers, progress)
            return _run_pool(jobs, sizes, workers, progress)
        except Exception:
            pass  # no processes here (sandbox, frozen app…): fall back to one
    out: List[Result] = []
    for n, job in enumerate(jobs, 1):
        out.append(hash_job(job))
        if progress and (n % 200 == 0 or n == total):
            progress(n, total)
    return out


def _shares(jobs: List[Job], sizes: Dict[str, int], n: int) -> List[List[Job]]:
    """Deal jobs heaviest-first into n shares of about equal weight (deterministic)."""
    shares: List[List[Job]] = [[] for _ in range(n)]
    loads = [0] * n
    for job in sorted(jobs, key=lambda j: (-_weight(j, sizes.get(j[0], 0)), j[0])):
        i = loads.index(min(loads))
        shares[i].append(job)
        loads[i] += _weight(job, sizes.get(job[0], 0)) + 4096  # per-file overhead
    return shares


def _run_forked(jobs: List[Job], sizes: Dict[str, int], workers: int, progress: Optional[Progress]) -> List[Result]:
    """Fork helpers that hash their share and send it back through a pipe (marshal).

    Forking costs a few milliseconds, where importing concurrent.futures and
    starting a pool costs over a hundred — and the snapshot runs on every
    agent call. A helper that fails for any reason is simply redone here.
    """
    import marshal

    shares = _shares(jobs, sizes, workers)
    children = []
    for share in shares[1:]:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the helper: never returns
            code = 1
            try:
                os.close(r)
                payload = marshal.dumps(hash_chunk(share))
                with os.fdopen(w, "wb") as fh:
                    fh.write(payload)
                code = 0
            finally:
                os._exit(code)
        os.close(w)
        children.append((pid, r, share))
    out: List[Result] = []
    mine = shares[0]
    for n, job in enumerate(mine, 1):
        out.append(hash_job(job))
        if progress and n % 100 == 0:
            progress(min(len(jobs), n * workers), len(jobs))
    for pid, r, share in children:
        with os.fdopen(r, "rb") as fh:
            payload = fh.read()
        _, status = os.waitpid(pid, 0)
        try:
            got = marshal.loads(payload) if status == 0 else None
        except (EOFError, ValueError, TypeError):
            got = None
        out.extend(got if isinstance(got, list) and len(got) == len(share) else hash_chunk(share))
    if progress:
        progress(len(jobs), len(jobs))
    return out


def _run_pool(jobs: List[Job], sizes: Dict[str, int], workers: int, progress: Optional[Progress]) -> List[Result]:
    from concurrent.futures import ProcessPoolExecutor, as_completed

    ordered = sorted(jobs, key=lambda j: -_weight(j, sizes.get(j[0], 0)))
    nchunks = min(len(ordered), workers * 8)
    chunks = [ordered[i::nchunks] for i in range(nchunks)]
    out: List[Result] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
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
    root = Path(os.path.abspath(str(root)))
    started = time.time_ns()
    sel = Selection(resolve_paths(root, paths, cwd))
    report: List[str] = [] if problems is None else problems
    listing = list_tree(root, None if sel.whole else sel.prefixes)  # a large tree is not walked for one file
    report.extend(listing.problems)
    refs = [r for r in listing.refs if sel.wants(r)]

    cache_file = _cache_path(root) if use_cache else None
    cache = load_cache(cache_file)
    plan = _plan(root, refs, cache, anchors, report)
    new_cache: Dict[str, list] = {} if sel.whole else dict(cache)
    new_cache.update(plan.reused)
    changed = _absorb(run_jobs(plan.jobs, plan.sizes, progress), plan, cache, started, new_cache, report)

    out = combine(plan.files, plan.defs if anchors else {}, sel.full_dir, sel.whole)
    _add_extras(out, "--tool", tool_hashes(tools or {}, root))
    _add_extras(out, "--merge", merge or {})

    if cache_file is not None and (changed or len(new_cache) != len(cache)):
        save_cache(cache_file, new_cache)
    if problems is None:
        for p in report:
            sys.stderr.write(f"priors snapshot: {p}\n")
    return out


class _Plan:
    """What one snapshot must do: hashes already known (links, cache hits) and the files left to read."""

    def __init__(self) -> None:
        self.files: Dict[str, str] = {}
        self.defs: Dict[str, str] = {}
        self.reused: Dict[str, list] = {}
        self.jobs: List[Job] = []
        self.keys: Dict[str, List[int]] = {}
        self.sizes: Dict[str, int] = {}


def _plan(root: Path, refs: List[str], cache: Dict[str, list], anchors: bool, report: List[str]) -> _Plan:
    """lstat every ref: symlinks hash their target, cache hits are reused, regular files become jobs."""
    plan = _Plan()
    root_s = str(root)
    for ref in refs:
        full = os.path.join(root_s, *ref.split("/"))
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
    for ref, h, anc, problem in results:
        if problem is not None or h is None:
            report.append(problem or f"cannot hash {ref}")
            continue
        plan.files[ref] = h
        if anc is not None:
            plan.defs[ref] = anc
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
        except (OSError, subprocess.SubprocessError) as exc:
            raise UsageError(f"priors snapshot: --tool {name}: cannot run {command!r}: {exc}") from None
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            detail = err[-1] if err else f"exit status {proc.returncode}"
            raise UsageError(f"priors snapshot: --tool {name}: {command!r} failed: {detail}")
        out[name] = sha12_bytes(proc.stdout)
    return out


def read_merge(arg: str) -> Dict[str, str]:
    """A --merge file: a JSON object of string refs to string hashes (`-` reads stdin)."""
    from priors.canonical import JSONError, loads

    try:
        if arg == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(arg, "rb") as fh:
                raw = fh.read()
    except OSError as exc:
        raise UsageError(f"priors snapshot: --merge {arg}: {exc.strerror or exc}") from None
    try:
        doc = loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, JSONError) as exc:
        raise UsageError(f"priors snapshot: --merge {arg}: not valid JSON ({exc})") from None
    if not isinstance(doc, dict) or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in doc.items()):
        raise UsageError(f"priors snapshot: --merge {arg}: expected a JSON object mapping refs to hash strings")
    return doc


# ---------------------------------------------------------------- the verb

USAGE = "priors snapshot [PATH ...] [-o FILE] [--no-anchors] [--merge FILE] [--tool NAME=COMMAND ...]"
HELP = f"""usage: {USAGE}

Print a canonical JSON map of scope refs to 12-hex hashes for the target root
(or only under PATHs): files (`src/a.py`), definitions (`src/a.py#Class.method`),
directories (`src/`) and the whole target (`*`). Feed it to
`priors relevant --ns N --scopes FILE`, or use `priors relevant --snapshot`.

  -o FILE             write the map to FILE instead of stdout
  --no-anchors        leave out definition anchors (faster on a cold tree)
  --merge FILE        add refs from a JSON object of strings (`-` = stdin); repeatable
  --tool NAME=CMD     run CMD in the root and record its stdout's hash as NAME; repeatable
  --no-cache          neither read nor write .priors/cache/

See docs/snapshot.md for exactly what each hash covers."""


def cmd_snapshot(argv: List[str], ctx) -> int:
    from priors.args import BOOL, MULTI, VALUE, Spec, parse

    spec = Spec(
        verb="snapshot", usage=USAGE, help=HELP, max_pos=None,
        flags={"--output": VALUE, "--no-anchors": BOOL, "--merge": MULTI, "--tool": MULTI, "--no-cache": BOOL},
        aliases={"-o": "--output"},
    )
    args = parse(argv, spec)
    tools: Dict[str, str] = {}
    for t in args.get("tool", []) or []:
        name, command = parse_tool(t)
        if name in tools:
            raise UsageError(f"priors snapshot: --tool {name} given twice")
        tools[name] = command
    merge: Dict[str, str] = {}
    for m in args.get("merge", []) or []:
        for k, v in read_merge(m).items():
            if k in merge and merge[k] != v:
                raise UsageError(f"priors snapshot: --merge files disagree on {k!r}")
            merge[k] = v
    root = ctx.root
    paths = list(args.pos) or None
    resolve_paths(root, paths)  # bad PATHs are usage errors before any work
    progress = _tty_progress(getattr(ctx, "err", sys.stderr))
    result = take_snapshot(root, paths, anchors=not args.get("no_anchors"), tools=tools, merge=merge,
                           progress=progress, use_cache=not args.get("no_cache"))
    if progress is not None:
        progress(-1, -1)
    text = dumps_map(result) + "\n"
    output = args.get("output")
    if output:
        from priors.store import atomic_write

        target = Path(output)
        try:
            atomic_write(target, text.encode("utf-8"))
        except OSError as exc:
            raise UsageError(f"priors snapshot: -o {output}: {exc.strerror or exc}") from None
    else:
        ctx.out.write(text)
    return 0


def _tty_progress(stream) -> Optional[Progress]:
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
