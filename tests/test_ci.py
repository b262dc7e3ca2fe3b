"""The suite's parallel run is configured and installed: README's command runs every test on every core.

(That .ci/run runs exactly README's command is tests/test_packaging.py's.)"""

from __future__ import annotations

import re

import pytest

from conftest import REPO

pytestmark = pytest.mark.one_cache_mode


def test_the_test_extra_brings_what_the_suite_is_configured_with() -> None:
    toml = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^test = \[(.*)\]$", toml, re.M)
    assert extra is not None
    assert '"pytest-xdist' in extra.group(1)  # addopts says -n auto
    assert re.search(r'^addopts = ".*-n auto', toml, re.M)
    section = (REPO / "README.md").read_text(encoding="utf-8").split("\n## Tests\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    (command,) = [ln.strip() for ln in block.splitlines() if ln.strip()]
    args = command.split("pytest", 1)[1].split()
    assert not {"-k", "-m", "--deselect", "-x"} & set(args)  # every test runs


def test_ci_lints_and_type_checks_after_the_install_and_before_the_tests() -> None:
    """`.ci/run` runs ruff over the code and mypy over priors/ (both configured in pyproject.toml), quiet when
    clean: after the install that brings them, before pytest, so a finding fails the run."""
    lines = [ln for ln in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
             if ln and not ln.startswith("#")]
    installed = max(i for i, ln in enumerate(lines) if " pip install " in ln)
    ruff = lines.index("python -m ruff check --quiet priors tests bench")
    mypy = lines.index("python -m mypy --no-error-summary")
    tests = lines.index("python -m pytest -q")
    assert installed < ruff < tests and installed < mypy < tests
    assert lines.index("python -m compileall -q priors >/dev/null") < tests  # (the processes the tests start compile nothing)
    toml = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^test = \[(.*)\]$", toml, re.M)
    assert extra is not None and '"ruff' in extra.group(1) and '"mypy' in extra.group(1)
    assert "\n[tool.ruff.lint]\n" in toml
    mypy_section = toml.split("\n[tool.mypy]\n", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^files = \["priors"\]$', mypy_section, re.M)
    assert re.search(r'^python_version = "3\.9"$', mypy_section, re.M)  # requires-python's floor
