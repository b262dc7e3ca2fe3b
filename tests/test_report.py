"""`priors report`: the page as text (escaping, determinism, --since, usage) and in a real browser (chromium headless)."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import xml.dom.minidom
from pathlib import Path

import pytest

import ledgerkit as k
import pngkit
from conftest import Keeper
from priors.core.chart import COLORS, chart_svg
from priors.core.history import history_rows
from test_desk import every_other_kind, make_target

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (`apt-get install -y chromium`; .ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def report_of(keeper: Keeper, *extra: str, name: str = "report.html") -> str:
    out = keeper.ok("report", "-o", name, *extra)
    assert out == f"wrote {name}\n"
    return (keeper.root / name).read_text(encoding="utf-8")


def text_of(page: str) -> str:
    """The page with the spans that keep a command's words unbroken taken out: its commands as typed."""
    return re.sub(r"</?span>", "", page)


def remote_refs(page: str) -> list:
    return [m for m in re.findall(r'(?:src|href)\s*=\s*["\']?([^"\' >]*)', page, re.I) if "http" in m.lower()]


@pytest.fixture
def target(tmp_path) -> Keeper:
    return make_target(tmp_path / "t")


def test_the_page_holds_every_section_escaped_and_self_contained(target):
    page = report_of(target)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for section in ("summary", "chart", "waiting", "open", "fixed", "lessons", "redacted"):
        assert f'<section id="{section}">' in page
    # what waits, per namespace, with the exact commands
    assert "priors decide P-0002 keep" in text_of(page) and "priors decide P-0002 obsolete" in text_of(page)
    assert "priors decide P-0003 reopen --because &quot;accept run-002-C-01&quot;" in text_of(page)
    assert "<code>priors decide</code> in a terminal" in page
    # open findings by file, worst first, with severity
    assert page.index("<h3>api/x.py — 1</h3>") < page.index("<h3>src/cart.py — 1</h3>")
    assert '<span class="sev sev-major">major</span>' in page
    # claims are text, never markup; non-ASCII kept
    assert "<script" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page and "ünïcode" in page
    # nothing leaves the file: no script, no remote source or link, no @import, no web font
    assert remote_refs(page) == [] and "@import" not in page and "url(http" not in page and "<link" not in page
    assert "<svg" in page and "<style>" in page
    # lessons with their score
    assert "Run the narrow test first" in page.split('id="lessons"')[1]


def test_every_kind_of_call_waits_on_the_page_with_its_commands(keeper):
    every_other_kind(keeper)
    page = report_of(keeper)
    waiting = text_of(page).split('<section id="waiting">')[1].split("</section>")[0]
    assert "<h3>web — 1 waiting</h3>" in waiting and "<h3>dev — 2 waiting</h3>" in waiting
    assert "a run proposed retiring this" in waiting and "priors decide P-0002 obsolete" in waiting
    assert "this lesson keeps losing — keep it or retire it? (scored 0.00 over 3 runs)" in waiting
    assert "priors decide P-0001 keep" in waiting
    assert "a proposed lesson, not injected until you accept it" in waiting and "priors decide P-0003 accepted" in waiting


def test_the_page_is_deterministic(target):
    first = report_of(target, name="a.html")
    assert report_of(target, name="b.html") == first
    assert (target.root / "a.html").read_bytes() == (target.root / "b.html").read_bytes()


def test_redacted_priors_are_tombstones_only(target):
    target.ok("redact", "P-0001", "--because", "held a secret")
    page = report_of(target)
    assert "ignores" not in page and "src/cart.py" not in page
    tombs = page.split('<section id="redacted">')[1]
    assert "P-0001" in tombs and "Redacted (1)" in tombs


