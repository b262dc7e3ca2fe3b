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
