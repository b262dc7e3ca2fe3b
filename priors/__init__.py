"""priors — agent memory that closes the loop.

A deterministic keeper for an append-only ledger of settled judgments.
"""

__version__ = "0.1.0"