def test_what_the_last_run_fixed_and_since(target):
    target.open_run("web", {"src/cart.py#Cart.total": "bbbbbbbbbbbb", "lib/cache.py": "aaaaaaaaaaaa",
                            "src/price.py": "aaaaaaaaaaaa"})
    target.ok("disposition", "--run", "run-003", "P-0001", "fixed", "P-0004", "still-open")
    assert target.propose("run-003", "web", {"type": "conclusion", "claim": "a new one since run-002",
                                             "scope_ref": "lib/cache.py", "severity": "minor"}).code == 0
    target.ok("commit", "--run", "run-003")
    target.ok("decide", "P-0002", "obsolete", "--because", "no longer useful")
    page = report_of(target)
    fixed = page.split('<section id="fixed">')[1].split("</section>")[0]
    assert "What the last run (run-003) fixed (1)" in fixed and "P-0001" in fixed
    since = report_of(target, "--since", "run-002", name="since.html")
    assert "showing what changed since run-002 (1 run after it)" in since
    assert "Open findings raised since run-002 (1)" in since and "a new one since run-002" in since
    assert "Fixed since run-002 (1)" in since
    assert "Your decisions since run-002 (1)" in since and "no longer useful" in since
    assert "runs since run-002" in since
    everything = report_of(target, "--since", "run-001", name="all.html")
    assert "Your decisions since run-001 (2)" in everything  # run-001's wontfix came after its commit


def test_the_last_run_is_the_last_that_reviewed_not_a_lesson_added_or_a_session_scored(target):
    """A person's `add` and a scored coding session are sealed as runs, but they review nothing: "What the last
    run fixed" stays on the last run that did, not "run-005 … Nothing" after any lesson (pass n27o)."""
    target.open_run("web", {"src/cart.py#Cart.total": "bbbbbbbbbbbb", "lib/cache.py": "aaaaaaaaaaaa",
                            "src/price.py": "aaaaaaaaaaaa"})
    target.ok("disposition", "--run", "run-003", "P-0001", "fixed", "P-0004", "still-open")
    target.ok("commit", "--run", "run-003")
    target.ok("add", "--ns", "web", "Read the pricing notes before touching the cart.")
    target.ok("lessons", "--inject", "--ns", "web")
    target.ok("score", "last", "success")
    seals = [r for r in target.ledger() if r.get("t") == "run" and r.get("action") == "commit"]
    assert [(r["run"], r.get("via")) for r in seals[-2:]] == [("run-004", "add"), ("run-005", "session")]
    fixed = report_of(target).split('<section id="fixed">')[1].split("</section>")[0]
    assert "What the last run (run-003) fixed (1)" in fixed and "P-0001" in fixed


def test_report_usage_errors(target):
    assert "-o FILE.html is required" in target.usage("report")
    assert "a directory" in target.usage("report", "-o", ".")
    assert "no such directory" in target.usage("report", "-o", "no/such/dir/r.html")
    assert "expected a run id" in target.usage("report", "-o", "r.html", "--since", "yesterday")
    assert "no committed run" in target.usage("report", "-o", "r.html", "--since", "run-099")
    assert "unknown option" in target.usage("report", "-o", "r.html", "--sinc", "run-001")
    assert not (target.root / "r.html").exists()


def test_report_reads_the_ledger_only_through_the_ledger_api(target, tmp_path):
    # like every verb, report refuses a ledger that a symlink leads outside .priors/
    ledger = target.root / ".priors" / "ledger.jsonl"
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(ledger.read_bytes())
    ledger.unlink()
    try:
        ledger.symlink_to(elsewhere)
    except (OSError, NotImplementedError):
        pytest.skip("no symlinks here")
    assert "is a symlink; refusing to read or write through it" in target.usage("report", "-o", "r.html")
    assert not (target.root / "r.html").exists()


