"""`priors report`: one self-contained HTML page of the ledger — pure, deterministic, every text escaped.

No network: no script, no external stylesheet, font or image; the CSS and the chart (SVG) are
inline, so the file works opened from disk, attached to a pull request or a CI run.
"""

from __future__ import annotations

import re
from html import escape

from priors.core.canonical import dumps
from priors.core.chart import NARROW, TOUCHED_MEANS, by_namespace, chart_svg, charted, flat_note, quiet_notes
from priors.core.controls import visible
from priors.core.desk import commands, differs_text, kind_text, open_findings, supersedes_note
from priors.core.views import BUCKETS, attempts_index, namespaces, plural, tally, tried_runs, tried_since, tried_words
from priors.core.vocabulary import SESSION_VIA, SUGGEST_VIA

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Optional, Sequence, Set

    from priors.core.fold import PriorState

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


def rule_html(p: Any) -> str:
    """An analyzer's rule id (its direction, `TOOL:RULE` — docs/sarif.md) before the claim, when it has one."""
    rec = p.rec if p.rec is not None else {}
    rule, d = rec.get("rule"), rec.get("direction")
    if isinstance(rule, str):
        return f'<code class="rule">{e(rule)}</code> '
    return f'<code class="rule">{e(d)}</code> ' if isinstance(d, str) and ":" in d else ""


def _flat(value: Any) -> str:
    if not isinstance(value, str):
        value = dumps(value)
    return " ".join(value.split())


def _sev(value: Any) -> str:
    s = value if isinstance(value, str) else ""
    known = s in ("gate", "major", "minor")
    return f'<span class="sev sev-{s if known else "none"}">{e(s or "—")}</span>'


def _table(kind: str, rows: List[str]) -> str:
    th = "".join(f"<th>{e(h)}</th>" for h in HEADS[kind])
    return (f'<div class="wrap"><table class="t-{kind}"><thead><tr>{th}</tr></thead>'
            f"<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>")


def _file_of(p: Any) -> str:
    ref = p.scope_ref
    if isinstance(ref, str):
        return ref.split("#", 1)[0]
    return "(the whole repository)" if p.facet("scope") == "repo-wide" else "(no scope)"


