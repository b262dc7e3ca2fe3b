"""`python -m priors` — the same CLI as the `priors` console script."""

import sys

from priors.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
