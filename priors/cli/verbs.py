"""Every verb, declared once: its name, one-line summary, help group, where its handler lives, how
its answer prints, its argument spec and help text, and — for the agent's verbs — the MCP tool it
is (the record: cli/verb_record.py). The dispatch table (`cli/main.py`), `priors --help`, `priors
mcp`'s tool list and the README's "Every verb" table (tests/test_docs.py) are all read from here;
the lessons loop's verbs are declared in cli/verbs_lessons.py and added after these.

Importing this module costs no verb module: a handler is imported by name when its verb runs.
"""

from __future__ import annotations

from priors.cli.args import BOOL, MULTI, REST, VALUE
from priors.cli.verb_record import (
    ANSWER,
    CI,
    GROUPS,
    HUMANS,
    LESSONS,
    OWN,
    RITUAL,
    SEE,
    SET_UP,
    START,
    VERBS,
    Tool,
    Verb,
    declare,
    tools,
)
from priors.cli.verbs_lessons import LESSON_VERBS
from priors.core.mcp_tools import CANDIDATE, COUNT, ecma, ns_schema, object_schema, run_schema
from priors.core.vocabulary import AGENT_VERDICTS, PRIOR_RE

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List

__all__ = ["ANSWER", "GROUPS", "LESSONS", "OWN", "VERBS", "tools"]


# ------------------------------------------------------------------ Start here

declare(Verb('demo', 'watch three scripted runs in a scratch repo (start here)', START, "demo", OWN,
             usage='priors demo [--keep DIR]',
             flags={"--keep": VALUE},
             help="""usage: priors demo [--keep DIR]

Watch priors work in under a minute: in a scratch repo with a little real
code, a scripted reviewer makes real keeper calls over three runs —
run 1 finds issues, you mark one wontfix, the code is fixed in places,
run 2 shows fixed / carried / a refused re-raise / new, and run 3 ends with
"Everything settled still holds. Nothing new."
  --keep DIR   build the repo in DIR (must be empty or absent) and leave it to explore"""))
declare(Verb('init', 'create .priors/ in the target repo (idempotent)', SET_UP, "setup_verbs", ANSWER,
             usage='priors init [--git]',
             flags={"--git": BOOL},
             help="""usage: priors init [--git]

Create .priors/ (ledger, runs/, .gitignore) in the target root and render
.priors/PRIORS.md. Safe to run again: nothing existing is touched.
Commit .priors/ with your repository so every agent shares the history.

  --git   also register the ledger merge driver: `merge.priors` and
          `merge.priors-render` in the repo's git config, and .gitattributes
          lines so two branches' runs merge without id collisions and
          PRIORS.md never blocks a merge (see docs/ci.md)"""))
declare(Verb('doctor', "check this machine's and this clone's set-up, each problem with its fix", SET_UP,
             "setup_verbs", ANSWER,
             usage='priors doctor [--json]',
             flags={"--json": BOOL},
             help="""usage: priors doctor [--json]

Check what using priors here needs, one line each — ok, off, or – (not set
up, optional) — and for what is off, the command that fixes it:
  command            `priors` on PATH, and whether it runs this keeper
  skills             priors and with-priors in each agent harness's folder found
                     (~/.claude, ~/.codex, ~/.agents, ~/.pi/agent, ~/.openclaw)
  lesson hooks       Claude Code's (~/.claude/settings.json): their interpreter,
                     script (the keeper's lessons_hook.py) and keeper are there,
                     and all three events (SessionStart, UserPromptSubmit, Stop)
  MCP server         registered with Claude Code and Codex, to a command that is there
  Pi extension       installed when Pi is
  merge driver       `priors init --git`'s, in this clone
  pre-commit hooks   installed (and executable) when .pre-commit-config.yaml
                     lists priors-verify
  signing            with .priors/allowed_signers: git names a key and your
                     principal (user.email), ssh-keygen is there, and the file
                     lists that key for you — what `decide` would refuse
  ledger             `priors verify` finds it sound (.priors a file is off)
Exit 0 when nothing is off, 1 when something is. It only reads; it starts no
agent client. --json prints {"checks": [{"check", "state", "detail", "fix"}], "ok"}."""))
declare(Verb('hash', 'print the sha12 of a file, a text or raw bytes', SET_UP, "hash_verb", ANSWER,
             usage='priors hash FILE | --text TEXT | --raw FILE | --stdin-raw',
             flags={"--text": VALUE, "--raw": VALUE, "--stdin-raw": BOOL},
             max_pos=1,
             help="""usage: priors hash FILE | --text TEXT | --raw FILE | --stdin-raw

Print the sha12 (first 12 hex digits of SHA-256) the keeper uses for scopes.
  FILE          the file read as UTF-8 text, whitespace runs collapsed and trimmed
  --text TEXT   the given text, normalized the same way
  --raw FILE    the file's bytes exactly as they are
  --stdin-raw   standard input's bytes exactly as they are"""))
