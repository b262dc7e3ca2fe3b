"""The distribution builds quietly — no setuptools warnings — as `priors-keeper` with an SPDX license and the `priors` command."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

from conftest import package_index_reachable

REPO = Path(__file__).resolve().parent.parent


class Wheel(unittest.TestCase):
    def test_builds_quietly_with_our_name_and_license(self):
        tmp = Path(tempfile.mkdtemp(prefix="priors-wheel-"))
        self.addCleanup(shutil.rmtree, tmp, True)
        src = tmp / "src"
        # a copy, so the build leaves nothing (build/, *.egg-info) in the checkout
        # (nor what a clone does not have: virtual environments, caches, the Pi adapter's node_modules)
        skip = (".git", ".ci-venv", ".venv", "__pycache__", "build", "*.egg-info", "node_modules", ".hypothesis",
                ".pytest_cache", ".mypy_cache", ".ruff_cache", ".work")
        shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(*skip))
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
             "-w", str(tmp / "dist"), str(src)],
            capture_output=True, text=True, timeout=600,
        )
        if proc.returncode != 0:
            if not package_index_reachable(tmp):
                self.skipTest("pip cannot reach a package index from here, so it cannot fetch setuptools>=77")
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        # this sandbox's pip configuration may name index folders that do not exist; those lines are pip's, not ours
        noise = [ln for ln in (proc.stdout + proc.stderr).splitlines()
                 if ln.strip() and "is ignored: it is neither a file nor a directory" not in ln]
        self.assertEqual(noise, [], "the build printed warnings")
        wheels = list((tmp / "dist").glob("*.whl"))
        self.assertEqual(len(wheels), 1)
        self.assertTrue(wheels[0].name.startswith("priors_keeper-"), wheels[0].name)
        with zipfile.ZipFile(wheels[0]) as whl:
            names = whl.namelist()
            meta = whl.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
            entry = whl.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        self.assertIn("Name: priors-keeper\n", meta)
        self.assertIn("License-Expression: MIT\n", meta)
        self.assertIn("priors = priors.cli.main:run", entry)
        self.assertIn("priors/__main__.py", names)
        sources = sorted(str(f.relative_to(REPO)).replace("\\", "/") for f in (REPO / "priors").rglob("*.py"))
        self.assertEqual([f for f in sources if f not in names], [], "modules the wheel leaves out")


class CiScript(unittest.TestCase):
    def test_ci_installs_quietly_and_runs_the_readme_command(self):
        lines = [ln for ln in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines() if ln and not ln.startswith("#")]
        installs = [ln for ln in lines if " pip install " in ln]
        self.assertEqual(len(installs), 2)
        for line in installs:
            self.assertIn("--quiet", line)
            self.assertNotRegex(line, r"\s-e\s|--editable", "an editable install makes setuptools warn")
        self.assertTrue(installs[-1].endswith('".[test]"'))
        self.assertEqual(lines[-1], "python -m pytest -q")
        self.assertIn("```sh\npython -m pytest -q\n```", (REPO / "README.md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    unittest.main()
