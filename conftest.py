"""Hypothesis for every test of this checkout: derandomized by default, so that a green `./dev test`
says the same on every run; `PIMEM_SLOW=1` or `PIMEM_STATEFUL=long` explores with fresh random
examples instead, and prints a reproduction blob for each failure it finds (pin it as `@example`)."""

from __future__ import annotations

import os

from hypothesis import settings

EXPLORING = os.environ.get("PIMEM_SLOW") == "1" or os.environ.get("PIMEM_STATEFUL") == "long"

settings.register_profile("pimem-ci", derandomize=True, database=None)
settings.register_profile("pimem-explore", derandomize=False, database=None, print_blob=True)
settings.load_profile("pimem-explore" if EXPLORING else "pimem-ci")
