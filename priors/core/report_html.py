"""`priors report`: one self-contained HTML page of the ledger — pure, deterministic, every text escaped.

No network: no script, no external stylesheet, font or image; the CSS and the chart (SVG) are
inline, so the file works opened from disk, attached to a pull request or a CI run.
"""

from __future__ import annotations

import re
from html import escape
from itertools import groupby

from priors.core.answer import batched
from priors.core.canonical import dumps
from priors.core.chart import NARROW, TOUCHED_MEANS, by_namespace, chart_svg, charted, flat_note, quiet_notes
from priors.core.controls import visible
from priors.core.desk import ask_ns, ask_of, commands, differs_text, kind_text, open_findings, supersedes_note
from priors.core.lessons import lesson_row, listed
from priors.core.selection import each_record
from priors.core.views import BUCKETS, attempts_index, namespaces, plural, tally, tried_runs, tried_since, tried_words
from priors.core.vocabulary import SESSION_VIA, SUGGEST_VIA

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple


# Every table of the page, by kind (its class): its column headings. On a phone each row becomes a
# card and each cell shows its column's heading beside it — from these, in the CSS, not per cell, so a
# 10k-prior page does not grow by a label per cell.
HEADS = {
    "summary": ("namespace", "open", "fixed", "decided by you", "lessons locked", "lessons proposed", "retired", "resting"),
    "asks": ("id", "why", "claim", "answer with"),
    "open": ("id", "severity", "claim", "where", "namespace"),
    "fixed": ("id", "run", "namespace", "claim", "where"),
    "lessons": ("id", "score", "uses", "wins", "partials", "losses", "status", "namespace", "lesson"),
    "tombs": ("id", "namespace", "content hash"),
    "new": ("id", "namespace", "status", "claim"),
    "decided": ("id", "verdict", "because"),
    "tried": ("id", "namespace", "your decision", "raised again in", "in these words"),
}

CSS = """
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;background:#fafafa}
main{max-width:1040px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:2px solid #ddd}
h3{font-size:1em;margin:1em 0 .3em;overflow-wrap:anywhere}
p.sub{color:#444;margin:.2em 0 1em}
.wrap{overflow-x:auto;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;width:100%;background:#fff;margin:.3em 0}
th,td{border:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f0f0f0}
td:first-child code{white-space:nowrap}
td.n{text-align:right;font-variant-numeric:tabular-nums}
td.claim{min-width:12em;overflow-wrap:anywhere}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f3f3f3;padding:1px 3px;
overflow-wrap:anywhere;white-space:pre-wrap}
figure{margin:0 0 .8em;background:#fff;border:1px solid #ddd}
figure svg{display:block;width:100%;height:auto}
figure svg.narrow{display:none}
code.ref{overflow-wrap:break-word;word-break:normal}
code.rule{white-space:nowrap}
.sev{display:inline-block;padding:0 6px;border-radius:3px;font-size:.85em;font-weight:bold;border:1px solid #333}
.sev-gate{background:#d55e00;color:#fff}.sev-major{background:#e69f00;color:#000}
.sev-minor{background:#fff;color:#000}.sev-none{background:#fff;color:#555;border-color:#999}
.tomb{color:#555}
ul.cmds{margin:0;padding-left:1.1em}
code.cmd span{white-space:nowrap}
footer{color:#555;font-size:.85em;margin:2em 0 1em}
@media (max-width:800px){body{font-size:14px}main{padding:8px}
.wrap{overflow-x:visible}table,tbody,tr,td{display:block;width:100%}thead{display:none}
tr{border:1px solid #ccc;margin:0 0 .5em;background:#fff}
td{border:0;border-bottom:1px solid #eee;padding:3px 6px;display:grid;grid-template-columns:6.5em minmax(0,1fr);
gap:0 .5em;justify-items:start;text-align:left}
td:last-child{border-bottom:0}td.n{text-align:left}td.claim{min-width:0}
td::before{font-weight:bold;color:#444}
td:first-child code{white-space:pre-wrap}
figure svg.wide{display:none}figure svg.narrow{display:block}
""" + "".join(f'.t-{kind} td:nth-child({i})::before{{content:"{h}"}}'
              for kind, head in HEADS.items() for i, h in enumerate(head, 1)) + """}
@media print{body{background:#fff}.wrap{overflow:visible}}
"""


