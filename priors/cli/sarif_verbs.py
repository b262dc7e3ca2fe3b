"""Analyzers in: `ingest-sarif`, a whole keeper run from an analyzer's SARIF log. The mapping rules
live in core/sarif_in.py; this module reads files, holds the lock and drives the run's own code
paths (`export --sarif`, the way out, is cli/sarif_export.py).
"""

from __future__ import annotations

from priors.cli.args import BOOL, REST, VALUE, Spec, parse, required
from priors.core.canonical import dumps
from priors.core.errors import Refusal, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Dict, List, Optional, Tuple


INGEST = Spec("ingest-sarif", "priors ingest-sarif FILE [FILE ...] --ns NS [--scopes FILE|-] [--json] [--snapshot [PATH ...]]",
              {"--ns": VALUE, "--scopes": VALUE, "--snapshot": REST, "--json": BOOL}, min_pos=1, max_pos=None,
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
location: `*` — and evidence FILE:LINE with the snippet.

  --ns NS            the namespace (one per analyzer, e.g. ruff)
  --snapshot [PATH]  the scopes the analyzer covered: give it the paths the
                     analyzer was given (default: a snapshot of the whole target)
  --scopes FILE|-    or a JSON object {scope_ref: hash}, as for `relevant`
  --json             print counts, the summary and every refused result as JSON

Several files, runs and tools are read as one log. Invalid SARIF is a usage
error naming the JSON path (runs[0].results[3].locations[0]) and opens no run;
so is a log of a failed analyzer (no runs, a run without results, an
invocation with executionSuccessful false). When a result cannot be placed in
the snapshot, nothing is marked fixed by that ingest.""")


def cmd_ingest_sarif(argv: List[str], ctx) -> int:
    from priors.cli.inputs import parse_json_input, read_input
    from priors.cli.run_verbs import scopes_from
    from priors.store.ledger import ensure_dirs
    from priors.core.grammar import validate
    from priors.core.sarif_in import read_log
    from priors.store.paths import Paths

    a = parse(argv, INGEST)
    ns = str(required(a, INGEST, "ns", "NS"))
    roots = _roots(ctx.root)
    found: List[Tuple[str, Any]] = []  # (file name, finding)
    for name in a.pos:
        doc = parse_json_input(read_input(name, "SARIF file"), name, "SARIF file")
        try:
            findings = read_log(doc, roots)
        except UsageError as exc:
            raise UsageError(f"priors ingest-sarif: {name}: {exc} — nothing was changed") from None
        for f in findings:
            if f.candidate is not None:
                try:
                    validate(f.candidate)
                except UsageError as exc:
                    msg = str(exc).replace("priors: ", "", 1)
                    raise UsageError(f"priors ingest-sarif: {name}: {f.path}: {msg}") from None
            found.append((name, f))
    paths = Paths(ctx.root)
    scopes = scopes_from(a, ctx, "ingest-sarif", default_snapshot=True)
    from priors.cli.lesson_config import budget_from

    budget = budget_from(a, paths)
    fresh = not paths.dir.is_dir()
    if fresh:
        ensure_dirs(paths)
        ctx.err.write(f"priors: set up {paths.dir} for this first run — commit it with your repo\n")
    from priors.store.lock import Lock

    with _term_as_interrupt(), Lock(paths):
        report = _ingest_locked(paths, ns, scopes, budget, fresh, found)
    if a.get("json"):
        ctx.print(dumps(report))
        return 0
    for line in report["summary"]:
        ctx.print(line)
    for line in _plain(report):
        ctx.print(line)
    return 0


class _term_as_interrupt:
    """While the ingest holds the lock, SIGTERM (a cancelled CI job, `kill PID`) takes Ctrl-C's path:
    it raises KeyboardInterrupt, so the half-made run is removed and the lock released instead of
    both being left behind. POSIX only, main thread only; the old handler comes back afterwards."""

    def __enter__(self) -> "_term_as_interrupt":
        import signal

        self.installed, self.old = False, None
        if hasattr(signal, "SIGTERM") and hasattr(signal, "SIGKILL"):  # POSIX (Windows has no SIGKILL)
            try:
                self.old = signal.signal(signal.SIGTERM, _raise_interrupt)
                self.installed = True
            except ValueError:  # not the main thread: leave signals alone
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        import signal

        if self.installed:
            signal.signal(signal.SIGTERM, self.old if self.old is not None else signal.SIG_DFL)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _roots(root) -> List[str]:
    out = [root.as_posix()]
    try:
        real = root.resolve().as_posix()
    except OSError:
        real = out[0]
    return out if real == out[0] else out + [real]


def _ingest_locked(paths, ns: str, scopes: Dict[str, str], budget, fresh: bool,
                   found: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """Open, disposition, propose, commit — with the lock held; anything short of a commit aborts the run."""
    from priors.cli.run_verbs import _propose_one, _save_staging, commit_locked, open_run_locked
    from priors.core.protocol import judge_disposition
    from priors.store.files import discard_tree
    from priors.store.ledger import load, read_run, write_jsonl

    _, st = load(paths, want_data=False)
    run, _ = open_run_locked(paths, st, ns, scopes, None, budget, fresh)
    try:
        rf = read_run(paths, run)
        refused: List[Dict[str, Any]] = []
        cands = _resolve(paths, rf, found, refused)
        from priors.core.sarif_in import plan_ingest

        verify = []
        for pid, item in rf.verify_items().items():
            p = st.priors.get(pid)
            direction = p.rec.get("direction") if p is not None else None
            verify.append(dict(item, direction=direction))
        # A result the snapshot cannot place: the analyzer saw another tree (a wrong root, other paths),
        # so what it did not report proves nothing — no prior is marked fixed by this ingest.
        unplaced = len(refused) + sum(1 for c in cands if c is not None and c.get("scope_ref") not in rf.scopes)
        plan = plan_ingest(verify, cands, withhold_fixed=unplaced > 0)
        for pid, verdict in plan.verdicts:
            rf.dispositions.append(judge_disposition(st, rf, pid, verdict))
        if rf.dispositions:
            write_jsonl(paths.run_dir(run) / "dispositions.jsonl", rf.dispositions)
        from priors.core.fold import prior_number

        before = (len(rf.staged), len(rf.escalations))
        next_id = [max([st.max_prior] + [prior_number(r.get("id")) for r in rf.staged if isinstance(r, dict)])]
        new: List[str] = []
        for (name, f), cand, fate in zip(found, cands, plan.fate):
            if fate != "propose":
                continue
            try:
                rec = _propose_one(st, rf, cand, ns, next_id, paths)
            except Refusal as r:
                refused.append(dict(r.payload(), file=name, result=f.path))
                continue
            new.append(rec["id"])
        _save_staging(paths, rf, before)
        summary = commit_locked(paths, run)
    except BaseException:
        discard_tree(paths.run_dir(run))  # nothing half-made stays staged; the ledger was not touched
        raise
    counts = {
        "results": len(found),
        "not_findings": sum(1 for _, f in found if f.candidate is None),
        "known": plan.fate.count("known"),
        "merged": plan.fate.count("merged"),
        "new": len(new),
        "suppressed": sum(1 for r in refused if r.get("refused") == "RERAISE"),
        "refused": sum(1 for r in refused if r.get("refused") != "RERAISE"),
        "fixed": sum(1 for _, v in plan.verdicts if v == "fixed"),
        "carried": sum(1 for _, v in plan.verdicts if v == "still-open"),
        "reaffirmed": sum(1 for _, v in plan.verdicts if v == "reaffirmed"),
        "missing": sum(1 for x in verify if x.get("scopeState") == "missing"),
        "fixed_withheld": len(plan.withheld),
        "stale": sum(1 for _, v in plan.verdicts if v == "stale"),
    }
    report: Dict[str, Any] = {"run": run, "ns": ns, "counts": counts, "new": new, "refused": refused,
                              "summary": summary}
    if plan.withheld:
        report["fixed_withheld"] = {
            "ids": plan.withheld, "unplaced": unplaced,
            "reason": f"{unplaced} result{'s' if unplaced != 1 else ''} could not be placed in this run's snapshot: the "
                      "analyzer looked at another tree (its paths do not match this one), so what it did not report "
                      "is not marked fixed"}
    again = sorted({str(r.get("of")) for r in refused if r.get("refused") == "DUPLICATE" and r.get("status") == "fixed"})
    if again:
        report["reported_again_but_fixed"] = again
    return report


def _resolve(paths, rf, found: List[Tuple[str, Any]], refused: List[Dict[str, Any]]) -> List[Optional[Dict[str, Any]]]:
    """Each finding's candidate with its location resolved to a scope ref (the keeper's one resolver)."""
    from priors.cli.ground_verbs import resolve_location

    memo: Dict[str, Any] = {}
    out: List[Optional[Dict[str, Any]]] = []
    for name, f in found:
        cand = f.candidate
        if cand is not None and cand.get("file") is not None:
            try:
                cand = resolve_location(paths, rf, cand, memo)
            except Refusal as r:
                refused.append(dict(r.payload(), file=name, result=f.path))
                cand = None
        out.append(cand)
    return out


def _plain(report: Dict[str, Any]) -> List[str]:
    """The analyzer's part of the answer, in plain words, after the run's summary."""
    c = report["counts"]
    lines = [f"From the analyzer: {c['results']} result{'s' if c['results'] != 1 else ''} — {c['known']} already known, "
             f"{c['new']} new, {c['merged']} merged (same rule, same scope), {c['not_findings']} not findings"]
    sup = [r for r in report["refused"] if r.get("refused") == "RERAISE"]
    if sup:
        ids = ", ".join(sorted({str(r.get("of")) for r in sup}))
        lines.append(f"  {len(sup)} suppressed — a person settled {'it' if len(sup) == 1 else 'them'} ({ids}); not re-added")
    withheld = report.get("fixed_withheld")
    if withheld:
        n = len(withheld["ids"])
        lines.append(f"  {n} not marked fixed ({', '.join(withheld['ids'])}) — {withheld['reason']}")
    again = report.get("reported_again_but_fixed")
    if again:
        lines.append(f"  {len(again)} reported again but recorded fixed ({', '.join(again)}) — the analyzer still finds "
                     f"{'it' if len(again) == 1 else 'them'} on the same code; `priors decide ID reopen` to open "
                     f"{'it' if len(again) == 1 else 'them'} again")
    other = [r for r in report["refused"] if r.get("refused") != "RERAISE"]
    if other:
        lines.append(f"  {len(other)} refused by the keeper's rules:")
        for r in other:
            detail = {k: v for k, v in r.items() if k not in ("refused", "file", "result", "hint")}
            lines.append(f"    {r['file']} {r['result']}: {r['refused']} {dumps(detail)}")
    return lines