def test_the_chart_uses_the_width_titles_its_axes_and_marks_quiescence():
    recs = [k.prior("P-0001", "run-001"), k.commit("run-001")]
    for n in range(2, 5):
        recs += [k.disp("P-0001", f"run-{n:03d}", "still-open"), k.commit(f"run-{n:03d}")]
    rows = history_rows(recs)
    svg = chart_svg(rows, "t")
    xml.dom.minidom.parseString(svg.encode("utf-8"))
    bars = [(float(x), float(w)) for x, w in
            re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)" height="[\d.]+" fill="url\(#c-carried\)"><title>', svg)]
    assert len(bars) == 3 and min(w for _, w in bars) >= 90  # wide bars...
    assert bars[0][0] < 400 and bars[-1][0] + bars[-1][1] > 800  # ...spread over the whole width (960)
    assert "priors per run" in svg and "committed runs, oldest to newest" in svg
    assert svg.count("✓</text>") == 3 and "quiescent since run-002 (3 in a row)" in svg
    assert 'fill="#f0e442" fill-opacity' in svg  # the band behind quiescent runs
    for colour in COLORS.values():
        assert colour in svg
    # the Okabe–Ito palette (distinct for colour-blind readers), five different colours
    okabe_ito = {"#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7", "#000000"}
    assert set(COLORS.values()) <= okabe_ito and len(set(COLORS.values())) == 5
    assert '<pattern id="c-carried"' in svg  # patterns: apart in grey print too
    for name in ("touched", "your_call", "new"):
        assert f'<pattern id="c-{name}"' in svg
    # the open line: one point per run, open findings after each (1, 1, 1: level)
    line = re.search(r'<polyline points="([^"]+)" fill="none" stroke="#000000"', svg)
    assert line and len({p.split(",")[1] for p in line.group(1).split()}) == 1 and len(line.group(1).split()) == 4
    assert "open after the run" in svg


def test_many_runs_share_bars_and_the_chart_stays_small():
    recs = [k.prior("P-0001", "run-001"), k.commit("run-001")]
    for n in range(2, 1001):
        recs += [k.disp("P-0001", f"run-{n:03d}", "still-open"), k.commit(f"run-{n:03d}")]
    svg = chart_svg(history_rows(recs))
    assert "(each bar: 9 runs)" in svg and svg.count("<rect") < 200 and len(svg) < 60_000


def test_a_large_ledger_gives_a_page_under_5_mb(tmp_path):
    import conftest

    conftest.gen_ledger().generate(2000, tmp_path / "big")
    keeper = Keeper(tmp_path / "big")
    page = report_of(keeper)
    assert len(page.encode("utf-8")) < 5_000_000 * 2000 / 10_000  # scaled: 10k priors stay under 5 MB
    assert remote_refs(page) == []


# ------------------------------------------------------------------ in a real browser


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / "chromium-profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, timeout=240)


@needs_chromium
def test_the_browser_sees_the_tables_and_commands_and_no_remote_request(target, tmp_path):
    report_of(target)
    done = chromium(tmp_path, "--dump-dom", (target.root / "report.html").as_uri())
    dom = done.stdout.decode("utf-8")
    assert done.returncode == 0 and "</html>" in dom, done.stderr[-2000:]
    assert dom.count("<table") >= 5 and "<svg" in dom
    assert "priors decide P-0002 keep" in text_of(dom) and "priors decide P-0003 keep" in text_of(dom)
    # the claim with a script tag is text in the DOM: the browser made no element of it
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom and "<script" not in dom.lower()
    assert "ünïcode" in dom
    assert remote_refs(dom) == []


@needs_chromium
@pytest.mark.parametrize("width,height", [(1024, 760), (390, 1100)], ids=["desktop", "phone"])
def test_the_screenshot_shows_the_chart(target, tmp_path, width, height):
    report_of(target)
    shot = tmp_path / f"shot-{width}.png"
    done = chromium(tmp_path, f"--window-size={width},{height}", "--hide-scrollbars", f"--screenshot={shot}",
                    (target.root / "report.html").as_uri())
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    counts = pngkit.colours(shot.read_bytes())
    assert len(counts) > 50  # not blank
    total = sum(counts.values())
    assert max(counts.values()) < total * 0.97
    for name in ("new", "carried", "your_call"):  # the bars of the chart, in their Okabe–Ito colours
        rgb = tuple(int(COLORS[name][i:i + 2], 16) for i in (1, 3, 5))
        assert pngkit.near(counts, rgb) > 20, (name, rgb)


PHONE_PROBE = """<script>document.getElementById("page").addEventListener("load", function () {
  var d = this.contentDocument, w = d.documentElement.clientWidth, wide = [];
  d.querySelectorAll("main *").forEach(function (el) {
    if (el.closest("svg")) return;  /* the chart scales to the width: its own coordinates are not layout */
    if (el.getBoundingClientRect().right > w + 0.5 || el.scrollWidth > el.clientWidth + 1) wide.push(el.tagName);
  });
  var out = document.createElement("pre");
  out.id = "measured";
  out.textContent = "viewport=" + w + " page=" + d.documentElement.scrollWidth + " wide=" + wide.length
    + " labelled=" + Array.prototype.filter.call(d.querySelectorAll("td"), function (td) {
        var c = getComputedStyle(td, "::before").content; return c && c !== "none" && c !== "normal"; }).length
    + " heads=" + d.querySelectorAll("thead").length
    + " hidden-heads=" + Array.prototype.filter.call(d.querySelectorAll("thead"),
        function (h) { return getComputedStyle(h).display === "none"; }).length;
  document.body.appendChild(out);
});</script>"""


@needs_chromium
@pytest.mark.parametrize("width,stacked", [(375, True), (1024, False)], ids=["phone", "desktop"])
def test_no_table_scrolls_sideways_on_a_phone(target, tmp_path, width, stacked):
    # the widest tables (lessons: 9 columns) and an unbroken path: at 375 px each row is a card
    long_ref = "src/" + "very_long_module_name_" * 6 + ".py#Handler.process_everything_at_once"
    extra = k.to_bytes([k.prior("P-0006", "run-002", "a long claim " * 20, ref=long_ref, severity="minor")])
    ledger = target.root / ".priors" / "ledger.jsonl"
    ledger.write_bytes(ledger.read_bytes() + extra)
    page = report_of(target)
    # headless chromium will not make its window narrower than ~500 px, so the page is laid out in
    # an iframe of exactly `width` px (its viewport, for the media query) and measured by a script
    # in the test's own harness page; the report itself holds no script.
    harness = tmp_path / "harness.html"
    harness.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe id="page" style="width:{width}px;'
                       f'height:4000px;border:0" srcdoc="{html.escape(page, quote=True)}"></iframe>'
                       f"{PHONE_PROBE}</body></html>", encoding="utf-8")
    done = chromium(tmp_path, "--window-size=1100,900", "--dump-dom", harness.as_uri())
    found = re.search(r'<pre id="measured">([^<]*)</pre>', done.stdout.decode("utf-8"))
    assert found, done.stderr[-2000:]
    got = dict(kv.split("=") for kv in found.group(1).split())
    assert got["viewport"] == str(width) and got["page"] == str(width) and got["wide"] == "0", got
    # on a phone the headings are hidden and every cell shows its column's name beside it (a card per row)
    assert (got["hidden-heads"] == got["heads"]) is stacked, got
    assert (int(got["labelled"]) > 30) is stacked and (got["labelled"] == "0") is not stacked, got


