"""`python -m priors` — the same CLI as the `priors` console script."""

from priors.cli.main import run

if __name__ == "__main__":
    run()