def e(value: Any) -> str:
    """Text made safe for HTML, quotes included: nothing from the ledger is ever markup."""
    return escape(visible("" if value is None else str(value)), quote=True)


_TICKED = re.compile(r"`([^`\n]+)`")
_REF_AFTER = re.compile(r"(?<=[/#._:-])(?![/#._:-])")  # just after a run of separators


def claim_html(value: Any) -> str:
    """A claim as a person wrote it: its text escaped, and `back-ticked` names shown as code."""
    return _TICKED.sub(r"<code>\1</code>", e(_flat(value)))


def ref_html(ref: Any) -> str:
    """A scope ref as code that wraps only after a separator (`src/`, `#`, `.`, `_`, `-`), never mid-word."""
    if not isinstance(ref, str) or not ref:
        return "<code>—</code>"
    # broken at the separators before escaping: an escape holds `#` itself (`'` is `&#x27;`), and a break inside
    # one would show the entity's text (`it&#x27;s`) instead of the character
    return '<code class="ref">' + "<wbr>".join(e(part) for part in _REF_AFTER.split(ref)) + "</code>"


def command_html(cmd: str) -> str:
    """A command to copy, each word unbroken: it wraps only at the spaces between words (`--of P-0004`
    split at a hyphen reads as other options). A word too long for a phone's line still breaks."""
    return " ".join(f"<span>{e(w)}</span>" if len(w) <= 40 else e(w) for w in cmd.split(" "))


def rule_html(rec: Dict[str, Any]) -> str:
    """An analyzer's rule id (its direction, `TOOL:RULE` — docs/sarif.md) before the claim, when its
    record `rec` has one."""
    rule, d = rec.get("rule"), rec.get("direction")
    if isinstance(rule, str):
        return f'<code class="rule">{e(rule)}</code> '
    return f'<code class="rule">{e(d)}</code> ' if isinstance(d, str) and ":" in d else ""


def _claim(rec: Dict[str, Any]) -> str:
    """A prior's rule and claim as the page shows them, from its record (read, not kept: `PriorState.claim`
    would keep each shown prior's record — at 100k priors the report's ~30k rows)."""
    claim = rec.get("claim")
    return rule_html(rec) + claim_html(claim if isinstance(claim, str) else "")


def _flat(value: Any) -> str:
    if not isinstance(value, str):
        value = dumps(value)
    return " ".join(value.split())


def _sev(value: Any) -> str:
    s = value if isinstance(value, str) else ""
    known = s in ("gate", "major", "minor")
    return f'<span class="sev sev-{s if known else "none"}">{e(s or "—")}</span>'


def _table(kind: str, rows: Iterable[str]) -> Iterator[str]:
    """A table of `kind` with `rows`, in pieces (then the page's newline), each row made as it is reached."""
    th = "".join(f"<th>{e(h)}</th>" for h in HEADS[kind])
    yield f'<div class="wrap"><table class="t-{kind}"><thead><tr>{th}</tr></thead><tbody>\n'
    first = True
    for row in rows:
        yield row if first else "\n" + row
        first = False
    yield "\n</tbody></table></div>\n"


def _file_of(p: Any) -> str:
    ref = p.scope_ref
    if isinstance(ref, str):
        return ref.split("#", 1)[0]
    return "(the whole repository)" if p.facet("scope") == "repo-wide" else "(no scope)"


