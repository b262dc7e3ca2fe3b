"""Traces: what a coding session's agent run looked like, kept short and private for reflection.

A harness (the Pi extension, the Claude Code hooks) hands the keeper one agent run: the prompt,
the lessons it was given, a few snippets of what the assistant said and what its tools did.
Here it is checked, cut to size and cleared of anything that looks like a credential — the trace
is kept (in `.priors/traces/`, never committed), not refused, so a secret is replaced by
`[redacted: KIND]` instead. Pure: `store/traces.py` keeps the file.
"""

from __future__ import annotations

from priors.core.canonical import dumps
from priors.core.controls import visible, without_controls
from priors.core.errors import UsageError
from priors.core.secret_patterns import redacted
from priors.core.vocabulary import PRIOR_RE, RUN_RE, SESSION_KEY_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional

TRACE_FIELDS = ("prompt", "given", "assistant", "tools")
TOOL_FIELDS = ("name", "input", "output", "error")
MAX_PROMPT = 2000  # characters of the prompt kept
MAX_SNIPPETS = 8  # assistant snippets kept (the last ones: where the run ended up)
MAX_SNIPPET = 600
MAX_TOOLS = 16  # tool calls kept (the last ones)
MAX_TOOL_NAME = 64
MAX_TOOL_INPUT = 300
MAX_TOOL_OUTPUT = 400
DEFAULT_MAX_TRACES = 100  # unscored traces kept unless `priors config max_traces N` says otherwise


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, whitespace runs collapsed; a cut says so with `…`."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _text(value: Any, limit: int, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        try:  # each text judged before it is JSON-escaped: `"hunter2…"` would read `\\"hunter2…\\"`
            value = dumps(_judged(value, limit))
        except (TypeError, ValueError, RecursionError):
            raise UsageError(f"priors trace: {where} must be text or JSON") from None
    return clip(redacted(_words_up_to(without_controls(value), limit)), limit)


def _judged(value: Any, limit: int) -> Any:
    """A tool's JSON input with each text in it cut to its words within `limit` and cleared of
    credentials, as `_text` clears a text."""
    if isinstance(value, str):
        return redacted(_words_up_to(without_controls(value), limit))
    if isinstance(value, list):
        return [_judged(x, limit) for x in value]
    if isinstance(value, dict):
        return {k: _judged(v, limit) for k, v in value.items()}
    return value


def _words_up_to(text: str, limit: int) -> str:
    """The whole words that start within the first `limit` characters: the secret guard judges a
    word whole, so a credential cut at the limit is still recognised (and replaced) before the cut,
    never kept as a prefix; words starting later are never kept, so they need no judging."""
    if len(text) <= limit:
        return text
    end = text.find(" ", limit)
    return text if end < 0 else text[:end]


def shape_trace(obj: Any, given: Optional[List[str]]) -> Dict[str, Any]:
    """The trace to keep from a harness's JSON object (a usage error for anything malformed).
    `given`: the lesson ids the session record says this session was last given, used when the
    object names none."""
    if not isinstance(obj, dict):
        raise UsageError("priors trace: the trace must be a JSON object {prompt, given, assistant, tools}")
    for key in obj:
        if key not in TRACE_FIELDS:
            raise UsageError(f"priors trace: unknown field {key!r} — a trace has {', '.join(TRACE_FIELDS)}")
    prompt = obj.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise UsageError("priors trace: `prompt` must be the run's prompt (non-empty text)")
    ids = obj.get("given", given or [])
    if not (isinstance(ids, list) and all(isinstance(x, str) and PRIOR_RE.match(x) for x in ids)):
        raise UsageError("priors trace: `given` must be a list of prior ids like P-0003")
    said = obj.get("assistant", [])
    if not (isinstance(said, list) and all(isinstance(x, str) for x in said)):
        raise UsageError("priors trace: `assistant` must be a list of texts")
    tools = obj.get("tools", [])
    if not (isinstance(tools, list) and all(isinstance(t, dict) for t in tools)):
        raise UsageError("priors trace: `tools` must be a list of {name, input, output, error} objects")
    shaped_tools: List[Dict[str, Any]] = []
    for i, t in enumerate(tools[-MAX_TOOLS:]):
        for key in t:
            if key not in TOOL_FIELDS:
                raise UsageError(f"priors trace: tools[{i}]: unknown field {key!r} — a tool call has "
                                 f"{', '.join(TOOL_FIELDS)}")
        name = t.get("name")
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"priors trace: tools[{i}].name must be the tool's name")
        one: Dict[str, Any] = {"name": _text(name, MAX_TOOL_NAME, f"tools[{i}].name")}
        if t.get("input") is not None:
            one["input"] = _text(t["input"], MAX_TOOL_INPUT, f"tools[{i}].input")
        if t.get("output") is not None:
            one["output"] = _text(t["output"], MAX_TOOL_OUTPUT, f"tools[{i}].output")
        if t.get("error") is True:
            one["error"] = True
        shaped_tools.append(one)
    out: Dict[str, Any] = {"prompt": _text(prompt, MAX_PROMPT, "prompt"), "given": sorted(set(ids), key=_order)}
    snippets = [_text(x, MAX_SNIPPET, "assistant") for x in said if x.strip()][-MAX_SNIPPETS:]
    if snippets:
        out["assistant"] = snippets
    if shaped_tools:
        out["tools"] = shaped_tools
    return out


