"""The keeper's MCP face, as data: protocol versions, the tools with their input schemas, and how a
tool call's arguments become its verb's arguments.

Pure: `priors/cli/mcp_server.py` reads and writes. A tool is exactly one agent verb: its arguments
become that verb's argument vector — checked by the same parser as the command line — plus, for
candidates and an in-band snapshot, the values the verb would otherwise read from files. So a run
through tools and the same run through the command line write the same ledger bytes.
"""

from __future__ import annotations

from priors.core.spelling import nearest
from priors.core.vocabulary import AGENT_VERDICTS, CANDIDATE_FIELDS, NS_RE, PRESETS, PRIOR_RE, RUN_RE, SEVERITIES

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Tuple

# ------------------------------------------------------------------ the protocol

# Revisions reachable with the `initialize` handshake, newest first. A client asking for another gets
# the newest (it may then disconnect); the stateless revision that starts with `server/discover`
# is not spoken here: that method is unknown, and clients fall back to `initialize`.
PROTOCOL_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
BATCH_VERSIONS = ("2025-03-26",)  # the one revision whose clients may send JSON-RPC batches
STRUCTURED_VERSIONS = ("2025-11-25", "2025-06-18")  # revisions whose tool results carry structuredContent

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

SERVER_NAME = "priors"

# The verbs only a person runs: never a tool, never callable through the server.
HUMAN_VERBS = ("decide", "redact", "add", "score", "import", "config")

INSTRUCTIONS = (
    "priors keeps this repository's settled review judgments in .priors/ledger.jsonl. These tools are "
    "the agent's ritual, and the keeper checks every step: priors_relevant opens a run (follow every "
    "`inject` item as an instruction for the run); give every `verify` item a verdict with "
    "priors_disposition before proposing anything; priors_propose stages new findings (candidates may "
    "point at code with `at`: \"path:line\"); priors_commit seals the run, priors_abort drops it. A "
    "result with isError true is a refusal: read its `refused` code and `hint` and obey it (already "
    "known, settled by a person, below a review floor) — never work around it. A person's verbs "
    "(decide, redact, add, score, import, config) are not tools: when a person must decide, print the "
    "exact command for them to run (for example `priors decide P-0007 wontfix`, or the commands "
    "priors_status lists with calls: true), and never run it yourself."
)


def negotiate(requested: Any) -> str:
    """The revision to speak: the client's when this server knows it, else the newest it knows."""
    return requested if isinstance(requested, str) and requested in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[0]