declare(Verb('snapshot', 'print a map of scope refs (files, definitions, dirs, *) to hashes', SET_UP, "snapshot_verb", ANSWER,
             usage='priors snapshot [PATH ...] [-o FILE] [--no-anchors] [--merge FILE] [--tool NAME=COMMAND ...]',
             flags={"--output": VALUE, "--no-anchors": BOOL, "--merge": MULTI, "--tool": MULTI, "--no-cache": BOOL},
             aliases={'-o': '--output'},
             max_pos=None,
             help="""usage: priors snapshot [PATH ...] [-o FILE] [--no-anchors] [--merge FILE] [--tool NAME=COMMAND ...]

Print a canonical JSON map of scope refs to 12-hex hashes for the target root
(or only under PATHs): files (`src/a.py`), definitions (`src/a.py#Class.method`),
directories (`src/`) and the whole target (`*`). Feed it to
`priors relevant --ns N --scopes FILE`, or use `priors relevant --snapshot`.

  -o FILE             write the map to FILE instead of stdout (`-`: stdout)
  --no-anchors        leave out definition anchors (faster on a cold tree)
  --merge FILE        add refs from a JSON object of strings (`-` = stdin); repeatable
  --tool NAME=CMD     run CMD in the root and record its stdout's hash as NAME; repeatable
  --no-cache          neither read nor write .priors/cache/

See docs/snapshot.md for exactly what each hash covers."""))
declare(Verb('mcp', "serve the agent's verbs as MCP tools on stdin/stdout (for agent clients)", SET_UP, "mcp_server", OWN,
             usage='priors [-C DIR] mcp',
             flags={},
             help="""usage: priors [-C DIR] mcp

Serve the agent's verbs as Model Context Protocol tools on standard input and
output (JSON-RPC 2.0, one message per line) until standard input closes.
Register it with your agent client, e.g. `claude mcp add priors -- priors mcp`;
see docs/mcp.md. Tools:
{tools}.
A person's verbs (decide, redact, add, score, import, config) are
never tools. Each call runs exactly the command-line verb: same checks, same
lock, same ledger bytes. A refusal is a tool result with isError: true; a usage
error is a JSON-RPC error (-32602), and so is a failure of the machine (-32603,
saying so). Messages over 4 MiB are refused unread.
  -C DIR   the target root (default: where the client starts the server,
           found as every verb finds it)"""))