class PageFacts:
    """What the page reads of the ledger's records rather than of the fold, gathered as they pass
    (`see`, a block at a time), so that none is held: the fixed dispositions as (run, prior id), in ledger order; with
    a `since`, each prior's `born` (as its last record says) and the person's decisions after the
    first commit of `since`. (The commits' places and the record count are the fold's.)"""

    __slots__ = ("since", "fixed", "born", "decided", "sealed", "one")

    def __init__(self, since: Optional[str]) -> None:
        self.since = since
        self.fixed: List[Tuple[Any, Any]] = []
        self.born: Dict[str, Any] = {}
        self.decided: List[Dict[str, Any]] = []
        self.sealed = since is None
        self.one: Dict[str, str] = {}  # one string a run, not one a line

    def clear(self) -> None:
        """Forget what was noted: a reader that starts over (at a line the clean parse could not take)
        sees the records again."""
        self.fixed.clear()
        self.born.clear()
        self.decided.clear()
        self.sealed = self.since is None  # (the decisions kept start after its first commit)

    def see(self, spans: List[Tuple[Dict[str, Any], int, int]]) -> List[Tuple[Dict[str, Any], int, int]]:
        """Note what the page reads of a block of records (store.ledger.read_spans' `see`), in order."""
        fixed, born, decided, since, one = self.fixed, self.born, self.decided, self.since, self.one
        if since is None:  # (only the fixed dispositions: one lookup a record)
            for rec, _at, _n in spans:
                if rec.get("to") == "fixed" and rec.get("t") == "event" and rec.get("action") == "disposition":
                    run = rec.get("run")
                    fixed.append((one.setdefault(run, run) if type(run) is str else run, rec.get("id")))
            return spans
        for rec, _at, _n in spans:
            t = rec.get("t")
            if t == "event":
                action = rec.get("action")
                if action == "disposition":
                    if rec.get("to") == "fixed":
                        run = rec.get("run")
                        fixed.append((one.setdefault(run, run) if type(run) is str else run, rec.get("id")))
                elif action == "decide" and since is not None:
                    decided.append(rec)
            elif since is not None:
                if t == "prior":
                    pid = rec.get("id")
                    if type(pid) is str:  # (the fold's prior of that id has this record)
                        born[pid] = rec.get("born")
                elif t == "run" and not self.sealed and rec.get("action") == "commit" and rec.get("run") == since:
                    self.sealed = True
                    decided.clear()
        return spans


def _last_review(commits: Dict[str, int], st: Any) -> Set[str]:
    """The last committed run an agent sealed (a review, an analyzer's log), as a set of one or none: a person's
    `add` or `import` and a scored coding session are sealed as runs too, but review nothing."""
    for run in reversed(list(commits)):
        seal = st.commits.get(run) or {}
        if seal.get("by") != "human" and seal.get("via") not in (SESSION_VIA, SUGGEST_VIA):
            return {run}
    return set()


def report_html(title: str, st: Any, facts: PageFacts, rows: Sequence[Any], plan: Sequence[Any], ledger: Any,
                since: Optional[str] = None, only: Optional[Sequence[str]] = None) -> str:
    """The page, whole (`report_pieces` joined)."""
    return "".join(report_pieces(title, st, facts, rows, plan, ledger, since, only))


