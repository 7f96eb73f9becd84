"""pytest plugin: the conformance cases as pytest items, one per case, named by the case id.

Any test module can turn the cases into items (the project's own is
`conformance/tests/test_cases.py`; an implementer copies these lines)::

    import pytest
    from pimem_conformance.pytest_plugin import case_params

    @pytest.mark.parametrize("pimem_case", case_params())
    def test_case(pimem_case, pimem_check):
        pimem_check(pimem_case)

`pytest --pimem-impl "node adapter.mjs"` then judges that adapter; the default is the in-process
reference. `--pimem-baseline FILE` turns listed failures (whole cases, or single steps as
`case-id:step-N`) into strict xfails: each case is judged by the runner's own `judge_case`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pimem_conformance._adapter import Adapter
from pimem_conformance._cases import Case, load_cases
from pimem_conformance._connector import connector_for
from pimem_conformance._console import describe_failure
from pimem_conformance._runner import Baseline, judge_case
from pimem_conformance._schemas import load_schemas

__all__ = ["case_params", "check_case", "describe_failure"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pimem", "pi-memory conformance cases")
    group.addoption(
        "--pimem-impl",
        default="reference",
        help="implementation under test: an entry-point name ('reference') or an adapter command",
    )
    group.addoption(
        "--pimem-baseline", type=Path, default=None, help="known failures: listed cases are xfail"
    )
    group.addoption(
        "--pimem-timeout", type=float, default=30.0, help="seconds per request (subprocess adapters)"
    )


def _is_suite_checkout(path: Path) -> bool:
    return (path / "conformance" / "pimem_conformance").is_dir() and (path / "spec" / "cases").is_dir()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A checkout of this suite beside the user's tests (`pip install ./pi-memory-spec` from the
    folder above it) is not collected: the user's file is what runs. Inside the checkout, as its
    own tests run, nothing is ignored."""
    if collection_path.is_dir() and _is_suite_checkout(collection_path):
        inside = config.rootpath == collection_path or collection_path in config.rootpath.parents
        return None if inside else True
    return None


def case_params() -> list[Any]:
    """Every case as a `pytest.param` whose id is the case id."""
    return [pytest.param(case, id=case.id) for case in load_cases()]


@pytest.fixture(scope="session")
def pimem_adapter(pytestconfig: pytest.Config) -> Iterator[Adapter]:
    """The implementation under test, started once per test session (validating every message)."""
    connector = connector_for(
        pytestconfig.getoption("pimem_impl"), timeout=pytestconfig.getoption("pimem_timeout")
    )
    adapter = Adapter(connector, load_schemas(), validate=True)
    adapter.start()
    yield adapter
    adapter.stop()


@pytest.fixture(scope="session")
def pimem_baseline(pytestconfig: pytest.Config) -> Baseline | None:
    path = pytestconfig.getoption("pimem_baseline")
    return Baseline.load(path) if path is not None else None


def check_case(adapter: Adapter, case: Case, baseline: Baseline | None = None) -> None:
    """Judge one case as the runner does (`judge_case`: restarts, profiles, whole-case and step
    baselines) and say it the pytest way: a skip, an xfail, or a failure with expected vs actual."""
    result = judge_case(adapter, case, load_schemas(), baseline=baseline)
    if result.outcome == "not_applicable":
        pytest.skip(f"not_applicable: {result.reason}")
    if result.outcome == "xfail":
        pytest.xfail(result.reason)
    if result.outcome == "xpass":
        pytest.fail(f"xpass: {case.id} now passes: remove it from the baseline", pytrace=False)
    if result.outcome != "pass":
        assert result.run is not None
        pytest.fail(describe_failure(case, result.run), pytrace=False)


@pytest.fixture
def pimem_check(pimem_adapter: Adapter, pimem_baseline: Baseline | None) -> Callable[[Case], None]:
    """Run one case; fail with expected vs actual, skip when its profile is not claimed."""
    return functools.partial(check_case, pimem_adapter, baseline=pimem_baseline)