declare(Verb('relevant', 'open a run: select what still applies', RITUAL, "relevant_verb", ANSWER,
             usage=('priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN] [--max-inject N]'
                    ' [--max-chars C] [--query TEXT] [--settled N]'),
             flags={"--settled": VALUE, "--ns": VALUE, "--scopes": VALUE, "--run": VALUE, "--snapshot": REST,
                    "--max-inject": VALUE, "--max-chars": VALUE, "--query": VALUE},
             tool=Tool("Open a run", False,
                       "Open a run: what still applies to this namespace. Returns {run, inject, verify, nudges, "
                       "floors, settled, settled_here, ...} (awaiting_review: lessons held for a person). Follow every "
                       "inject item; every verify item needs a verdict (priors_disposition) before anything new. "
                       "Give snapshot: true (or paths) to hash the code now, or scopes: {ref: hash}.",
                       object_schema({
                           "ns": ns_schema("the namespace, one per job, e.g. code-review"),
                           "snapshot": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}],
                                        "description": "true: snapshot the whole target now; a list: only these paths"},
                           "scopes": {"type": "object", "additionalProperties": {"type": "string"},
                                      "description": "the run's trusted snapshot, {scope_ref: hash} (instead of snapshot)"},
                           "query": {"type": "string", "description": "rank lessons by word overlap with this task"},
                           "run": run_schema(),
                           "max_inject": COUNT, "max_chars": COUNT, "settled": COUNT,
                       }, ("ns",))),
             help="""usage: priors relevant --ns NS [--scopes FILE|-] [--snapshot [PATH ...]] [--run RUN]
                       [--max-inject N] [--max-chars C] [--query TEXT] [--settled N]

Open a run and print, as one JSON line, what applies to it:
  inject   instructions to follow this run (lessons, preferences, decisions)
  verify   old findings to re-check — each needs a disposition before anything new
  nudges   priors asking to be re-confirmed by a human
  floors   review depths below which new findings are refused
  settled  how many binding decisions apply; archived: resting priors not listed
  settled_here  the binding priors on scopes in this snapshot (id, status,
           scope_ref, claim, scopeState; ns when another namespace's
           finding — a person's decision holds in every namespace): read
           them before proposing — while unchanged, a finding that repeats
           one is refused; settled_here_more counts those not listed
  awaiting_review  (when any) lessons held back for a person: an open revision
           while a lesson it revises is given (one version of a lesson at a
           time), a proposal under require_review — nothing to do
  inject_omitted   (with a budget) lessons that did not fit it

  --ns NS            the namespace (one per job, e.g. code-review)
  --scopes FILE|-    JSON object {scope_ref: hash} — the run's trusted snapshot
  --snapshot [PATH]  take the snapshot now (see `priors snapshot`)
  --run RUN          the run id (default: the next free one, e.g. run-004)
  --max-inject N     inject at most N lessons (default: .priors/config.json, else all);
                     binding lessons are never left out, and count against it
  --max-chars C      inject at most C characters of lesson text (same default)
  --settled N        list at most N priors in settled_here (default 50)
  --query TEXT       rank lessons by word overlap with TEXT: binding first, then
                     overlap, outcome score, id; what did not fit is in inject_omitted

Only one run may be open at a time. Finish it with `priors commit` or `priors abort`."""))
declare(Verb('scopes', "print an open run's scope refs (with --lines, line spans)", RITUAL, "propose_verb", ANSWER,
             usage='priors scopes --run RUN [PATH ...] [--lines] [--json]',
             flags={"--run": VALUE, "--lines": BOOL, "--json": BOOL},
             tool=Tool("List the run's scope refs", True,
                       "The open run's scope refs ({ref: hash}; with lines: {ref: [first, last]} for definitions), "
                       "optionally only under some paths.",
                       object_schema({
                           "run": run_schema(),
                           "paths": {"type": "array", "items": {"type": "string"}},
                           "lines": {"type": "boolean"},
                       }, ("run",))),
             max_pos=None,
             help="""usage: priors scopes --run RUN [PATH ...] [--lines] [--json]

Print the scope refs of an open run's snapshot, one per line, sorted: the
refs a candidate's `scope_ref` may name. PATH limits them to files and
directories at or under those paths (as refs: `src/a.py`, `src/`); where none
lies under them, a line says so.
  --lines   beside each definition, its line span in the snapshot (`12-30`)
  --json    one JSON object {ref: hash} (with --lines: {ref: [first, last]} for definitions)
Instead of a ref a candidate may give `"at": "src/a.py:120"`; the keeper
resolves it to the innermost definition spanning that line, else the file."""))
declare(Verb('disposition', "record the agent's verdict on an old finding", RITUAL, "run_verbs", ANSWER,
             usage=('priors disposition ID VERDICT [ID VERDICT ...] --run RUN [--json]'
                    ' | priors disposition --run RUN --from FILE|- [--json]'),
             flags={"--run": VALUE, "--from": VALUE, "--json": BOOL},
             tool=Tool("Judge old findings", False,
                       "Record your verdict on verify items (or challenged on an injected lesson); each is "
                       "judged as if alone, in order. Verdicts: " + ", ".join(AGENT_VERDICTS) + ".",
                       object_schema({
                           "run": run_schema(),
                           "verdicts": {"type": "array", "minItems": 1, "items": object_schema({
                               "id": {"type": "string", "pattern": ecma(PRIOR_RE)},
                               "verdict": {"type": "string", "enum": list(AGENT_VERDICTS)},
                           }, ("id", "verdict"))},
                       }, ("run", "verdicts"))),
             min_pos=0,
             max_pos=None,
             help="""usage: priors disposition ID VERDICT [ID VERDICT ...] --run RUN [--json]
       priors disposition --run RUN --from FILE|- [--json]

Record your verdict on an old finding the run had to verify:
  fixed              the issue is gone
  still-open         unchanged code, issue still there (carried)
  reaffirmed         the code changed and the issue is still there
  stale              the code changed; the finding no longer fits as written
  challenged         an injected lesson failed in practice (send it to the human)
  obsolete-proposed  suggest the human retire it

Several ID VERDICT pairs may be given; each is judged as if alone, in order.
--from FILE (or - for standard input) reads pairs, one `ID VERDICT` a line, after
any given as arguments: a run's thousands of verdicts in one call (a command
line that long costs memory, and past ~2 MB the system refuses it).
--json prints one canonical JSON object {"items": [...], "run": ...} instead of lines.
Human verdicts (accepted, wontfix, obsolete, reopen, keep) belong to `priors decide`."""))
declare(Verb('propose', 'stage a new prior (vetoed if it repeats the past)', RITUAL, "propose_verb", ANSWER,
             usage='priors propose FILE [FILE ...] --run RUN --ns NS [--json]',
             flags={"--run": VALUE, "--ns": VALUE, "--json": BOOL},
             tool=Tool("Propose new findings", False,
                       "Stage new priors, each judged as if proposed alone: duplicates, re-raises of a person's "
                       "decisions, reversals and findings below a review floor are refused.",
                       object_schema({
                           "run": run_schema(),
                           "ns": ns_schema("the open run's namespace"),
                           "candidates": {"type": "array", "minItems": 1, "items": CANDIDATE},
                       }, ("run", "ns", "candidates"))),
             min_pos=1,
             max_pos=None,
             help="""usage: priors propose FILE [FILE ...] --run RUN --ns NS [--json]

Stage a new prior from a JSON candidate (FILE, or - for stdin):
  {"type": "conclusion", "claim": "…", "scope_ref": "src/app.py#Cart.total",
   "severity": "minor|major|gate", "direction": "…", "evidence": "…"}
Types: conclusion (a finding to re-check), behavioral (a tool lesson),
coverage (a review-depth floor), calibration (a repo-wide preference);
or give "facets" yourself. The keeper takes the scope's hash from the run's
snapshot and refuses duplicates, re-raises of human decisions, reversals
and findings below a coverage floor. Every verify item needs a disposition first.

A FILE may hold one candidate, a JSON array of them, or JSON lines; each is
judged as if proposed alone, in order, with one output line per item.
--json prints one canonical JSON object {"items": [...], "run": ...} instead:
each staged item names its id and the scope_ref it landed on."""))
declare(Verb('withdraw', 'take back priors this open run staged', RITUAL, "retract_verbs", ANSWER,
             usage='priors withdraw --run RUN ID [ID ...] [--json]',
             flags={"--run": VALUE, "--json": BOOL},
             tool=Tool("Withdraw staged findings", False,
                       "Take back priors this open run staged (the ledger is untouched).",
                       object_schema({
                           "run": run_schema(),
                           "ids": {"type": "array", "minItems": 1, "items": {"type": "string", "pattern": ecma(PRIOR_RE)}},
                       }, ("run", "ids"))),
             min_pos=1,
             max_pos=None,
             help="""usage: priors withdraw --run RUN ID [ID ...] [--json]

Take back priors this open run staged with `priors propose` (and any call for
the human filed against them). The ledger is not touched and the rest of the
run stays as it is: dispositions and other proposals are kept. An id that is
not staged in this run is refused (NOT_STAGED) and nothing is withdrawn.
Staged ids are not renumbered; the next proposal takes the number after the
highest one still staged. --json prints {"run": ..., "withdrawn": [ids]}."""))
declare(Verb('commit', 'seal the run atomically — or refuse', RITUAL, "run_verbs", ANSWER,
             usage='priors commit --run RUN [--json]',
             flags={"--run": VALUE, "--json": BOOL},
             tool=Tool("Seal the run", False,
                       "Seal the run atomically and return its summary (a retry returns the same summary and "
                       "writes nothing).", object_schema({"run": run_schema()}, ("run",))),
             help="""usage: priors commit --run RUN [--json]

Seal the run: append its dispositions, the missing-scope marks, the new
priors and any calls for the human to the ledger in one atomic write, then
print the summary (fixed / carried / touched / your call / new).
Refused while any verify item with a present scope lacks a disposition.
Every staged line is judged again, by the same rules, against the ledger as it
is now: a line they would refuse refuses the commit (its file and line named).
Committing an already committed run prints the same summary and writes nothing;
a run of that id sealed with other content (another clone's, brought by a git
pull) is refused RUN_COMMITTED and the staging kept: `priors carry` moves it.
--json prints {"run": ..., "summary": [lines]}."""))
declare(Verb('carry', "move a run's staging to a new open run, its staged ids renumbered", RITUAL, "run_verbs", ANSWER,
             usage='priors carry --run RUN [--json]',
             flags={"--run": VALUE, "--json": BOOL},
             tool=Tool("Carry the staging to a new run", False,
                       "Move a run's staging to a new open run when its id was sealed elsewhere or its staged "
                       "ids were taken (the ledger is untouched).", object_schema({"run": run_schema()}, ("run",))),
             help="""usage: priors carry --run RUN [--json]

Move RUN's staging (its snapshot, dispositions, proposals and calls) to a new
open run, its staged priors renumbered after the ledger's highest id. For a
run whose id another clone sealed (commit refuses RUN_COMMITTED and names this
command) or whose staged ids the ledger took (STAGED_ID_COLLISION). Nothing is
judged here and the ledger is not touched: `priors commit` on the new run
judges every line against the ledger as it is then.
--json prints {"carried": RUN, "ids": {old: new}, "run": NEW}."""))
declare(Verb('abort', "drop an open run's staging; the ledger is untouched", RITUAL, "retract_verbs", ANSWER,
             usage='priors abort --run RUN [--json]',
             flags={"--run": VALUE, "--json": BOOL},
             tool=Tool("Drop the run", False, "Drop an open run's staging; the ledger is untouched.",
                       object_schema({"run": run_schema()}, ("run",))),
             help="""usage: priors abort --run RUN [--json]

Throw away an open run's staging (dispositions, proposals, escalations).
The ledger is not touched; open a fresh run with `priors relevant`.
--json prints {"aborted": true, "run": ...}."""))
declare(Verb('decide', 'a human verdict that sticks (between runs)', HUMANS, "decide_verb", OWN,
             usage='priors decide ID VERDICT [--because TEXT] [--retires P-…] | priors decide ID duplicate --of P-… | '
                   'priors decide [--open [--ns NS] [PATH…]]',
             flags={"--because": VALUE, "--retires": VALUE, "--of": VALUE, "--open": BOOL, "--ns": VALUE},
             max_pos=None,
             help="""usage: priors decide ID VERDICT [--because TEXT] [--retires P-…]
       priors decide ID duplicate --of P-… [--because TEXT]
       priors decide [--open [--ns NS] [PATH…]]      (on a terminal: one call at a time)

A human verdict — it sticks. Only run this on a person's explicit instruction.
  accepted   make the prior binding (a lesson or preference to follow)
  wontfix    the finding stands but will not be fixed; re-raising it is refused
  obsolete   retire the prior
  reopen     reopen a settled prior (needs --because)
  keep       keep a challenged or due-for-review prior (binding)
  duplicate --of P-…  ID says what P-… says: retired (obsolete, `same_as`), and
             its words count as P-…'s, so that rewording is refused next time
Decisions happen between runs. Accepting (or keeping) a lesson whose candidate
named `supersedes: P-…` retires that lesson in the same write — unless a person
settled it (accepted, wontfix): then only `--retires P-…`, naming it, does.
  --retires P-…  with accepted or keep: retire the binding lesson this one supersedes

With no ID, on a terminal, walks through what waits for you — challenges,
proposed retirements, reversals, findings an agent says differ from yours,
losing lessons, lessons awaiting review, review nudges — one at a time: claim,
scope, severity, evidence, origin. Answer with one key (a accepted, w wontfix,
o obsolete, r reopen, k keep, d duplicate; s skips, q stops), then an
optional reason (required for reopen). Each answer is written at once,
exactly as `priors decide ID VERDICT --because …` writes it.
On an open finding: accepted (a) = you accept it as it stands, not “fix it”
— settled, no run checks it again, agents may not raise it on this code
(once it changes, they may); wontfix (w) =
real, but will not be fixed — settled the same way; obsolete (o) = it no
longer applies; skip (s) leaves it open, checked by every run until fixed.
  --open       then walk the open findings too
  --ns NS      open findings of namespace NS only
  PATH…        open findings whose scope lies under these paths only
Not on a terminal, `priors status --calls` lists the same calls with commands."""))
declare(Verb('redact', "remove a prior's content from .priors/ for good", HUMANS, "redact_verb", ANSWER,
             usage='priors redact ID --because TEXT',
             flags={"--because": VALUE},
             min_pos=1,
             max_pos=1,
             help="""usage: priors redact ID --because TEXT

Remove a prior's content from everything under .priors/ (the ledger keeps a
tombstone with a content hash; reasons and calls about it are scrubbed).
Git history still holds the old content — rewrite it too if it must go."""))
declare(Verb('status', 'one line per namespace; --calls lists your calls', HUMANS, "status_verb", ANSWER,
             usage='priors status [--calls] [--json]',
             flags={"--calls": BOOL, "--json": BOOL},
             tool=Tool("Where things stand", True,
                       "Counts per namespace and open runs; with calls: true, what waits for a person, each with "
                       "the exact `priors decide` commands to print for them.",
                       object_schema({"calls": {"type": "boolean"}})),
             help="""usage: priors status [--calls] [--json]

One line per namespace, counting its priors:
  open            findings still standing (open or stale)
  fixed           findings a run reported fixed
  decided by you  findings and floors you accepted or marked wontfix (they
                  bind every run)
  lessons locked  run-start lessons you accepted: in force in every run
  lessons proposed  run-start lessons an agent proposed and no person decided
                  yet: injected into every run (with require_review on,
                  awaiting your review instead); only when there are any
  retired         priors you marked obsolete (only when there are any)
  resting         priors whose scope was missing 5 runs in a row (only when
                  there are any; they wake if the scope returns)
An open run is named with the command that ends it. --calls lists what needs
your call, each with the exact `priors decide` command to answer it, or says
that nothing waits for you.
Once runs are scored, each scored lesson gets a line with its score (see
`priors lessons`), and a lesson that keeps losing becomes one of your calls.
--json prints one canonical JSON object: {"namespaces": [{"ns", "open", "fixed",
"settled", "learned", "proposed", "retired", "resting"}], "open_runs": [...]}, and with
--calls "calls": each waiting call with the `priors decide` commands that answer it."""))
declare(Verb('render', 'rewrite .priors/PRIORS.md from the ledger', HUMANS, "setup_verbs", ANSWER,
             usage='priors render',
             flags={},
             help="""usage: priors render

Rewrite .priors/PRIORS.md — a table of every prior for people to read — from
the ledger. Every writing verb does this already; run it after a git merge."""))
declare(Verb('show', 'one prior in plain words and its whole timeline', SEE, "inspect_verbs", ANSWER,
             usage='priors show ID [--json]',
             flags={"--json": BOOL},
             tool=Tool("Show one prior", True, "One prior in full with its whole timeline.",
                       object_schema({"id": {"type": "string", "pattern": ecma(PRIOR_RE)}}, ("id",))),
             min_pos=1,
             max_pos=1,
             help="""usage: priors show ID [--json]

A prior in plain words and its whole timeline: the run it was born in, each
disposition per run, each of your decisions with its reason, calls that reverse
it, each time an agent tried to raise it again and was refused, resting and
resurrection, redaction. Each step names its ledger line. For a prior you
settled: how often, and in which words, agents raised it again since."""))
declare(Verb('list', 'list priors, filtered by namespace, status or type', SEE, "inspect_verbs", ANSWER,
             usage='priors list [--ns N] [--status S] [--type T] [--lessons] [--json]',
             flags={"--ns": VALUE, "--status": VALUE, "--type": VALUE, "--json": BOOL, "--lessons": BOOL},
             help="""usage: priors list [--ns N] [--status S] [--type T] [--lessons] [--json]

One line per prior: id, area, type, status, where, what.
  --ns N       only namespace N
  --status S   open fixed stale challenged obsolete-proposed accepted wontfix
               obsolete redacted resting, or binding (accepted or wontfix)
  --type T     only priors of type T (conclusion, behavioral, coverage, calibration, custom, …)
  --lessons    lessons only, with uses, wins, partials, losses and score (`priors lessons`)
  --json       canonical JSON {"priors":[…]}"""))
