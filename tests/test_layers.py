"""The package's shape, enforced: layers point down only, no import cycles, no stdlib shadowing, small modules.

Every import counts — top-level, inside a function, under TYPE_CHECKING — because a cycle hidden
behind a function-level import is still a cycle a maintainer has to hold in their head.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Set, Tuple

PKG = Path(__file__).resolve().parent.parent / "priors"

# lower number = lower layer; a module may import only from its own layer or below
LAYERS = {"core": 0, "store": 1, "snapshot": 2, "ops": 3, "cli": 4}
IO_MODULES = {"os", "io", "subprocess", "shutil", "tempfile", "threading", "fcntl", "sqlite3", "pathlib",
              "socket", "signal", "mmap", "ctypes", "msvcrt", "concurrent", "multiprocessing", "glob"}
MAX_LINES = 700

# sys.stdlib_module_names arrived in 3.10; on 3.9 the names we could plausibly pick are listed here
_STDLIB_39 = {"inspect", "secrets", "types", "string", "random", "json", "io", "os", "sys", "time", "typing", "ast",
              "copy", "code", "token", "tokenize", "parser", "select", "signal", "site", "stat", "struct", "test",
              "errno", "abc", "array", "base64", "bisect", "calendar", "cmd", "csv", "dis", "email", "enum", "glob",
              "hashlib", "heapq", "html", "http", "keyword", "locale", "logging", "math", "numbers", "operator",
              "pickle", "platform", "queue", "re", "shlex", "shutil", "socket", "sqlite3", "ssl", "statistics",
              "tempfile", "textwrap", "threading", "trace", "unittest", "uuid", "warnings", "weakref", "zipfile",
              "difflib", "fractions", "marshal", "zlib", "gc", "pathlib", "contextlib", "functools", "itertools"}
STDLIB = set(getattr(sys, "stdlib_module_names", ())) | _STDLIB_39


def _modules() -> Dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()


def _imports(path: Path) -> List[str]:
    """Every module this file imports, anywhere in it; `from priors.x import y` names priors.x.y when that is a module."""
    found: List[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                sub = f"{node.module}.{a.name}"
                found.append(sub if sub in MODULES else node.module)
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in LAYERS:
        return max(LAYERS.values())  # priors/__init__ and __main__ sit on top, with the CLI
    return LAYERS[parts[1]]


GRAPH: Dict[str, Set[str]] = {
    m: {i for i in _imports(p) if i in MODULES and i != m and i != "priors"} for m, p in MODULES.items()
}


def test_every_module_lives_in_a_layer() -> None:
    loose = [m for m in MODULES if m.count(".") == 1 and m.split(".")[1] not in LAYERS
             and m not in ("priors.__main__",)]
    assert loose == [], f"modules outside core/store/snapshot/ops/cli: {loose}"


def test_layers_point_down_only() -> None:
    upward = sorted(f"{m} -> {i}" for m, deps in GRAPH.items() for i in deps if _layer(i) > _layer(m))
    assert upward == [], "imports that point up a layer:\n" + "\n".join(upward)


def test_core_does_no_io() -> None:
    bad = sorted(f"{m} imports {i}" for m, p in MODULES.items() if _layer(m) == 0
                 for i in _imports(p) if i.split(".")[0] in IO_MODULES)
    assert bad == [], "the pure core must not import I/O modules:\n" + "\n".join(bad)


def cycles_in(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """Tarjan's strongly connected components; any component of two or more modules is a cycle."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    cycles: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_cycles() -> None:
    assert cycles_in(GRAPH) == [], f"import cycles: {cycles_in(GRAPH)}"


