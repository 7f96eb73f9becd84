"""Every conformance case as a pytest item (id = case id), against `--pimem-impl` (default: the reference)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pimem_conformance import Case
from pimem_conformance.pytest_plugin import case_params


@pytest.mark.parametrize("pimem_case", case_params())
def test_case(pimem_case: Case, pimem_check: Callable[[Case], None]) -> None:
    pimem_check(pimem_case)
