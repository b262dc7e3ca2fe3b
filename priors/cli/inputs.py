"""Shell helpers every verb group shares: the target's paths, run ids, input files and JSON.
"""

from __future__ import annotations

from pathlib import Path

from priors.core.errors import UsageError
from priors.core.plain import Plain
from priors.store.files import read_bytes
from priors.store.paths import Paths, require_init
from priors.core.vocabulary import RUN_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Optional


# ------------------------------------------------------------------ shared shell helpers


def check_run_id(run: Optional[str], verb: str) -> str:
    if run is None:
        raise UsageError(f"priors {verb}: --run RUN is required")
    if not RUN_RE.match(run):
        raise UsageError(f"priors {verb}: bad run id {run!r} — a run id is `run-` and three to nine ASCII digits (e.g. run-001)")
    return run


def read_input(name: str, what: str) -> bytes:
    """An input file (or `-`, standard input): a regular file of at most MAX_INPUT_BYTES."""
    from priors.core.vocabulary import MAX_INPUT_BYTES
    from priors.store.files import read_stdin

    if name == "-":
        return read_stdin(MAX_INPUT_BYTES, what)
    data = read_bytes(Path(name), MAX_INPUT_BYTES, what)
    if data is None:
        raise UsageError(f"priors: {what} {name}: no such file")
    return data


def parse_json_input(data: bytes, name: str, what: str) -> Any:
    from priors.core.canonical import JSONError, loads

    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"priors: {what} {name}: not UTF-8") from None
    except JSONError as exc:
        raise UsageError(f"priors: {what} {name}: not valid JSON ({exc})") from None


def paths_of(ctx) -> Paths:
    paths = Paths(ctx.root)
    require_init(paths)
    return paths


class Answer(Plain):
    """A verb's answer before it is printed: its exit code, its canonical JSON object (what `--json`
    prints, and what `priors mcp` hands back as a tool's structured content) and the text a person
    reads. One function computes it; the command line and the MCP server only present it."""

    __slots__ = ("code", "_obj", "text", "encoded")

    def __init__(self, code: int, obj: Any, text: Optional[str] = None, encoded: Optional[str] = None) -> None:
        self.code, self._obj, self.text, self.encoded = code, obj, text, encoded

    @property
    def obj(self) -> Any:
        """The JSON object; when the verb gave only its encoded line (relevant's), read back on first use —
        the command line prints the line and never pays for this."""
        if self._obj is None and self.encoded is not None:
            from priors.core.canonical import loads

            self._obj = loads(self.encoded)
        return self._obj

    def json(self) -> str:
        """The canonical JSON line (kept when the verb encoded it already: relevant's can be large)."""
        if self.encoded is None:
            from priors.core.canonical import dumps

            self.encoded = dumps(self.obj)
        return self.encoded


def emit(ctx, a, answer: Answer) -> int:
    """Print an answer on the command line: its text (nothing when it is empty), or its canonical JSON
    with `--json` (or when the verb has no text form)."""
    if a.get("json") or answer.text is None:
        ctx.print(answer.json())
    elif answer.text:
        ctx.print(answer.text)
    return answer.code


def output_target(verb: str, flag: str, name: str, root: Any) -> Path:
    """Where `-o NAME` may be written: a new or regular file outside the target's `.priors/`.

    The page or log is written atomically (a temporary file renamed over the target), which would
    replace a device node, a FIFO or a symlink, and would overwrite the ledger itself — so those are
    usage errors, checked before anything is read or written."""
    import os
    import stat

    target = Path(name)
    shown = f"priors {verb}: {flag} {name}"
    try:
        st = os.lstat(str(target))
    except FileNotFoundError:
        st = None
    except OSError as exc:
        from priors.core.errors import os_failure

        raise os_failure(f"{shown}: {exc.strerror or exc}", exc) from None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{shown}: a directory — expected a file path")
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{shown}: not a regular file (a symlink, device or pipe would be replaced, not written to)")
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(f"{shown}: no such directory {parent}")
    keeper = Paths(root).dir
    try:
        inside = os.path.realpath(str(parent / target.name)).startswith(os.path.realpath(str(keeper)) + os.sep)
    except (OSError, ValueError):
        inside = False
    if inside:
        raise UsageError(f"{shown}: inside {keeper} — the keeper's own files are never an output")
    return target
