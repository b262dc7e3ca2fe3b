"""`ingest-sarif`: one whole keeper run from an analyzer's SARIF log. The mapping rules live in
core/sarif_in.py; this transaction reads nothing but what it is given, holds the lock and drives
the run's own code paths — `open_run_locked` (ops/opening.py), `propose_one` (ops/propose.py),
`commit_locked` (ops/run.py) — so every keeper rule applies to an analyzer exactly as to an agent.
"""

from __future__ import annotations

import signal
from pathlib import Path

from priors.core.answer import Answer
from priors.core.canonical import decode_text, dumps
from priors.core.errors import Refusal, UsageError
from priors.core.grammar import identity_of, validate
from priors.core.protocol import QUIESCENT, judge_disposition
from priors.core.sarif_identity import identities, plan_ingest
from priors.core.sarif_in import log_tools, read_log
from priors.core.vocabulary import REST_AFTER
from priors.ops.ground import resolve_location
from priors.ops.opening import open_run_locked
from priors.ops.propose import highest_staged, propose_one
from priors.ops.run import commit_locked
from priors.store.files import discard_tree, read_bytes
from priors.store.ledger import ensure_dirs, load_ledger
from priors.store.lock import Lock
from priors.store.paths import Paths
from priors.store.staging import read_run, save_staging, write_jsonl

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from typing import Any, Callable, Dict, List, Optional, Tuple

    from priors.core.lessons import Budget
    from priors.core.run_files import RunFiles


def read_findings(names: List[str], load: Callable[[str], Any], root: Path
                  ) -> Tuple[List[Tuple[str, Any]], List[str]]:
    """(file name, finding) for every result of the SARIF logs `names` (each parsed by `load`, in
    order), and the tools the logs ran (`log_tools`) — checked whole before anything opens: invalid
    SARIF, or a candidate the grammar refuses, is a usage error naming it."""
    roots = _roots(root)
    found: List[Tuple[str, Any]] = []
    tools: set = set()
    for name in names:
        try:
            doc = load(name)
        except UsageError as exc:  # one prefix for every problem with the logs: this verb's
            raise UsageError(_verb_prefix(str(exc))) from None
        try:
            findings = read_log(doc, roots)
        except UsageError as exc:
            raise UsageError(f"priors ingest-sarif: {name}: {exc} — nothing was changed") from None
        tools.update(log_tools(doc))
        for f in findings:
            if f.candidate is not None:
                try:
                    validate(f.candidate, analyzer=True)
                except UsageError as exc:
                    msg = str(exc).replace("priors: ", "", 1)
                    raise UsageError(f"priors ingest-sarif: {name}: {f.path}: {msg}") from None
            found.append((name, f))
    return found, sorted(tools)


def _verb_prefix(msg: str) -> str:
    return "priors ingest-sarif: " + msg[len("priors: "):] if msg.startswith("priors: ") else msg


def ingest(paths: Paths, ns: str, scopes: Dict[str, str], budget: Optional[Budget],
           found: List[Tuple[str, Any]], say: Optional[Callable[[str], object]] = None,
           tools: Optional[List[str]] = None) -> Answer:
    """Open, disposition, propose, commit; JSON: the counts, the new ids, every refused result and
    the run's summary. Anything short of a commit takes the run back. `tools`: the tools the logs ran
    (`read_findings`); a finding of another tool is never marked fixed (None: not checked)."""
    fresh = not paths.dir.is_dir()
    if fresh:
        ensure_dirs(paths)
        if say is not None:
            say(f"priors: set up {paths.dir} for this first run — commit it with your repo")
    with TermAsInterrupt(), Lock(paths):
        report = _ingest_locked(paths, ns, scopes, budget, fresh, found, tools)
    return Answer(0, report, "\n".join(report["summary"] + plain_lines(report)))