def report_pieces(title: str, st: Any, facts: PageFacts, rows: Sequence[Any], plan: Sequence[Any], ledger: Any,
                  since: Optional[str] = None, only: Optional[Sequence[str]] = None) -> Iterator[str]:
    """The page in pieces of about 64 KB, its rows made as they are written: at 100k priors the page is
    26 MB, never held whole. `st` and `facts`: the folded ledger and what the page read of its records
    on the way (`PageFacts`); `rows`: history rows; `plan`: what waits, not made yet
    (core.desk.waiting_plan); `ledger`: the lessons loop's view of `st` (core.lessons.Ledger), whose
    lessons are listed with their score; `since`: a committed run — then
    the chart and the lists of new, fixed and decided cover only what came after it (what waits for
    you is always complete); `only`: the namespaces the page is about (None: every one). Every list
    is gathered before the first piece: what could fail fails before anything is written."""

    def wanted(ns: Any) -> bool:
        return only is None or ns in only

    if only is not None:
        rows = [r for r in rows if wanted(r.ns)]
        plan = [t for t in plan if wanted(ask_ns(t))]
    lessons = [p for p in st.priors.values() if listed(p, None, False) and wanted(p.ns)]  # (each row made when written)
    commits = dict(st.loop["commit_at"])  # run → its first commit record's place, in ledger order
    start = commits[since] if since is not None else -1
    later = [run for run, i in commits.items() if i > start]
    picked = set(later) if since is not None else _last_review(commits, st)
    shown_rows = [r for r in rows if r.line - 1 > start]
    counts = tally(st)
    if only is not None:
        commits = {run: i for run, i in commits.items() if wanted((st.commits.get(run) or {}).get("ns"))}
        later = [run for run in later if run in commits]
        picked = {run for run in picked if run in commits} if since is not None else _last_review(commits, st)
    shown = sum(1 for p in st.priors.values() if not p.redacted and wanted(p.ns))
    sub = (f"{plural(len(commits), 'committed run')} · {plural(shown, 'prior')}"
           + (f" · namespace{'s' if len(only) != 1 else ''} {', '.join(only)}" if only is not None else ""))
    if since is not None:
        sub += f" · showing what changed since {since} ({len(later)} run{'s' if len(later) != 1 else ''} after it)"
    for note in quiet_notes(rows):  # per namespace: one's quiet runs say nothing of another's
        sub += " · " + note
    summary = [ns for ns in namespaces(st, list(counts)) if wanted(ns)]
    now_of = {str(ns): c.get("open") for ns, c in counts.items()}
    charts, flat = charted(by_namespace(shown_rows), now_of)
    groups: Dict[Any, List[Any]] = {}
    for t in plan:
        groups.setdefault(ask_ns(t), []).append(t)
    # what agents tried again since a person decided: pressure to weigh, never acted on
    index = attempts_index(st)
    pressed = [(p, tried_since(st, p, index)) for p in st.priors.values() if p.id in index and wanted(p.ns)]
    pressed = sorted([(p, t) for p, t in pressed if t], key=lambda pt: -tried_runs(pt[1]))  # stable: ledger order within
    found = [p for p in open_findings(st) if wanted(p.ns)]
    older = 0
    if since is not None:
        mine = [p for p in found if facts.born.get(p.id) in picked]
        older = len(found) - len(mine)
        found = mine
    by_file = sorted(found, key=_file_of)  # by file, severity order kept within (a stable sort): grouped as written
    fixed = [(run, pid) for run, pid in facts.fixed if run in picked]
    trs = [(run, pid, p) for run, pid, p in ((run, pid, st.priors.get(pid)) for run, pid in fixed)
           if p is not None and wanted(p.ns)]
    born = [p for p in st.priors.values() if facts.born.get(p.id) in picked] if since is not None else []
    decided = [rec for rec in facts.decided if rec.get("id") not in st.priors or wanted(st.priors[rec.get("id")].ns)]
    tombs = [p for p in st.priors.values() if p.redacted and wanted(p.ns)]

    def page() -> Iterator[str]:
        yield from ("<!DOCTYPE html>\n", '<html lang="en"><head><meta charset="utf-8">\n',
                    '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
                    f"<title>{e(title)}</title>\n", f"<style>{CSS}</style></head><body><main>\n",
                    f"<h1>{e(title)}</h1>\n", f'<p class="sub">{e(sub)}</p>\n')

        # where things stand
        yield '<section id="summary"><h2>Where things stand</h2>\n'
        if summary:
            yield from _table("summary", (f"<tr><td>{e(ns)}</td>" + "".join(
                f'<td class="n">{c[b]}</td>' for b in BUCKETS) + "</tr>"
                for ns, c in ((ns, counts.get(ns) or dict.fromkeys(BUCKETS, 0)) for ns in summary)))
        else:
            yield "<p>No priors yet — the first run writes them.</p>\n"
        yield "</section>\n"

        # the chart
        # one chart per namespace: each open line is that namespace's count, never a mix of several
        yield '<section id="chart"><h2>Convergence</h2>\n'
        chart_title = "runs since " + since if since is not None else "every committed run"
        for i, (ns, group) in enumerate(charts or [(None, [])]):
            name = chart_title if ns is None else f"{ns} — {chart_title}"
            yield f'<figure data-ns="{e(ns if ns is not None else "")}">\n'
            now = (counts.get(ns) or {}).get("open") if isinstance(ns, str) else None  # the line ends where status stands
            yield chart_svg(group, f"Convergence — {name}", standalone=False, uid=f"conv{i}", now=now).replace(
                'class="chart"', 'class="chart wide"', 1) + "\n"
            yield chart_svg(group, name if ns is None else str(ns), standalone=False, uid=f"convn{i}",
                            width=NARROW, now=now).replace('class="chart"', 'class="chart narrow"', 1) + "\n"
            yield "</figure>\n"
        if shown_rows:  # the one word of the charts' legend that needs saying, said once under them
            yield f'<p class="legend">{e(TOUCHED_MEANS)}</p>\n'
        if flat:
            yield f'<p class="flat">{e(flat_note(flat))}</p>\n'
        yield "</section>\n"

        # what waits
        yield '<section id="waiting"><h2>Waiting for you</h2>\n'
        if groups:
            yield ("<p>Run <code>priors decide</code> in a terminal to answer them one at a time, "
                   "or copy the command of your choice.</p>\n")
            for ns, group in groups.items():
                yield f"<h3>{e(ns)} — {len(group)} waiting</h3>\n"
                yield from _table("asks", (_ask_row(ask_of(st, t, rec))  # (its prior's record: read a batch at a time)
                                           for t, (_p, rec) in zip(group, each_record(t[0] for t in group))))
        else:
            yield "<p>Nothing waits for you.</p>\n"
        yield "</section>\n"

        yield f'<section id="tried"><h2>Raised again since you decided ({len(pressed)})</h2>\n'
        if pressed:
            yield ("<p>Agents proposed these again after your decision and were refused. Many runs may mean "
                   "the decision deserves another look; nothing changes unless you decide. The count is the agents' "
                   "own report (each run's attempts file): a tool can add to it or leave it out.</p>\n")
            yield from _table("tried", (f"<tr><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>{e(p.status)}</td>"
                                        f'<td class="n">{plural(tried_runs(t), "run")}</td><td class="claim">'
                                        + "<br>".join(f"“{claim_html(w)}”" for w in tried_words(t)) + "</td></tr>"
                                        for p, t in pressed))
        else:
            yield "<p>None.</p>\n"
        yield "</section>\n"

        # open findings by file
        head = "Open findings" + (f" raised since {since}" if since is not None else "")
        yield f'<section id="open"><h2>{e(head)} ({len(found)})</h2>\n'
        if older:
            yield f"<p>{older} other open finding{'s' if older != 1 else ''} were raised before {e(since)}.</p>\n"
        for file, same in groupby(each_record(by_file), key=lambda pr: _file_of(pr[0])):
            in_file = list(same)  # (a file's findings with their records: read a batch at a time)
            yield f"<h3>{e(file)} — {len(in_file)}</h3>\n"
            yield from _table("open", (_open_row(p, rec) for p, rec in in_file))
        if not found:
            yield "<p>None.</p>\n"
        yield "</section>\n"

        # fixed, new and decided
        if since is not None:
            head = f"Fixed since {since}"
        else:
            head = f"What the last run ({next(iter(picked))}) fixed" if picked else "What the last run fixed"
        yield f'<section id="fixed"><h2>{e(head)} ({len(fixed)})</h2>\n'
        if trs:
            yield from _table("fixed", (f"<tr><td><code>{e(pid)}</code></td><td>{e(run)}</td><td>{e(p.ns)}</td>"
                                        f'<td class="claim">{"(redacted)" if p.redacted else _claim(p.record())}</td>'
                                        f"<td>{ref_html(p.scope_ref)}</td></tr>" for run, pid, p in trs))
        else:
            yield "<p>Nothing.</p>\n"
        yield "</section>\n"
        if since is not None:
            yield from _since(born, decided, since)

        # lessons
        yield f'<section id="lessons"><h2>Lessons ({len(lessons)})</h2>\n'
        if lessons:
            yield from _table("lessons", (
                f"<tr><td><code>{e(r['id'])}</code></td><td class=\"n\">{e(r['score'])}</td>"
                f"<td class=\"n\">{e(r['uses'])}</td><td class=\"n\">{e(r['wins'])}</td><td class=\"n\">{e(r['partials'])}</td>"
                f"<td class=\"n\">{e(r['losses'])}</td><td>{e(r['status'])}{' — your call' if r.get('your_call') else ''}</td>"
                f"<td>{e(r['ns'])}</td><td class=\"claim\">{claim_html(r['claim'])}</td></tr>"
                for r in (lesson_row(ledger, p, rec) for p, rec in each_record(lessons))))
        else:
            yield "<p>No lessons yet.</p>\n"
        yield "</section>\n"

        # tombstones
        yield f'<section id="redacted"><h2>Redacted ({len(tombs)})</h2>\n'
        if tombs:
            yield "<p>Their content is gone from <code>.priors/</code>; only a tombstone remains.</p>\n"
            yield from _table("tombs", (f'<tr class="tomb"><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td>'
                                        f"<td><code>{e(p.record().get('content_hash'))}</code></td></tr>" for p in tombs))
        else:
            yield "<p>None.</p>\n"
        yield "</section>\n"
        yield ("<footer>Written by <code>priors report</code> from <code>.priors/ledger.jsonl</code> "
               f"({st.records} records). A static page: it loads nothing from anywhere.</footer>\n")
        yield "</main></body></html>\n"

    return batched(page())


