"""The keeper's MCP face, as data: protocol versions, error codes, the server's instructions, the
schema pieces the tools are built from (the tools themselves are declared with their verbs, in
cli/verbs.py) and the check of a call's arguments against a tool's schema.

Pure: `priors/cli/mcp_server.py` reads and writes. A tool is exactly one agent verb: its arguments,
checked here, reach that verb's `ops` function — the same function the command line calls, with
the same checks, lock and writes — so a run through tools and the same run through the command
line write the same ledger bytes.
"""

from __future__ import annotations

import re

from priors.core.spelling import nearest
from priors.core.vocabulary import CANDIDATE_FIELDS, NS_RE, PRESETS, PRIOR_RE, RUN_RE, SEVERITIES

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
    "known, settled by a person, below a review floor) — never work around it. SETTLED_NEARBY means a "
    "person settled findings on that code, or on code your claim names, in this namespace or another "
    "(`settled` lists them): drop "
    "yours if it repeats one, or propose it again with distinct_from naming each and the person is asked. "
    "A person's verbs "
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


def ecma(regex: Any) -> str:
    """A vocabulary pattern as JSON Schema writes it (`\\Z` is Python's; ECMAScript says `$`)."""
    return str(regex.pattern).replace("\\Z", "$")


def run_schema() -> Dict[str, Any]:
    return {"type": "string", "pattern": ecma(RUN_RE), "description": "the open run's id, e.g. run-004"}


def ns_schema(what: str) -> Dict[str, Any]:
    return {"type": "string", "pattern": ecma(NS_RE), "description": what}


def object_schema(props: Dict[str, Any], required: Tuple[str, ...] = ()) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        schema["required"] = list(required)
    return schema


COUNT = {"type": "integer", "minimum": 0}

CANDIDATE = {
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
        "supersedes": {"type": "string", "pattern": ecma(PRIOR_RE)},
        "distinct_from": {"type": "array", "items": {"type": "string", "pattern": ecma(PRIOR_RE)},
                          "description": "priors you are sure this differs from (skips the similarity check for them)"},
    },
    "required": ["claim"],
}

def tool_entry(name: str, title: str, read_only: bool, description: str, schema: Dict[str, Any]) -> Dict[str, Any]:
    """One tool as `tools/list` answers it."""
    return {"name": name, "title": title, "description": description, "inputSchema": schema,
            "annotations": {"title": title, "readOnlyHint": read_only, "destructiveHint": False, "openWorldHint": False}}


def unknown_tool(name: Any, known: List[str]) -> str:
    """The message for a tool this server does not have — a person's verb says so."""
    verb = name[len("priors_"):] if isinstance(name, str) and name.startswith("priors_") else name
    if verb in HUMAN_VERBS:
        return (f"{name!r} is not a tool: `priors {verb}` is a person's verb, never the agent's — print the exact "
                f"command for the person to run (see `priors {verb} --help`)")
    near = nearest(str(name), known)
    return f"unknown tool {name!r}" + (f" — did you mean {near!r}?" if near else "") + f" (tools: {', '.join(known)})"


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
        extra = schema.get("additionalProperties", True)
        for key in value if extra is False else ():  # (first: a misspelt argument also leaves a required one missing)
            if key not in props:
                near = nearest(str(key), list(props))
                return (f"unknown argument `{_join(where, str(key))}`" + (f" — did you mean `{near}`?" if near else "")
                        + f" (arguments: {', '.join(props)})")
        for key in schema.get("required", ()):
            if key not in value:
                return f"`{_join(where, key)}` is required"
        for key, item in value.items():
            if key in props:
                sub = props[key]
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

# `priors_lessons`: pi-prior's model-callable tool — list, retrieve, propose, revise; never accept.
LESSONS_TOOL = {
    "action": {"type": "string", "enum": ["list", "retrieve", "propose", "revise"]},
    "status": {"type": "string", "enum": ["active", "proposed", "inactive", "rejected", "all"],
               "description": "list: which lessons (default active)"},
    "query": {"type": "string", "description": "retrieve: the task, to rank lessons by"},
    "ns": ns_schema("propose: the namespace (revise takes the lesson's own)"),
    "id": {"type": "string", "pattern": ecma(PRIOR_RE), "description": "revise: the lesson to correct"},
    "text": {"type": "string", "description": "propose/revise: the lesson, one sentence"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    "note": {"type": "string", "description": "why (kept as the lesson's evidence)"},
    "distinct_from": {"type": "array", "items": {"type": "string", "pattern": ecma(PRIOR_RE)}, "maxItems": 8,
                      "description": "propose/revise: lessons a DUPLICATE refusal named that yours differs from"},
}


_CLI_COMMAND = re.compile(r"`priors ([a-z][a-z-]*)([^`]*)`")
_FLAG = re.compile(r"--([a-z][a-z-]*)(?: ([^-\s][^\s]*))?")


def in_tool_terms(hint: str, tool_verbs: Any) -> str:
    """A refusal's hint as a tool caller reads it (issue 28): each back-ticked command line
    (`priors disposition <id> <verdict> --run run-002`) becomes the tool that does it, with the
    arguments its flags name (the `priors_disposition` tool, run "run-002"); a verb that is no tool
    is a person's, and the hint says so."""
    def one(m: Any) -> str:
        verb, rest = m.group(1), m.group(2)
        if verb not in tool_verbs:
            return m.group(0) + " (a person's command, not a tool: ask the person)"
        args = [f'{k}: "{v}"' if v else f"{k}: true" for k, v in _FLAG.findall(rest)]
        return f"the `priors_{verb}` tool" + (f" ({', '.join(args)})" if args else "")
    return _CLI_COMMAND.sub(one, hint)