declare(Verb('history', 'per-run table and chart: a project converging to quiescence', SEE, "inspect_verbs", ANSWER,
             usage='priors history [--ns N] [--json] [--svg FILE]',
             flags={"--ns": VALUE, "--json": BOOL, "--svg": VALUE},
             help="""usage: priors history [--ns N] [--json] [--svg FILE]

For every committed run, counted from the ledger's events: checked (verify items
it accounted for), fixed, carried, touched, your call, new, and resting/open after
it — as a table with a bar chart. A run is quiescent when it checked something,
carried everything and nothing was fixed, touched, new or put to you.
  --ns N       only runs of namespace N
  --json       canonical JSON {"runs":[…]}
  --svg FILE   also write a self-contained SVG chart to FILE: one chart per
               namespace, stacked (each open line is its own namespace's);
               namespaces whose runs found nothing are named, not drawn;
               `--svg -` prints the chart instead of the table"""))
declare(Verb('report', 'write one self-contained HTML page: chart, your calls, open findings', SEE, "report_verb", ANSWER,
             usage='priors report -o FILE.html [--since RUN] [--ns NS ...]',
             flags={"-o": VALUE, "--since": VALUE, "--ns": MULTI},
             aliases={'--output': '-o'},
             help="""usage: priors report -o FILE.html [--since RUN] [--ns NS ...]

Write one self-contained HTML page — inline CSS and SVG, nothing loaded from
anywhere, so it works opened from disk or attached to a pull request or a CI
run: where each namespace stands, the convergence chart — one per namespace
(fixed / carried / touched / your call / new per run, the namespace's open
line, quiescent runs marked), how often agents tried to raise again what you
decided, what
waits for you per namespace with the exact command to copy, open findings
grouped by file with their severity, what the last run fixed, lessons with
their score, and redacted priors as tombstones only. Same ledger, same bytes.
  -o FILE       where to write the page (--output); `-o -` prints it
  --since RUN   what changed since committed run RUN: the chart, new findings,
                fixes and your decisions after it (what waits stays complete)
  --ns NS       only namespace NS (repeatable): its counts, chart, calls and
                findings"""))
