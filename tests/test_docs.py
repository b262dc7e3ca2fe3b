"""The docs and the keeper agree on every refusal code; the docs quote the keeper's fixed lines exactly."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKILL = REPO / "skills" / "priors" / "SKILL.md"
STANDARD = REPO / "PRIORS.md"
PROTOCOL = REPO / "docs" / "protocol.md"
README = REPO / "README.md"

# A refusal-table row: its first cell is one backticked code.
ROW_RE = re.compile(r"^\|\s*`([A-Z][A-Z_]{3,})`\s*\|", re.M)
# Any backticked all-caps word: every one of these in the docs must be a real code.
TICKED_RE = re.compile(r"`([A-Z][A-Z_]{3,})`")
# `Refusal("CODE"` with any whitespace (line breaks included) after the parenthesis.
RAISED_RE = re.compile(r"\bRefusal\(\s*[\"']([A-Z][A-Z_]{3,})[\"']")
# Backticked all-caps words in the docs that are not refusal codes.
NOT_CODES = {"PATH", "HOME", "PYTHONPATH"}


def doc_table_codes(path: Path):
    return set(ROW_RE.findall(path.read_text(encoding="utf-8")))


def doc_ticked_codes(path: Path):
    return set(TICKED_RE.findall(path.read_text(encoding="utf-8"))) - NOT_CODES


def keeper_codes():
    codes = set()
    for src in sorted((REPO / "priors").rglob("*.py")):
        codes |= set(RAISED_RE.findall(src.read_text(encoding="utf-8")))
    return codes


class CodeExtraction(unittest.TestCase):
    def test_raised_pattern_spans_lines(self):
        src = 'raise Refusal(\n    "KEEPER_LOCKED",\n    hint="x")\nraise Refusal("UNKNOWN_RUN", run=r)\n'
        self.assertEqual(set(RAISED_RE.findall(src)), {"KEEPER_LOCKED", "UNKNOWN_RUN"})

    def test_table_rows_only(self):
        text = "| code | meaning |\n|---|---|\n| `RERAISE` | x |\nsee `DUPLICATE` here\n"
        self.assertEqual(set(ROW_RE.findall(text)), {"RERAISE"})


class RefusalCodes(unittest.TestCase):
    def setUp(self):
        self.keeper = keeper_codes()

    def check(self, path: Path):
        table = doc_table_codes(path)
        self.assertTrue(table, f"{path.name} has no refusal table")
        self.assertEqual(
            sorted(table - self.keeper), [], f"codes in {path.name}'s refusal table that the keeper never raises"
        )
        self.assertEqual(
            sorted(self.keeper - table), [], f"codes the keeper raises that {path.name}'s refusal table leaves out"
        )
        self.assertEqual(
            sorted(doc_ticked_codes(path) - self.keeper), [], f"codes named in {path.name} that the keeper never raises"
        )
        rows = ROW_RE.findall(path.read_text(encoding="utf-8"))
        self.assertEqual(len(rows), len(set(rows)), f"a code has two rows in {path.name}")

    def test_skill_matches_keeper(self):
        self.check(SKILL)

    def test_standard_matches_keeper(self):
        self.check(STANDARD)

    def test_protocol_matches_keeper(self):
        self.check(PROTOCOL)


class DocsAgree(unittest.TestCase):
    def test_skill_and_standard_list_the_same_codes(self):
        self.assertEqual(doc_table_codes(SKILL), doc_table_codes(STANDARD))

    def test_adapters_name_only_documented_codes(self):
        known = doc_table_codes(STANDARD)
        for path in sorted((REPO / "adapters").glob("*.md")) + [REPO / "skills" / "with-priors" / "SKILL.md"]:
            words = set(re.findall(r"\b[A-Z][A-Z]+(?:_[A-Z]+)+\b", path.read_text(encoding="utf-8")))
            with self.subTest(doc=path.name):
                self.assertEqual(sorted(words - known), [])


class FixedLines(unittest.TestCase):
    QUIESCENCE = "Everything settled still holds. Nothing new."
    SUMMARY = [
        "Checked against ",
        "  ✓ ",
        " fixed — nice work",
        " carried (same identities, current scope state)",
        " touched by changes — queued for re-judgment",
        " need your call — `priors status --calls` to review",
        " resting — the code they point at is gone; they wake if it returns",
        "New this run: ",
    ]

    def test_docs_quote_the_summary_and_quiescence(self):
        for path in (SKILL, STANDARD, REPO / "skills" / "with-priors" / "SKILL.md"):
            text = path.read_text(encoding="utf-8")
            with self.subTest(doc=path.name):
                self.assertIn(self.QUIESCENCE, " ".join(text.split()))
        for path in (SKILL, STANDARD):
            text = path.read_text(encoding="utf-8")
            for piece in self.SUMMARY:
                with self.subTest(doc=path.name, line=piece):
                    self.assertIn(piece, text)

    def test_skill_states_the_two_hard_rules(self):
        text = " ".join(SKILL.read_text(encoding="utf-8").split())
        self.assertIn("Never edit anything under `.priors/` by hand", text)
        self.assertIn("Never call `priors decide`", text)
        self.assertIn("python3 -m priors", text)

    def test_skill_snapshot_recipe_runs_as_written(self):
        """The skill's own-snapshot recipe runs as printed (newcomer pass 27g: its `-o /tmp/scopes.json`
        was a usage error — `-o` writes only inside the target — so the recipe failed at its first line)."""
        import os
        import shutil
        text = SKILL.read_text(encoding="utf-8")
        block = next(b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "--scopes" in b)
        lines = [x for x in block.splitlines() if x.strip()]
        self.assertTrue(lines and all(x.startswith("priors ") for x in lines), block)
        with tempfile.TemporaryDirectory() as tmp:
            target, outside = Path(tmp) / "repo", Path(tmp) / "outside"
            (target / "src").mkdir(parents=True)
            outside.mkdir()
            (target / "src" / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
            env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                       HOME=tmp, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
            last = None
            for line in lines:
                cmd = line.replace("/tmp/", str(outside) + "/")
                if shutil.which("ruff", path=env["PATH"]) is None:  # the tool it names, when this machine lacks it
                    cmd = cmd.replace('"ruff --version"', f'"{sys.executable} --version"')
                cmd = f'"{sys.executable}" -m priors' + cmd[len("priors"):]
                last = subprocess.run(cmd, shell=True, cwd=str(target), env=env, capture_output=True, text=True)
                self.assertEqual(last.returncode, 0, (line, last.stdout, last.stderr))
            self.assertTrue(json.loads(last.stdout)["run"].startswith("run-"))

    def test_standard_covers_every_topic(self):
        text = STANDARD.read_text(encoding="utf-8")
        for topic in (
            "ratchet", "Five facets", "Presets", "Lifecycle", "Protocol", "Determinism",
            "L0", "L1", "L2", "advisory", "Resting", "Retirement", "Redaction",
            "fixed", "carried", "your call", "new", "reference",
        ):
            with self.subTest(topic=topic):
                self.assertIn(topic, text)

    def test_every_contract_verb_is_documented(self):
        text = STANDARD.read_text(encoding="utf-8")
        for verb in ("init", "hash", "relevant", "disposition", "propose", "commit", "abort",
                     "decide", "redact", "status", "render", "snapshot", "demo"):
            with self.subTest(verb=verb):
                self.assertRegex(text, rf"`(priors )?{verb}\b")


def user_docs():
    """Every document a user or an agent reads."""
    docs = [README, STANDARD] + sorted((REPO / "docs").glob("*.md"))
    docs += sorted((REPO / "skills").rglob("*.md")) + sorted((REPO / "adapters").glob("*.md"))
    return docs


LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path):
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), re.M)}


class Links(unittest.TestCase):
    def test_slug(self):
        self.assertEqual(slug("13. Where this keeper differs from the reference"),
                         "13-where-this-keeper-differs-from-the-reference")
        self.assertEqual(slug("The writer lock"), "the-writer-lock")
        self.assertEqual(slug("Merging branches: `priors init --git`"), "merging-branches-priors-init---git")

    def test_every_relative_link_resolves(self):
        checked = 0
        for doc in user_docs():
            text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
            for target in LINK_RE.findall(text):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                path_part, _, anchor = target.partition("#")
                dest = (doc.parent / path_part).resolve() if path_part else doc
                with self.subTest(doc=str(doc.relative_to(REPO)), link=target):
                    checked += 1
                    self.assertTrue(dest.exists(), f"{target} does not exist")
                    self.assertTrue(
                        str(dest).startswith(str(REPO.resolve())), f"{target} points outside the repository"
                    )
                    if anchor and dest.suffix == ".md":
                        self.assertIn(anchor, anchors(dest))
        self.assertGreater(checked, 20)

    def test_no_doc_installs_the_wrong_package(self):
        # "priors" on the package index is an unrelated project; ours is priors-keeper, installed from the repository.
        wrong = re.compile(r"\bpip[x3]? install (?:-{1,2}[\w=-]+ )*[\"']?priors(?![\w-])")
        self.assertTrue(wrong.search("python -m pip install priors   # x"))
        self.assertTrue(wrong.search("pipx install --force priors"))
        self.assertFalse(wrong.search("pip install priors-keeper"))
        self.assertFalse(wrong.search("pipx install /path/to/priors"))
        files = user_docs() + [REPO / name for name in ("action.yml", ".pre-commit-hooks.yaml", "install.sh")]
        for path in files:
            with self.subTest(doc=str(path.relative_to(REPO))):
                self.assertIsNone(wrong.search(path.read_text(encoding="utf-8")))

    def test_the_protocol_is_never_cited_without_a_link(self):
        cites = re.compile(r"\bcontract\b|\breference (node )?keeper\b|\bnode keeper\b", re.I)
        for doc in user_docs():
            if doc == PROTOCOL:
                continue
            for para in re.split(r"\n\s*\n", doc.read_text(encoding="utf-8")):
                if cites.search(para):
                    with self.subTest(doc=str(doc.relative_to(REPO)), paragraph=para[:80]):
                        self.assertRegex(para, r"\]\((\.\./)?(docs/)?protocol\.md(#[\w-]+)?\)")

    def test_protocol_names_the_reference_project(self):
        text = PROTOCOL.read_text(encoding="utf-8")
        self.assertIn("[conikeec/priors](https://github.com/conikeec/priors)", text)
        for topic in ("## Records", "## The fold", "## Refusals", "## Where this keeper differs from the reference keeper"):
            self.assertIn(topic, text)
        self.assertIn("REST_AFTER = 5  #", (REPO / "priors" / "core" / "vocabulary.py").read_text(encoding="utf-8"))
        self.assertIn("five runs in\na row", text)


class Packaging(unittest.TestCase):
    def pyproject(self):
        return (REPO / "pyproject.toml").read_text(encoding="utf-8")

    def test_distribution_name_of_our_own(self):
        text = self.pyproject()
        self.assertRegex(text, r'(?m)^name = "priors-keeper"')
        self.assertIn('priors = "priors.cli.main:run"', text)  # the command stays priors
        readme = README.read_text(encoding="utf-8")
        self.assertIn("**The package is `priors-keeper`**", readme)

    def test_spdx_license_with_a_setuptools_that_reads_it(self):
        text = self.pyproject()
        self.assertRegex(text, r'(?m)^license = "MIT"$')
        self.assertRegex(text, r'requires = \["setuptools>=(7[7-9]|[89]\d|\d{3})')
        self.assertNotIn("License ::", text, "SPDX license expressions replace license classifiers")
        self.assertEqual(json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["license"], "MIT")


def readme_section(title):
    text = README.read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


class AgentRecipes(unittest.TestCase):
    HARNESSES = ("Claude Code", "Codex", "Pi", "OpenClaw", "Any harness that reads `AGENTS.md`", "Any MCP client",
                 "A harness without a shell")

    def setUp(self):
        self.section = readme_section("Use it with your agent")
        self.blocks = re.findall(r"\*\*([^*]+)\*\*[^\n]*\n\n```text\n(.*?)```", self.section, re.S)

    def test_each_harness_in_three_lines(self):
        names = [name for name, _ in self.blocks]
        self.assertEqual(names, list(self.HARNESSES))
        for name, block in self.blocks:
            with self.subTest(harness=name):
                self.assertEqual(len(block.splitlines()), 3, block)
        plugin_route = re.search(r"plugin route.*?\n\n```text\n(.*?)```", self.section, re.S).group(1)
        self.assertEqual(len(plugin_route.splitlines()), 3)

    def test_named_skills_folders_and_plugin_exist(self):
        for skill in set(re.findall(r"[/$](?:priors:)?([a-z][a-z-]+) code-review", self.section)):
            with self.subTest(skill=skill):
                self.assertTrue((REPO / "skills" / skill / "SKILL.md").is_file())
        market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
        plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
        self.assertIn(f"/plugin install {plugin['name']}@{market['name']}", self.section)
        self.assertIn(f"/{plugin['name']}:with-priors code-review src/", self.section)
        installer = (REPO / "install.sh").read_text(encoding="utf-8")
        for folder in re.findall(r"`~/(\.[a-z/.]+skills)`", self.section):
            with self.subTest(folder=folder):
                self.assertIn(f"$HOME/{folder}", installer.replace("$AGENTS_SKILLS", "$HOME/.agents/skills"))

    def test_agents_md_recipe_pastes_the_snippet(self):
        line = next(b for n, b in self.blocks if "AGENTS.md" in n).splitlines()[0]
        command = line.split("   #", 1)[0].replace("/path/to/your/clone", str(REPO))
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "AGENTS.md").write_text("# Our agents\n", encoding="utf-8")
            subprocess.run(command, shell=True, cwd=tmp, check=True)
            pasted = (Path(tmp) / "AGENTS.md").read_text(encoding="utf-8")
        snippet = (REPO / "adapters" / "AGENTS-snippet.md").read_text(encoding="utf-8")
        self.assertTrue(snippet.startswith("<!-- Paste everything below this line"))
        self.assertEqual(pasted, "# Our agents\n" + snippet.split("\n", 1)[1])
        self.assertNotIn("<!--", pasted)

    def test_advisory_line_exists_where_the_recipe_says(self):
        self.assertIn("advisory mode — not recorded", (REPO / "adapters" / "README.md").read_text(encoding="utf-8"))

    def test_readme_states_how_long_the_suite_takes(self):
        self.assertIn("The whole suite takes about five minutes on 2 idle cores",
                      " ".join(README.read_text(encoding="utf-8").split()))


class CiDoc(unittest.TestCase):
    def setUp(self):
        self.text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")

    def test_shows_the_action_the_hook_and_the_merge_driver(self):
        self.assertIn("uses: <owner>/priors@<tag>", self.text)
        action = (REPO / "action.yml").read_text(encoding="utf-8")
        for name in re.findall(r"`(since|directory|python)`", self.text):
            self.assertRegex(action, rf"(?m)^  {name}:$")
        hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
        for hook in re.findall(r"- id: ([a-z-]+)", self.text):
            with self.subTest(hook=hook):
                self.assertIn(f"- id: {hook}\n", hooks)
        self.assertIn("priors init --git", self.text)
        self.assertIn("merge.priors.driver        = priors merge-driver %O %A %B %P", self.text)

    def test_says_how_to_install_both_hooks_and_each_runs_at_its_own_stage(self):
        """A plain `pre-commit install` installs only the commit hook: the doc gives the command `priors doctor`
        prints, and the commit hook (a comparison with HEAD) does not run again at the push (pass n27o)."""
        install = "pre-commit install --hook-type pre-commit --hook-type pre-push"
        self.assertIn(install, self.text)
        self.assertIn(install, (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
        doctor = (REPO / "priors" / "ops" / "doctor.py").read_text(encoding="utf-8")
        self.assertIn('("pre-commit", "priors-verify"), ("pre-push", "priors-verify-since-upstream")', doctor)
        hooks = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
        stages = dict(re.findall(r"(?m)^- id: ([a-z-]+)\n(?:  [^\n]*\n)*?  stages: \[([a-z-]+)\]$", hooks))
        self.assertEqual(stages, {"priors-verify": "pre-commit", "priors-verify-since-upstream": "pre-push"})


if __name__ == "__main__":
    unittest.main()


class EveryVerb(unittest.TestCase):
    """The README's "Every verb" table is read against the one record of each verb (cli/verbs.py)."""

    def table_verbs(self):
        text = README.read_text(encoding="utf-8")
        section = text[text.index("## Every verb"):]
        section = section[:section.index("\n## ", 1)]
        return [m.group(1) for m in re.finditer(r"^\| `priors ([a-z-]+)", section, re.M)]

    def test_the_table_names_every_verb_in_the_help_order(self):
        from priors.cli.verbs import GROUPS, VERBS

        in_help_order = [v.name for g in GROUPS for v in VERBS.values() if v.group == g]
        self.assertEqual(list(dict.fromkeys(self.table_verbs())), in_help_order,
                         "README.md's \"Every verb\" table must name every verb of cli/verbs.py, in `priors --help` order")

    def test_mcp_doc_names_every_tool_and_no_other(self):
        from priors.cli.verbs import tools

        for doc in (REPO / "docs" / "mcp.md", README):
            with self.subTest(doc=doc.name):
                named = set(re.findall(r"`(priors_[a-z_]+)`", doc.read_text(encoding="utf-8")))
                self.assertEqual(named, set(tools()))
        help_text = subprocess.run([sys.executable, "-m", "priors", "mcp", "--help"], capture_output=True,
                                   text=True, cwd=str(REPO), check=True).stdout
        self.assertEqual(set(re.findall(r"priors_[a-z_]+", help_text)), set(tools()))