class TermAsInterrupt:
    """While the ingest holds the lock, SIGTERM (a cancelled CI job, `kill PID`) takes Ctrl-C's path:
    it raises KeyboardInterrupt, so the half-made run is removed and the lock released instead of
    both being left behind. POSIX only, main thread only; the old handler comes back afterwards."""

    def __enter__(self) -> "TermAsInterrupt":
        self.installed, self.old = False, None
        if hasattr(signal, "SIGTERM") and hasattr(signal, "SIGKILL"):  # POSIX (Windows has no SIGKILL)
            try:
                self.old = signal.signal(signal.SIGTERM, _raise_interrupt)
                self.installed = True
            except ValueError:  # not the main thread: leave signals alone
                pass
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.installed:
            signal.signal(signal.SIGTERM, self.old if self.old is not None else signal.SIG_DFL)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _roots(root: Path) -> List[str]:
    out = [root.as_posix()]
    try:
        real = root.resolve().as_posix()
    except OSError:
        real = out[0]
    return out if real == out[0] else out + [real]


def _ingest_locked(paths: Paths, ns: str, scopes: Dict[str, str], budget: Optional[Budget], fresh: bool,
                   found: List[Tuple[str, Any]], tools: Optional[List[str]] = None) -> Dict[str, Any]:
    """Open, disposition, propose, commit — with the lock held; anything short of a commit aborts the run."""
    st = load_ledger(paths, want_data=False).state
    run, _, _ = open_run_locked(paths, st, ns, scopes, None, budget, fresh)
    try:
        rf = read_run(paths, run)
        refused: List[Dict[str, Any]] = []
        cands = _with_identity(paths, found, _resolve(paths, rf, found, refused))
        verify = []
        for pid, item in rf.verify_items().items():
            p = st.priors.get(pid)
            rec = p.rec if p is not None else {}
            verify.append(dict(item, **{k: rec.get(k) for k in ("direction", "rule", "fingerprint")}))
        # A result the snapshot cannot place: the analyzer saw another tree (a wrong root, other paths),
        # so what it did not report proves nothing — no prior is marked fixed by this ingest.
        unplaced = len(refused) + sum(1 for c in cands if c is not None and c.get("scope_ref") not in rf.scopes)
        # A result left out (a control character the ledger never holds) may be the report of an old
        # finding: its silence is not the analyzer's, so it proves nothing fixed either.
        left_out = sum(1 for _, f in found if f.candidate is None and str(f.skipped).startswith("holds "))
        # the findings a person decided here, in any namespace (a person's decision holds in every one):
        # one whose flagged text changed is still theirs (hostile pass 27j: another namespace's was new)
        decided = [dict(p.record(), id=p.id) for p in st.priors.values()
                   if p.binding and not p.redacted and p.scope_ref in rf.scopes and identity_of(p.rec) is not None]
        plan = plan_ingest(verify, cands, withhold_fixed=unplaced > 0 or left_out > 0, tools=tools, decided=decided)
        for pid, verdict in plan.verdicts:
            event = judge_disposition(st, rf, pid, verdict)
            at = plan.reporter.get(pid)
            reporting = found[at][1].candidate if at is not None else None  # (as read: resolving drops the line)
            line = reporting.get("line") if reporting is not None else None
            if isinstance(line, int):  # where the analyzer reports it now: what the export points at
                event["line"] = line
            rf.dispositions.append(event)
        if rf.dispositions:
            write_jsonl(paths.run_dir(run) / "dispositions.jsonl", rf.dispositions)
        before = (len(rf.staged), len(rf.escalations))
        next_id = [highest_staged(st, rf)]
        new: List[str] = []
        for i, ((name, f), cand, fate) in enumerate(zip(found, cands, plan.fate)):
            if fate == "settled":  # a person's decision whose finding's flagged text changed
                p = st.priors[plan.settled_as[i]]
                refused.append({"refused": "RERAISE", "of": p.id, "status": p.status, "changed": True,
                                **({"ns": p.ns} if p.ns != ns else {}), "file": name, "result": f.path,
                                "hint": "its flagged text changed, but the same rule says the same on the same scope:"
                                        " taken as the finding a person decided"})
                continue
            if fate != "propose":
                continue
            try:
                rec = propose_one(st, rf, cand, ns, next_id, paths, analyzer=True)
            except Refusal as r:
                body = dict(r.payload(), file=name, result=f.path)
                if body.get("similar") and body.get("refused") == "DUPLICATE":  # `distinct_from` is no ingest's to give
                    body["hint"] = (f"{body.get('of')}, a finding written by hand on this scope, says the same in other"
                                    " words; a person decides whether they differ")
                refused.append(body)
                continue
            new.append(rec["id"])
        save_staging(paths, rf, before)
        summary = commit_locked(paths, run, judged=rf)  # every line went through the door just now
    except BaseException:
        discard_tree(paths.run_dir(run))  # nothing half-made stays staged; the ledger was not touched
        raise
    counts = {
        "results": len(found),
        "not_findings": sum(1 for _, f in found if f.candidate is None),
        "known": plan.fate.count("known"),
        "merged": plan.fate.count("merged"),
        "new": len(new),
        "suppressed": sum(1 for r in refused if settled_by_a_person(r)),
        "refused": sum(1 for r in refused if not settled_by_a_person(r)),
        "fixed": sum(1 for _, v in plan.verdicts if v == "fixed"),
        "carried": sum(1 for _, v in plan.verdicts if v == "still-open"),
        "reaffirmed": sum(1 for _, v in plan.verdicts if v == "reaffirmed"),
        "missing": sum(1 for x in verify if x.get("scopeState") == "missing"),
        "fixed_withheld": len(plan.withheld),
        "renewed": len(plan.renewed),
        "stale": sum(1 for _, v in plan.verdicts if v == "stale"),
    }
    report: Dict[str, Any] = {"run": run, "ns": ns, "counts": counts, "new": new, "refused": refused,
                              "summary": summary,
                              "not_findings": [{"file": name, "result": f.path, "reason": f.skipped}
                                               for name, f in found if f.candidate is None]}
    if plan.withheld:
        why = []
        if plan.untooled:
            ran = ", ".join(tools or []) or "none"
            why.append(f"{len(plan.untooled)} finding{'s' if len(plan.untooled) != 1 else ''} of a tool this log did not "
                       f"run ({', '.join(plan.untooled)}; the log ran: {ran})")
        if unplaced:
            why.append(f"{unplaced} result{'s' if unplaced != 1 else ''} could not be placed in this run's snapshot: the "
                       "analyzer looked at another tree (its paths do not match this one)")
        if left_out:
            why.append(f"{left_out} result{'s' if left_out != 1 else ''} {'was' if left_out == 1 else 'were'} left out "
                       "(a control character): one may report an old finding again")
        report["fixed_withheld"] = {
            "ids": plan.withheld, "unplaced": unplaced, "left_out": left_out, "other_tool": plan.untooled,
            "reason": "; ".join(why) + ", so what the analyzer did not report is not marked fixed"}
    again = sorted({str(r.get("of")) for r in refused if r.get("refused") == "DUPLICATE" and r.get("status") == "fixed"})
    if again:
        report["reported_again_but_fixed"] = again
    if plan.renewed:
        report["renewed"] = sorted(pid for _, pid in plan.renewed)
    if again:  # "nothing new" beside a finding reported again: the run's summary alone would mislead
        report["summary"] = [line for line in summary if line != QUIESCENT]
    missing = sorted(str(x.get("id")) for x in verify if x.get("scopeState") == "missing")
    if missing:
        report["missing"] = missing
    return report


