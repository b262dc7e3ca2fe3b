"""The record every verb is declared with (cli/verbs.py, cli/verbs_lessons.py): how its answer
prints, its help group, its argument spec and — for the agent's verbs — the MCP tool it is. Its own
module so the verbs can be declared in more than one (each verb still exactly once).
"""

from __future__ import annotations

from priors.cli.args import Spec
from priors.core.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Optional

# How a verb's answer prints. ANSWER: its handler returns an `Answer`, printed as text — or as its
# canonical JSON with --json, or when it has no text. OWN: its handler prints as it goes (a stream,
# a terminal dialogue, a protocol) and returns the exit code.
ANSWER, OWN = "answer", "own"

START, SET_UP, RITUAL, HUMANS, SEE, CI, LESSONS = (
    "Start here", "Set up", "The run ritual (agent)", "Humans", "See what is settled", "CI and git", "Lessons")
GROUPS = (START, SET_UP, RITUAL, HUMANS, SEE, CI, LESSONS)  # the order `priors --help` lists them in


class Tool(Plain):
    """How a verb is an MCP tool (`priors_<verb>`): its title, whether it only reads, what it does, and
    the JSON Schema of its arguments. The arguments reach the verb's `ops` function through
    `cli/mcp_server.py`'s call for the verb — never through the command line's parser."""

    __slots__ = ("title", "read_only", "description", "schema")

    def __init__(self, title: str, read_only: bool, description: str, schema: Dict[str, Any]) -> None:
        self.title, self.read_only, self.description, self.schema = title, read_only, description, schema


class Verb(Plain):
    """One verb. `module` is the cli module (under priors.cli) whose function `handler` takes the
    parsed arguments and the context, calls one `ops` function and returns what `prints` says."""

    __slots__ = ("name", "summary", "group", "module", "prints", "spec", "tool")

    def __init__(self, name: str, summary: str, group: str, module: str, prints: str, usage: str,
                 flags: Dict[str, str], help: str, aliases: Optional[Dict[str, str]] = None, min_pos: int = 0,
                 max_pos: Optional[int] = 0, tool: Optional[Tool] = None) -> None:
        self.name, self.summary, self.group, self.prints, self.tool = name, summary, group, prints, tool
        self.module = "priors.cli." + module
        self.spec = Spec(name, usage, flags, aliases, min_pos, max_pos, help)

    @property
    def handler(self) -> str:
        """The handler's name: `cmd_` and the verb's, with `-` as `_` (`cmd_ingest_sarif`)."""
        return "cmd_" + self.name.replace("-", "_")

    @property
    def tool_name(self) -> str:
        return "priors_" + self.name


VERBS: Dict[str, Verb] = {}


def declare(verb: Verb) -> None:
    if verb.name in VERBS:
        raise ValueError(f"verb {verb.name} declared twice")
    VERBS[verb.name] = verb


def tools() -> Dict[str, Verb]:
    """The verbs that are MCP tools, by tool name, in declaration order."""
    return {v.tool_name: v for v in VERBS.values() if v.tool is not None}