class Architecture(unittest.TestCase):
    def test_every_module_is_named_in_its_layers_table(self):
        """docs/architecture.md has a section a layer (`## core — …`); each module is named in a table
        row of its own layer's section, and no row names a module that is not there."""
        text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
        sections = dict(re.findall(r"^## (core|store|snapshot|ops|cli) — .*?\n(.*?)(?=^## |\Z)", text, re.M | re.S))
        self.assertEqual(sorted(sections), ["cli", "core", "ops", "snapshot", "store"])
        for layer, body in sections.items():
            rows = " ".join(line for line in body.splitlines() if line.startswith("| `"))
            named = set(re.findall(r"`([a-z_]+\.py)`", rows))
            here = {p.name for p in (REPO / "priors" / layer).glob("*.py") if p.name != "__init__.py"}
            with self.subTest(layer=layer):
                self.assertEqual(named, here)


class LessonVerdicts(unittest.TestCase):
    def test_wontfix_is_never_said_to_turn_a_lesson_down(self):
        """The protocol injects open, accepted and wontfix lessons, so `wontfix` keeps a lesson in force:
        the docs and the refusal hints must not call it "turned down" (pass 27s), and lessons.md says how
        a person does turn a lesson down — `obsolete`, which `status --calls` and the walk offer."""
        for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
                     *sorted((REPO / "priors").rglob("*.py"))]:
            with self.subTest(path=path.name):
                self.assertNotIn("turned down", " ".join(path.read_text(encoding="utf-8").split()))
        text = " ".join((REPO / "docs" / "lessons.md").read_text(encoding="utf-8").split())
        self.assertIn("To turn it down, retire it: `priors decide P-… obsolete`", text)
        self.assertIn("`wontfix` does not turn a lesson down", text)


class TodaysDoor(unittest.TestCase):
    """Newcomer pass 27z: protocol.md said every seal is written `"door": 5` after the keeper wrote 6. Where a
    doc says what the keeper writes today, it names today's door."""

    def test_every_doc_naming_the_door_written_today_names_it(self):
        sys.path.insert(0, str(REPO))
        from priors.core.vocabulary import DOOR
        said = re.compile(r'writes? (?:`"door": (\d+)`|`door: (\d+)`)')
        found = []
        for path in sorted((REPO / "docs").glob("*.md")) + [README, SKILL]:
            text = " ".join(path.read_text(encoding="utf-8").split())
            found += [(path.name, int(a or b)) for a, b in said.findall(text)]
        self.assertTrue(found)
        self.assertEqual([f for f in found if f[1] != DOOR], [])