def _resolve(paths: Paths, rf: RunFiles, found: List[Tuple[str, Any]], refused: List[Dict[str, Any]]
             ) -> List[Optional[Dict[str, Any]]]:
    """Each finding's candidate with its location resolved to a scope ref (the keeper's one resolver)."""
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


def _with_identity(paths: Paths, found: List[Tuple[str, Any]], cands: List[Optional[Dict[str, Any]]]
                   ) -> List[Optional[Dict[str, Any]]]:
    """Each placed candidate with its identity (`rule`, `fingerprint`: core/sarif_in.py `identities`),
    the flagged regions read from the files as they are (the snapshot's: resolving checked them)."""
    texts: Dict[str, Optional[List[str]]] = {}

    def lines_of(file: str) -> Optional[List[str]]:
        if file not in texts:
            parts = file.split("/")
            ok = not file.startswith("/") and ".." not in parts and "\\" not in file and ":" not in parts[0]
            data = read_bytes(paths.root.joinpath(*parts)) if ok else None
            texts[file] = decode_text(data).split("\n") if data is not None else None
        return texts[file]

    refs = [c.get("scope_ref") if c is not None else None for c in cands]
    ids = identities([f for _, f in found], refs, lines_of)
    return [c if c is None or i is None else dict(c, rule=i[0], fingerprint=i[1]) for c, i in zip(cands, ids)]


