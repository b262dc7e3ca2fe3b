"""install.sh under a fake HOME: detection, idempotence, never touching what it did not install, --dry-run, --uninstall."""

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
SCRIPT = REPO / "install.sh"
MARK = ".installed-by-priors"
SKILLS = ("priors", "with-priors")

# harness config dir -> its skills dir, relative to HOME
HARNESSES = {
    ".claude": ".claude/skills",
    ".codex": ".codex/skills",
    ".agents": ".agents/skills",
    ".pi/agent": ".pi/agent/skills",
    ".openclaw": ".openclaw/skills",
}

MINIMAL_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "priors-keeper"
version = "0.1.0"
requires-python = ">=3.9"

[project.scripts]
priors = "priors.cli.main:run"

[tool.setuptools]
packages = ["priors", "priors.core", "priors.store", "priors.snapshot", "priors.cli"]
"""


def tree(root: Path):
    """Every path under root with its content (files), link target (links) or None (dirs)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_file():
                out[rel] = ("file", p.read_bytes())
            else:
                out[rel] = ("dir", None)
    return out


class InstallerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="priors-install-"))
        self.home = self.tmp / "home"
        self.home.mkdir()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_install(self, *args, shell="sh", script=SCRIPT, skip_package=True, extra_env=None, check=True):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRIORS_")}
        env["HOME"] = str(self.home)
        env["PRIORS_CLAUDE"] = str(self.tmp / "no-claude-here")  # never the real `claude`: tests stay hermetic
        env["PRIORS_PI"] = str(self.tmp / "no-pi-here")  # nor the real `pi`
        if skip_package:
            env["PRIORS_INSTALL_SKIP_PACKAGE"] = "1"
        env.update(extra_env or {})
        proc = subprocess.run(
            [shell, str(script), *args], env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
        )
        if check:
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        return proc

    def make_harnesses(self, *configs):
        for conf in configs:
            (self.home / conf).mkdir(parents=True, exist_ok=True)

    def assert_installed(self, skills_dir: Path):
        for name in SKILLS:
            dest = skills_dir / name
            self.assertTrue((dest / "SKILL.md").is_file(), dest)
            self.assertTrue((dest / MARK).is_file(), dest)
            self.assertEqual(
                (dest / "SKILL.md").read_bytes(), (REPO / "skills" / name / "SKILL.md").read_bytes()
            )
        self.assertTrue((skills_dir / "priors" / "references" / "candidates.md").is_file())


FAKE_CLAUDE = """#!/bin/sh
# a stand-in for `claude mcp get|add|remove`: logs its arguments, keeps one registration in a file
printf '%s\\n' "$*" >>"$FAKE_CLAUDE_LOG"
case "$1 $2" in
    "mcp get") [ -f "$FAKE_CLAUDE_STATE" ] ;;
    "mcp add") : >"$FAKE_CLAUDE_STATE" ;;
    "mcp remove") [ -f "$FAKE_CLAUDE_STATE" ] && rm -f "$FAKE_CLAUDE_STATE" ;;
    *) exit 1 ;;
esac
"""

CODEX_BLOCK = (
    "# >>> priors MCP server (installed-by-priors; ./install.sh --uninstall removes this block) >>>\n"
    "[mcp_servers.priors]\ncommand = \"priors\"\nargs = [\"mcp\"]\n# --- end of the priors MCP server block ---\n"
)


class Syntax(unittest.TestCase):
    def test_sh_n(self):
        for shell in ("sh", "dash", "bash"):
            if shell != "sh" and shutil.which(shell) is None:
                continue
            with self.subTest(shell=shell):
                proc = subprocess.run([shell, "-n", str(SCRIPT)], capture_output=True, text=True)
                self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_posix_shebang_and_no_bashisms(self):
        text = SCRIPT.read_text(encoding="utf-8")
        self.assertTrue(text.startswith("#!/bin/sh\n"))
        for bashism in ("[[", "function ", "local ", "echo -e", "$'", "<<<", "pushd", "source "):
            with self.subTest(bashism=bashism):
                self.assertNotIn(bashism, text)


class Detection(InstallerTest):
    def test_each_harness_alone(self):
        for conf, skills in HARNESSES.items():
            with self.subTest(harness=conf):
                shutil.rmtree(self.home)
                self.home.mkdir()
                self.make_harnesses(conf)
                out = self.run_install().stdout
                self.assert_installed(self.home / skills)
                for other_conf, other_skills in HARNESSES.items():
                    if other_conf != conf and not other_skills.startswith(conf + "/"):
                        self.assertFalse((self.home / other_conf).exists(), f"{other_conf} was created")
                self.assertIn("Not found, so nothing was installed for:", out)

    def test_all_harnesses(self):
        self.make_harnesses(*HARNESSES)
        out = self.run_install().stdout
        for skills in HARNESSES.values():
            self.assert_installed(self.home / skills)
        self.assertNotIn("Not found", out)

    def test_no_harness_installs_into_the_cross_client_folder(self):
        out = self.run_install().stdout
        self.assert_installed(self.home / ".agents/skills")
        self.assertIn("No agent harness was found", out)
        self.assertIn("the cross-client folder that Codex, Pi and OpenClaw read", out)
        for conf in (".claude", ".codex", ".pi", ".openclaw"):
            self.assertFalse((self.home / conf).exists(), f"{conf} was created")
        self.assertIn("Claude Code reads only ~/.claude/skills", out)
        self.assertIn(f"/plugin marketplace add {REPO.resolve()}", out)
        self.assertIn("/plugin install priors@priors-marketplace", out)
        self.assertIn("AGENTS-snippet.md", out)
        self.assertIn("system-prompt.md", out)
        self.assertIn("advisory", out)
        # a second run finds ~/.agents and keeps the same install
        first = tree(self.home)
        self.run_install()
        self.assertEqual(tree(self.home), first)

    def test_no_snippet_advice_for_a_harness_whose_skill_was_installed(self):
        # Codex reads ~/.codex/skills and ~/.agents/skills; without either it is told to paste the snippet.
        cases = {
            (): False, (".codex",): False, (".agents",): False, (".pi/agent",): True,
            (".claude",): True, (".claude", ".codex"): False, (".openclaw",): True,
        }
        for confs, codex_told_to_paste in cases.items():
            with self.subTest(harnesses=confs):
                shutil.rmtree(self.home)
                self.home.mkdir()
                self.make_harnesses(*confs)
                out = self.run_install().stdout
                snippet = [line for line in out.splitlines() if "AGENTS-snippet.md" in line]
                self.assertEqual(len(snippet), 1, out)
                self.assertEqual("Codex" in snippet[0], codex_told_to_paste, snippet[0])
                self.assertIn("another agent that reads AGENTS.md", snippet[0])
                claude_hint = "Claude Code reads only ~/.claude/skills" in out
                self.assertEqual(claude_hint, ".claude" not in confs)

    def test_kimi_without_claude_or_codex_gets_the_command(self):
        self.make_harnesses(".kimi")
        out = self.run_install().stdout
        self.assertIn(f"kimi --skills-dir {REPO.resolve()}/skills", out)


