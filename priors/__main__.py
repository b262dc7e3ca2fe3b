"""`python -m priors` — the same CLI as the `priors` console script.

`-m` puts the current folder first on the import path, and the current folder is the repository under
review: its `json/` or `hashlib.py` was imported in place of the standard library's, so a broken or
hostile module there ran inside the keeper (newcomer pass 27aw). `priors` itself is imported by now — its
own modules come from its package folder, whatever the path says — so every entry naming the current
folder is dropped before anything else is imported: the one `-m` put first, an empty part of
PYTHONPATH (`a::b`, a trailing `:`), which Python reads as the current folder too. Unless the current
folder is the standard library's own. What Python imports at start-up, before this runs (a
`sitecustomize.py` there, under an empty PYTHONPATH part), it cannot stop: install.sh's launcher, the hooks'
fallback and the merge driver start Python isolated (`-I`); the console script never has the folder."""

import os
import sys

try:
    _HERE = os.path.realpath(os.getcwd())
except OSError:  # (no current folder: nothing to import from it either; main says what is wrong)
    _HERE = ""
if _HERE and _HERE != os.path.realpath(os.path.dirname(os.__file__)):
    sys.path[:] = [p for p in sys.path if p and os.path.realpath(p) != _HERE]

from priors.cli.main import run  # (after the path is cleaned: see above)

if __name__ == "__main__":
    run()
