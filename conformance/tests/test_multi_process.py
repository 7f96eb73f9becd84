"""Multi-process cases run real processes: a lease kept anywhere but the state dir is caught every time."""

from __future__ import annotations

import copy
import functools
import sys
from pathlib import Path

import pytest
from pimem._serve import ProtocolServer
from pimem_conformance import (
    Adapter,
    Case,
    InProcessConnector,
    SubprocessConnector,
    load_cases,
    load_schemas,
    run_cases,
)

HOST = Path(__file__).with_name("broken_host.py")
LEASE_REQUIREMENT = "JM-BACKFILL-020"


@functools.cache
def _backfill_cases() -> list[Case]:
    """Loaded once (a load reads and checks 765 cases); callers only read the list."""
    return [case for case in load_cases() if case.profile == "backfill"]


def _failed_requirements(adapter: Adapter, cases: list[Case], seed: int | None = None) -> set[str]:
    schemas = load_schemas()
    result = run_cases(adapter, cases, schemas, seed=seed)
    return {req for each in result.results if each.outcome == "fail" for req in each.case.requirements}


def _broken(name: str) -> Adapter:
    return Adapter(SubprocessConnector([sys.executable, str(HOST), name], timeout=60), load_schemas())


def test_the_reference_passes_every_backfill_case_with_processes_of_its_own() -> None:
    cases = _backfill_cases()
    assert any(case.processes > 1 for case in cases)
    schemas = load_schemas()
    result = run_cases(Adapter(InProcessConnector(ProtocolServer), schemas), cases, schemas)
    assert {each.case.id: each.outcome for each in result.results if each.outcome != "pass"} == {}


@pytest.mark.parametrize("seed", range(10))
def test_an_implementation_without_a_lease_fails_the_backfill_profile_on_every_seed(seed: int) -> None:
    assert LEASE_REQUIREMENT in _failed_requirements(_broken("no-lease"), _backfill_cases(), seed)


def test_a_lease_in_process_memory_fails_across_processes() -> None:
    assert LEASE_REQUIREMENT in _failed_requirements(_broken("lease-in-process-memory"), _backfill_cases())


def test_a_lease_in_process_memory_would_pass_were_both_instances_in_one_process() -> None:
    # The same steps with two instances of one process: here a shared dict looks like a lease,
    # which is why the cases run processes of their own.
    one_process = []
    for case in _backfill_cases():
        if case.processes == 1:
            continue
        raw = copy.deepcopy(case.raw)
        del raw["processes"]
        raw["setup"]["instances"] = ["p0", "p1"]
        for step in raw["steps"]:
            step["instance"] = f"p{step.pop('process', 0)}"
        one_process.append(Case.from_json(raw, area=case.area))
    assert LEASE_REQUIREMENT not in _failed_requirements(_broken("lease-in-process-memory"), one_process)
    assert LEASE_REQUIREMENT in _failed_requirements(_broken("no-lease"), one_process)