class Idempotence(InstallerTest):
    def test_rerun_changes_nothing(self):
        self.make_harnesses(".claude", ".pi/agent")
        self.run_install()
        first = tree(self.home)
        out = self.run_install().stdout
        self.assertEqual(tree(self.home), first)
        # nothing changed, and it says so (it said "updated" every time: newcomer pass 27o F5)
        self.assertIn("up to date: ~/.claude/skills/priors", out)
        self.assertNotIn("updated ~/.claude/skills/priors", out)

    def test_rerun_repairs_an_edited_install(self):
        self.make_harnesses(".claude")
        self.run_install()
        first = tree(self.home)
        (self.home / ".claude/skills/priors/SKILL.md").write_text("damaged\n")
        self.assertIn("updated ~/.claude/skills/priors", self.run_install().stdout)
        self.assertEqual(tree(self.home), first)

    def test_foreign_folders_are_left_alone(self):
        self.make_harnesses(".claude", ".codex")
        foreign = self.home / ".codex/skills/priors"
        foreign.mkdir(parents=True)
        (foreign / "SKILL.md").write_text("someone else's skill\n")
        out = self.run_install().stdout
        self.assertIn("left alone: ~/.codex/skills/priors exists and was not installed by priors", out)
        self.assertEqual((foreign / "SKILL.md").read_text(), "someone else's skill\n")
        self.assertFalse((foreign / MARK).exists())
        self.assert_installed(self.home / ".claude/skills")
        out = self.run_install("--uninstall").stdout
        self.assertEqual((foreign / "SKILL.md").read_text(), "someone else's skill\n")
        self.assertIn("left alone", out)

    def test_link_mode(self):
        self.make_harnesses(".agents")
        self.run_install("--link")
        dest = self.home / ".agents/skills/priors"
        self.assertTrue(dest.is_symlink())
        self.assertEqual(Path(os.readlink(dest)), (REPO / "skills" / "priors").resolve())
        self.run_install("--link")
        self.assertTrue(dest.is_symlink())
        self.run_install("--uninstall")
        self.assertFalse(dest.exists() or dest.is_symlink())
        self.assertTrue((REPO / "skills" / "priors" / "SKILL.md").is_file(), "uninstall must not follow the link")
        self.assertFalse((REPO / "skills" / "priors" / MARK).exists())


# Lines that report an action as done (or under way); a dry run must not print any of them.
DONE_RE = re.compile(
    r"^\s*(installed|updated|wrote|removed|created|creating|installing|skipped)\b"
    r"|\b(pip is installing|pipx is installing|pip skipped|Done\b|skills go to the cross-client|nothing was installed)"
)


