"""pytest plugin: runs the conformance cases as pytest items (filled in by the runner work)."""

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--pimem-impl", default="reference", help="implementation under test: 'reference' or a command"
    )