def _ask_row(ask: Dict[str, Any]) -> str:
    what = kind_text(ask)  # (the words `status --calls` uses: a held revision says so)
    if ask["kind"] == "reversal":
        what += f" {ask['call']}: {_flat(ask.get('call_claim', ''))}"
    if ask["kind"] == "differs":
        what = f"{differs_text(ask)}: {_flat(ask['settled_claim'])}"
    if ask.get("note"):
        what += f" ({ask['note']})"
    if isinstance(ask.get("supersedes"), str):
        what += (f" — replaces {supersedes_note(ask)}" if ask.get("supersedes_binding")
                 else f" — revises {supersedes_note(ask)}" if ask.get("supersedes_retired")
                 else f" — accepting it retires {ask['supersedes']}")
    cmds = "".join(f'<li><code class="cmd">{command_html(c)}</code></li>' for c in commands(ask))
    return (f"<tr><td><code>{e(ask['id'])}</code></td><td>{e(what)}</td>"
            f'<td class="claim">{claim_html(ask["claim"])}</td><td><ul class="cmds">{cmds}</ul></td></tr>')


def _open_row(p: Any, rec: Dict[str, Any]) -> str:
    return (f"<tr><td><code>{e(p.id)}</code></td><td>{_sev(rec.get('severity'))}</td>"
            f'<td class="claim">{_claim(rec)}</td><td>{ref_html(p.scope_ref)}</td>'
            f"<td>{e(p.ns)}</td></tr>")


def _since(born: List[Any], decided: List[Dict[str, Any]], since: str) -> Iterator[str]:
    """New priors born after `since`, and the human decisions written after it (of the page's namespaces)."""
    yield f'<section id="new"><h2>New since {e(since)} ({len(born)})</h2>\n'
    if born:
        yield from _table("new", (
            f'<tr class="tomb"><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>redacted</td><td>—</td></tr>'
            if p.redacted else f"<tr><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>{e(p.status)}</td>"
            f'<td class="claim">{_claim(p.record())}</td></tr>' for p in born))
    else:
        yield "<p>Nothing.</p>\n"
    yield f'</section><section id="decided"><h2>Your decisions since {e(since)} ({len(decided)})</h2>\n'
    if decided:
        yield from _table("decided", (f"<tr><td><code>{e(rec.get('id'))}</code></td><td>{e(rec.get('to'))}</td>"
                                      f'<td class="claim">{e(_why(rec))}</td></tr>' for rec in decided))
    else:
        yield "<p>None.</p>\n"
    yield "</section>\n"


def _why(rec: Dict[str, Any]) -> str:
    reason = rec.get("reason")
    return _flat(reason) if isinstance(reason, str) else "(reason redacted)" if rec.get("reason_redacted") else ""