class DryRunAndUninstall(InstallerTest):
    def assert_conditional(self, out):
        lines = out.splitlines()
        self.assertEqual(lines[0], "Dry run: nothing will be changed.")
        self.assertTrue(lines[-1].startswith("Dry run finished: nothing was"), lines[-1])
        for line in lines[1:-1]:
            self.assertIsNone(DONE_RE.search(line), f"a dry run spoke as if it acted: {line!r}")
        self.assertIn("would", out)

    def test_dry_run_speaks_in_the_conditional(self):
        for confs in ((), tuple(HARNESSES)):  # none, and every one (each alone: Detection)
            with self.subTest(harnesses=confs):
                shutil.rmtree(self.home)
                self.home.mkdir()
                self.make_harnesses(*confs)
                before = tree(self.home)
                for args, env in (
                    (("--dry-run",), {}),
                    (("--dry-run",), {"PRIORS_INSTALL_NO_PIPX": "1"}),
                    (("--dry-run", "--link"), {}),
                ):
                    out = self.run_install(*args, skip_package="PRIORS_INSTALL_NO_PIPX" not in env, extra_env=env).stdout
                    self.assert_conditional(out)
                    self.assertEqual(tree(self.home), before)
                self.run_install()
                installed = tree(self.home)
                for args in (("--dry-run",), ("--uninstall", "--dry-run")):
                    out = self.run_install(*args).stdout
                    self.assert_conditional(out)
                    self.assertEqual(tree(self.home), installed)

    def test_dry_run_without_harness_says_where_the_skills_would_go(self):
        out = self.run_install("--dry-run").stdout
        self.assertIn("so the skills would go to the cross-client folder", out)
        self.assertIn("would install ~/.agents/skills/priors", out)
        self.assertEqual(tree(self.home), {})

    def test_dry_run_changes_nothing(self):
        self.make_harnesses(*HARNESSES)
        before = tree(self.home)
        out = self.run_install("--dry-run").stdout
        self.assertEqual(tree(self.home), before)
        self.assertIn("would install ~/.claude/skills/priors", out)
        out = self.run_install("--dry-run", skip_package=False, extra_env={"PRIORS_INSTALL_NO_PIPX": "1"}).stdout
        self.assertEqual(tree(self.home), before)
        self.assertIn("would", out)

    def test_dry_run_uninstall_changes_nothing(self):
        self.make_harnesses(".claude")
        self.run_install()
        before = tree(self.home)
        out = self.run_install("--uninstall", "--dry-run").stdout
        self.assertEqual(tree(self.home), before)
        self.assertIn("would remove ~/.claude/skills/priors", out)

    def test_uninstall_removes_only_ours(self):
        self.make_harnesses(*HARNESSES)
        mine = self.home / ".claude/skills/my-own-skill"
        mine.mkdir(parents=True)
        (mine / "SKILL.md").write_text("mine\n")
        before = tree(self.home)
        self.run_install()
        self.run_install("--uninstall")
        self.assertEqual(tree(self.home), before)
        for skills in HARNESSES.values():
            for name in SKILLS:
                self.assertFalse((self.home / skills / name).exists())
        self.assertEqual((mine / "SKILL.md").read_text(), "mine\n")
        self.run_install("--uninstall")  # a second uninstall is harmless

    def test_uninstall_removes_the_folders_it_created_when_empty(self):
        self.run_install()  # no harness: creates ~/.agents/skills (and its own records)
        self.assertTrue((self.home / ".agents/skills/priors").is_dir())
        out = self.run_install("--uninstall").stdout
        self.assertEqual(tree(self.home), {})
        self.assertIn("removed the empty folder ~/.agents/skills (install.sh created it)", out)
        self.assertIn("removed the empty folder ~/.agents (install.sh created it)", out)

    def test_uninstall_keeps_folders_it_did_not_create_or_that_hold_other_things(self):
        self.make_harnesses(".claude", ".codex/skills", ".pi/agent")
        self.run_install()
        other = self.home / ".claude/skills/someone-elses"
        other.mkdir()
        out = self.run_install("--uninstall").stdout
        self.assertEqual(
            tree(self.home),
            {
                ".claude": ("dir", None), ".claude/skills": ("dir", None), ".claude/skills/someone-elses": ("dir", None),
                ".codex": ("dir", None), ".codex/skills": ("dir", None),  # existed before: kept, though empty
                ".pi": ("dir", None), ".pi/agent": ("dir", None),  # ~/.pi/agent/skills was ours and empty: gone
            },
        )
        self.assertIn("left alone: ~/.claude/skills (install.sh created it, but it holds other things now)", out)
        self.assertIn("removed the empty folder ~/.pi/agent/skills", out)

    def test_unknown_option(self):
        proc = self.run_install("--frobnicate", check=False)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("unknown option", proc.stderr)


