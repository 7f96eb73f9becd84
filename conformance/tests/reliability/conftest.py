"""Fixtures of the reliability tests and the summary of their figures at the end of the run."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .reliability_kit import FIGURES, SLOW, TALLIES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES and not TALLIES:
        return
    terminalreporter.section(f"reliability figures ({'PIMEM_SLOW=1' if SLOW else 'CI size'})")
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"{name}: {value}")
    for total, parts in TALLIES.items():
        detail = ", ".join(f"{amount} {what}" for amount, what in parts)
        terminalreporter.write_line(f"total {total}: {sum(amount for amount, _ in parts)} ({detail})")


@pytest.fixture
def impl(request: pytest.FixtureRequest) -> str:
    """The implementation under test: `--pimem-impl` (an entry-point name or an adapter command)."""
    return str(request.config.getoption("--pimem-impl", default="reference"))


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A scratch folder another user can enter (pytest's tmp_path is private to root)."""
    root = Path(tempfile.mkdtemp(prefix="pimem-reliability-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)
