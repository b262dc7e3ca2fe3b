"""The lessons loop's settings, as rules over values: which keys `.priors/config.json` may hold, what
each accepts, and the whole-number parse the lesson options share. Pure; `store/config.py` reads
and writes the file.
"""

from __future__ import annotations

from priors.core.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict

CONFIG_KEYS = {
    "max_inject": "int",
    "max_chars": "int",
    "require_review": "bool",
    "inject": "bool",  # off: `lessons --inject` gives a coding session nothing (keeper runs are not touched)
    "capture": "bool",  # off: `priors trace` keeps nothing
    "max_traces": "int",  # unscored traces kept (default 100); scored ones stay for reflection
}
_TRUE = ("on", "true", "yes", "1")
_FALSE = ("off", "false", "no", "0")
_UNSET = ("none", "unset", "default")


def check_config(obj: Any, where: str = ".priors/config.json") -> Dict[str, Any]:
    """A validated config object; anything unexpected is a usage error naming the file."""
    if not isinstance(obj, dict):
        raise UsageError(f"priors: {where}: must be a JSON object")
    for key, value in obj.items():
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise UsageError(f"priors: {where}: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
        if kind == "int" and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise UsageError(f"priors: {where}: {key} must be a whole number ≥ 1")
        if kind == "bool" and not isinstance(value, bool):
            raise UsageError(f"priors: {where}: {key} must be true or false")
    return dict(obj)


def set_config(cfg: Dict[str, Any], key: str, text: str) -> Dict[str, Any]:
    """`priors config KEY VALUE`: the new config (a value of `none` removes the key)."""
    kind = CONFIG_KEYS.get(key)
    if kind is None:
        raise UsageError(f"priors config: unknown key {key!r} — keys are {', '.join(CONFIG_KEYS)}")
    out = dict(cfg)
    low = text.strip().lower()
    if low in _UNSET:
        out.pop(key, None)
        return out
    if kind == "bool":
        if low not in _TRUE + _FALSE:
            raise UsageError(f"priors config: {key} takes on|off (true|false)")
        out[key] = low in _TRUE
        return out
    out[key] = parse_count(text, f"priors config: {key}")
    return out


def parse_count(text: Any, what: str) -> int:
    try:
        n = int(str(text).strip(), 10)
    except ValueError:
        raise UsageError(f"{what} must be a whole number ≥ 1, not {text!r}") from None
    if n < 1:
        raise UsageError(f"{what} must be a whole number ≥ 1, not {text!r}")
    return n
