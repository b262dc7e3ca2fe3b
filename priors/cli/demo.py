"""`priors demo`: three scripted runs in a scratch repository.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from priors.cli.main import main
from priors.core.errors import MachineError, UsageError

if TYPE_CHECKING:
    from priors.cli.args import Parsed
    from priors.cli.main import Context

CART_V1 = '''"""A tiny shopping cart."""


def total(items, discounts):
    return sum(price * qty for price, qty in items)


def add_item(items, price, qty):
    items.append((price, qty))
    return items


def checkout(items, pay):
    try:
        return pay(total(items, []))
    except Exception:
        return None
'''

CART_V2 = CART_V1.replace(
    "    return sum(price * qty for price, qty in items)\n",
    "    gross = sum(price * qty for price, qty in items)\n    return gross - sum(discounts)\n",
)

TAX = '''def rate():
    return 0.2
'''

FINDINGS_RUN1 = [
    {"type": "conclusion", "claim": "total() ignores the discounts it is given", "scope_ref": "cart.py#total",
     "severity": "major", "evidence": "cart.py:5"},
    {"type": "conclusion", "claim": "add_item() accepts negative quantities", "scope_ref": "cart.py#add_item",
     "severity": "major", "evidence": "cart.py:9"},
    {"type": "conclusion", "claim": "the tax rate is hard-coded", "scope_ref": "tax.py#rate", "severity": "minor"},
]
RERAISE = {"type": "conclusion", "claim": "the tax rate  is\nhard-coded", "scope_ref": "tax.py#rate",
           "severity": "minor"}
NEW_RUN2 = {"type": "conclusion", "claim": "checkout() swallows payment errors", "scope_ref": "cart.py#checkout",
            "severity": "gate", "evidence": "cart.py:16"}
DUP_RUN3 = {"type": "conclusion", "claim": "checkout()   swallows payment errors", "scope_ref": "cart.py#checkout",
            "severity": "gate"}

class Demo:
    def __init__(self, root: Path, out) -> None:
        self.root = root
        self.out = out

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def keeper(self, *args: str, show: Optional[str] = None) -> Tuple[int, str]:
        """Run a real keeper call in the demo repo and echo it like a terminal."""
        buf, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.root)
        try:
            with redirect_stdout(buf), redirect_stderr(err):
                code = main(["-C", str(self.root), *args])  # this repo, never one that encloses it
        finally:
            os.chdir(cwd)
        self.say(f"  $ priors {show or ' '.join(args)}")
        for line in (buf.getvalue() + err.getvalue()).splitlines():
            self.say(f"    {line}")
        if code == 2:
            raise UsageError(f"priors demo: the keeper rejected `priors {' '.join(args)}`: {err.getvalue().strip()}")
        if code == 3:
            raise MachineError(f"priors demo: `priors {' '.join(args)}` failed: {err.getvalue().strip()}")
        return code, buf.getvalue()

    def candidate(self, name: str, obj: Any) -> str:
        (self.root / name).write_text(json.dumps(obj, indent=1) + "\n", encoding="utf-8")
        return name

    def write(self, name: str, text: str) -> None:
        (self.root / name).write_text(text, encoding="utf-8")


def _open(d: Demo) -> Dict[str, Any]:
    _, out = d.keeper("relevant", "--ns", "code-review", "--snapshot")
    return json.loads(out)


def _story(d: Demo) -> List[str]:
    summaries: List[str] = []
    d.write("cart.py", CART_V1)
    d.write("tax.py", TAX)
    d.say("A scratch repo with cart.py and tax.py. A reviewer agent runs three times.")
    d.say()
    d.say("Run 1 — the first review. Nothing is known yet, so everything it finds is new.")
    d.keeper("init")
    rel = _open(d)
    run = rel["run"]
    names = []
    for i, cand in enumerate(FINDINGS_RUN1, 1):
        names.append(d.candidate(f"finding-{i}.json", cand))
    d.keeper("propose", "--run", run, "--ns", "code-review", *names)
    summaries.append(d.keeper("commit", "--run", run)[1])
    d.say()
    d.say("You read the findings and decide the tax rate stays as it is (a human call; it sticks):")
    d.keeper("decide", "P-0003", "wontfix", "--because", "the rate is fixed by law this year",
             show='decide P-0003 wontfix --because "the rate is fixed by law this year"')
    d.say()
    d.say("A developer fixes total(). add_item() and tax.py are untouched.")
    d.write("cart.py", CART_V2)
    d.say()
    d.say("Run 2 — the reviewer must first account for every old finding.")
    rel = _open(d)
    run = rel["run"]
    verdicts: List[str] = []
    for item in rel["verify"]:
        verdicts += [item["id"], "fixed" if item["scopeState"] == "changed" else "still-open"]
    d.keeper("disposition", "--run", run, *verdicts)
    d.say("  It raises the tax finding you settled once more. The keeper refuses the re-raise:")
    d.keeper("propose", "--run", run, "--ns", "code-review", d.candidate("reworded.json", RERAISE))
    d.say("  And it finds something genuinely new:")
    d.keeper("propose", "--run", run, "--ns", "code-review", d.candidate("new.json", NEW_RUN2))
    summaries.append(d.keeper("commit", "--run", run)[1])
    d.say()
    d.say("Run 3 — nothing changed since run 2.")
    rel = _open(d)
    run = rel["run"]
    verdicts = []
    for item in rel["verify"]:
        verdicts += [item["id"], "still-open"]
    d.keeper("disposition", "--run", run, *verdicts)
    d.say("  The model samples the same finding again in new words; the keeper knows it:")
    d.keeper("propose", "--run", run, "--ns", "code-review", d.candidate("again.json", DUP_RUN3))
    summaries.append(d.keeper("commit", "--run", run)[1])
    d.say()
    d.say("Where things stand, and what waits for you:")
    d.keeper("status", "--calls")
    return summaries


def cmd_demo(a: Parsed, ctx: Context) -> int:
    keep = a.get("keep")
    if keep is not None:
        root = Path(str(keep)).resolve()
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise UsageError(f"priors demo: --keep {keep}: must be an empty or new directory")
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="priors-demo-"))
    try:
        d = Demo(root, ctx.out)
        _story(d)
        d.say()
        if keep is not None:
            d.say(f"The repo is kept at {root} — try `priors -C {root} status --calls`,")
            d.say(f"open {root / '.priors' / 'PRIORS.md'}, or read {root / '.priors' / 'ledger.jsonl'}.")
        else:
            d.say("That was a scratch repo (now removed). `priors demo --keep DIR` leaves it to explore.")
        d.say("Next: `priors init --git` in your repo, and give your agent the skill (./install.sh).")
    finally:
        if keep is None:
            shutil.rmtree(str(root), ignore_errors=True)
    return 0
