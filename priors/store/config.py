"""The lessons loop's configuration, `.priors/config.json`: one reading of the file for every verb
(`relevant`, `lessons --inject`, `config`, `status`, the desk), and its one writer.
"""

from __future__ import annotations

from pathlib import Path

from priors.core.canonical import JSONError, dumps, loads
from priors.core.errors import UsageError
from priors.core.settings import check_config
from priors.core.vocabulary import MAX_INPUT_BYTES
from priors.store.files import atomic_write, read_bytes
from priors.store.paths import Paths

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict

CONFIG_FILE = "config.json"

CONFIG_FIX = (f" — nothing was changed. Fix .priors/{CONFIG_FILE} by hand (a JSON object such as "
              '{"max_inject": 5}), or delete it to put every setting back to its default — '
              "every verb that reads it stops until then")


def config_path(paths: Paths) -> Path:
    return paths.dir / CONFIG_FILE


def read_config(paths: Paths) -> Dict[str, Any]:
    """The shared config; one that cannot be read is a usage error naming the fix — never silently
    the defaults (a run would then inject what the team chose not to)."""
    if config_path(paths).is_symlink():  # (what it leads to is not the repository's: hostile pass 27ae)
        raise UsageError(f"priors: .priors/{CONFIG_FILE} is a symlink; the keeper reads only a file of the"
                         f" repository's own{CONFIG_FIX}")
    try:
        data = read_bytes(config_path(paths), MAX_INPUT_BYTES, "config")
    except UsageError as exc:
        raise UsageError(str(exc).split(" — ")[0] + CONFIG_FIX) from None
    if data is None:
        return {}
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


def config_if_set_up(paths: Paths) -> Dict[str, Any]:
    """The config of a target with `.priors/`; an empty one before `init` (nothing to read yet)."""
    return read_config(paths) if paths.dir.is_dir() else {}


def write_config(paths: Paths, cfg: Dict[str, Any]) -> None:
    atomic_write(config_path(paths), (dumps(cfg) + "\n").encode("utf-8"))