def test_cycle_finder_finds_planted_cycles() -> None:
    assert cycles_in({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles_in({"a": {"b"}, "b": set()}) == []


def test_no_module_shadows_the_standard_library() -> None:
    shadows = sorted(m for m in MODULES if m.rsplit(".", 1)[-1] in STDLIB)
    assert shadows == [], f"modules named like standard-library modules: {shadows}"


def test_modules_stay_small() -> None:
    big = sorted(f"{m}: {sum(1 for _ in p.open(encoding='utf-8'))} lines" for m, p in MODULES.items()
                 if sum(1 for _ in p.open(encoding="utf-8")) > MAX_LINES)
    assert big == [], f"modules over {MAX_LINES} lines: {big}"


VOCABULARY = {"RUN_RE", "PRIOR_RE", "CALL_RE", "HASH12_RE", "RUN_ID", "PRIOR_ID", "FACETS", "FACET_ORDER", "PRESETS",
              "AGENT_VERDICTS", "HUMAN_VERDICTS", "SEVERITIES", "SEVERITY_RANK", "STATUSES", "LIST_STATUSES", "BINDING",
              "INJECTABLE", "REST_AFTER", "OUTCOMES", "LESSON_TYPES", "ACTIONS", "RECORD_TYPES", "BLOCK_TYPES",
              "TAG_RE", "MAX_TAGS"}
ID_LITERALS = ("run-\\d", "P-\\d", "-C-\\d")


def test_the_vocabulary_is_declared_once() -> None:
    """Facets, verdicts, statuses, severities and id patterns live in core/vocabulary.py and nowhere else."""
    twins = []
    for m, p in MODULES.items():
        if m == "priors.core.vocabulary":
            continue
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            twins += [f"{m}: {t.id}" for t in targets if isinstance(t, ast.Name) and t.id in VOCABULARY]
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and any(s in node.value for s in ID_LITERALS):
                twins.append(f"{m}: id pattern {node.value!r}")
    assert twins == [], "vocabulary declared outside priors/core/vocabulary.py:\n" + "\n".join(twins)


def test_every_import_of_ours_names_something_that_exists() -> None:
    """A verb's module is imported only when the verb runs (lazily, at dispatch), so a name moved to
    another module would fail only in front of a user: check every one here."""
    import importlib

    missing = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and isinstance(block.test, ast.Name) and block.test.id == "TYPE_CHECKING"
                       for stmt in block.body for n in ast.walk(stmt)}  # names for the type checker: mypy checks them
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("priors"):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if not hasattr(module, alias.name):
                        try:
                            importlib.import_module(f"{node.module}.{alias.name}")
                        except ImportError:
                            missing.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {node.module}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("priors"):
                        importlib.import_module(alias.name)
    assert not missing, "\n".join(missing)


# ------------------------------------------------------------------ the house rules of issue 26


def _verb_modules() -> Set[str]:
    from priors.cli.verbs import VERBS

    return {v.module for v in VERBS.values()}


def test_no_verb_module_imports_another() -> None:
    """A verb module reads arguments, calls one `ops` function and returns; what two verbs share lives
    below the CLI (ops, store, core), never in a verb module the other imports."""
    verbs = _verb_modules()
    crossing = sorted(f"{m} -> {i}" for m in verbs for i in GRAPH[m] if i in verbs)
    assert crossing == [], "verb modules importing each other:\n" + "\n".join(crossing)


def _private_crossings(path: Path, module: str) -> List[str]:
    """`from priors.x import _name`, and `mod._name` on a module of ours imported here."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    ours: Set[str] = set()  # local names bound to modules of ours
    out: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("priors"):
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    out.append(f"{module}:{node.lineno} imports {node.module}.{a.name}")
                if f"{node.module}.{a.name}" in MODULES:
                    ours.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("priors") and a.asname:
                    ours.add(a.asname)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ours
                and node.attr.startswith("_") and not node.attr.startswith("__")):
            out.append(f"{module}:{node.lineno} reaches {node.value.id}.{node.attr}")
    return out


def test_no_private_name_crosses_a_module_boundary() -> None:
    """What another module needs is public, and named for what it does."""
    bad = [line for m, p in MODULES.items() for line in _private_crossings(p, m)]
    assert bad == [], "private names used across modules:\n" + "\n".join(bad)


def test_the_private_name_check_finds_planted_crossings(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text("from priors.core.fold import _x\nfrom priors.store import fold_cache as cache\n"
                       "def f():\n    return cache._secret\n", encoding="utf-8")
    assert _private_crossings(planted, "planted") == ["planted:1 imports priors.core.fold._x",
                                                     "planted:4 reaches cache._secret"]


# Function-level imports the rule allows: the verb dispatch (an `importlib` call, not a statement)
# and a standard-library module that only a rare path needs and that costs the common path start-up
# time — each named here with why. Everything else imports at the top of its module.
LAZY_STDLIB = {
    "subprocess": "git and --tool commands only; ~3 ms (it pulls in selectors, signal, threading)",
    "shutil": "removing trees, finding git; imports fnmatch and more",
    "concurrent.futures": "hashing on several cores, for a large snapshot only",
    "threading": "the hashing thread of a large ledger, and verify's checks of many signatures at once",
    "ctypes": "Windows file locking only",
    "difflib": "a did-you-mean suggestion, after a typo only",
    "urllib.parse": "SARIF artifact URIs, for ingest-sarif only",
    "tempfile": "the demo's scratch repo and atomic temp names on rare paths",
    "signal": "ingest-sarif's SIGTERM handler only",
    "termios": "the decide walk's single keys, on a terminal only",
    "tty": "the decide walk's single keys, on a terminal only",
    "msvcrt": "Windows only",
    "fcntl": "POSIX locking (absent on Windows)",
    "select": "the decide walk only",
    "ast": "the Python definition extractor only (snapshots of .py files); ~3 ms of start-up",
    "warnings": "beside ast, to keep a user's SyntaxWarning off our stderr",
    "multiprocessing": "hashing on several cores only",
    "fractions": "exact lesson scores, for a ledger with scored runs only (it pulls in decimal and numbers)",
}


def _function_level_imports(path: Path) -> List[Tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: List[Tuple[int, str]] = []

    def walk(node: ast.AST, nested: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.Import, ast.ImportFrom)) and nested:
                names = [ch.module or ""] if isinstance(ch, ast.ImportFrom) else [a.name for a in ch.names]
                found.extend((ch.lineno, n) for n in names)
            walk(ch, nested or isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))

    walk(tree, False)
    return found


def test_imports_stand_at_the_top_of_their_module() -> None:
    """Lazy only at the verb dispatch in cli/main.py (an importlib call), and for the few standard
    library modules LAZY_STDLIB names: a cycle or a cost hidden in a function is not hidden here."""
    bad = [f"{m}:{line} imports {name} inside a function" for m, p in MODULES.items()
           for line, name in _function_level_imports(p) if name not in LAZY_STDLIB]
    assert bad == [], "\n".join(bad)


def test_the_verbs_run_on_every_prompt_do_not_import_typing() -> None:
    """`relevant` and `lessons --inject` (every prompt of a hooked session) are timed against the
    reference keeper: `typing` costs them ~4 ms of start-up, so their modules name types under
    TYPE_CHECKING only (a module `relevant` began to read imported it at the top: issue 32)."""
    code = ("import sys; import priors.cli.main, priors.ops.opening, priors.ops.session, priors.ops.budget; "
            "print('typing' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(PKG.parent), check=True)
    assert out.stdout.strip() == "False", out