declare(Verb('verify', 'check the ledger is sound (CI, pre-commit); --since REV: it only grew', CI, "verify_verb", OWN,
             usage='priors verify [--since REV | --no-git] [--json]',
             flags={"--since": VALUE, "--json": BOOL, "--no-git": BOOL},
             help="""usage: priors verify [--since REV | --no-git] [--json]

Check that .priors/ is sound — for CI and pre-commit hooks.
Exit 0 when sound; 1 listing every problem as `line N: message`; 2 on usage errors.

Checks: every line is one canonical JSON object; record types and required
fields; prior ids well-formed, unique and increasing; facets valid, coherent and
never `binding`; events refer to earlier priors, agent verdicts only by the agent
and human verdicts only by the human, reopen with a reason, no agent verdict
after a binding decision (unless a later decision restates it); each run sealed by
exactly one commit record closing its contiguous block of lines; calls refer to
real priors; tombstones well formed and followed by their redact event;
.priors/PRIORS.md up to date; no staging of committed runs; no stray temp files.

In a git work tree, verify also proves the ledger only grew since the last
commit (HEAD): a line edited, removed or reordered by hand is named
(`NOT_APPEND_ONLY`, `LEDGER_SHRANK`) before it is committed. Lines added since
HEAD are checked only as lines: an edit to one of them is not seen.

  --since REV   prove it only grew since git revision REV instead of HEAD: the
                old ledger is a line-by-line prefix of the new one, except lines
                turned into redaction tombstones whose hashes match the old content
  --no-git      skip the comparison with git (the ledger alone is checked)
  --json        print {"ok":…,"problems":[{"line","code","message"}]} as canonical JSON

Under GitHub Actions (GITHUB_ACTIONS=true) every problem is also printed as an
::error annotation (on stdout; on stderr with --json, so stdout stays JSON)."""))
declare(Verb('merge-driver', 'git merge driver for the ledger (set up by `init --git`)', CI, "merge_verb", OWN,
             usage='priors merge-driver [--render] BASE OURS THEIRS [PATH]',
             flags={"--render": BOOL},
             min_pos=3,
             max_pos=4,
             help="""usage: priors merge-driver [--render] BASE OURS THEIRS [PATH]

The git merge driver for .priors/ledger.jsonl (git passes %O %A %B %P). Register it
with `priors init --git`. Writes base + our new lines + their new lines into OURS,
their colliding prior, run and call ids renumbered after ours and every reference
in their lines rewritten; a redaction on either side wins for that prior. If either
side is not an append-only extension of the base it exits 1 (a conflict) and says why.

  --render   the driver for .priors/PRIORS.md: writes the rendering of the merged
             ledger (left by the ledger driver), else keeps ours — never a conflict"""))
