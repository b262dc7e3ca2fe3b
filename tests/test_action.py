"""action.yml: a composite GitHub Action whose steps name real verbs and flags, and whose scripts work.

No YAML library is needed at runtime or in the test extra: the file is read with a few structural
rules (the subset of YAML it uses), and each step's `run:` script is executed here as a runner would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from conftest import package_index_reachable

REPO = Path(__file__).resolve().parent.parent
ACTION = REPO / "action.yml"
EXPR_RE = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def top_level_keys(text):
    return [m.group(1) for m in re.finditer(r"^([A-Za-z_][\w-]*):", text, re.M)]


def steps(text):
    """Each step under runs.steps as {"name", "shell", "env": {...}, "run"}."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == "steps:")
    out, cur, i = [], None, start + 1
    while i < len(lines):
        line = lines[i]
        if line.strip() and not line.startswith(" "):
            break
        stripped = line.strip()
        if stripped.startswith("- "):
            cur = {"env": {}}
            out.append(cur)
            stripped = stripped[2:]
        indent = len(line) - len(line.lstrip())
        key, sep, value = stripped.partition(":")
        if cur is not None and sep and key in ("name", "shell", "uses"):
            cur[key] = value.strip()
        elif cur is not None and key == "env" and not value.strip():
            i += 1
            while i < len(lines) and (len(lines[i]) - len(lines[i].lstrip())) > indent and lines[i].strip():
                k, _, v = lines[i].strip().partition(":")
                cur["env"][k] = v.strip()
                i += 1
            continue
        elif cur is not None and key == "run" and value.strip() == "|":
            body, i = [], i + 1
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                body.append(lines[i][indent + 2:])
                i += 1
            cur["run"] = "\n".join(body).rstrip() + "\n"
            continue
        i += 1
    return out


def keeper_verbs():
    out = subprocess.run([sys.executable, "-m", "priors", "--help"], capture_output=True, text=True, cwd=str(REPO)).stdout
    return set(re.findall(r"^  ([a-z][a-z-]+)\s", out, re.M))


def git(cwd, *args):
    return subprocess.run(
        ["git", *args], cwd=str(cwd), check=True, capture_output=True, text=True,
        env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
             "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"},
    ).stdout.strip()