def test_ci_installs_chromium_quietly_or_says_why_not():
    from conftest import REPO

    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "command -v chromium" in script and "apt-get install -y -qq --no-install-recommends chromium" in script
    assert "apt-get is not available" in script and "will be skipped" in script
    assert script.rstrip().splitlines()[-1] == "python -m pytest -q"


CHART_PROBE = """<script>document.getElementById("page").addEventListener("load", function () {
  var d = this.contentDocument, shown = 0, least = 1e9;
  d.querySelectorAll("figure svg.chart").forEach(function (svg) {
    if (svg.getBoundingClientRect().width === 0) return;  /* the other layout, hidden at this width */
    shown += 1;
    svg.querySelectorAll("text").forEach(function (t) {
      var h = t.getBoundingClientRect().height; if (h > 0 && h < least) least = h; });
  });
  var out = document.createElement("pre");
  out.id = "measured";
  out.textContent = "charts=" + shown + " figures=" + d.querySelectorAll("figure").length + " least=" + least.toFixed(1);
  document.body.appendChild(out);
});</script>"""


@needs_chromium
@pytest.mark.parametrize("width", [375, 1024], ids=["phone", "desktop"])
def test_the_chart_text_is_legible_at_phone_width(target, tmp_path, width):
    # at 375 px the page shows each namespace's narrow chart, whose smallest text stays at least 9 px tall
    # (the wide chart scaled to a phone made it under 5 px); one chart per figure at either width
    page = report_of(target)
    harness = tmp_path / "harness.html"
    harness.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe id="page" style="width:{width}px;'
                       f'height:4000px;border:0" srcdoc="{html.escape(page, quote=True)}"></iframe>'
                       f"{CHART_PROBE}</body></html>", encoding="utf-8")
    done = chromium(tmp_path, "--window-size=1100,900", "--dump-dom", harness.as_uri())
    found = re.search(r'<pre id="measured">([^<]*)</pre>', done.stdout.decode("utf-8"))
    assert found, done.stderr[-2000:]
    got = dict(kv.split("=") for kv in found.group(1).split())
    assert got["charts"] == got["figures"] and int(got["charts"]) >= 1, got
    assert float(got["least"]) >= 9.0, got