class PythonCheck(InstallerTest):
    def test_old_python_is_refused_clearly(self):
        fake = self.tmp / "python3.8"
        fake.write_text(
            "#!/bin/sh\n"
            'case "$*" in *"(3, 9)"*) exit 1 ;; *version_info*) echo 3.8 ;; esac\n'
            "exit 0\n"
        )
        fake.chmod(0o755)
        self.make_harnesses(".claude")
        proc = self.run_install(extra_env={"PRIORS_PYTHON": str(fake)}, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("priors needs Python 3.9 or newer", proc.stdout)
        self.assertIn("Python 3.8", proc.stdout)
        self.assertEqual(tree(self.home), {".claude": ("dir", None)})

    def test_missing_python_is_refused_clearly(self):
        proc = self.run_install(extra_env={"PRIORS_PYTHON": str(self.tmp / "no-such-python")}, check=False)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("priors needs Python 3.9 or newer", proc.stdout)
        self.assertIn("was not found", proc.stdout)


def copy_checkout(dest: Path, pyproject: bool) -> Path:
    """A copy of the checkout, with or without packaging metadata."""
    dest.mkdir(parents=True)
    for name in ("priors", "skills", "adapters"):
        # not node_modules: the Pi adapter's dev dependencies (.ci/run installs them) are no part of a clone
        shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
    shutil.copy2(REPO / "install.sh", dest / "install.sh")
    for meta in ("pyproject.toml", "setup.py", "setup.cfg", "README.md", "LICENSE"):
        if pyproject and (REPO / meta).exists():
            shutil.copy2(REPO / meta, dest / meta)
    if pyproject and not (dest / "pyproject.toml").exists() and not (dest / "setup.py").exists():
        (dest / "pyproject.toml").write_text(MINIMAL_PYPROJECT)
    return dest


class Package(InstallerTest):
    def launcher_version(self, cwd: Path):
        proc = subprocess.run(
            [str(self.home / ".local/bin/priors"), "--version"],
            capture_output=True, text=True, cwd=str(cwd), env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"^priors \d")

    def test_checkout_without_metadata_gets_a_source_launcher(self):
        repo = copy_checkout(self.tmp / "repo", pyproject=False)
        self.run_install(script=repo / "install.sh", skip_package=False, extra_env={"PRIORS_INSTALL_NO_PIPX": "1"})
        self.launcher_version(self.tmp)
        first = tree(self.home)
        self.run_install(script=repo / "install.sh", skip_package=False, extra_env={"PRIORS_INSTALL_NO_PIPX": "1"})
        self.assertEqual(tree(self.home), first)
        self.run_install("--uninstall", script=repo / "install.sh")
        self.assertFalse((self.home / ".local/bin/priors").exists())

    def test_foreign_launcher_is_left_alone(self):
        repo = copy_checkout(self.tmp / "repo", pyproject=False)
        bin_dir = self.home / ".local/bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "priors").write_text("#!/bin/sh\necho other\n")
        out = self.run_install(
            script=repo / "install.sh", skip_package=False, extra_env={"PRIORS_INSTALL_NO_PIPX": "1"}
        ).stdout
        self.assertIn("left alone: ~/.local/bin/priors", out)
        self.run_install("--uninstall", script=repo / "install.sh")
        self.assertEqual((bin_dir / "priors").read_text(), "#!/bin/sh\necho other\n")

    def test_pipx_is_used_when_present(self):
        repo = copy_checkout(self.tmp / "repo", pyproject=True)
        fakebin = self.tmp / "fakebin"
        fakebin.mkdir()
        log = self.tmp / "pipx.log"
        (fakebin / "pipx").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexit 0\n')
        (fakebin / "pipx").chmod(0o755)
        env = {"PATH": f"{fakebin}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
        self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env)
        calls = log.read_text().splitlines()
        self.assertTrue(any(c.startswith("install --force --python ") and c.endswith(str(repo.resolve())) for c in calls), calls)
        self.assertFalse((self.home / ".local/bin/priors").exists())
        self.assertFalse(any(c.split()[-1] == "priors" for c in calls if c.startswith("install")), calls)
        out = self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env).stdout
        self.assertEqual(log.read_text().splitlines(), calls, "a re-run from unchanged sources ran pipx again")
        self.assertIn("priors-keeper 0.1.0 from this checkout is already installed", out)
        self.run_install("--uninstall", script=repo / "install.sh", extra_env=env)
        self.assertIn("uninstall priors-keeper", log.read_text().splitlines())
        self.assertFalse((self.home / ".local/share/priors").exists())

    def fake_venv(self):
        """A virtual environment whose python logs pip runs (printing a marker while 'pip works') and passes probes."""
        data = self.home / ".local/share/priors"
        (data / "venv/bin").mkdir(parents=True)
        (data / MARK).write_text("")
        log = self.tmp / "pip.log"
        py = data / "venv/bin/python"
        py.write_text(
            "#!/bin/sh\n"
            f'if [ "$1" = -m ] && [ "$2" = pip ]; then echo "$*" >> "{log}"; echo PIP-IS-RUNNING; exit 0; fi\n'
            "exit 0\n"
        )
        py.chmod(0o755)
        return log

    def test_rerun_from_unchanged_sources_skips_pip_and_says_so(self):
        repo = copy_checkout(self.tmp / "repo", pyproject=True)
        log = self.fake_venv()
        env = {"PRIORS_INSTALL_NO_PIPX": "1"}
        out = self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env).stdout
        self.assertEqual(len(log.read_text().splitlines()), 1, out)
        self.assertIn("--force-reinstall --no-deps " + str(repo.resolve()), log.read_text())
        lines = out.splitlines()
        progress = lines.index(f"  pip is installing priors-keeper 0.1.0 from {repo.resolve()} (this takes 10–20 seconds)…")
        self.assertLess(progress, lines.index("PIP-IS-RUNNING"), "the progress line comes before pip works")
        first = tree(self.home)

        out = self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env).stdout
        self.assertEqual(len(log.read_text().splitlines()), 1, "a re-run from unchanged sources ran pip again")
        self.assertIn("priors-keeper 0.1.0 from this checkout is already installed and its sources are unchanged; pip skipped",
                      out)
        self.assertNotIn("pip is installing", out)
        self.assertEqual(tree(self.home), first)
        out = self.run_install("--dry-run", script=repo / "install.sh", skip_package=False, extra_env=env).stdout
        self.assertIn("pip would be skipped", out)

        with (repo / "priors" / "__init__.py").open("a", encoding="utf-8") as fh:
            fh.write("# changed\n")
        out = self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env).stdout
        self.assertEqual(len(log.read_text().splitlines()), 2, "changed sources must be installed again")
        self.assertIn("pip is installing", out)

        (self.home / ".local/bin/priors").unlink()  # a damaged install is repaired, not skipped
        self.run_install(script=repo / "install.sh", skip_package=False, extra_env=env)
        self.assertEqual(len(log.read_text().splitlines()), 3)
        self.assertTrue((self.home / ".local/bin/priors").is_file())

    def test_real_virtual_environment(self):
        if is_git_checkout():
            self.skipTest("FreshClone's test installs into a real virtual environment from a clone of this checkout")
        repo = copy_checkout(self.tmp / "repo", pyproject=True)
        proc = self.run_install(script=repo / "install.sh", skip_package=False, extra_env={"PRIORS_INSTALL_NO_PIPX": "1"})
        venv_python = self.home / ".local/share/priors/venv/bin/python"
        self.assertTrue(venv_python.exists(), proc.stdout)
        if "pip could not build the package" in proc.stdout:
            probe = subprocess.run(
                [str(venv_python), "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(self.tmp / "dl"), "setuptools"],
                capture_output=True, text=True, timeout=300,
            )
            if probe.returncode != 0:
                self.skipTest("pip cannot reach a package index from here (no network), so it cannot build the package")
            self.fail("pip could not build the package although the index is reachable:\n" + proc.stdout)
        imported = subprocess.run(
            [str(venv_python), "-c", "import priors, sys; sys.stdout.write(priors.__file__)"],
            capture_output=True, text=True, cwd=str(self.tmp),
        )
        self.assertEqual(imported.returncode, 0, imported.stderr)
        self.assertIn("site-packages", imported.stdout)
        self.launcher_version(self.tmp)
        self.run_install("--uninstall", script=repo / "install.sh")
        self.assertFalse((self.home / ".local/share/priors").exists())
        self.assertFalse((self.home / ".local/bin/priors").exists())


def is_git_checkout() -> bool:
    return shutil.which("git") is not None and (REPO / ".git").exists()


def readme_first_commands():
    """The commands of the README's first code block ("First run, then install"), comments dropped."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## First run, then install", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


class FreshClone(InstallerTest):
    """The README's first two commands, verbatim, in a fresh `git clone` of the committed tree, under a fake HOME."""

    def test_install_sh_is_committed_executable(self):
        if shutil.which("git") is None or not (REPO / ".git").exists():
            self.skipTest("not a git checkout")
        mode = subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-s", "install.sh"], capture_output=True, text=True, check=True
        ).stdout.split()[0]
        self.assertEqual(mode, "100755", "install.sh must be committed executable (git update-index --chmod=+x)")

    def test_readme_commands_work_in_a_fresh_clone(self):
        """…and the install is a real one: pip builds the package into a virtual environment under HOME
        (Package's test of that runs only where this one cannot: outside a git checkout)."""
        if not is_git_checkout():
            self.skipTest("not a git checkout")
        commands = readme_first_commands()
        self.assertEqual(commands, ["python3 -m priors demo", "./install.sh"])
        clone = self.tmp / "priors"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True, capture_output=True, timeout=120)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRIORS_")}
        env.update(HOME=str(self.home), PRIORS_INSTALL_NO_PIPX="1")  # pipx, if the machine has one, is not under HOME
        env.pop("PYTHONPATH", None)
        results = []
        for command in commands:
            proc = subprocess.run(
                command, shell=True, cwd=str(clone), env=env, capture_output=True, text=True, timeout=600,
                stdin=subprocess.DEVNULL,
            )
            if command == "./install.sh" and "pip could not build the package" in proc.stdout:
                if not package_index_reachable(self.tmp):
                    self.skipTest("pip cannot reach a package index from here (no network), so it cannot build the package")
            self.assertEqual(proc.returncode, 0, f"{command}\n{proc.stdout}\n{proc.stderr}")
            results.append(proc.stdout)
        demo, install = results
        imported = subprocess.run(  # the package pip built, not this checkout
            [str(self.home / ".local/share/priors/venv/bin/python"), "-c",
             "import priors, sys; sys.stdout.write(priors.__file__)"],
            capture_output=True, text=True, cwd=str(self.tmp), env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)},
        )
        self.assertEqual(imported.returncode, 0, imported.stderr)
        self.assertIn("site-packages", imported.stdout)
        self.assertIn("Everything settled still holds. Nothing new.", demo)
        self.assertIn("Done. Try it in a scratch folder: priors demo", install)
        # the command works from anywhere, and the skills landed in the cross-client folder
        launcher = self.home / ".local/bin/priors"
        proc = subprocess.run(
            [str(launcher), "--version"], capture_output=True, text=True, cwd=str(self.tmp),
            env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)},
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stdout, r"^priors \d")
        # run from a repository holding a `json/` of its own: never imported (newcomer pass 27aw)
        shadow = self.tmp / "shadowing"
        (shadow / "json").mkdir(parents=True)
        (shadow / "json" / "__init__.py").write_text('raise ImportError("the project json/ was imported")\n')
        proc = subprocess.run([str(launcher), "hash", "--text", "x"], capture_output=True, text=True, cwd=str(shadow),
                              env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)})
        self.assertEqual((proc.returncode, proc.stderr), (0, ""), proc.stderr)
        self.assert_installed(self.home / ".agents/skills")
        # and it all goes away again
        proc = subprocess.run(
            ["./install.sh", "--uninstall"], cwd=str(clone), env=env, capture_output=True, text=True, timeout=300
        )
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        # (tools that pip's build runs may leave their own dot-folders in HOME, e.g. ~/.rustup; not ours)
        ours = sorted(k for k in tree(self.home) if k.split("/")[0] in (".local", ".agents"))
        self.assertEqual(ours, [], proc.stdout)