class Structure(unittest.TestCase):
    def setUp(self):
        self.text = ACTION.read_text(encoding="utf-8")
        self.steps = steps(self.text)

    def test_a_composite_action(self):
        keys = top_level_keys(self.text)
        self.assertEqual(keys[:2], ["name", "description"])
        self.assertIn("inputs", keys)
        self.assertIn("runs", keys)
        self.assertRegex(self.text, r"(?m)^runs:\n  using: composite\n  steps:\n")
        self.assertEqual([s["name"] for s in self.steps], ["install the priors keeper", "the ledger is sound and only grew"])
        for step in self.steps:
            self.assertEqual(step["shell"], "bash")  # composite run steps must name their shell
            self.assertIn("run", step)
            self.assertNotIn("${{", step["run"], "expressions go through env:, never into the script text")

    def test_inputs_are_the_ones_used(self):
        declared = set(re.findall(r"(?m)^  ([a-z-]+):\n    description:", self.text))
        used = set(re.findall(r"\$\{\{\s*inputs\.([a-z-]+)\s*\}\}", self.text))
        self.assertEqual(declared, used)
        self.assertEqual(declared, {"since", "directory", "python"})

    def test_installs_from_the_actions_own_checkout(self):
        install = self.steps[0]
        self.assertEqual(install["env"]["PRIORS_ACTION_SOURCE"], "${{ github.action_path }}")
        self.assertIn('pip install --quiet --disable-pip-version-check "$PRIORS_ACTION_SOURCE"', install["run"])

    def test_commands_name_real_verbs_and_flags(self):
        verbs = keeper_verbs()
        self.assertIn("verify", verbs)
        verify_help = subprocess.run(
            [sys.executable, "-m", "priors", "verify", "--help"], capture_output=True, text=True, cwd=str(REPO)
        ).stdout
        calls = re.findall(r"\bpriors ([a-z-]+)((?: --?[a-z-]+)*)", "".join(s["run"] for s in self.steps))
        self.assertTrue(calls)
        for verb, flags in calls:
            with self.subTest(verb=verb):
                self.assertIn(verb, verbs | {"--version"} if verb else verbs)
                for flag in flags.split():
                    self.assertIn(flag, verify_help)
        self.assertIn('priors verify --since "$since"', self.steps[1]["run"])
        self.assertIn("GITHUB_ACTIONS=true", verify_help, "annotations under Actions are the keeper's, not the action's")

    def test_scripts_parse(self):
        for step in self.steps:
            with self.subTest(step=step["name"]):
                proc = subprocess.run(["bash", "-n"], input=step["run"], capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_yaml_when_a_parser_is_at_hand(self):
        try:
            import yaml  # not a dependency: only a cross-check where it happens to be installed
        except ImportError:
            self.skipTest("no YAML parser installed")
        data = yaml.safe_load(self.text)
        self.assertEqual(data["runs"]["using"], "composite")
        parsed = [{"name": s["name"], "shell": s["shell"], "env": s["env"], "run": s["run"]} for s in data["runs"]["steps"]]
        self.assertEqual(parsed, self.steps)


class VerifyStep(unittest.TestCase):
    """The second step's script, run as a runner would, against real ledgers in real git repositories."""

    def setUp(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        self.tmp = Path(tempfile.mkdtemp(prefix="priors-action-"))
        self.script = steps(ACTION.read_text(encoding="utf-8"))[1]["run"]
        shim = self.tmp / "bin"
        shim.mkdir()
        (shim / "priors").write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m priors "$@"\n')
        (shim / "priors").chmod(0o755)
        self.path = f"{shim}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        # origin: a bare repository; work: a clone with a ledger on main
        self.origin = self.tmp / "origin.git"
        git(self.tmp, "init", "--quiet", "--bare", "-b", "main", str(self.origin))
        self.work = self.tmp / "work"
        git(self.tmp, "clone", "--quiet", str(self.origin), str(self.work))
        git(self.work, "checkout", "--quiet", "-b", "main")
        self.priors("init")
        self.priors("add", "--ns", "dev", "Run the narrowest relevant test first.")
        self.base = self.commit("a ledger")
        git(self.work, "push", "--quiet", "origin", "main")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def priors(self, *args):
        subprocess.run(["priors", *args], cwd=str(self.work), check=True, capture_output=True,
                       env={**os.environ, "PATH": self.path})

    def commit(self, message):
        git(self.work, "add", "-A")
        git(self.work, "commit", "--quiet", "-m", message)
        return git(self.work, "rev-parse", "HEAD")

    def run_step(self, event, since="", base_ref="", before="", directory=".", cwd=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIORS_", "GITHUB_"))}
        env.update(
            PATH=self.path, GITHUB_ACTIONS="true", PRIORS_ACTION_SINCE=since, PRIORS_ACTION_DIR=directory,
            PRIORS_ACTION_EVENT=event, PRIORS_ACTION_BASE_REF=base_ref, PRIORS_ACTION_BEFORE=before,
        )
        return subprocess.run(["bash", "-c", self.script], cwd=str(cwd or self.work), env=env, capture_output=True, text=True)

    def test_push_that_only_appended_passes(self):
        self.priors("add", "--ns", "dev", "Read the failing test before the code.")
        self.commit("grew")
        proc = self.run_step("push", before=self.base)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"priors verify --since {self.base}", proc.stdout)

    def test_push_that_rewrote_history_fails_with_annotations(self):
        ledger = self.work / ".priors" / "ledger.jsonl"
        ledger.write_text(ledger.read_text(encoding="utf-8").replace("narrowest", "widest"), encoding="utf-8")
        self.priors("render")
        self.commit("rewrote a settled line")
        proc = self.run_step("push", before=self.base)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertRegex(proc.stdout, r"(?m)^::error file=\.priors/ledger\.jsonl,line=1,title=priors NOT_APPEND_ONLY::")

    def test_pull_request_compares_with_the_base_branch(self):
        git(self.work, "checkout", "--quiet", "-b", "feature")
        self.priors("add", "--ns", "dev", "Name the file in every finding.")
        self.commit("feature grew")
        git(self.work, "update-ref", "-d", "refs/remotes/origin/main")  # as after a shallow checkout
        proc = self.run_step("pull_request", base_ref="main")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("priors verify --since origin/main", proc.stdout)

    def test_a_shallow_checkout_is_deepened_when_the_change_merges_a_parallel_branch(self):
        """A merged branch's seal says what its run did not see (docs/ci.md), which verify traces to the merge
        commit: the step fetches the history a shallow checkout lacks, and only then."""
        ledger = self.work / ".priors" / "ledger.jsonl"
        head = self.base
        with ledger.open("a", encoding="utf-8") as fh:
            fh.write('{"action":"commit","ns":"dev","run":"run-009","summary":[],"t":"run","unseen":{"P-0001":"open"}}\n')
        self.priors("render")
        self.commit("a marked seal")
        git(self.work, "push", "--quiet", "origin", "main")
        ci = self.tmp / "ci"
        git(self.tmp, "clone", "--quiet", "--depth", "1", f"file://{self.origin}", str(ci))
        git(ci, "fetch", "--quiet", "--depth", "1", "origin", head)
        proc = self.run_step("push", before=head, cwd=ci)
        self.assertIn("fetching the history that shows the merge", proc.stdout)
        self.assertEqual(git(ci, "rev-parse", "--is-shallow-repository"), "false")
        self.assertIn("UNSEEN_UNFOUNDED", proc.stdout)  # (typed, not merged: named once traced)

    def test_new_branch_checks_soundness_only(self):
        proc = self.run_step("push", before="0" * 40)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn("::notice::a new branch", proc.stdout)
        self.assertIn("priors verify\n", proc.stdout)

    def test_explicit_since_and_unknown_revision(self):
        proc = self.run_step("workflow_dispatch", since="HEAD")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        proc = self.run_step("push", since="no-such-rev")
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn("::error::priors: cannot find the revision no-such-rev", proc.stdout)

    def test_directory_input(self):
        elsewhere = self.tmp / "elsewhere"
        elsewhere.mkdir()
        proc = self.run_step("workflow_dispatch", cwd=elsewhere)
        self.assertEqual(proc.returncode, 2, "no .priors/ there: a usage error")
        proc = self.run_step("push", before=self.base, directory=str(self.work), cwd=elsewhere)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(f"priors verify --since {self.base}", proc.stdout)


class InstallStep(unittest.TestCase):
    def test_installs_the_keeper_onto_the_path(self):
        tmp = Path(tempfile.mkdtemp(prefix="priors-action-install-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        script = steps(ACTION.read_text(encoding="utf-8"))[0]["run"]
        github_path = tmp / "github_path"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PRIORS_", "GITHUB_"))}
        env.update(
            PRIORS_ACTION_PYTHON=sys.executable, PRIORS_ACTION_SOURCE=str(REPO), RUNNER_TEMP=str(tmp),
            GITHUB_PATH=str(github_path),
        )
        proc = subprocess.run(["bash", "-c", script], cwd=str(tmp), env=env, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            if not package_index_reachable(tmp):
                self.skipTest("pip cannot reach a package index from here, so it cannot build the package")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertRegex(proc.stdout, r"(?m)^priors \d")
        bindir = github_path.read_text().strip()
        self.assertEqual(bindir, str(tmp / "priors-keeper-venv" / "bin"))
        self.assertTrue((Path(bindir) / "priors").is_file())


if __name__ == "__main__":
    unittest.main()
