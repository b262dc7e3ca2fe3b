"""The lessons loop's configuration, `.priors/config.json`, and the injection budget it sets.

Shared by `relevant`, `lessons --inject`, `config`, `status` and the desk: one reading of the file.
"""

from __future__ import annotations

from pathlib import Path

from priors.core.errors import UsageError
from priors.store.files import read_bytes
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict

CONFIG_FILE = "config.json"


def config_path(paths: Paths) -> Path:
    return paths.dir / CONFIG_FILE


CONFIG_FIX = (f" — nothing was changed. Fix .priors/{CONFIG_FILE} by hand (a JSON object such as "
              '{"max_inject": 5}), or delete it to put every setting back to its default — '
              "every verb that reads it stops until then")


def read_config(paths: Paths) -> Dict[str, Any]:
    """The shared config; one that cannot be read is a usage error naming the fix — never silently
    the defaults (a run would then inject what the team chose not to)."""
    from priors.core.vocabulary import MAX_INPUT_BYTES

    try:
        data = read_bytes(config_path(paths), MAX_INPUT_BYTES, "config")
    except UsageError as exc:
        raise UsageError(str(exc).split(" — ")[0] + CONFIG_FIX) from None
    if data is None:
        return {}
    from priors.core.canonical import JSONError, loads
    from priors.core.lessons import check_config

    try:
        obj = loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"priors: .priors/{CONFIG_FILE} is not UTF-8 text{CONFIG_FIX}") from None
    except JSONError as exc:
        raise UsageError(f"priors: .priors/{CONFIG_FILE} is not valid JSON ({exc}){CONFIG_FIX}") from None
    try:
        return check_config(obj)
    except UsageError as exc:
        raise UsageError(f"{exc}{CONFIG_FIX}") from None


def budget_from(a, paths: Paths, verb: str = "relevant"):
    """`relevant`'s budget: its options over .priors/config.json (no options, no config: the contract).
    `lessons --inject` takes the same options and the same config."""
    cfg = read_config(paths) if paths.dir.is_dir() else {}
    mi = a.get("max_inject")
    mc = a.get("max_chars")
    q = a.get("query")
    if (mi is None and mc is None and q is None and cfg.get("max_inject") is None and cfg.get("max_chars") is None
            and not cfg.get("require_review")):
        return None  # the contract's relevant: the lessons module is not even imported
    from priors.core.lessons import Budget, parse_count

    return Budget(
        max_inject=parse_count(mi, f"priors {verb}: --max-inject") if mi is not None else cfg.get("max_inject"),
        max_chars=parse_count(mc, f"priors {verb}: --max-chars") if mc is not None else cfg.get("max_chars"),
        query=str(q) if q is not None else None,
        require_review=bool(cfg.get("require_review", False)),
    )