def settled_by_a_person(refusal: Dict[str, Any]) -> bool:
    """A result the keeper refused because a person settled its finding: a re-raise of their `wontfix` or
    `accepted`, or a repeat of one they made `obsolete` (only a person's `decide` gives that status) —
    suppressed, not refused."""
    return refusal.get("refused") == "RERAISE" or (refusal.get("refused") == "DUPLICATE"
                                                   and refusal.get("status") == "obsolete")


def plain_lines(report: Dict[str, Any]) -> List[str]:
    """The analyzer's part of the answer, in plain words, after the run's summary."""
    c = report["counts"]
    lines = [f"From the analyzer: {c['results']} result{'s' if c['results'] != 1 else ''} — {c['known']} already known, "
             f"{c['new']} new, {c['merged']} merged (same rule, same place), {c['not_findings']} not findings"]
    sup = [r for r in report["refused"] if settled_by_a_person(r)]
    if sup:
        ids = ", ".join(sorted({str(r.get("of")) for r in sup}))
        lines.append(f"  {len(sup)} suppressed — a person settled {'it' if len(sup) == 1 else 'them'} ({ids}); not re-added")
        changed = sorted({str(r.get("of")) for r in sup if r.get("changed")})
        if changed:
            lines.append(f"    {', '.join(changed)}: the flagged text changed, the rule says the same there — taken as the "
                         f"finding a person decided; `priors decide ID reopen` if it is another")
    renewed = report.get("renewed")
    if renewed:
        lines.append(f"  {len(renewed)} reported again with the flagged text changed ({', '.join(renewed)}) — the same rule"
                     " says the same on the same scope: carried, not fixed and new")
    withheld = report.get("fixed_withheld")
    if withheld:
        n = len(withheld["ids"])
        lines.append(f"  {n} not marked fixed ({', '.join(withheld['ids'])}) — {withheld['reason']}")
    again = report.get("reported_again_but_fixed")
    if again:
        lines.append(f"  {len(again)} reported again but recorded fixed ({', '.join(again)}) — the analyzer still finds "
                     f"{'it' if len(again) == 1 else 'them'} on the same code; `priors decide ID reopen` to open "
                     f"{'it' if len(again) == 1 else 'them'} again")
    missing = report.get("missing")
    if missing:  # the summary's "Checked against N" counts them, but no verdict line does: say why
        one = len(missing) == 1
        lines.append(f"  {len(missing)} not judged ({', '.join(missing)}) — the code {'it points' if one else 'they point'}"
                     f" at is gone from the paths looked at (deleted, or renamed — a definition, or a file an open"
                     f" finding stands on: the analyzer's result under the new name is a new finding, and a person"
                     f" decides again); the export closes"
                     f" {'it' if one else 'them'}, and a finding missing from {REST_AFTER} runs in a row rests until"
                     " its scope returns")
    bad = [x for x in report["not_findings"] if str(x["reason"]).startswith("holds ")]
    if bad:  # a result the ledger cannot hold (a control character): left out, by name, not the whole log
        lines.append(f"  {len(bad)} left out, not recorded:")
        lines.extend(f"    {x['file']} {x['result']}: {x['reason']}" for x in bad)
    again_ids = set(again or ())  # said above, in plain words: not a refusal to puzzle over
    other = [r for r in report["refused"] if not settled_by_a_person(r)
             and not (r.get("refused") == "DUPLICATE" and r.get("status") == "fixed" and r.get("of") in again_ids)]
    if other:
        lines.append(f"  {len(other)} refused by the keeper's rules:")
        for r in other:
            detail = {k: v for k, v in r.items() if k not in ("refused", "file", "result", "hint")}
            lines.append(f"    {r['file']} {r['result']}: {r['refused']} {dumps(detail)}")
    return lines
