"""`python broken_host.py <name>`: the reference with one broken rule, as an adapter process.

Multi-process cases start every further process of an implementation as a process of its own, so
a broken rule applied by a monkeypatch in the test process would reach only the first one. Run as
an adapter command instead, every process of a case gets the same fault.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broken_implementations import BROKEN
from pimem_conformance.host import serve


def main(name: str) -> None:
    broken = next(each for each in BROKEN if each.name == name)
    patch = pytest.MonkeyPatch()
    broken.patch(patch)
    serve(broken.server())


if __name__ == "__main__":
    main(sys.argv[1])
