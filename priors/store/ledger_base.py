"""The ledger at a git revision beside the working ledger, as `verify` compares them (ops/verify.py): read
from git a block at a time next to the working file, neither ever held whole.

A change that only adds lines — the working ledger starts with the revision's, which is empty or ends
with its last line's newline: the change every verb makes — needs no more of the revision's ledger
than its length and its count of lines: every check of the change reads the lines it adds, from the
working file. Any other change (a person's redaction rewrites a line in place; a hand edit) is compared
line by line with both ledgers whole, as before (`Base.whole`): at 100k priors the two and their lines
held together were ~300 MB of the process, where a change that only grew holds neither.
"""

from __future__ import annotations

import os

from priors.core.errors import MachineError
from priors.store.files import check_inside, open_regular
from priors.store.git import committed_spec, ledger_spec_at, show_blocks, show_whole

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated
    from pathlib import Path
    from typing import Any, Iterable, Iterator, List, Optional


class Base:
    """The ledger at a revision (`spec` names it for git; None: it held none), as the working one compares with it:
    its length (`size`), its lines (`lines`, as `split_lines` counts them), whether the working ledger only grew
    from it (`grown`), and the working ledger's length when they were compared (`work_size`)."""

    __slots__ = ("root", "spec", "what", "size", "lines", "grown", "work_size")

    def __init__(self, root: Any, spec: Optional[str], what: str) -> None:
        self.root, self.spec, self.what = root, spec, what
        self.size = self.lines = self.work_size = 0
        self.grown = True

    def compare(self, blocks: Iterable[bytes], ledger: Path) -> None:
        """Read the revision's ledger (`blocks`) beside the working file `ledger`, the same length of each at a time."""
        check_inside(ledger)
        fd = open_regular(ledger)
        fh = os.fdopen(fd, "rb") if fd is not None else None
        try:
            same, last = True, b"\n"
            for block in blocks:
                self.size += len(block)
                self.lines += block.count(b"\n")
                last = block[-1:]
                if same:
                    same = fh is not None and fh.read(len(block)) == block
            self.work_size = os.fstat(fh.fileno()).st_size if fh is not None else 0
        except OSError as exc:
            raise MachineError(f"priors verify: cannot read {ledger}: {exc.strerror or exc}") from None
        finally:
            if fh is not None:
                fh.close()
        ends = last == b"\n"  # (or nothing was read: an empty ledger)
        self.lines += 0 if ends else 1
        self.grown = same and ends

    def whole(self) -> bytes:
        """The revision's ledger, whole (for a change that did more than add lines)."""
        return show_whole(self.root, self.spec, self.what) if self.spec is not None else b""


def base_at(root: Any, rev: str, ledger: Path) -> Base:
    """The ledger at `rev` beside the working `ledger` (`git_show`'s errors, as it would raise them)."""
    spec = ledger_spec_at(root, rev)
    base = Base(root, spec, f"the ledger at {rev}")
    base.compare(show_blocks(root, spec, base.what) if spec is not None else (), ledger)
    return base


def committed_base(root: Any, ledger: Path) -> Optional[Base]:
    """The ledger HEAD holds beside the working `ledger`; None when there is nothing to compare (`committed_ledger`)."""
    spec = committed_spec(root)
    if spec is None:
        return None
    base = Base(root, spec, "the ledger at HEAD")
    failed: List[bool] = []

    def blocks() -> Iterator[bytes]:
        try:
            yield from show_blocks(root, spec, base.what)
        except MachineError:
            failed.append(True)  # (git could not read it: nothing to compare, as `committed_ledger` says)

    base.compare(blocks(), ledger)
    return None if failed else base
