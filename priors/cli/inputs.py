"""What the command line reads for a verb before it calls one `ops` function — input files (or `-`,
standard input), candidate files, the run's snapshot from `--scopes FILE` or `--snapshot`.
"""

from __future__ import annotations

from pathlib import Path

from priors.cli.args import check_text
from priors.core.canonical import JSONError, loads
from priors.core.errors import UsageError
from priors.core.grammar import check_agent_verdict
from priors.core.vocabulary import MAX_INPUT_BYTES
from priors.snapshot.scan import take_snapshot, tty_progress
from priors.store.files import read_bytes, read_stdin

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Tuple

    from priors.cli.args import Parsed


def read_input(name: str, what: str) -> bytes:
    """An input file (or `-`, standard input): a regular file of at most MAX_INPUT_BYTES."""
    if name == "-":
        return read_stdin(MAX_INPUT_BYTES, what)
    data = read_bytes(Path(name), MAX_INPUT_BYTES, what)
    if data is None:
        raise UsageError(f"priors: {what} {name}: no such file")
    return data


def verdict_pairs(data: bytes, name: str) -> List[Tuple[str, str]]:
    """`disposition --from FILE`'s pairs: a line `ID VERDICT` each (blank lines skipped). A run of 70k
    verdicts is too long for a command line to carry well: Python itself holds ~75 MB for 140k
    arguments before the keeper starts, and past ~2 MB of them the system refuses to start it."""
    try:
        text = _no_bom(data).decode("utf-8")  # (a byte order mark some editors write is not part of an id)
    except UnicodeDecodeError:
        raise UsageError(f"priors disposition: --from {name}: not UTF-8") from None
    pairs: List[Tuple[str, str]] = []
    for n, line in enumerate(text.split("\n"), 1):
        line = line[:-1] if line.endswith("\r") else line
        check_text("disposition", f"--from {name} line {n}", line.replace("\t", " "))  # (before it is split)
        words = line.split()
        if not words:
            continue
        if len(words) != 2:
            raise UsageError(f"priors disposition: --from {name}: line {n}: expected ID VERDICT, two words")
        try:
            check_agent_verdict(words[1])
        except UsageError as exc:  # (the line named)
            where = f"priors disposition: --from {name}: line {n}: "
            raise UsageError(str(exc).replace("priors disposition: ", where, 1)) from None
        pairs.append((words[0], words[1]))
    if not pairs:
        raise UsageError(f"priors disposition: --from {name} holds no ID VERDICT pair")
    return pairs


def parse_json_input(data: bytes, name: str, what: str) -> Any:
    try:
        return loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"priors: {what} {name}: not UTF-8") from None
    except JSONError as exc:
        raise UsageError(f"priors: {what} {name}: not valid JSON ({exc})") from None


def read_json_file(what: str) -> Any:
    """A reader of JSON input files named `what` in its messages (`ingest-sarif` reads its logs with it).
    A UTF-8 byte order mark at the start is skipped: GitHub's SARIF uploader and several analyzers
    write one, and JSON itself has no use for it."""
    return lambda name: parse_json_input(_no_bom(read_input(name, what)), name, what)


def _no_bom(data: bytes) -> bytes:
    return data[3:] if data.startswith(b"\xef\xbb\xbf") else data


def read_candidates(names: List[str]) -> List[Tuple[str, Any]]:
    """(label, candidate) for every candidate in the files `names`: one, a JSON array, or JSON lines
    each; a file holding several labels them `FILE#N`."""
    items: List[Tuple[str, Any]] = []
    for name in names:
        data = read_input(name, "candidate file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"priors propose: candidate file {name}: not UTF-8") from None
        try:
            obj = loads(text)
            many = obj if isinstance(obj, list) else [obj]
        except JSONError as exc:
            rows = [r for r in text.split("\n") if r.strip()]
            if len(rows) < 2:
                raise UsageError(f"priors propose: candidate file {name}: not valid JSON ({exc})") from None
            many = []
            for no, row in enumerate(rows, 1):
                try:
                    many.append(loads(row))
                except JSONError as err:
                    raise UsageError(f"priors propose: candidate file {name} line {no}: not valid JSON ({err})") from None
        if not many:
            raise UsageError(f"priors propose: candidate file {name} holds no candidate")
        label = name if len(many) == 1 else None
        for i, cand in enumerate(many, 1):
            items.append((label or f"{name}#{i}", cand))
    return items


def scopes_from(a: Parsed, ctx: Any, verb: str, default_snapshot: bool = False) -> Dict[str, str]:
    """The run's snapshot from `--scopes FILE|-` or `--snapshot [PATH ...]` (`relevant`, `ingest-sarif`;
    `default_snapshot`: a snapshot of the whole target when neither is given)."""
    if a.has("--scopes") and a.has("--snapshot"):
        raise UsageError(f"priors {verb}: give --scopes or --snapshot, not both")
    if a.has("--snapshot") or (default_snapshot and not a.has("--scopes")):
        return take_snapshot(ctx.root, list(a.get("snapshot") or []) or None, progress=tty_progress(ctx.err),
                             cwd=ctx.cwd)
    name = a.get("scopes")
    if name is None:
        return {}
    scopes = parse_json_input(read_input(str(name), "scopes file"), str(name), "scopes file")
    if not isinstance(scopes, dict) or not set(map(type, scopes.values())) <= {str}:  # (JSON makes no subclass)
        raise UsageError(f"priors {verb}: scopes file {name} must be a JSON object mapping scope refs to hash strings")
    return scopes
