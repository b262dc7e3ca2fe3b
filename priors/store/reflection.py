"""`.priors/reflection/`: the packets `priors lessons --reflect` writes for the agent to read. They
are regenerable notes, so redaction deletes any that name the redacted prior rather than editing them.
Here, below `ops`, so that `redact` does not load the lessons verbs to clean them."""

from __future__ import annotations

import os

from priors.store.files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only, never evaluated: importing typing costs ~6 ms per CLI call
    from priors.store.paths import Paths

REFLECTION_DIR = "reflection"


def scrub_reflections(paths: Paths, pid: str) -> None:
    """Redaction: a reflection packet naming the prior is deleted (packets are regenerable notes). A
    `reflection` that is a symlink is left alone: what it leads to is not the keeper's to delete."""
    rdir = paths.dir / REFLECTION_DIR
    if rdir.is_symlink() or not rdir.is_dir():
        return
    needle = pid.encode("utf-8")
    for name in sorted(os.listdir(str(rdir))):
        path = rdir / name
        if path.is_file() and not path.is_symlink() and needle in (read_bytes(path) or b""):
            try:
                path.unlink()
            except OSError:
                pass
