"""Every skill's SKILL.md obeys the Agent Skills rules; the plugin manifests are complete; links resolve."""

from __future__ import annotations

import json
import re
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKILLS = REPO / "skills"

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ALLOWED_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
YAML_INDICATORS = tuple("[]{}&*!|>'\"%@`,#?:-")


class FrontmatterError(ValueError):
    pass


def _scalar(raw: str, where: str) -> str:
    """One YAML scalar on one line: double-quoted, single-quoted or plain (checked for YAML traps)."""
    raw = raw.strip()
    if raw.startswith('"'):
        if len(raw) < 2 or not raw.endswith('"'):
            raise FrontmatterError(f"{where}: unterminated double-quoted value")
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise FrontmatterError(f"{where}: bad double-quoted value: {exc}") from None
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'"):
            raise FrontmatterError(f"{where}: unterminated single-quoted value")
        inner = raw[1:-1]
        if re.search(r"(?<!')'(?!')", inner.replace("''", "")):
            raise FrontmatterError(f"{where}: stray single quote")
        return inner.replace("''", "'")
    if raw.startswith(YAML_INDICATORS):
        raise FrontmatterError(f"{where}: a plain value may not start with {raw[0]!r}; quote it")
    if ": " in raw or raw.endswith(":"):
        raise FrontmatterError(f"{where}: ': ' in a plain value makes it a mapping; quote it")
    if " #" in raw:
        raise FrontmatterError(f"{where}: ' #' starts a YAML comment; quote the value")
    return raw


