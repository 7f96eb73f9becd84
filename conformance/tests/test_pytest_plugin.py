"""The pytest plugin judges each case with the runner's own logic, so step baselines work there too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fauxmplementation import FakeServer
from pimem_conformance import Adapter, Baseline, Case, InProcessConnector, load_cases, load_schemas
from pimem_conformance.pytest_plugin import check_case
from suite_kit import make_spec, search_case


@pytest.fixture
def two_steps(tmp_path_factory: pytest.TempPathFactory) -> Case:
    """Step 0 passes against the fauxmplementation, step 1 fails."""
    case = search_case("two-steps", "alpha", ["alpha"])
    case["steps"].append({"tool": {"action": "search", "query": "beta"}, "expect": {"ids": ["gamma"]}})
    (loaded,) = load_cases(make_spec(tmp_path_factory.mktemp("plugin"), [case]))
    return loaded


@pytest.fixture
def adapter() -> Iterator[Adapter]:
    started = Adapter(InProcessConnector(FakeServer), load_schemas(), validate=True)
    started.start()
    yield started
    started.stop()


def baseline(*entries: str) -> Baseline:
    return Baseline({entry: f"known: {entry}" for entry in entries})


def test_a_listed_failing_step_is_an_xfail(adapter: Adapter, two_steps: Case) -> None:
    with pytest.raises(pytest.xfail.Exception, match="known: two-steps:step-1"):
        check_case(adapter, two_steps, baseline("two-steps:step-1"))


def test_without_the_step_listed_the_case_fails_with_expected_and_actual(
    adapter: Adapter, two_steps: Case
) -> None:
    with pytest.raises(pytest.fail.Exception, match="step 1") as failed:
        check_case(adapter, two_steps)
    assert "gamma" in str(failed.value)


def test_an_unlisted_failing_step_is_a_failure(adapter: Adapter, two_steps: Case) -> None:
    with pytest.raises(pytest.fail.Exception, match="step 1"):
        check_case(adapter, two_steps, baseline("two-steps:step-0"))


def test_a_listed_step_that_passes_is_an_xpass_failure(adapter: Adapter, two_steps: Case) -> None:
    with pytest.raises(pytest.fail.Exception, match="xpass: two-steps"):
        check_case(adapter, two_steps, baseline("two-steps:step-0", "two-steps:step-1"))


def test_a_passing_case_passes_and_an_unclaimed_profile_skips(
    adapter: Adapter, tmp_path_factory: pytest.TempPathFactory
) -> None:
    cases = [
        search_case("passes", "alpha", ["alpha"]),
        search_case("ctx", "alpha", ["alpha"], profile="context"),
    ]
    passing, unclaimed = load_cases(make_spec(tmp_path_factory.mktemp("plugin"), cases))
    check_case(adapter, passing)
    with pytest.raises(pytest.skip.Exception, match="not_applicable: profile 'context' is not claimed"):
        check_case(adapter, unclaimed)
