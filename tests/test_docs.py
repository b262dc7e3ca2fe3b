"""The docs and the keeper agree on every refusal code; the docs quote the keeper's fixed lines exactly."""

from __future__ import annotations

import re
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKILL = REPO / "skills" / "priors" / "SKILL.md"
STANDARD = REPO / "PRIORS.md"

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


if __name__ == "__main__":
    unittest.main()