def _commit_lines(records: Sequence[Dict[str, Any]]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for i, rec in enumerate(records):
        run = rec.get("run")
        if rec.get("t") == "run" and rec.get("action") == "commit" and isinstance(run, str) and run not in out:
            out[run] = i
    return out


def _last_review(commits: Dict[str, int], st: Any) -> Set[str]:
    """The last committed run an agent sealed (a review, an analyzer's log), as a set of one or none: a person's
    `add` or `import` and a scored coding session are sealed as runs too, but review nothing."""
    for run in reversed(list(commits)):
        seal = st.commits.get(run) or {}
        if seal.get("by") != "human" and seal.get("via") not in (SESSION_VIA, SUGGEST_VIA):
            return {run}
    return set()


def report_html(title: str, st: Any, records: Sequence[Dict[str, Any]], rows: Sequence[Any],
                asks: Sequence[Dict[str, Any]], lessons: Sequence[Dict[str, Any]], since: Optional[str] = None,
                only: Optional[Sequence[str]] = None) -> str:
    """The page. `rows`: history rows; `asks`: what waits (core.desk.waiting); `lessons`: lesson rows
    with their score; `since`: a committed run — then the chart and the lists of new, fixed and
    decided cover only what came after it (what waits for you is always complete); `only`: the
    namespaces the page is about (None: every one)."""

    def wanted(ns: Any) -> bool:
        return only is None or ns in only

    if only is not None:
        rows = [r for r in rows if wanted(r.ns)]
        asks = [a for a in asks if wanted(a["ns"])]
        lessons = [r for r in lessons if wanted(r["ns"])]
    commits = _commit_lines(records)
    start = commits[since] if since is not None else -1
    later = [run for run, i in commits.items() if i > start]
    picked = set(later) if since is not None else _last_review(commits, st)
    shown_rows = [r for r in rows if r.line - 1 > start]
    counts = tally(st)
    out: List[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(title)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{e(title)}</h1>",
    ]
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
    out.append(f'<p class="sub">{e(sub)}</p>')

    # where things stand
    out.append('<section id="summary"><h2>Where things stand</h2>')
    trs = []
    for ns in namespaces(st, list(counts)):
        if not wanted(ns):
            continue
        c = counts.get(ns) or dict.fromkeys(BUCKETS, 0)
        trs.append(f"<tr><td>{e(ns)}</td>" + "".join(f'<td class="n">{c[b]}</td>' for b in BUCKETS) + "</tr>")
    out.append(_table("summary", trs) if trs else "<p>No priors yet — the first run writes them.</p>")
    out.append("</section>")

    # the chart
    # one chart per namespace: each open line is that namespace's count, never a mix of several
    out.append('<section id="chart"><h2>Convergence</h2>')
    chart_title = "runs since " + since if since is not None else "every committed run"
    now_of = {str(ns): c.get("open") for ns, c in counts.items()}
    charts, flat = charted(by_namespace(shown_rows), now_of)
    charts = charts or [(None, [])]
    for i, (ns, group) in enumerate(charts):
        name = chart_title if ns is None else f"{ns} — {chart_title}"
        out.append(f'<figure data-ns="{e(ns if ns is not None else "")}">')
        now = (counts.get(ns) or {}).get("open") if isinstance(ns, str) else None  # the line ends where status stands
        out.append(chart_svg(group, f"Convergence — {name}", standalone=False, uid=f"conv{i}", now=now).replace(
            'class="chart"', 'class="chart wide"', 1))
        out.append(chart_svg(group, name if ns is None else str(ns), standalone=False, uid=f"convn{i}",
                             width=NARROW, now=now).replace('class="chart"', 'class="chart narrow"', 1))
        out.append("</figure>")
    if shown_rows:  # the one word of the charts' legend that needs saying, said once under them
        out.append(f'<p class="legend">{e(TOUCHED_MEANS)}</p>')
    if flat:
        out.append(f'<p class="flat">{e(flat_note(flat))}</p>')
    out.append("</section>")

    # what waits
    out.append('<section id="waiting"><h2>Waiting for you</h2>')
    if asks:
        out.append("<p>Run <code>priors decide</code> in a terminal to answer them one at a time, "
                   "or copy the command of your choice.</p>")
        groups: Dict[Any, List[Dict[str, Any]]] = {}
        for ask in asks:
            groups.setdefault(ask["ns"], []).append(ask)
        for ns, group in groups.items():
            out.append(f"<h3>{e(ns)} — {len(group)} waiting</h3>")
            trs = []
            for ask in group:
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
                trs.append(f"<tr><td><code>{e(ask['id'])}</code></td><td>{e(what)}</td>"
                           f'<td class="claim">{claim_html(ask["claim"])}</td><td><ul class="cmds">{cmds}</ul></td></tr>')
            out.append(_table("asks", trs))
    else:
        out.append("<p>Nothing waits for you.</p>")
    out.append("</section>")

    # what agents tried again since a person decided: pressure to weigh, never acted on
    index = attempts_index(st)
    pressed = [(p, tried_since(st, p, index)) for p in st.priors.values() if p.id in index and wanted(p.ns)]
    pressed = sorted([(p, t) for p, t in pressed if t], key=lambda pt: -tried_runs(pt[1]))  # stable: ledger order within
    out.append(f'<section id="tried"><h2>Raised again since you decided ({len(pressed)})</h2>')
    if pressed:
        out.append("<p>Agents proposed these again after your decision and were refused. Many runs may mean "
                   "the decision deserves another look; nothing changes unless you decide. The count is the agents' "
                   "own report (each run's attempts file): a tool can add to it or leave it out.</p>")
        trs = [f"<tr><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>{e(p.status)}</td>"
               f'<td class="n">{plural(tried_runs(t), "run")}</td><td class="claim">'
               + "<br>".join(f"“{claim_html(w)}”" for w in tried_words(t)) + "</td></tr>" for p, t in pressed]
        out.append(_table("tried", trs))
    else:
        out.append("<p>None.</p>")
    out.append("</section>")

    # open findings by file
    found = [p for p in open_findings(st) if wanted(p.ns)]
    older = 0
    if since is not None:
        mine = [p for p in found if p.rec.get("born") in picked]
        older = len(found) - len(mine)
        found = mine
    head = "Open findings" + (f" raised since {since}" if since is not None else "")
    out.append(f'<section id="open"><h2>{e(head)} ({len(found)})</h2>')
    if older:
        out.append(f"<p>{older} other open finding{'s' if older != 1 else ''} were raised before {e(since)}.</p>")
    by_file: Dict[str, List[PriorState]] = {}
    for p in found:
        by_file.setdefault(_file_of(p), []).append(p)
    for file in sorted(by_file):
        in_file = by_file[file]
        out.append(f"<h3>{e(file)} — {len(in_file)}</h3>")
        trs = [f"<tr><td><code>{e(p.id)}</code></td><td>{_sev(p.rec.get('severity'))}</td>"
               f'<td class="claim">{rule_html(p)}{claim_html(p.claim)}</td><td>{ref_html(p.scope_ref)}</td>'
               f"<td>{e(p.ns)}</td></tr>" for p in in_file]
        out.append(_table("open", trs))
    if not found:
        out.append("<p>None.</p>")
    out.append("</section>")

    # fixed, new and decided
    fixed = [(rec.get("run"), rec.get("id")) for rec in records
             if rec.get("t") == "event" and rec.get("action") == "disposition" and rec.get("to") == "fixed"
             and rec.get("run") in picked]
    if since is not None:
        head = f"Fixed since {since}"
    else:
        head = f"What the last run ({next(iter(picked))}) fixed" if picked else "What the last run fixed"
    out.append(f'<section id="fixed"><h2>{e(head)} ({len(fixed)})</h2>')
    trs = []
    for run, pid in fixed:
        p = st.priors.get(pid)
        if p is None or not wanted(p.ns):
            continue
        claim = "(redacted)" if p.redacted else rule_html(p) + claim_html(p.claim)
        trs.append(f"<tr><td><code>{e(pid)}</code></td><td>{e(run)}</td><td>{e(p.ns)}</td>"
                   f'<td class="claim">{claim}</td><td>{ref_html(p.scope_ref)}</td></tr>')
    out.append(_table("fixed", trs) if trs else "<p>Nothing.</p>")
    out.append("</section>")
    if since is not None:
        out.append(_since(st, records, start, picked, since, wanted))

    # lessons
    out.append(f'<section id="lessons"><h2>Lessons ({len(lessons)})</h2>')
    trs = [f"<tr><td><code>{e(r['id'])}</code></td><td class=\"n\">{e(r['score'])}</td>"
           f"<td class=\"n\">{e(r['uses'])}</td><td class=\"n\">{e(r['wins'])}</td><td class=\"n\">{e(r['partials'])}</td>"
           f"<td class=\"n\">{e(r['losses'])}</td><td>{e(r['status'])}{' — your call' if r.get('your_call') else ''}</td>"
           f"<td>{e(r['ns'])}</td><td class=\"claim\">{claim_html(r['claim'])}</td></tr>" for r in lessons]
    out.append(_table("lessons", trs)
               if trs else "<p>No lessons yet.</p>")
    out.append("</section>")

    # tombstones
    tombs = [p for p in st.priors.values() if p.redacted and wanted(p.ns)]
    out.append(f'<section id="redacted"><h2>Redacted ({len(tombs)})</h2>')
    if tombs:
        out.append("<p>Their content is gone from <code>.priors/</code>; only a tombstone remains.</p>")
        trs = [f'<tr class="tomb"><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td>'
               f"<td><code>{e(p.rec.get('content_hash'))}</code></td></tr>" for p in tombs]
        out.append(_table("tombs", trs))
    else:
        out.append("<p>None.</p>")
    out.append("</section>")
    out.append("<footer>Written by <code>priors report</code> from <code>.priors/ledger.jsonl</code> "
               f"({len(records)} records). A static page: it loads nothing from anywhere.</footer>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"


def _since(st: Any, records: Sequence[Dict[str, Any]], start: int, picked: Any, since: str, wanted: Any) -> str:
    """New priors born after `since`, and the human decisions written after it (of the page's namespaces)."""
    born = [p for p in st.priors.values() if p.rec.get("born") in picked]
    out = [f'<section id="new"><h2>New since {e(since)} ({len(born)})</h2>']
    trs = []
    for p in born:
        if p.redacted:
            trs.append(f'<tr class="tomb"><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>redacted</td><td>—</td></tr>')
            continue
        trs.append(f"<tr><td><code>{e(p.id)}</code></td><td>{e(p.ns)}</td><td>{e(p.status)}</td>"
                   f'<td class="claim">{rule_html(p)}{claim_html(p.claim)}</td></tr>')
    out.append(_table("new", trs) if trs else "<p>Nothing.</p>")
    decided = [rec for rec in records[start + 1:] if rec.get("t") == "event" and rec.get("action") == "decide"
               and (rec.get("id") not in st.priors or wanted(st.priors[rec.get("id")].ns))]
    out.append(f'</section><section id="decided"><h2>Your decisions since {e(since)} ({len(decided)})</h2>')
    trs = []
    for rec in decided:
        reason = rec.get("reason")
        why = _flat(reason) if isinstance(reason, str) else "(reason redacted)" if rec.get("reason_redacted") else ""
        trs.append(f"<tr><td><code>{e(rec.get('id'))}</code></td><td>{e(rec.get('to'))}</td>"
                   f'<td class="claim">{e(why)}</td></tr>')
    out.append(_table("decided", trs) if trs else "<p>None.</p>")
    out.append("</section>")
    return "\n".join(out)