CMD_PROBE = """<script>document.getElementById("page").addEventListener("load", function () {
  var d = this.contentDocument, words = 0, broken = [];
  d.querySelectorAll("ul.cmds code").forEach(function (code) {
    var walk = d.createTreeWalker(code, NodeFilter.SHOW_TEXT), node;
    while ((node = walk.nextNode())) {
      var re = /\\S+/g, m;
      while ((m = re.exec(node.data))) {
        var r = d.createRange();
        r.setStart(node, m.index);
        r.setEnd(node, m.index + m[0].length);
        words += 1;
        if (r.getClientRects().length > 1) broken.push(m[0]);
      }
    }
  });
  var out = document.createElement("pre");
  out.id = "measured";
  out.textContent = "words=" + words + " broken=" + JSON.stringify(broken);
  document.body.appendChild(out);
});</script>"""


@needs_chromium
@pytest.mark.parametrize("width", [375, 1280], ids=["phone", "desktop"])
def test_a_command_to_copy_wraps_only_between_its_words(target, tmp_path, width):
    """`duplicate -` / `-of P-0004` at the end of one line and the start of the next reads as two wrong
    options: a command in "answer with" wraps at its spaces, never inside an option, an id or a verdict."""
    page = report_of(target)
    harness = tmp_path / "harness.html"
    harness.write_text(f'<!DOCTYPE html><html><body style="margin:0"><iframe id="page" style="width:{width}px;'
                       f'height:4000px;border:0" srcdoc="{html.escape(page, quote=True)}"></iframe>'
                       f"{CMD_PROBE}</body></html>", encoding="utf-8")
    done = chromium(tmp_path, "--window-size=1300,900", "--dump-dom", harness.as_uri())
    found = re.search(r'<pre id="measured">([^<]*)</pre>', done.stdout.decode("utf-8"))
    assert found, done.stderr[-2000:]
    words, broken = found.group(1).split(" ", 1)
    assert int(words.split("=")[1]) > 10 and broken == "broken=[]", found.group(1)


def test_a_thousand_empty_namespaces_keep_the_page_and_the_svg_small(keeper):
    """A namespace whose every run found nothing is a flat line at zero: charting a thousand of them made an
    8 MB page (the target is under 5 MB) and a 4 MB `history --svg`. They are left out and named, once."""
    records = k.sample()
    for i in range(1000):
        records.append(k.commit(f"run-{100 + i:04d}", ns=f"empty{i:04d}"))
    (keeper.root / ".priors" / "ledger.jsonl").write_bytes(k.to_bytes(records))
    page = report_of(keeper)
    assert len(page.encode("utf-8")) < 200_000, len(page)
    assert page.count('<figure data-ns="') == 1 and '<figure data-ns="web">' in page
    assert "Not charted: 1000 namespaces whose every run found nothing (a flat line at zero): empty0000, empty0001" in page
    keeper.ok("history", "--svg", "h.svg")
    svg = (keeper.root / "h.svg").read_text(encoding="utf-8")
    assert len(svg.encode("utf-8")) < 100_000, len(svg)
    xml.dom.minidom.parseString(svg)  # still well-formed
    assert "Not charted: 1000 namespaces" in svg and "empty0999" in svg and "priors history — web" in svg