def request_id_ok(value: Any) -> bool:
    """MCP ids are strings or whole numbers (never null, never a boolean)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


# ------------------------------------------------------------------ the tools


def _ecma(regex: Any) -> str:
    """A vocabulary pattern as JSON Schema writes it (`\\Z` is Python's; ECMAScript says `$`)."""
    return str(regex.pattern).replace("\\Z", "$")


def _run() -> Dict[str, Any]:
    return {"type": "string", "pattern": _ecma(RUN_RE), "description": "the open run's id, e.g. run-004"}


def _ns(what: str) -> Dict[str, Any]:
    return {"type": "string", "pattern": _ecma(NS_RE), "description": what}


def _object(props: Dict[str, Any], required: Tuple[str, ...] = ()) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


_COUNT = {"type": "integer", "minimum": 0}

_CANDIDATE = {
    "type": "object",
    "description": "one candidate, the grammar `priors propose` reads from a file (unknown fields are refused "
                   "with the nearest known one): " + ", ".join(CANDIDATE_FIELDS),
    "properties": {
        "type": {"type": "string", "enum": list(PRESETS),
                 "description": "conclusion: a finding re-checked against its scope; behavioral: a tool lesson; "
                                "coverage: a review-depth floor; calibration: a repo-wide preference"},
        "claim": {"type": "string", "description": "the finding or lesson, in one sentence"},
        "scope_ref": {"type": "string", "description": "a ref from the run's snapshot: file, file#Qual.name, dir/ or *"},
        "at": {"type": "string", "pattern": "^.+:[0-9]+$",
               "description": "instead of scope_ref: PATH:LINE (\"src/a.py:120\"); the keeper records the innermost "
                              "definition spanning that line, else the file — the file must be unchanged since "
                              "the run's snapshot"},
        "file": {"type": "string", "description": "instead of at: the file (with `line`, or alone for the whole file)"},
        "line": {"type": "integer", "minimum": 1},
        "severity": {"type": "string", "enum": list(SEVERITIES)},
        "depth": {"type": "string", "enum": list(SEVERITIES), "description": "coverage: the review depth of the floor"},
        "direction": {"type": "string", "description": "which way the finding pushes (a reversal of a settled one is refused)"},
        "opposes": {"type": "array", "items": {"type": "string"}},
        "evidence": {"description": "where it shows, e.g. \"src/cart.py:41\""},
        "review_every": {"type": "integer", "minimum": 1},
        "facets": {"type": "object", "description": "override the type's facets (never authority: binding)"},
        "scope_hash": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "supersedes": {"type": "string", "pattern": _ecma(PRIOR_RE)},
        "distinct_from": {"type": "array", "items": {"type": "string", "pattern": _ecma(PRIOR_RE)},
                          "description": "priors you are sure this differs from (skips the similarity check for them)"},
    },
    "required": ["claim"],
}

# name -> (verb, title, read-only?, description, input schema)
TOOLS: Dict[str, Tuple[str, str, bool, str, Dict[str, Any]]] = {
    "priors_relevant": ("relevant", "Open a run", False,
                        "Open a run: what still applies to this namespace. Returns {run, inject, verify, nudges, "
                        "floors, settled, settled_here, ...}. Follow every inject item; every verify item needs a "
                        "verdict (priors_disposition) before anything new. Give snapshot: true (or paths) to hash "
                        "the code now, or scopes: {ref: hash}.",
                        _object({
                            "ns": _ns("the namespace, one per job, e.g. code-review"),
                            "snapshot": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}],
                                         "description": "true: snapshot the whole target now; a list: only these paths"},
                            "scopes": {"type": "object", "additionalProperties": {"type": "string"},
                                       "description": "the run's trusted snapshot, {scope_ref: hash} (instead of snapshot)"},
                            "query": {"type": "string", "description": "rank lessons by word overlap with this task"},
                            "run": _run(),
                            "max_inject": _COUNT, "max_chars": _COUNT, "settled": _COUNT,
                        }, ("ns",))),
    "priors_disposition": ("disposition", "Judge old findings", False,
                           "Record your verdict on verify items (or challenged on an injected lesson); each is "
                           "judged as if alone, in order. Verdicts: " + ", ".join(AGENT_VERDICTS) + ".",
                           _object({
                               "run": _run(),
                               "verdicts": {"type": "array", "minItems": 1, "items": _object({
                                   "id": {"type": "string", "pattern": _ecma(PRIOR_RE)},
                                   "verdict": {"type": "string", "enum": list(AGENT_VERDICTS)},
                               }, ("id", "verdict"))},
                           }, ("run", "verdicts"))),
    "priors_propose": ("propose", "Propose new findings", False,
                       "Stage new priors, each judged as if proposed alone: duplicates, re-raises of a person's "
                       "decisions, reversals and findings below a review floor are refused.",
                       _object({
                           "run": _run(),
                           "ns": _ns("the open run's namespace"),
                           "candidates": {"type": "array", "minItems": 1, "items": _CANDIDATE},
                       }, ("run", "ns", "candidates"))),
    "priors_withdraw": ("withdraw", "Withdraw staged findings", False,
                        "Take back priors this open run staged (the ledger is untouched).",
                        _object({
                            "run": _run(),
                            "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": _ecma(PRIOR_RE)}},
                        }, ("run", "ids"))),
    "priors_commit": ("commit", "Seal the run", False,
                      "Seal the run atomically and return its summary (a retry returns the same summary and "
                      "writes nothing).", _object({"run": _run()}, ("run",))),
    "priors_abort": ("abort", "Drop the run", False,
                     "Drop an open run's staging; the ledger is untouched.", _object({"run": _run()}, ("run",))),
    "priors_scopes": ("scopes", "List the run's scope refs", True,
                      "The open run's scope refs ({ref: hash}; with lines: {ref: [first, last]} for definitions), "
                      "optionally only under some paths.",
                      _object({
                          "run": _run(),
                          "paths": {"type": "array", "items": {"type": "string"}},
                          "lines": {"type": "boolean"},
                      }, ("run",))),
    "priors_status": ("status", "Where things stand", True,
                      "Counts per namespace and open runs; with calls: true, what waits for a person, each with "
                      "the exact `priors decide` commands to print for them.",
                      _object({"calls": {"type": "boolean"}})),
    "priors_show": ("show", "Show one prior", True,
                    "One prior in full with its whole timeline.",
                    _object({"id": {"type": "string", "pattern": _ecma(PRIOR_RE)}}, ("id",))),
}


def tool_list() -> List[Dict[str, Any]]:
    """What `tools/list` answers."""
    return [{"name": name, "title": title, "description": desc, "inputSchema": schema,
             "annotations": {"title": title, "readOnlyHint": ro, "destructiveHint": False, "openWorldHint": False}}
            for name, (_, title, ro, desc, schema) in TOOLS.items()]


