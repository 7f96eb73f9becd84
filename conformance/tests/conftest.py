"""Fixtures the suite's own tests share."""

from __future__ import annotations

from pathlib import Path

import pytest
from pimem_conformance import main


@pytest.fixture(scope="session")
def reference_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of one run of every scored case against the in-process reference, validating
    every message (`--validate-adapter`), made once for the tests that only read it."""
    report = tmp_path_factory.mktemp("reference-run") / "reference.jsonl"
    main(["run", "--impl", "reference", "--validate-adapter", "-q", "--report", str(report)])
    return report