def parse_frontmatter(text: str):
    """Return (fields, body) from a SKILL.md: a small YAML subset — scalars and one level of string maps."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise FrontmatterError("SKILL.md must start with a '---' line")
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].rstrip("\r") == "---")
    except StopIteration:
        raise FrontmatterError("frontmatter has no closing '---' line") from None
    fields = {}
    current_map = None
    for n, line in enumerate(lines[1:end], start=2):
        line = line.rstrip("\r")
        where = f"line {n}"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise FrontmatterError(f"{where}: tabs may not indent YAML")
        if line.startswith((" ", "\t")):
            if current_map is None:
                raise FrontmatterError(f"{where}: indented line outside a mapping")
            key, sep, value = line.strip().partition(":")
            if not sep or not value.startswith(" ") and value:
                raise FrontmatterError(f"{where}: expected 'key: value'")
            current_map[_scalar(key, where)] = _scalar(value, where)
            continue
        key, sep, value = line.partition(":")
        if not sep or (value and not value.startswith(" ")):
            raise FrontmatterError(f"{where}: expected 'key: value'")
        if key in fields:
            raise FrontmatterError(f"{where}: duplicate key {key!r}")
        if value.strip() == "":
            current_map = {}
            fields[key] = current_map
        else:
            current_map = None
            fields[key] = _scalar(value, where)
    return fields, "\n".join(lines[end + 1 :])


def skill_dirs():
    return sorted(p for p in SKILLS.iterdir() if p.is_dir())


class ParserSelfTest(unittest.TestCase):
    def test_parser_catches_yaml_traps(self):
        bad = [
            "name: x\n---\n",
            "---\nname: x\n",
            "---\nname: x\ndescription: Use it: now\n---\n",
            "---\nname: x\ndescription: see #3 for more\n---\n",
            "---\nname: x\ndescription: 'unterminated\n---\n",
            "---\nname: x\nname: y\n---\n",
            "---\n  name: x\n---\n",
        ]
        for text in bad:
            with self.assertRaises(FrontmatterError, msg=text):
                parse_frontmatter(text)

    def test_parser_reads_scalars_and_maps(self):
        fields, body = parse_frontmatter(
            '---\nname: a-b\ndescription: "x: y"\nmetadata:\n  priors-ns: review\n---\nbody\n'
        )
        self.assertEqual(fields, {"name": "a-b", "description": "x: y", "metadata": {"priors-ns": "review"}})
        self.assertEqual(body, "body\n")


class SkillFrontmatter(unittest.TestCase):
    def test_expected_skills_exist(self):
        names = {p.name for p in skill_dirs()}
        self.assertTrue({"priors", "with-priors"} <= names, names)

    def test_every_skill_obeys_the_rules(self):
        for folder in skill_dirs():
            with self.subTest(skill=folder.name):
                path = folder / "SKILL.md"
                self.assertTrue(path.is_file(), f"{path} missing")
                text = path.read_text(encoding="utf-8")
                fields, body = parse_frontmatter(text)
                self.assertLessEqual(set(fields), ALLOWED_KEYS, "unknown frontmatter keys")
                name = fields.get("name")
                self.assertIsInstance(name, str)
                self.assertTrue(1 <= len(name) <= 64, name)
                self.assertRegex(name, NAME_RE)
                self.assertNotIn("--", name)
                self.assertEqual(name, folder.name, "name must equal the folder name")
                desc = fields.get("description")
                self.assertIsInstance(desc, str)
                self.assertTrue(1 <= len(desc) <= 1024, len(desc))
                self.assertRegex(desc.lower(), r"\buse (it|this)\b", "description must say when to use it")
                if "compatibility" in fields:
                    self.assertIsInstance(fields["compatibility"], str)
                    self.assertTrue(1 <= len(fields["compatibility"]) <= 500)
                if "metadata" in fields:
                    self.assertIsInstance(fields["metadata"], dict)
                    for k, v in fields["metadata"].items():
                        self.assertIsInstance(k, str)
                        self.assertIsInstance(v, str)
                body_lines = body.count("\n")
                self.assertLess(body_lines, 500)
                self.assertTrue(body.strip(), "empty body")

    def test_priors_skill_stays_lean(self):
        text = (SKILLS / "priors" / "SKILL.md").read_text(encoding="utf-8")
        self.assertLess(text.count("\n"), 250)


LINK_RE = re.compile(r"\]\(([^)\s]+)\)")


class Links(unittest.TestCase):
    def test_relative_links_resolve(self):
        docs = list(SKILLS.rglob("*.md")) + list((REPO / "adapters").glob("*.md")) + [REPO / "PRIORS.md"]
        for doc in docs:
            for target in LINK_RE.findall(doc.read_text(encoding="utf-8")):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                with self.subTest(doc=str(doc.relative_to(REPO)), link=target):
                    self.assertTrue((doc.parent / target.split("#")[0]).exists())

    def test_adapters_present(self):
        for name in ("AGENTS-snippet.md", "system-prompt.md", "pi.md", "kimi.md", "openclaw.md"):
            with self.subTest(adapter=name):
                text = (REPO / "adapters" / name).read_text(encoding="utf-8")
                self.assertIn("priors", text)
        self.assertIn("advisory", (REPO / "adapters" / "README.md").read_text(encoding="utf-8"))


class PluginManifests(unittest.TestCase):
    def load(self, name):
        path = REPO / ".claude-plugin" / name
        with path.open(encoding="utf-8") as fh:
            return json.load(fh)

    def test_plugin_json(self):
        plugin = self.load("plugin.json")
        self.assertEqual(plugin["name"], "priors")
        self.assertRegex(plugin["name"], NAME_RE)
        self.assertRegex(plugin["version"], r"^\d+\.\d+\.\d+$")
        self.assertTrue(plugin["description"].strip())
        self.assertTrue(plugin["author"]["name"].strip())
        self.assertEqual(plugin["license"], "MIT")
        self.assertIsInstance(plugin["keywords"], list)
        self.assertTrue(all(isinstance(k, str) and k for k in plugin["keywords"]))

    def test_plugin_declares_the_mcp_server_and_it_answers(self):
        """The plugin's server runs the keeper from the plugin folder itself (no install needed)."""
        import os
        import subprocess
        import sys
        import tempfile

        server = self.load("plugin.json")["mcpServers"]["priors"]
        self.assertEqual(server["args"], ["-m", "priors", "mcp"])
        env = dict(os.environ)
        env.update({k: v.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for k, v in server["env"].items()})
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        with tempfile.TemporaryDirectory() as scratch:
            proc = subprocess.run([sys.executable if server["command"] == "python3" else server["command"], *server["args"]],
                                  input=json.dumps(hello) + "\n", capture_output=True, text=True, cwd=scratch, env=env,
                                  timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["result"]["serverInfo"]["name"], "priors")

    def test_plugin_slash_commands(self):
        """Claude Code's plugin format: `commands/NAME.md` at the plugin root become `/priors:NAME`; each
        has YAML frontmatter with a description (and an argument hint when it takes arguments), and
        every `priors VERB` it tells the agent to run is a real verb, allowed by its allowed-tools."""
        from priors.cli.verbs import VERBS

        folder = REPO / "commands"
        self.assertEqual(sorted(p.stem for p in folder.glob("*.md")), ["add", "learn", "lessons", "review", "score"])
        for path in folder.glob("*.md"):
            with self.subTest(command=path.stem):
                text = path.read_text(encoding="utf-8")
                head, sep, body = text[4:].partition("\n---\n")
                self.assertTrue(text.startswith("---\n") and sep, "frontmatter between --- lines")
                meta = dict(line.split(": ", 1) for line in head.splitlines())
                self.assertTrue(meta["description"].strip())
                self.assertEqual("argument-hint" in meta, "$ARGUMENTS" in body and path.stem != "review")
                verbs = set(re.findall(r"(?:`|^)priors ([a-z-]+)", body, re.M))
                self.assertTrue(verbs and verbs <= set(VERBS), verbs)
                allowed = set(re.findall(r"Bash\(priors ([a-z-]+)", meta["allowed-tools"]))
                self.assertEqual(verbs, allowed)
        self.assertIn("--session ${CLAUDE_SESSION_ID}", (folder / "score.md").read_text(encoding="utf-8"))

    def test_plugin_version_matches_package(self):
        init = (REPO / "priors" / "__init__.py").read_text(encoding="utf-8")
        match = re.search(r'__version__\s*=\s*"([^"]+)"', init)
        self.assertIsNotNone(match)
        self.assertEqual(self.load("plugin.json")["version"], match.group(1))

    def test_marketplace_json(self):
        market = self.load("marketplace.json")
        self.assertEqual(market["name"], "priors-marketplace")
        self.assertTrue(market["owner"]["name"].strip())
        self.assertIsInstance(market["plugins"], list)
        names = [p["name"] for p in market["plugins"]]
        self.assertIn("priors", names)
        for plugin in market["plugins"]:
            self.assertTrue(plugin["description"].strip())
            source = plugin["source"]
            self.assertEqual(source, "./")
            self.assertTrue((REPO / source / ".claude-plugin" / "plugin.json").is_file())


if __name__ == "__main__":
    unittest.main()