declare(Verb('ingest-sarif', "one whole run from an analyzer's SARIF log (ruff, semgrep, CodeQL…)", CI, "ingest_verb", ANSWER,
             usage='priors ingest-sarif FILE [FILE ...] --ns NS [--scopes FILE|-] [--json] [--snapshot [PATH ...]]',
             flags={"--ns": VALUE, "--scopes": VALUE, "--snapshot": REST, "--json": BOOL},
             min_pos=0,  # a log named after --snapshot is taken back from it (cli/ingest_verb.py): checked there
             max_pos=None,
             help="""usage: priors ingest-sarif FILE [FILE ...] --ns NS [--scopes FILE|-] [--json] [--snapshot [PATH ...]]

One whole keeper run from an analyzer's SARIF 2.1.0 log (ruff, semgrep, bandit,
CodeQL, ESLint…): open a run, give every old finding of NS its verdict by
whether the analyzer reported it again (reported on unchanged code: carried;
on changed code: reaffirmed; not reported: fixed; scope gone: missing), propose
every other result as a new finding, and commit — every keeper rule applies:
a result a person marked wontfix (or accepted) is not re-added, it is counted
as suppressed.

Each result becomes a candidate: claim from message.text, direction
TOOL:RULE from ruleId, severity from security-severity, problem.severity or
level (docs/sarif.md), scope from the first location — the file and
region.startLine resolved to the innermost definition, else the file; no
location: `*` — and evidence FILE:LINE with the snippet. Its identity is its
rule and a fingerprint (the analyzer's, else a hash of the flagged text): it
is reported again, merged or suppressed by a person's wontfix by that
identity, never by its wording (docs/sarif.md, "Identity").

  --ns NS            the namespace (one per analyzer, e.g. ruff)
  --snapshot [PATH]  the scopes the analyzer covered: give it the paths the
                     analyzer was given (default: a snapshot of the whole target)
  --scopes FILE|-    or a JSON object {scope_ref: hash}, as for `relevant`
  --json             print counts, the summary and every refused result as JSON

Several files, runs and tools are read as one log (a log named after
--snapshot too). Invalid SARIF is a usage
error naming the JSON path (runs[0].results[3].locations[0]) and opens no run;
so is a log of a failed analyzer (no runs, a run without results, an
invocation with executionSuccessful false). When a result cannot be placed in
the snapshot, nothing is marked fixed by that ingest."""))

for _verb in LESSON_VERBS:  # (declared in cli/verbs_lessons.py)
    declare(_verb)


def _tool_lines(names: List[str], width: int = 74) -> str:
    """Tool names as indented lines of help text, each at most `width` characters."""
    lines: List[str] = []
    for name in names:
        if lines and len(lines[-1]) + 2 + len(name) <= width:
            lines[-1] += ", " + name
        else:
            lines.append(name)
    return ",\n".join("  " + line for line in lines)


# `priors mcp --help` names the tools declared above: derived here, never listed by hand.
VERBS["mcp"].spec.help = VERBS["mcp"].spec.help.replace("{tools}", _tool_lines(list(tools())))
