"""Hostile file system: symlinks that point outside, a read-only .priors/, a lock that is a
directory, a full disk. The keeper refuses clearly (a message naming the problem, no traceback;
exit 2 for what is in the way under .priors/, exit 3 when the machine fails a write) and never
writes outside .priors/.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from conftest import REPO, Keeper

posix_only = pytest.mark.skipif(os.name == "nt", reason="symlinks and modes differ on Windows")


def snapshot(d: Path) -> Dict[str, bytes]:
    out = {}
    for dirpath, dirs, files in os.walk(str(d)):
        for name in files + dirs:
            p = Path(dirpath, name)
            out[str(p.relative_to(d))] = b"<dir>" if p.is_dir() else p.read_bytes()
    return out


@pytest.fixture
def world(tmp_path: Path):
    """A keeper with one committed run and an open one, plus a folder `outside` it must not touch."""
    root = tmp_path / "repo"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ledger.jsonl").write_text('{"t":"prior","id":"P-0009","ns":"web","claim":"foreign"}\n')
    (outside / "relevant.json").write_text("{}")
    k = Keeper(root)
    k.ok("init")
    k.write("a.txt", "alpha")
    rel = k.open_run("web", {"a.txt": k.hash("a.txt")})
    assert k.propose(rel["run"], "web", {"type": "conclusion", "claim": "alpha lacks a label", "scope_ref": "a.txt",
                                         "severity": "major"}).code == 0
    k.ok("commit", "--run", rel["run"])
    rel = k.open_run("web", {"a.txt": "000000000000"})
    return k, outside, rel["run"]


def assert_refused(r, *words: str) -> None:
    assert r.code == 2, r
    assert "Traceback" not in r.err
    for w in words:
        assert w in r.err, r


@posix_only
def test_symlinked_ledger_is_refused(world) -> None:
    k, outside, run = world
    k.ok("abort", "--run", run)
    led = k.root / ".priors" / "ledger.jsonl"
    led.unlink()
    led.symlink_to(outside / "ledger.jsonl")
    before = snapshot(outside)
    for argv in (["status"], ["decide", "P-0001", "keep"], ["render"], ["relevant", "--ns", "web"],
                 ["redact", "P-0001", "--because", "x"]):
        r = k(*argv)
        assert_refused(r, "symlink")
    assert snapshot(outside) == before
    assert led.is_symlink()


@posix_only
def test_symlinked_staging_folder_is_refused(world) -> None:
    k, outside, run = world
    rdir = k.root / ".priors" / "runs" / run
    shutil.rmtree(str(rdir))
    rdir.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    k.write("c.json", '{"type":"conclusion","claim":"x","scope_ref":"a.txt","severity":"major"}')
    for argv in (["disposition", "P-0001", "stale", "--run", run], ["propose", "c.json", "--run", run, "--ns", "web"],
                 ["commit", "--run", run]):
        r = k(*argv)
        assert r.code in (1, 2), r
        assert "Traceback" not in r.err
        if r.code == 2:
            assert "symlink" in r.err
    assert snapshot(outside) == before
    # abort drops the link itself, never what it points at
    r = k("abort", "--run", run)
    assert r.code in (0, 1, 2) and "Traceback" not in r.err
    assert snapshot(outside) == before


@posix_only
def test_symlinked_runs_folder_is_refused(world) -> None:
    k, outside, run = world
    k.ok("abort", "--run", run)
    runs = k.root / ".priors" / "runs"
    shutil.rmtree(str(runs))
    (outside / "run-009").mkdir()
    (outside / "run-009" / "keep.txt").write_text("mine")
    runs.symlink_to(outside, target_is_directory=True)
    before = snapshot(outside)
    r = k("relevant", "--ns", "web")
    assert_refused(r, "symlink")
    r = k("abort", "--run", "run-009")
    assert r.code in (1, 2) and "Traceback" not in r.err
    r = k("commit", "--run", "run-009")
    assert r.code in (1, 2) and "Traceback" not in r.err
    assert snapshot(outside) == before


@posix_only
def test_planted_temp_symlink_is_not_followed(world) -> None:
    """A temp name the keeper will use, planted as a link to a file outside: never truncated."""
    k, outside, run = world
    k.ok("abort", "--run", run)
    victim = outside / "precious.txt"
    victim.write_text("keep me")
    d = k.root / ".priors"
    for pid in range(os.getpid(), os.getpid() + 200):  # the child's pid is near ours
        link = d / f".ledger.jsonl.{pid}.tmp"
        if not os.path.lexists(str(link)):
            link.symlink_to(victim)
    k.ok("decide", "P-0001", "keep")
    assert victim.read_text() == "keep me"


@posix_only
def test_symlinked_priors_dir_is_refused(world, tmp_path: Path) -> None:
    k, outside, run = world
    k.ok("abort", "--run", run)
    real = tmp_path / "real-priors"
    shutil.move(str(k.root / ".priors"), str(real))
    (k.root / ".priors").symlink_to(real, target_is_directory=True)
    before = snapshot(real)
    for argv in (["decide", "P-0001", "keep"], ["status"], ["render"]):
        assert_refused(k(*argv), "symlink")
    assert snapshot(real) == before


def test_lock_that_is_a_directory(world) -> None:
    k, _outside, run = world
    (k.root / ".priors" / "keeper.lock").mkdir()
    before = k.ledger_bytes()
    r = k("commit", "--run", run)
    assert_refused(r, "keeper.lock", "directory")
    assert k.ledger_bytes() == before
    assert k("status").code == 0  # readers are not blocked


def _faulted(root: Path, argv, kind: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PRIORS_FAULT"] = f"all:{kind}"
    return subprocess.run([sys.executable, str(REPO / "tests" / "faultrun.py"), *argv], cwd=str(root),
                          capture_output=True, text=True, encoding="utf-8", env=env)


@pytest.mark.parametrize("kind", ["EROFS", "EACCES", "ENOSPC"])
def test_read_only_or_full_file_system(world, kind: str) -> None:
    """Every mutation fails (a read-only mount, no permission, a full disk): exit 3, the machine's
    failure and not the caller's, a clear message, nothing changed.

    Uses the fault injector so it also holds when tests run as root (where chmod does not bite).
    """
    k, _outside, run = world
    before = snapshot(k.root / ".priors")
    for argv in (["commit", "--run", run], ["disposition", "P-0001", "stale", "--run", run], ["abort", "--run", run],
                 ["render"], ["init"]):
        r = _faulted(k.root, argv, kind)
        assert r.returncode == 3, (argv, r.returncode, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.strip().startswith("priors"), r.stderr
        assert snapshot(k.root / ".priors") == before, argv
    r = _faulted(k.root, ["status"], kind)  # a reader still answers (the cache write just fails)
    assert r.returncode == 0, r.stderr


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root ignores file modes; test_read_only_or_full_file_system covers this via fault injection")
def test_read_only_priors_dir_by_mode(world) -> None:
    k, _outside, run = world
    d = k.root / ".priors"
    modes = {}
    for p in [d, *d.rglob("*")]:
        modes[p] = p.stat().st_mode
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        before = snapshot(d)
        r = k("commit", "--run", run)
        assert r.code == 3 and "Traceback" not in r.err, r
        assert snapshot(d) == before
    finally:
        for p, m in modes.items():
            p.chmod(m)


def test_an_output_folder_is_known_by_identity_not_spelling(tmp_path) -> None:
    """`output_target` refuses `.priors/` and `.git/` however a path spells them: on a disk that ignores
    case, `.PRIORS/ledger.jsonl` is the ledger. The check compares the folders themselves (device and
    inode), shown here with a spelling no string comparison matches."""
    from priors.store.paths import under_folder

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "x").mkdir()
    assert under_folder(tmp_path / "a" / "b", tmp_path / "x" / ".." / "a")
    assert under_folder(tmp_path / "a", tmp_path / "a")
    assert not under_folder(tmp_path / "x", tmp_path / "a")
    assert not under_folder(tmp_path / "a", tmp_path / "a" / "b")


def test_an_empty_output_path_is_one_usage_error_for_every_verb(world) -> None:
    """`-o ''` (an unset shell variable) is `Path('')`, the working directory: every verb that writes a
    file says the same thing — an empty path, give a file path or `-` — and writes nothing anywhere."""
    k, _, _ = world
    before = snapshot(k.root)
    for args in (["snapshot", "-o", ""], ["export", "-o", ""], ["report", "-o", ""], ["history", "--svg", ""]):
        assert "'': an empty path — give a file path, or - for stdout" in k.usage(*args), args
    assert snapshot(k.root) == before
