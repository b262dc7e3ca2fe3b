"""The lessons loop's verbs, declared once (the rest are in cli/verbs.py, which declares these after
its own, so `priors --help`, the MCP tools and the README's table keep one order).
"""

from __future__ import annotations

from priors.cli.args import BOOL, MULTI, VALUE
from priors.cli.verb_record import ANSWER, LESSONS, Tool, Verb
from priors.core.mcp_tools import LESSONS_TOOL, object_schema

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import List

LESSON_VERBS: List[Verb] = []
declare = LESSON_VERBS.append

declare(Verb('add', 'record a lesson a person wrote, as accepted (between runs)', LESSONS, "lessons_verbs", ANSWER,
             usage='priors add --ns NS [--type calibration|behavioral] [--scope-ref R --scope-hash H] [--tag T ...] '
                   '[--supersedes P-…] [--review-every N] [--open] TEXT',
             flags={"--ns": VALUE, "--type": VALUE, "--scope-ref": VALUE, "--scope-hash": VALUE, "--tag": MULTI,
                    "--supersedes": VALUE, "--review-every": VALUE, "--open": BOOL},
             min_pos=1,
             max_pos=None,
             help="""usage: priors add --ns NS [--type calibration|behavioral] [--scope-ref R --scope-hash H]
                  [--tag T ...] [--supersedes P-…] [--review-every N] [--open] TEXT

Record a lesson a person wrote, as already accepted (binding), between runs.
It is sealed like a run of its own (a new run id), so any keeper can read it.
  --type calibration   a repo-wide preference (default)
  --type behavioral    a tool lesson; needs --scope-ref and --scope-hash
  --tag T              a short lowercase word for ranking (repeatable)
  --supersedes P-…     retire that lesson in the same write
  --review-every N     ask you to re-confirm it every N runs
  --open               record it as open (advisory) instead of accepted
(--supersedes without --ns: the superseded lesson's namespace.)
A human verb: agents propose lessons with `priors propose` or `priors suggest`."""))
declare(Verb('score', 'score how a committed run turned out; credits its lessons', LESSONS, "lessons_verbs", ANSWER,
             usage='priors score RUN|last success|partial|failure [--session KEY] [--because TEXT] [--again|--replace]',
             flags={"--because": VALUE, "--again": BOOL, "--replace": BOOL, "--session": VALUE},
             min_pos=1,
             max_pos=2,
             help="""usage: priors score RUN|last success|partial|failure [--session KEY] [--because TEXT] [--again|--replace]

A human verdict on how a committed run turned out. Every lesson injected
into that run is credited: a win, a partial or a loss. RUN may be `last`:
the latest committed run or coding session (refused while a run is open).
  --session KEY  score that harness session (`lessons --inject --session KEY`)
Once per run, unless:
  --again     add another score (both count)
  --replace   replace the latest score of that run
Lessons that keep losing (3+ scored uses, score under 1/3) come back to you
as a keep-or-retire call."""))
declare(Verb('reflect', 'write a reflection packet from scored runs for the next run', LESSONS, "lessons_verbs", ANSWER,
             usage='priors reflect [N] [--ns NS] [--dry-run] [--include-learned] [--mark-existing]',
             flags={"--ns": VALUE, "--dry-run": BOOL, "--include-learned": BOOL, "--mark-existing": BOOL, "--json": BOOL},
             max_pos=1,
             help="""usage: priors reflect [N] [--ns NS] [--dry-run] [--include-learned] [--mark-existing [N]]

Write a reflection packet (.priors/reflection/, gitignored) from the last N
scored runs not yet learned from (default 8): each run's outcome and note,
its summary and findings, and the lesson ids injected at that time. The next
agent run reads it and proposes lessons. The runs are then marked learned
(an appended `learned` record), so they are not reflected on twice.
  --ns NS             only runs of that namespace
  --dry-run           write the packet, mark nothing
  --include-learned   revisit runs already learned from
  --mark-existing     mark the last N (default all) unlearned scored runs as
                      learned without writing a packet (a one-time catch-up)"""))
declare(Verb('lessons', 'list lessons with uses, wins, partials, losses and score', LESSONS, "lessons_list_verb", ANSWER,
             usage='priors lessons [--ns NS ...] [--all | --status S] [--json] | priors lessons --inject [--query TEXT] '
                   '[--ns NS ...] [--max-inject N] [--max-chars N] [--session KEY] [--fresh] [--new-only] [--peek] '
                   '[--hold-proposals]',
             flags={"--ns": MULTI, "--all": BOOL, "--json": BOOL, "--inject": BOOL, "--query": VALUE, "--session": VALUE,
                    "--fresh": BOOL, "--new-only": BOOL, "--max-inject": VALUE, "--max-chars": VALUE, "--status": VALUE,
                    "--peek": BOOL, "--hold-proposals": BOOL},
             tool=Tool("Lessons: list, retrieve, propose, revise", False,
                       "The repository's lessons: list (by status), retrieve (ranked by a query), propose (text, "
                       "tags, ns) or revise (id, text). Proposals stay open until a person accepts them.",
                       object_schema(LESSONS_TOOL, ("action",))),
             help="""usage: priors lessons [--ns NS ...] [--all | --status S] [--json]
       priors lessons --inject [--query TEXT] [--ns NS ...] [--json]
                      [--session KEY] [--fresh] [--new-only] [--max-inject N] [--max-chars C]
                      [--peek] [--hold-proposals]

List lessons (run-start priors) with their outcome record: uses (agent runs
they were injected into), wins, partials, losses and score
((wins + ½·partials) / scored uses; 0.50 with none). Retired lessons only with --all.
--status active|proposed|inactive|rejected|all: pi-prior's statuses.

--inject prints the lessons that apply as an advisory block for a coding
session's system prompt, ranked and budgeted exactly as `relevant` ranks them
(.priors/config.json's max_inject, max_chars and require_review; --query ranks by
word overlap). It opens no run and writes nothing to the ledger; it prints
nothing where there is no .priors/ or no lesson. It notes which ids it gave in
.priors/cache/ (local), so `priors score` can credit the session. An open
revision waits while the lesson it revises is given; with no max_chars set,
lesson text past 8000 characters is cut (binding lessons stay).
  --ns NS          only these namespaces (repeatable; default: every namespace).
                   With --inject a namespace the ledger does not hold prints
                   nothing, exit 0, on purpose: hooks run it at every prompt
                   and must never fail (`priors lessons --ns NS` names a typo)
  --session KEY    the harness's session id: another KEY starts a new session
  --fresh          start a new session here
  --new-only       print only lessons this session was not given yet
  --peek           a lookup: print the lessons, give no session anything
  --hold-proposals open (proposed) lessons wait for a person unless
                   `priors config require_review off` (pi-prior's default)"""))