if __name__ == "__main__":
    unittest.main()


class ClaudeHooks(InstallerTest):
    """`--hooks`: an idempotent, reversible JSON merge into ~/.claude/settings.json."""

    OTHER = {
        "model": "opus",
        "permissions": {"allow": ["Bash(git status)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo mine"}]}],
                  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello"}]}]},
    }

    def settings(self) -> Path:
        return self.home / ".claude" / "settings.json"

    def ours(self, obj):
        return [h["command"] for entries in obj.get("hooks", {}).values() for e in entries for h in e["hooks"]
                if "lessons_hook.py" in h["command"]]

    def test_merge_keeps_every_other_setting_and_is_reversible(self):
        import json

        self.make_harnesses(".claude")
        self.settings().write_text(json.dumps(self.OTHER, indent=4), encoding="utf-8")
        out = self.run_install("--hooks").stdout
        self.assertIn("added the SessionStart, UserPromptSubmit and Stop lesson hooks to ~/.claude/settings.json", out)
        got = json.loads(self.settings().read_text(encoding="utf-8"))
        script = self.home / ".local/share/priors/hooks/lessons_hook.py"
        self.assertEqual(script.read_bytes(), (REPO / "hooks" / "lessons_hook.py").read_bytes())
        self.assertEqual({k: got[k] for k in ("model", "permissions")}, {k: self.OTHER[k] for k in ("model", "permissions")})
        self.assertEqual(got["hooks"]["PreToolUse"], self.OTHER["hooks"]["PreToolUse"])
        self.assertEqual(got["hooks"]["SessionStart"][0], self.OTHER["hooks"]["SessionStart"][0])
        self.assertEqual(got["hooks"]["SessionStart"][1]["matcher"], "startup|resume|clear|compact")
        self.assertEqual(len(self.ours(got)), 3)
        for cmd in self.ours(got):
            self.assertIn(str(script), cmd)
            self.assertTrue(cmd.endswith(" || true"))
            self.assertTrue(cmd.startswith("python3 "), cmd)  # no interpreter pinned
        # the hook as Claude Code would run it: no keeper on PATH, no .priors/ — silent, exit 0
        cmd = got["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        proc = subprocess.run(["/bin/sh", "-c", cmd], input=b'{"prompt": "hi", "cwd": "/"}', capture_output=True,
                              env={"PATH": "/nonexistent", "HOME": str(self.home)}, timeout=60)
        self.assertEqual((proc.returncode, proc.stdout), (0, b""))
        # idempotent: a second run changes nothing
        before = self.settings().read_bytes()
        out = self.run_install("--hooks").stdout
        self.assertIn("the lesson hooks are already there", out)
        self.assertEqual(self.settings().read_bytes(), before)
        # --uninstall removes only ours
        out = self.run_install("--uninstall").stdout
        self.assertIn("removed the SessionStart, UserPromptSubmit and Stop lesson hooks from ~/.claude/settings.json", out)
        self.assertEqual(json.loads(self.settings().read_text(encoding="utf-8")), self.OTHER)
        self.assertFalse((self.home / ".local/share/priors").exists())

    def test_no_settings_file_yet_and_dry_run(self):
        import json

        self.make_harnesses(".claude")
        before = tree(self.home)
        out = self.run_install("--hooks", "--dry-run").stdout
        self.assertIn("would create ~/.claude/settings.json holding only the hooks", out)
        self.assertEqual(tree(self.home), before)
        self.run_install("--hooks")
        got = json.loads(self.settings().read_text(encoding="utf-8"))
        self.assertEqual(set(got), {"hooks"})
        self.assertEqual(set(got["hooks"]), {"SessionStart", "UserPromptSubmit", "Stop"})
        out = self.run_install("--uninstall", "--dry-run").stdout
        self.assertIn("would remove the SessionStart, UserPromptSubmit and Stop lesson hooks", out)
        self.assertEqual(len(self.ours(json.loads(self.settings().read_text(encoding="utf-8")))), 3)
        self.run_install("--uninstall")
        # the installer created the file and only its hooks were in it: it goes, no `{}` is left behind
        self.assertFalse(self.settings().exists())

    def test_hooks_in_a_home_without_claude_code_s_folder_bring_the_skills_too(self):
        """`--hooks` is for Claude Code: with no ~/.claude yet, the folder it makes gets the skills as well
        (else `priors doctor` would find Claude Code without its skills right after the README's steps)."""
        out = self.run_install("--hooks").stdout
        self.assertIn("Made ~/.claude for Claude Code (--hooks)", out)
        self.assert_installed(self.home / ".claude" / "skills")
        self.assertTrue(self.settings().is_file())

    def test_a_settings_file_the_installer_created_stays_when_the_person_added_to_it(self):
        import json

        self.make_harnesses(".claude")
        self.run_install("--hooks")
        got = json.loads(self.settings().read_text(encoding="utf-8"))
        got["model"] = "opus"
        self.settings().write_text(json.dumps(got), encoding="utf-8")
        self.run_install("--uninstall")
        self.assertEqual(json.loads(self.settings().read_text(encoding="utf-8")), {"model": "opus"})

    def test_the_hooks_run_the_launchers_full_path_with_no_pinned_interpreter(self):
        import json

        self.make_harnesses(".claude")
        # a launcher as install.sh writes it (its mark line), here one that answers like `priors lessons --inject`
        launcher = self.home / ".local" / "bin" / "priors"
        launcher.parent.mkdir(parents=True)
        launcher.write_text("#!/bin/sh\necho 'LESSON: run the narrow test first'\n# installed-by-priors\n",
                            encoding="utf-8")
        launcher.chmod(0o755)
        self.run_install("--hooks")
        got = json.loads(self.settings().read_text(encoding="utf-8"))
        for cmd in self.ours(got):
            self.assertTrue(cmd.startswith("python3 '"), cmd)  # the session's python3, not the installer's path
            self.assertIn(f" --keeper '{launcher}'", cmd)
        # a session whose PATH lacks ~/.local/bin still reaches the keeper through the full path
        cmd = got["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        proc = subprocess.run(["/bin/sh", "-c", cmd], input=b'{"prompt": "fix the test", "cwd": "/"}',
                              capture_output=True, env={"PATH": "/usr/bin:/bin", "HOME": str(self.home)}, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out = json.loads(proc.stdout)
        self.assertEqual(out["hookSpecificOutput"]["additionalContext"], "LESSON: run the narrow test first")

    def test_malformed_settings_are_refused_unchanged(self):
        self.make_harnesses(".claude")
        for text in ("{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"SessionStart": {}}}'):
            with self.subTest(text=text):
                self.settings().write_text(text, encoding="utf-8")
                proc = self.run_install("--hooks", check=False)
                self.assertEqual(proc.returncode, 1, proc.stdout)
                self.assertIn("left alone: ", proc.stdout)
                self.assertIn("settings.json", proc.stdout)
                self.assertEqual(self.settings().read_text(encoding="utf-8"), text)
                proc = self.run_install("--uninstall", check=False)
                self.assertEqual(proc.returncode, 1, proc.stdout)
                self.assertEqual(self.settings().read_text(encoding="utf-8"), text)


class PiExtension(InstallerTest):
    def test_installed_when_pi_is_present_and_removed_again(self):
        self.make_harnesses(".pi/agent")
        before = tree(self.home)
        out = self.run_install().stdout
        ext = self.home / ".pi/agent/extensions/priors"
        self.assertIn("installed ~/.pi/agent/extensions/priors", out)
        for name in ("index.ts", "words.ts", "package.json"):
            self.assertEqual((ext / name).read_bytes(), (REPO / "adapters" / "pi" / name).read_bytes())
        self.assertTrue((ext / MARK).is_file())
        self.assertIn("updated ~/.pi/agent/extensions/priors", self.run_install().stdout)
        self.run_install("--uninstall")
        self.assertEqual(tree(self.home), before)

    def test_installed_when_the_pi_command_exists_before_its_folder_does(self):
        fake = self.tmp / "bin" / "pi"
        fake.parent.mkdir()
        fake.write_text("#!/bin/sh\nexit 0\n")
        fake.chmod(0o755)
        before = tree(self.home)
        out = self.run_install(extra_env={"PRIORS_PI": str(fake)}).stdout
        self.assertIn("the pi command is here but ~/.pi/agent is not yet; creating it", out)
        self.assertIn("installed ~/.pi/agent/extensions/priors", out)
        self.assertTrue((self.home / ".pi/agent/extensions/priors/index.ts").is_file())
        self.run_install("--uninstall", extra_env={"PRIORS_PI": str(fake)})
        self.assertEqual(tree(self.home), before)  # the folders it made are gone again

    def test_says_so_when_pi_is_not_there(self):
        out = self.run_install().stdout
        self.assertIn("Pi extension: skipped — no pi command on PATH and no ~/.pi/agent", out)
        self.assertFalse((self.home / ".pi").exists())

    def test_never_touches_an_extension_it_did_not_install(self):
        self.make_harnesses(".pi/agent/extensions/priors")
        mine = self.home / ".pi/agent/extensions/priors/index.ts"
        mine.write_text("// mine\n")
        out = self.run_install().stdout
        self.assertIn("left alone: ~/.pi/agent/extensions/priors exists and was not installed by priors", out)
        self.run_install("--uninstall")
        self.assertEqual(mine.read_text(), "// mine\n")


class McpRegistration(InstallerTest):
    """The MCP server is registered where a harness reads MCP config and it is safe; else the snippet is printed."""

    def fake_claude(self, registered: bool = False) -> dict:
        script = self.tmp / "bin" / "claude"
        script.parent.mkdir(exist_ok=True)
        script.write_text(FAKE_CLAUDE)
        script.chmod(0o755)
        state = self.tmp / "claude-has-priors"
        if registered:
            state.write_text("")
        return {"PRIORS_CLAUDE": str(script), "FAKE_CLAUDE_LOG": str(self.tmp / "claude-calls"),
                "FAKE_CLAUDE_STATE": str(state)}

    def claude_calls(self) -> list:
        log = self.tmp / "claude-calls"
        return log.read_text().splitlines() if log.exists() else []

    def test_claude_code_is_registered_through_its_own_command_and_unregistered_on_uninstall(self):
        self.make_harnesses(".claude")
        env = self.fake_claude()
        before = tree(self.home)
        out = self.run_install(extra_env=env).stdout
        self.assertIn("Claude Code: registered the server (claude mcp add --scope user priors -- priors mcp)", out)
        self.assertEqual(self.claude_calls(), ["mcp get priors", "mcp add --scope user priors -- priors mcp"])
        out = self.run_install(extra_env=env).stdout  # a re-run sees it and adds nothing
        self.assertIn("Claude Code: the server priors is registered", out)
        self.assertEqual(self.claude_calls()[2:], ["mcp get priors"])
        out = self.run_install("--uninstall", "--dry-run", extra_env=env).stdout
        self.assertIn("would run: claude mcp remove --scope user priors", out)
        out = self.run_install("--uninstall", extra_env=env).stdout
        self.assertIn("removed the Claude Code registration", out)
        self.assertEqual(self.claude_calls()[-1], "mcp remove --scope user priors")
        self.assertFalse((self.tmp / "claude-has-priors").exists())
        self.assertEqual(tree(self.home), before)

    def test_the_launcher_is_registered_by_its_full_path_when_there_is_one(self):
        self.make_harnesses(".claude", ".codex")
        launcher = self.home / ".local" / "bin" / "priors"
        launcher.parent.mkdir(parents=True)
        launcher.write_text("#!/bin/sh\n")
        self.run_install(extra_env=self.fake_claude())
        self.assertEqual(self.claude_calls()[-1], f"mcp add --scope user priors -- {launcher} mcp")
        self.assertIn(f'command = "{launcher}"', (self.home / ".codex" / "config.toml").read_text())

    def test_a_claude_server_named_priors_that_is_not_ours_is_left_alone(self):
        self.make_harnesses(".claude")
        env = self.fake_claude(registered=True)
        out = self.run_install(extra_env=env).stdout
        self.assertIn("left alone: it already has an MCP server named priors that install.sh did not add", out)
        self.run_install("--uninstall", extra_env=env)
        self.assertEqual(self.claude_calls(), ["mcp get priors"])  # never added, never removed
        self.assertTrue((self.tmp / "claude-has-priors").exists())

    def test_without_the_claude_command_the_exact_command_is_printed(self):
        self.make_harnesses(".claude")
        out = self.run_install().stdout
        self.assertIn("Claude Code: the claude command is not on PATH; register the server with:", out)
        self.assertIn("    claude mcp add --scope user priors -- priors mcp", out)
        self.assertIn('{"mcpServers": {"priors": {"command": "priors", "args": ["mcp"]}}}', out)
        out = self.run_install("--dry-run", extra_env=self.fake_claude()).stdout
        self.assertIn("Claude Code: would run: claude mcp add --scope user priors -- priors mcp", out)
        self.assertEqual(self.claude_calls(), ["mcp get priors"])

    def test_codex_gets_a_marked_block_in_a_config_it_did_not_have(self):
        self.make_harnesses(".codex")
        before = tree(self.home)
        out = self.run_install("--dry-run").stdout
        self.assertIn('would add [mcp_servers.priors] (command "priors") to ~/.codex/config.toml', out)
        self.assertEqual(tree(self.home), before)
        out = self.run_install().stdout
        self.assertIn("Codex: registered the server in ~/.codex/config.toml", out)
        conf = self.home / ".codex" / "config.toml"
        self.assertEqual(conf.read_text(), CODEX_BLOCK)
        if sys.version_info >= (3, 11):
            import tomllib

            self.assertEqual(tomllib.loads(conf.read_text())["mcp_servers"]["priors"],
                             {"command": "priors", "args": ["mcp"]})
        installed = tree(self.home)
        out = self.run_install().stdout
        self.assertIn("Codex: the server priors is registered in ~/.codex/config.toml", out)
        self.assertEqual(tree(self.home), installed)
        out = self.run_install("--uninstall").stdout
        self.assertIn("removed ~/.codex/config.toml (install.sh created it for the server)", out)
        self.assertEqual(tree(self.home), before)

    def test_an_existing_codex_config_keeps_its_bytes_and_permissions(self):
        self.make_harnesses(".codex")
        conf = self.home / ".codex" / "config.toml"
        mine = 'model = "o4"\n\n[mcp_servers.other]\ncommand = "other"\nenv = { "TOKEN" = "x" }\n'
        conf.write_text(mine)
        conf.chmod(0o600)
        self.run_install()
        self.assertEqual(conf.read_text(), mine + CODEX_BLOCK)
        self.assertEqual(conf.stat().st_mode & 0o777, 0o600)
        self.run_install("--uninstall")
        self.assertEqual(conf.read_text(), mine)
        self.assertEqual(conf.stat().st_mode & 0o777, 0o600)

    def test_a_codex_config_that_names_priors_or_would_break_is_left_alone(self):
        self.make_harnesses(".codex")
        conf = self.home / ".codex" / "config.toml"
        cases = ['[mcp_servers.priors]\ncommand = "/opt/priors"\nargs = ["mcp"]\n',
                 'mcp_servers = { other = { command = "x" } }\n']
        if sys.version_info >= (3, 11):
            cases.append("[[broken\n")  # not TOML today: appending cannot make it so
        for text in cases:
            with self.subTest(config=text):
                conf.write_text(text)
                out = self.run_install().stdout
                self.assertIn("Codex: left alone: ~/.codex/config.toml", out)
                self.assertIn('    command = "priors"', out)
                self.assertEqual(conf.read_text(), text)
                self.run_install("--uninstall")
                self.assertEqual(conf.read_text(), text)

    def test_the_snippets_name_the_launcher_by_its_full_path_when_its_folder_is_not_on_path(self):
        """A snippet that says `priors mcp` registers a command the client cannot find when ~/.local/bin
        is not on PATH: it names the launcher then, and stays `priors` when the folder is on PATH."""
        self.make_harnesses(".claude", ".codex")
        launcher = self.home / ".local" / "bin" / "priors"
        launcher.parent.mkdir(parents=True)
        launcher.write_text("#!/bin/sh\n")
        base = dict(self.fake_claude(), PRIORS_INSTALL_NO_MCP="1")
        out = self.run_install(extra_env=dict(base, PATH="/usr/bin:/bin")).stdout
        self.assertIn(f"    claude mcp add --scope user priors -- {launcher} mcp", out)
        self.assertIn(f'    command = "{launcher}"', out)
        self.assertIn(f'    {{"mcpServers": {{"priors": {{"command": "{launcher}", "args": ["mcp"]}}}}}}', out)
        out = self.run_install(extra_env=dict(base, PATH=f"{launcher.parent}:/usr/bin:/bin")).stdout
        self.assertIn("    claude mcp add --scope user priors -- priors mcp", out)
        self.assertIn('    command = "priors"', out)
        self.assertIn('    {"mcpServers": {"priors": {"command": "priors", "args": ["mcp"]}}}', out)

    def test_no_mcp_registers_nothing_and_prints_the_snippets(self):
        self.make_harnesses(".claude", ".codex")
        env = dict(self.fake_claude(), PRIORS_INSTALL_NO_MCP="1")
        out = self.run_install(extra_env=env).stdout
        self.assertFalse((self.home / ".codex" / "config.toml").exists())
        self.assertEqual(self.claude_calls(), [])
        self.assertIn("Claude Code: not registered (PRIORS_INSTALL_NO_MCP=1)", out)
        self.assertIn("Codex: not registered (PRIORS_INSTALL_NO_MCP=1)", out)
        self.assertIn("    [mcp_servers.priors]", out)
