"""Fixtures the suite's own tests share."""

from __future__ import annotations

from pathlib import Path

import pytest
from pimem_conformance import main
from suite_kit import NODE_EXAMPLE, required_node


@pytest.fixture(scope="session")
def reference_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of one run of every scored case against the in-process reference, validating
    every message (`--validate-adapter`), made once for the tests that only read it."""
    report = tmp_path_factory.mktemp("reference-run") / "reference.jsonl"
    main(["run", "--impl", "reference", "--validate-adapter", "-q", "--report", str(report)])
    return report


@pytest.fixture(scope="session")
def node_example_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, Path]:
    """The exit code and report of one run of every scored case against the Node example
    (`conformance/examples/minimal-adapter.mjs`), validating every message, made once for the
    tests that only read it."""
    node = required_node("the Node example cannot run")
    report = tmp_path_factory.mktemp("node-example-run") / "minimal-adapter.jsonl"
    run = ["run", "--impl", f"{node} {NODE_EXAMPLE}", "--validate-adapter", "-q"]
    return main([*run, "--report", str(report)]), report