declare(Verb('suggest', "an agent's lesson (or a revision) outside a run: open until a person accepts it", LESSONS,
             "lessons_verbs", ANSWER,
             usage='priors suggest --ns NS | --revises P-… [--tag T ...] [--because NOTE] [--distinct-from P-… ...] TEXT',
             flags={"--ns": VALUE, "--tag": MULTI, "--revises": VALUE, "--because": VALUE, "--distinct-from": MULTI},
             min_pos=1,
             max_pos=None,
             help="""usage: priors suggest --ns NS | --revises P-… [--tag T ...] [--because NOTE] [--distinct-from P-… ...] TEXT

An agent's lesson without a keeper run (the priors_lessons tool's propose and
revise), judged as `propose` judges a candidate and sealed on its own, open
(never scored): only `priors decide P-… accepted` makes it binding.
  --revises P-… a replacement for that lesson · --because NOTE why (evidence)
  --distinct-from P-…  an agent's lesson that sounds alike (DUPLICATE named it)
                but says something else; a person's decision is never set aside"""))
declare(Verb('trace', "keep a harness's trace of one agent run; prune traces; --where", LESSONS, "lessons_verbs", ANSWER,
             usage='priors trace FILE|- [--session KEY] | priors trace --prune N | --prune-scored N | --where',
             flags={"--session": VALUE, "--prune": VALUE, "--prune-scored": VALUE, "--where": BOOL, "--json": BOOL},
             max_pos=1,
             help="""usage: priors trace FILE|- [--session KEY] | priors trace --prune N | --prune-scored N | --where

Keep a trace of one agent run, {"prompt", "given", "assistant": [...], "tools":
[{"name", "input", "output", "error"}]}, in .priors/traces/ (private), cut to
size, credentials replaced by [redacted: KIND]. Scoring the session keeps its
traces for `reflect`; of the unscored, the newest max_traces (default 100).
  --prune N / --prune-scored N   keep the newest N unscored / scored traces
  --where   where the ledger, config, traces and session records are"""))
declare(Verb('export', 'write a JSON bundle of lessons, or (--sarif) the findings as SARIF', LESSONS, "lessons_verbs", ANSWER,
             usage='priors export [--ns NS] [--type T] [-o FILE] | priors export --sarif [--ns NS] [--current] [-o FILE]',
             flags={"--ns": VALUE, "--type": VALUE, "--out": VALUE, "--sarif": BOOL, "--current": BOOL},
             aliases={'-o': '--out', '--output': '--out'},
             help="""usage: priors export [--ns NS] [--type T] [-o FILE]
       priors export --sarif [--ns NS] [--current] [-o FILE]

Write a JSON bundle of the live lessons (open or binding run-start priors)
with their provenance and outcome counts, to FILE or stdout. Redacted and
retired lessons never leave; runs, scores and notes stay in this repo.

--sarif writes the ledger's findings as SARIF 2.1.0 instead (docs/sarif.md):
one run per namespace, each finding a result with its baselineState against
the namespace's last run (new, unchanged, updated, absent), a stable
fingerprint, its location (the definition's lines when the file has it), and
a suppression with your reason for wontfix, accepted and obsolete. Redacted
priors never leave. --current leaves out what the last run fixed (absent),
for viewers that show every result they receive."""))
declare(Verb('import', "add a bundle's lessons as a sealed run, skipping known ones", LESSONS, "lessons_verbs", ANSWER,
             usage='priors import FILE --ns NS [--accept]',
             flags={"--ns": VALUE, "--accept": BOOL},
             min_pos=1,
             max_pos=1,
             help="""usage: priors import FILE --ns NS [--accept]

Add the lessons of a bundle from `priors export` to namespace NS, sealed as a
run of its own. Lessons already present (same normalized claim) are skipped.
Without --accept they arrive open (advisory, awaiting your review); with it,
accepted (binding). A human verb."""))
declare(Verb('config', 'show or set .priors/config.json (injection budget, review)', LESSONS, "lessons_verbs", ANSWER,
             usage='priors config [KEY [VALUE]]',
             flags={},
             max_pos=2,
             help="""usage: priors config [KEY [VALUE]]

Show or set .priors/config.json (committed with the repo, shared by every agent).
  max_inject N        at most N lessons injected per run (`relevant --max-inject`;
                      binding lessons are never left out)
  max_chars C         at most C characters of lesson text per run (`relevant --max-chars`)
  require_review on   inject agent-proposed lessons only after a human accepts them
  inject off          give coding sessions no lessons (`lessons --inject`)
  capture off | max_traces N   keep no traces / the newest N unscored (100)
A VALUE of `none` removes the key (back to the contract: inject every lesson).
With no KEY, prints the whole config as JSON; with only KEY, its value."""))