def well_formed(rec: Any) -> bool:
    """Is this line of `traces.jsonl` a trace as the keeper writes it? The file is private but not
    the keeper's alone (anything in the repository can write it), and `reflect` quotes it to a
    model: a line with other fields or types, a text on several lines, longer than the keeper
    keeps, is not a trace (and is skipped, never quoted). A control character (kept by a keeper
    before they were taken out) is quoted escaped."""
    if not isinstance(rec, dict) or rec.get("t") != "trace" or set(rec) - _STORED:
        return False
    n = rec.get("n")
    if type(n) is not int or n < 1:
        return False
    key = rec.get("session")
    if key is not None and not (isinstance(key, str) and SESSION_KEY_RE.match(key)):
        return False
    if not _line(rec.get("prompt"), MAX_PROMPT) or not rec["prompt"]:
        return False
    if not _ids(rec.get("given"), PRIOR_RE) or ("runs" in rec and not _ids(rec["runs"], RUN_RE)):
        return False
    said = rec.get("assistant", [])
    if not (isinstance(said, list) and len(said) <= MAX_SNIPPETS and all(_line(x, MAX_SNIPPET) for x in said)):
        return False
    tools = rec.get("tools", [])
    if not (isinstance(tools, list) and len(tools) <= MAX_TOOLS):
        return False
    for t in tools:
        if not isinstance(t, dict) or set(t) - set(TOOL_FIELDS) or not _line(t.get("name"), MAX_TOOL_NAME):
            return False
        if not (_line(t.get("input", ""), MAX_TOOL_INPUT) and _line(t.get("output", ""), MAX_TOOL_OUTPUT)
                and t.get("error", True) is True):
            return False
    return True


_STORED = {"t", "n", "session", "runs", *TRACE_FIELDS}


def _line(value: Any, limit: int) -> bool:
    return isinstance(value, str) and len(value) <= limit and " ".join(value.split()) == value


def _ids(value: Any, pattern: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and pattern.match(x) for x in value)


def _order(pid: str) -> tuple:
    return (int(pid[2:]) if pid[2:].isdigit() else 0, pid)


def prune(traces: List[Dict[str, Any]], keep_unscored: int, keep_scored: Optional[int] = None) -> List[Dict[str, Any]]:
    """The traces kept: the newest `keep_unscored` unscored ones, and every scored one (or, with
    `keep_scored`, the newest that many) — in their order."""
    unscored = [i for i, t in enumerate(traces) if not t.get("runs")]
    scored = [i for i, t in enumerate(traces) if t.get("runs")]
    drop = set(unscored[:max(0, len(unscored) - keep_unscored)])
    if keep_scored is not None:
        drop |= set(scored[:max(0, len(scored) - keep_scored)])
    return [t for i, t in enumerate(traces) if i not in drop]


def packet_lines(traces: List[Dict[str, Any]]) -> List[str]:
    """A run's traces as Markdown lines for a reflection packet (control characters escaped)."""
    lines: List[str] = []
    for t in traces:
        given = ", ".join(t.get("given") or []) or "none"
        lines.append(f"- trace {t.get('n')}: given {given}")
        lines.append(f"  - prompt: {visible(t.get('prompt', ''))}")
        for s in t.get("assistant") or []:
            lines.append(f"  - assistant: {visible(s)}")
        for tool in t.get("tools") or []:
            bits = [visible(str(tool.get("name")))]
            if tool.get("input"):
                bits.append(f"input {visible(tool['input'])}")
            if tool.get("output"):
                bits.append(f"{'error' if tool.get('error') else 'output'} {visible(tool['output'])}")
            lines.append(f"  - tool: {' — '.join(bits)}")
    return lines
