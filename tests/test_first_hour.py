"""The first hour, through the real CLI: where init sets up, what it says, and the small words that guide a newcomer."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import Keeper, run_priors
from priors.core.spelling import distance, nearest


def _git_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "src").mkdir()
    return root


def test_init_in_a_subfolder_of_a_git_work_tree_sets_up_at_its_top(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    r = run_priors(repo / "src", "init")
    assert r.code == 0, r
    assert (repo / ".priors" / "ledger.jsonl").is_file()
    assert not (repo / "src" / ".priors").exists()
    assert r.out == f"priors: set up {repo / '.priors'} — commit it with your repo\n"
    again = run_priors(repo / "src", "init")
    assert again.code == 0
    assert again.out == f"priors: already set up at {repo / '.priors'} — nothing to do\n"


def test_the_first_relevant_says_it_created_priors(tmp_path: Path) -> None:
    repo = _git_repo(tmp_path / "repo")
    k = Keeper(repo)
    r = k("relevant", "--ns", "review", "--scopes", k.scopes({"*": "0" * 12}))
    assert r.code == 0, r
    assert r.err == f"priors: set up {repo / '.priors'} for this first run — commit it with your repo\n"
    second = k("abort", "--run", r.json["run"])
    assert second.code == 0
    quiet = k("relevant", "--ns", "review", "--scopes", k.scopes({"*": "0" * 12}))
    assert quiet.code == 0 and quiet.err == ""


def test_did_you_mean_for_verbs_and_options(keeper: Keeper) -> None:
    assert "did you mean `status`?" in keeper.usage("staus")
    assert "did you mean --calls?" in keeper.usage("status", "--cals")
    assert "did you mean" not in keeper.usage("frobnicate")


def test_status_names_an_open_run_and_says_when_nothing_waits(keeper: Keeper) -> None:
    keeper.ok("init")
    run = keeper.open_run("review", {"*": "0" * 12})["run"]
    assert keeper.ok("status") == (
        "no priors yet — the open run's commit writes the first ones\n"
        f"{run} is open — `priors commit --run {run}` seals it, `priors abort --run {run}` drops it\n")
    keeper.propose(run, "review", {"type": "conclusion", "claim": "total() ignores discounts", "scope_ref": "*"})
    keeper.ok("commit", "--run", run)
    assert keeper.ok("status", "--calls") == (
        "review: 1 open · 0 fixed · 0 decided by you · 0 lessons locked\nNothing waits for you.\n")
    assert "lessons locked  run-start lessons you accepted" in keeper.ok("status", "--help")


def test_score_names_a_few_credited_lessons_and_counts_the_rest(keeper: Keeper) -> None:
    keeper.ok("init")
    for i in range(7):
        keeper.ok("add", "--ns", "dev", f"Lesson number {i}: run the narrowest test first, variant {i}.")
    run = keeper.open_run("dev", {})["run"]
    keeper.ok("commit", "--run", run)
    out = keeper.ok("score", "last", "success")
    assert out.startswith(f"{run} → success (credits 7 lessons: ")
    assert "and 2 more (`priors lessons` lists them))" in out
    assert out.count("P-") == 5


def test_spelling_distance_and_nearest() -> None:
    assert distance("staus", "status") == 1
    assert distance("sevrity", "severity") == 1
    assert distance("ab", "ba") == 1  # a swap of neighbours is one edit
    assert nearest("sevrity", ["scope_ref", "severity", "evidence"]) == "severity"
    assert nearest("zzz", ["status"]) is None
    assert nearest("lst", ["list", "last"]) == "list"  # ties go to the earlier choice
