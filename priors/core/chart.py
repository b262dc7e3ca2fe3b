"""The convergence chart: per committed run, stacked bars and the open line, as one self-contained SVG.

Shared by `priors history --svg` and `priors report`. Pure and deterministic: the same rows give
the same bytes. Colours are the Okabe–Ito palette (distinct for colour-blind readers); every
category but `fixed` also carries a pattern, so bars stay apart in grey print too.
"""

from __future__ import annotations

from html import escape

from priors.core.controls import visible

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

CATEGORIES = ("fixed", "carried", "touched", "your_call", "new")
LABELS = {"fixed": "fixed", "carried": "carried", "touched": "touched", "your_call": "your call", "new": "new"}
# Okabe–Ito: bluish green, sky blue, orange, vermillion, blue; the open line is black
COLORS = {"fixed": "#009e73", "carried": "#56b4e9", "touched": "#e69f00", "your_call": "#d55e00", "new": "#0072b2"}
OPEN_COLOR = "#000000"
QUIET_COLOR = "#f0e442"  # Okabe–Ito yellow: the band behind quiescent runs
MAX_BARS = 120  # more runs than this share bars, so the chart stays small and readable

# a pattern over each colour (none over `fixed`): hatch, dots, cross-hatch, horizontal lines
_PATTERNS = {
    "carried": '<path d="M0,8 L8,0" stroke="#ffffff" stroke-width="1.5"/>',
    "touched": '<circle cx="4" cy="4" r="1.4" fill="#ffffff"/>',
    "your_call": '<path d="M0,8 L8,0 M0,0 L8,8" stroke="#ffffff" stroke-width="1.2"/>',
    "new": '<path d="M0,4 L8,4" stroke="#ffffff" stroke-width="1.5"/>',
}


def _esc(text: object) -> str:
    return escape(visible(str(text)), quote=True)


