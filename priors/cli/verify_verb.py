"""`priors verify`: prove the ledger is sound (for CI and pre-commit hooks).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from priors.core.ledger_checks import (
    LEDGER_NAME,
    Checked,
    Problem,
    check_ledger,
    check_since,
)
from priors.store.git import git_show

# ------------------------------------------------------------------ the files around the ledger


def check_files(root: Any, data: bytes, checked: Optional[Checked] = None) -> List[Problem]:
    """PRIORS.md up to date, no staging of committed runs, no stray temp files (`checked`: what
    `check_ledger(data, render=True)` found, so no line is parsed twice)."""
    import os

    from priors.store.files import read_bytes
    from priors.store.paths import Paths

    paths = Paths(root)
    problems: List[Problem] = []
    if checked is None:
        checked = check_ledger(data, render=True)
    committed = checked.committed_runs()
    if not checked.damaged:  # a damaged ledger has no rendering to compare with
        have = read_bytes(paths.rendered)
        if have is None:
            problems.append(Problem(0, "RENDER_MISSING", "missing — run `priors render` and commit it", ".priors/PRIORS.md"))
        elif checked.renders_as(have) is False:
            problems.append(Problem(0, "RENDER_STALE", "out of date with the ledger — run `priors render` and commit it", ".priors/PRIORS.md"))
    try:
        runs = sorted(os.listdir(str(paths.runs)))
    except OSError:
        runs = []
    for name in runs:
        if name in committed:
            problems.append(Problem(0, "STAGING_OF_COMMITTED_RUN", f"staging left for {name}, which is committed — run `priors commit --run {name}` to clear it", f".priors/runs/{name}"))
    for dirpath, _dirs, files in os.walk(str(paths.dir)):
        for name in sorted(files):
            if name.endswith(".tmp"):
                rel = os.path.relpath(os.path.join(dirpath, name), str(root)).replace(os.sep, "/")
                problems.append(Problem(0, "STRAY_TEMP_FILE", "a temporary file left by an interrupted write — delete it", rel))
    return problems


# ------------------------------------------------------------------ the verb


def cmd_verify(argv: List[str], ctx: Any) -> int:
    import os

    from priors.cli.args import BOOL, VALUE, Spec, parse
    from priors.core.canonical import dumps
    from priors.store.files import read_blocks, read_bytes
    from priors.store.paths import Paths, require_init

    spec = Spec(
        "verify",
        "priors verify [--since REV | --no-git] [--json]",
        {"--since": VALUE, "--json": BOOL, "--no-git": BOOL},
        help=VERIFY_HELP,
    )
    args = parse(argv, spec)
    if args.has("--since") and args.has("--no-git"):
        from priors.core.errors import UsageError

        raise UsageError("priors verify: give --since REV or --no-git, not both")
    from priors.store.files import check_inside
    from priors.store.paths import ledger_missing

    paths = Paths(ctx.root)
    require_init(paths)
    check_inside(paths.ledger)  # what every writer refuses, verify refuses too: it proves nothing through a link
    if args.get("no_git"):  # the ledger is read once, a block at a time, and never held whole
        data = b""
        checked = check_ledger(read_blocks(paths.ledger) or (), render=True)
    else:  # the comparison with git needs it whole
        data = read_bytes(paths.ledger) or b""
        checked = check_ledger(data, render=True)  # every line parsed once, for every check below
    problems, warnings = list(checked.problems), checked.warnings
    gone = ledger_missing(paths)
    if gone is not None:
        problems.append(Problem(0, "LEDGER_MISSING", f"missing, but {gone} — restore it "
                                "(`git checkout -- .priors/ledger.jsonl`)", LEDGER_NAME))
    problems += check_files(ctx.root, data, checked)
    since = args.get("since")
    against = None
    if since is not None:
        problems += check_since(git_show(ctx.root, str(since)), data, str(since))
    elif not args.get("no_git"):
        from priors.store.git import committed_ledger

        old = committed_ledger(ctx.root)  # a hand edit of a committed line is caught before it is committed
        if old is not None:
            against = "the last commit (HEAD)"
            problems += check_since(old, data, against)
    problems.sort(key=lambda p: (p.file != LEDGER_NAME, p.file, p.line))
    if args.get("json"):
        body: Dict[str, Any] = {"ok": not problems, "problems": [p.as_dict() for p in problems]}
        if warnings:
            body["warnings"] = [w.as_dict() for w in warnings]
        ctx.print(dumps(body))
    else:
        for p in problems:
            ctx.print(p.text())
        for w in warnings:
            ctx.print("warning: " + w.text())
        n = checked.lines
        if not problems:
            grew = f", grew only since {since}" if since else (f", grew only since {against}" if against else "")
            ctx.print(f"ledger sound: {n} line{'s' if n != 1 else ''}" + grew)
        else:
            ctx.print(f"{len(problems)} problem{'s' if len(problems) != 1 else ''} in .priors/")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        # Workflow commands on stdout; with --json stdout stays pure JSON, so they go to stderr.
        for p in problems:
            if args.get("json"):
                ctx.err.write(github_annotation(p) + "\n")
            else:
                ctx.print(github_annotation(p))
    return 1 if problems else 0


def github_annotation(p: Problem) -> str:
    """`::error file=…,line=…,title=…::message` with GitHub's escaping."""

    def esc_data(s: str) -> str:
        return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")

    def esc_prop(s: str) -> str:
        return esc_data(s).replace(":", "%3A").replace(",", "%2C")

    props = [f"file={esc_prop(p.file)}"]
    if p.line:
        props.append(f"line={p.line}")
    props.append(f"title={esc_prop('priors ' + p.code)}")
    return f"::error {','.join(props)}::{esc_data(p.message)}"


VERIFY_HELP = """usage: priors verify [--since REV | --no-git] [--json]

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
::error annotation (on stdout; on stderr with --json, so stdout stays JSON)."""
