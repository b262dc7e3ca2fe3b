"""The package's shape, enforced: layers point down only, no import cycles, no stdlib shadowing, small modules.

Every import counts — top-level, inside a function, under TYPE_CHECKING — because a cycle hidden
behind a function-level import is still a cycle a maintainer has to hold in their head.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Dict, List, Set

PKG = Path(__file__).resolve().parent.parent / "priors"

# lower number = lower layer; a module may import only from its own layer or below
LAYERS = {"core": 0, "store": 1, "snapshot": 2, "cli": 3}
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
    assert loose == [], f"modules outside core/store/snapshot/cli: {loose}"


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
    """A verb's imports run only when the verb runs (lazy, at dispatch or inside a function), so a
    name moved to another module would fail only in front of a user: check every one here."""
    import importlib

    missing = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