def nice_max(n: int) -> int:
    """A round axis maximum ≥ n with five even gridlines."""
    for step in (1, 2, 3, 4, 5, 10, 15, 20, 25, 50, 100, 200, 250, 500, 1000):
        if step * 5 >= n:
            return step * 5
    return -(-n // 5000) * 5000


class Bar:
    """One bar: a run, or a group of consecutive runs when there are more than MAX_BARS."""

    __slots__ = ("first", "last", "runs", "counts", "open", "quiet")

    def __init__(self, rows: Sequence[Any]) -> None:
        self.first, self.last, self.runs = rows[0].run, rows[-1].run, len(rows)
        self.counts = {k: sum(getattr(r, k) for r in rows) for k in CATEGORIES}
        self.open = rows[-1].open
        self.quiet = all(r.quiescent for r in rows)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def name(self) -> str:
        return self.first if self.runs == 1 else f"{self.first}–{self.last}"


def bars_of(rows: Sequence[Any]) -> List[Bar]:
    per = max(1, -(-len(rows) // MAX_BARS))
    return [Bar(rows[i:i + per]) for i in range(0, len(rows), per)]


def _short(run: str) -> str:
    return run[4:] if run.startswith("run-") else run


WIDE, NARROW = 960, 420  # a screen's chart, and a phone's: its text stays legible at 375 px
HEIGHT = 420


def chart_svg(rows: Sequence[Any], title: str = "priors history", standalone: bool = True, uid: str = "c",
              width: int = WIDE, y_at: int = 0, now: Optional[int] = None) -> str:
    """The chart for history rows (objects with run, open, quiescent and the CATEGORIES counts) —
    of one namespace: the open line is that namespace's count after each run, so rows of several
    namespaces each get a chart of their own (`small_multiples`).

    `standalone`: an SVG file with its XML declaration; else an element to inline in HTML (or, with
    `y_at`, to place inside another SVG). `uid` prefixes the pattern ids, so charts can share a page.
    `width`: WIDE, or NARROW for a phone (fewer run labels, the legend on more lines). `now`: the
    namespace's open count now (`priors status`), the line's last point: a decision taken after the
    last run changes it, and the chart must not end on a number the page contradicts."""
    bars = bars_of(rows)
    n = len(bars)
    height = HEIGHT
    now = now if bars else None
    left, right, bottom = 64, (52 if now is not None else 20), 74
    legend = _legend_rows(width - left - right)
    top = 92 + 20 * (len(legend) - 1)
    plot_w, plot_h = width - left - right, height - top - bottom
    step = plot_w / max(n, 1)
    bar_w = max(1.0, min(step * 0.78, 96.0))
    ymax = nice_max(max([b.total for b in bars] + [b.open for b in bars] + [now or 0, 1]))
    base_y = top + plot_h

    def y(v: float) -> float:
        return base_y - plot_h * v / ymax

    q = sum(1 for r in rows if r.quiescent)
    streak = quiet_streak(rows)
    desc = (f"Per committed run: stacked bars of fixed, carried, touched, your call and new; the black line is the "
            f"count of open findings after the run{_NOW_DESC if now is not None else ''}; a yellow band and a check "
            f"mark show quiescent runs. "
            f"{len(rows)} committed run{'' if len(rows) == 1 else 's'}, {q} quiescent.")
    out: List[str] = []
    if standalone:
        out.append('<?xml version="1.0" encoding="UTF-8"?>')
    place = f' x="0" y="{y_at}"' if y_at else ""
    out += [
        f'<svg xmlns="http://www.w3.org/2000/svg"{place} width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="sans-serif" font-size="12" role="img" aria-labelledby="{uid}-t {uid}-d" class="chart">',
        f'<title id="{uid}-t">{_esc(title)}</title>',
        f'<desc id="{uid}-d">{_esc(desc)}</desc>',
        "<defs>",
    ]
    for k, shape in _PATTERNS.items():
        out.append(f'<pattern id="{uid}-{k}" width="8" height="8" patternUnits="userSpaceOnUse">'
                   f'<rect width="8" height="8" fill="{COLORS[k]}"/>{shape}</pattern>')
    out.append("</defs>")

    def fill(k: str) -> str:
        return f"url(#{uid}-{k})" if k in _PATTERNS else COLORS[k]

    out += [
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        f'<text x="{left}" y="24" font-size="16" font-weight="bold" fill="#111111">{_esc(title)}</text>',
    ]
    for r, items in enumerate(legend):  # the legend: pattern swatches with their words, on as many lines as fit
        ly = 40 + 20 * r
        for lx, k in items:
            if k == "open":
                out.append(f'<line x1="{lx}" y1="{ly + 7}" x2="{lx + 22}" y2="{ly + 7}" stroke="{OPEN_COLOR}" '
                           f'stroke-width="2.5"/><circle cx="{lx + 11}" cy="{ly + 7}" r="3" fill="{OPEN_COLOR}"/>')
                out.append(f'<text x="{lx + 27}" y="{ly + 12}" fill="#222222">open after the run</text>')
                continue
            colour = QUIET_COLOR if k == "quiet" else fill(k)
            out.append(f'<rect x="{lx}" y="{ly}" width="14" height="14" fill="{colour}" stroke="#333333" stroke-width="0.5"/>')
            out.append(f'<text x="{lx + 19}" y="{ly + 12}" fill="#222222">{"✓ quiescent" if k == "quiet" else LABELS[k]}</text>')
    # quiescent bands, behind everything in the plot
    i = 0
    while i < n:
        if not bars[i].quiet:
            i += 1
            continue
        j = i
        while j + 1 < n and bars[j + 1].quiet:
            j += 1
        out.append(f'<rect x="{left + step * i:.1f}" y="{top}" width="{step * (j - i + 1):.1f}" height="{plot_h}" '
                   f'fill="{QUIET_COLOR}" fill-opacity="0.45"/>')
        i = j + 1
    for g in range(6):  # gridlines and the y axis
        v = ymax * g // 5
        yy = y(v)
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{width - right}" y2="{yy:.1f}" stroke="#dddddd"/>')
        out.append(f'<text x="{left - 8}" y="{yy + 4:.1f}" text-anchor="end" fill="#444444">{v}</text>')
    out.append(f'<text transform="translate(18,{top + plot_h / 2:.0f}) rotate(-90)" text-anchor="middle" '
               f'fill="#222222" font-weight="bold">priors per run</text>')
    if not bars:
        out.append(f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h / 2:.0f}" text-anchor="middle" '
                   f'fill="#444444">no committed runs yet</text>')
    label_every = max(1, -(-n // max(1, int(plot_w // 56))))
    points = []
    for i, b in enumerate(bars):
        cx = left + step * i + step / 2
        x0 = cx - bar_w / 2
        base = 0
        for k in CATEGORIES:
            v = b.counts[k]
            if not v:
                continue
            y1, y0 = y(base + v), y(base)
            out.append(f'<rect x="{x0:.1f}" y="{y1:.1f}" width="{bar_w:.1f}" height="{y0 - y1:.1f}" fill="{fill(k)}">'
                       f'<title>{_esc(b.name)}: {v} {LABELS[k]}</title></rect>')
            base += v
        if b.quiet:
            out.append(f'<text x="{cx:.1f}" y="{y(base) - 6:.1f}" text-anchor="middle" font-size="14" '
                       f'font-weight="bold" fill="#111111">✓</text>')
        points.append((cx, y(b.open), b))
        if i % label_every == 0:
            out.append(f'<text x="{cx:.1f}" y="{base_y + 18}" text-anchor="middle" fill="#333333">'
                       f'{_esc(_short(b.first))}</text>')
    if points:
        out.append('<polyline points="' + " ".join(f"{px:.1f},{py:.1f}" for px, py, _ in points)
                   + f'" fill="none" stroke="{OPEN_COLOR}" stroke-width="2.5"/>')
    if points and now is not None:  # after the last run: where the namespace stands now, decisions included
        nx, ny = left + plot_w + right / 2, y(now)
        out.append(f'<line x1="{points[-1][0]:.1f}" y1="{points[-1][1]:.1f}" x2="{nx:.1f}" y2="{ny:.1f}" '
                   f'stroke="{OPEN_COLOR}" stroke-width="2.5" stroke-dasharray="4 3"/>')
        out.append(f'<circle cx="{nx:.1f}" cy="{ny:.1f}" r="4.5" fill="#ffffff" stroke="{OPEN_COLOR}" stroke-width="2">'
                   f'<title>now: {now} open</title></circle>')
        out.append(f'<text x="{nx:.1f}" y="{base_y + 18}" text-anchor="middle" fill="#333333">now</text>')
    if points and n <= 60:
        for px, py, b in points:
            out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="3.5" fill="{OPEN_COLOR}">'
                       f'<title>{_esc(b.name)}: {b.open} open</title></circle>')
    out.append(f'<line x1="{left}" y1="{base_y}" x2="{width - right}" y2="{base_y}" stroke="#222222"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{base_y}" stroke="#222222"/>')
    per = bars[0].runs if bars else 1
    axis = "committed runs, oldest to newest" + (f" (each bar: {per} runs)" if per > 1 else "")
    narrow = width < WIDE
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{base_y + (34 if narrow else 40)}" text-anchor="middle" '
               f'fill="#222222" font-weight="bold">{_esc(axis)}</text>')
    tail = f"quiescent since {streak[0].run} ({len(streak)} in a row)" if streak else ""
    counted = f"{len(rows)} committed, {q} quiescent"
    if narrow and tail:  # a phone's chart: the streak on a line of its own
        out.append(f'<text x="{left}" y="{height - 22}" fill="#222222">{counted}</text>')
        out.append(f'<text x="{left}" y="{height - 6}" fill="#222222">{_esc(tail)}</text>')
    else:
        out.append(f'<text x="{left}" y="{height - 10}" fill="#222222">{counted}{_esc(" — " + tail if tail else "")}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


_NOW_DESC = ", then now (its dashed end: what decisions since the last run changed)"


def _legend_rows(room: int, left: int = 64) -> List[List[Any]]:
    """The legend's items — (x, key) — laid out in lines that fit `room` pixels."""
    items = [(k, 19 + 7 * len(LABELS[k]) + 18) for k in CATEGORIES] + [("open", 27 + 7 * 18 + 18), ("quiet", 19 + 7 * 11)]
    rows: List[List[Any]] = [[]]
    lx = left
    for k, w in items:
        if rows[-1] and lx + w - 18 > left + room:
            rows.append([])
            lx = left
        rows[-1].append((lx, k))
        lx += w
    return rows


def by_namespace(rows: Sequence[Any]) -> List[Tuple[Any, List[Any]]]:
    """History rows grouped by namespace, in the order of each namespace's first run."""
    groups: Dict[str, List[Any]] = {}
    names: Dict[str, Any] = {}
    for r in rows:
        key = str(r.ns)
        names.setdefault(key, r.ns)
        groups.setdefault(key, []).append(r)
    return [(names[key], group) for key, group in groups.items()]


def worth_charting(group: Sequence[Any], now: Optional[int] = None) -> bool:
    """Whether a namespace's runs draw anything: a bar, or an open line above zero. One whose every run
    checked and found nothing is a flat line at zero — and a thousand such namespaces made an 8 MB page."""
    return bool(now) or any(r.checked or r.fixed or r.carried or r.touched or r.your_call or r.new or r.resting
                            or r.open for r in group)


def charted(groups: Sequence[Tuple[Any, List[Any]]], now: Mapping[str, Optional[int]]
            ) -> Tuple[List[Tuple[Any, List[Any]]], List[Any]]:
    """(the groups to chart, the namespaces left out as flat at zero); one is kept when all are flat, so a
    page or file always has a chart."""
    kept = [(ns, g) for ns, g in groups if worth_charting(g, now.get(str(ns)))]
    if not kept and groups:
        kept = [groups[0]]
    keep = {str(ns) for ns, _ in kept}
    return kept, [ns for ns, _ in groups if str(ns) not in keep]


def flat_note(flat: Sequence[Any]) -> str:
    """The words that say which namespaces have no chart, and why."""
    n = len(flat)
    return (f"Not charted: {n} namespace{'s' if n != 1 else ''} whose every run found nothing (a flat line at zero): "
            + ", ".join(str(ns) for ns in flat))


def small_multiples(rows: Sequence[Any], title: str = "priors history", now: Optional[Dict[str, int]] = None) -> str:
    """One standalone SVG: a chart per namespace, stacked (a single namespace: its chart alone). Each
    chart's open line is its own namespace's count, never a sum that zigzags between namespaces;
    `now`: namespace → its open count now, each line's last point."""
    now = now or {}
    groups, flat = charted(by_namespace(rows), now)
    if len(groups) <= 1 and not flat:
        name = f"{title} — {groups[0][0]}" if groups else title
        return chart_svg(rows, name, now=now.get(str(groups[0][0])) if groups else None)
    note = flat_note(flat) if flat else ""
    # the note wraps at ~150 characters a line under the charts (a namespace name is never split)
    note_lines: List[str] = []
    for word in note.split(" "):
        if note_lines and len(note_lines[-1]) + 1 + len(word) <= 150:
            note_lines[-1] += " " + word
        else:
            note_lines.append(word)
    height = HEIGHT * len(groups) + (18 * len(note_lines) + 12 if note else 0)
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDE}" height="{height}" viewBox="0 0 {WIDE} {height}" '
           f'role="img" aria-label="{_esc(title)}: one chart per namespace">']
    for i, (ns, group) in enumerate(groups):
        out.append(chart_svg(group, f"{title} — {ns}", standalone=False, uid=f"c{i}", y_at=HEIGHT * i,
                             now=now.get(str(ns))).rstrip("\n"))
    for j, line in enumerate(note_lines):
        out.append(f'<text x="16" y="{HEIGHT * len(groups) + 18 * (j + 1)}" font-family="sans-serif" font-size="12">'
                   f'{_esc(line)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


TOUCHED_MEANS = "touched: a finding whose code changed since a run judged it — the next run judges it again"
MOST_QUIET = 5  # namespaces named one by one in a quiescent note; the rest are counted


def quiet_by_namespace(rows: Sequence[Any]) -> List[Tuple[Any, List[Any]]]:
    """Each namespace whose own last runs were quiescent, with that streak: a quiet run of one namespace
    says nothing of another's, so a streak is never read across namespaces."""
    out = []
    for ns, group in by_namespace(rows):
        streak = quiet_streak(group)
        if streak:
            out.append((ns, streak))
    return out


def quiet_notes(rows: Sequence[Any]) -> List[str]:
    """`quiescent since run-N (k runs in a row)`: as it is for one namespace; for several, one a namespace
    (its name first), the first MOST_QUIET named and the rest counted."""
    quiet = quiet_by_namespace(rows)
    several = len(by_namespace(rows)) > 1
    notes = [(f"{ns}: " if several else "") + f"quiescent since {streak[0].run} "
             f"({len(streak)} run{'s' if len(streak) != 1 else ''} in a row)" for ns, streak in quiet[:MOST_QUIET]]
    if len(quiet) > MOST_QUIET:
        more = len(quiet) - MOST_QUIET
        notes.append(f"and {more} more namespace{'s' if more != 1 else ''} quiescent")
    return notes


def quiet_streak(rows: Sequence[Any]) -> List[Any]:
    """The trailing runs that were all quiescent (empty when the last run was not)."""
    out: List[Any] = []
    for r in reversed(rows):
        if not r.quiescent:
            break
        out.insert(0, r)
    return out
