"""The Pi extension (adapters/pi/): a real Pi package, type-checked with `tsc` against the published
@mariozechner/pi-coding-agent (the adapter's dev dependencies, installed by .ci/run), and run under
Node with a fake `pi` object (tests/pi_fake.mjs) against the real keeper. Skips, saying why, when
Node or the adapter's dev dependencies are not installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Keeper

ADAPTER = REPO / "adapters" / "pi"
NODE = shutil.which("node")
TSC = ADAPTER / "node_modules" / "typescript" / "bin" / "tsc"
PI_TYPES = ADAPTER / "node_modules" / "@mariozechner" / "pi-coding-agent" / "package.json"
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
needs_deps = pytest.mark.skipif(not (TSC.is_file() and PI_TYPES.is_file()),
                                reason="the adapter's dev dependencies are not installed (cd adapters/pi && npm install)")


def test_package_manifest_registers_the_extension():
    pkg = json.loads((ADAPTER / "package.json").read_text(encoding="utf-8"))
    assert pkg["pi"] == {"extensions": ["./index.ts"]}
    assert "pi-package" in pkg["keywords"]
    assert set(pkg["devDependencies"]) == {"@mariozechner/pi-coding-agent", "typescript", "@types/node"}
    assert "dependencies" not in pkg  # nothing to install at run time: types only, the keeper does the work
    source = (ADAPTER / "index.ts").read_text(encoding="utf-8")
    assert 'import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";' in source
    for verb in ('"lessons", "--inject"', '"score", "last"', '"decide"', '"status", "--calls"'):
        assert verb in source


@needs_node
@needs_deps
def test_type_checks_against_the_published_package():
    proc = subprocess.run([NODE, str(TSC), "-p", str(ADAPTER / "tsconfig.json")], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_node
@needs_deps
def test_runs_under_node_with_a_fake_pi(tmp_path: Path):
    k = Keeper(tmp_path / "repo")
    k.root.mkdir()
    k.ok("init")
    k.ok("add", "--ns", "dev", "--tag", "testing", "Run the narrowest relevant test before the full suite.")
    k.ok("add", "--ns", "dev", "The parser tests are flaky under load; rerun them once before debugging.")
    run = k.open_run("dev", {})["run"]
    for claim in ("Proposed lesson one.", "Proposed lesson two.", "Proposed lesson three."):
        assert k.propose(run, "dev", {"type": "calibration", "claim": claim}).code == 0
    k.ok("commit", "--run", run)
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([NODE, str(REPO / "tests" / "pi_fake.mjs"), str(ADAPTER), str(k.root), sys.executable,
                           "-m", "priors"], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
    assert k.ok("verify").startswith("ledger sound")