def unknown_tool(name: Any) -> str:
    """The message for a tool this server does not have — a person's verb says so."""
    verb = name[len("priors_"):] if isinstance(name, str) and name.startswith("priors_") else name
    if verb in HUMAN_VERBS:
        return (f"{name!r} is not a tool: `priors {verb}` is a person's verb, never the agent's — print the exact "
                f"command for the person to run (see `priors {verb} --help`)")
    near = nearest(str(name), list(TOOLS))
    return f"unknown tool {name!r}" + (f" — did you mean {near!r}?" if near else "") + f" (tools: {', '.join(TOOLS)})"


# ------------------------------------------------------------------ arguments


def schema_problem(schema: Dict[str, Any], value: Any, where: str = "") -> Optional[str]:
    """The first way `value` breaks `schema`, in words, or None. Only what the tools' schemas use:
    type, properties, required, additionalProperties, items, minItems, minimum, enum, anyOf. Values
    the verb checks itself (patterns, candidate fields) are left to it, for its own clearer message."""
    name = where or "arguments"
    if "anyOf" in schema:
        if any(schema_problem(s, value, where) is None for s in schema["anyOf"]):
            return None
        return f"`{name}` has the wrong type — {schema.get('description', 'see the tool schema')}"
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict):
            return f"`{name}` must be an object"
        props = schema.get("properties", {})
        for key in schema.get("required", ()):
            if key not in value:
                return f"`{_join(where, key)}` is required"
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                sub = props[key]
            elif extra is False:
                near = nearest(str(key), list(props))
                return (f"unknown argument `{_join(where, str(key))}`" + (f" — did you mean `{near}`?" if near else "")
                        + f" (arguments: {', '.join(props)})")
            elif isinstance(extra, dict):
                sub = extra
            else:
                continue
            why = schema_problem(sub, item, _join(where, str(key)))
            if why is not None:
                return why
        return None
    if kind == "array":
        if not isinstance(value, list):
            return f"`{name}` must be a list"
        if len(value) < schema.get("minItems", 0):
            return f"`{name}` must hold at least {schema['minItems']} item(s)"
        items = schema.get("items")
        for i, item in enumerate(value):
            why = None if items is None else schema_problem(items, item, f"{name}[{i}]")
            if why is not None:
                return why
        return None
    if kind == "string" and not isinstance(value, str):
        return f"`{name}` must be a string"
    if kind == "boolean" and not isinstance(value, bool):
        return f"`{name}` must be true or false"
    if kind == "integer":
        if not isinstance(value, int) or isinstance(value, bool):
            return f"`{name}` must be a whole number"
        if value < schema.get("minimum", value):
            return f"`{name}` must be at least {schema['minimum']}"
    return None  # `enum` and `pattern` are the verb's to check: it names the allowed values (a person's verdict as a person's)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def verb_call(name: str, args: Dict[str, Any]) -> Tuple[str, List[str], Dict[str, Any]]:
    """(verb, its argument vector, values carried in-band) for a tool call whose arguments fit the schema.

    Lists of ids and verdicts follow `--`, so an id that looks like a flag stays an argument (and is
    refused by the verb as the command line would refuse it)."""
    verb = TOOLS[name][0]
    run = ["--run", args["run"]] if "run" in args else []
    inband: Dict[str, Any] = {}
    if verb == "relevant":
        argv = ["--ns", args["ns"]] + run
        for key in ("query", "max_inject", "max_chars", "settled"):
            if key in args:
                argv += ["--" + key.replace("_", "-"), str(args[key])]
        snap = args.get("snapshot", False)
        if snap is not False:
            argv += ["--snapshot"] + ([] if snap is True else list(snap))
        if "scopes" in args:
            inband["scopes"] = args["scopes"]
        return verb, argv, inband
    if verb == "disposition":
        pairs = [tok for item in args["verdicts"] for tok in (item["id"], item["verdict"])]
        return verb, run + ["--json", "--"] + pairs, inband
    if verb == "propose":
        inband["candidates"] = [(f"candidates[{i}]", c) for i, c in enumerate(args["candidates"])]
        return verb, run + ["--ns", args["ns"], "--json"], inband
    if verb == "withdraw":
        return verb, run + ["--json", "--"] + list(args["ids"]), inband
    if verb == "scopes":
        return verb, run + ["--json"] + (["--lines"] if args.get("lines") else []) + ["--"] + list(args.get("paths", [])), inband
    if verb == "status":
        return verb, ["--json"] + (["--calls"] if args.get("calls") else []), inband
    if verb == "show":
        return verb, ["--json", "--", args["id"]], inband
    return verb, run + ["--json"], inband  # commit, abort
