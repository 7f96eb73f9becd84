"""The suite catches faults: each broken implementation fails on the requirements it violates.

Each runs only the cases of its own areas, against the same cases the reference passes; every
must_not case must fail against at least one of them (a must_not case nothing can fail is hollow).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from broken_implementations import BROKEN, Broken
from pimem._serve import ProtocolServer
from pimem_conformance import (
    CORPUS_CASE_PREFIX,
    Adapter,
    Case,
    InProcessConnector,
    lint_spec,
    load_cases,
    load_schemas,
    run_cases,
    spec_dir,
)
from suite_kit import outcomes, read_lines

Outcomes = dict[str, str]  # case id -> outcome


def _run(server: type[ProtocolServer], cases: list[Case]) -> Outcomes:
    schemas = load_schemas()
    result = run_cases(Adapter(InProcessConnector(server), schemas), cases, schemas)
    return {each.case.id: each.outcome for each in result.results}


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    """Every case, withdrawn ones included, loaded once (a load reads and checks 765 cases: 0.6 s)."""
    return load_cases()


@pytest.fixture(scope="module")
def reference_outcomes(reference_report: Path, cases: list[Case]) -> Outcomes:
    """The reference's outcome of every case: the scored ones from the shared run of the whole
    suite, the withdrawn ones (which broken implementations run too) here."""
    scored = outcomes(read_lines(reference_report))
    return {**_run(ProtocolServer, [case for case in cases if case.id not in scored]), **scored}


def _runs(broken: Broken, case: Case) -> bool:
    """Whether a broken implementation runs a case: of its areas, those of the requirements it breaks
    and the must_not cases (the two tests below judge nothing else), and of the corpus cases (2,000
    secrets planted through the protocol) only those of the requirements it breaks."""
    breaks = bool(broken.violates & set(case.requirements))
    if case.id.startswith(CORPUS_CASE_PREFIX):
        return breaks
    return case.area in broken.areas and (breaks or case.polarity == "must_not")


@pytest.fixture(scope="module")
def broken_outcomes(cases: list[Case]) -> Callable[[Broken], Outcomes]:
    """Outcomes of one broken implementation over its areas' cases (computed once)."""
    cache: dict[str, Outcomes] = {}

    def outcomes(broken: Broken) -> Outcomes:
        if broken.name not in cache:
            with pytest.MonkeyPatch.context() as monkeypatch:
                broken.patch(monkeypatch)
                cache[broken.name] = _run(broken.server, [c for c in cases if _runs(broken, c)])
        return cache[broken.name]

    return outcomes


@pytest.mark.parametrize("broken", BROKEN, ids=[broken.name for broken in BROKEN])
def test_the_suite_rejects_a_broken_implementation_on_the_rules_it_breaks(
    broken: Broken,
    broken_outcomes: Callable[[Broken], Outcomes],
    reference_outcomes: Outcomes,
    cases: list[Case],
) -> None:
    by_id = {case.id: case for case in cases}
    outcomes = broken_outcomes(broken)
    # Only cases that the reference passes count: they fail because of the fault.
    caught = [
        case_id
        for case_id, outcome in outcomes.items()
        if outcome == "fail" and reference_outcomes[case_id] == "pass"
    ]
    failed_requirements = {requirement for case_id in caught for requirement in by_id[case_id].requirements}
    assert broken.violates <= failed_requirements, (
        f"{broken.name} ({broken.rule}) should fail {sorted(broken.violates)}; caught cases: {caught}"
    )


def test_every_must_not_case_fails_against_some_broken_implementation(
    broken_outcomes: Callable[[Broken], Outcomes], reference_outcomes: Outcomes, cases: list[Case]
) -> None:
    # A case the reference itself fails proves nothing here (test_cases.py reports it).
    must_not = {
        case.id for case in cases if case.polarity == "must_not" and reference_outcomes[case.id] == "pass"
    }
    caught = {
        case_id
        for broken in BROKEN
        for case_id, outcome in broken_outcomes(broken).items()
        if outcome == "fail"
    }
    assert sorted(must_not - caught) == [], "hollow must_not cases: no broken implementation fails them"


def test_every_requirement_added_since_0_1_0_has_a_broken_implementation() -> None:
    # Each MUST added after the first release that has cases is broken by some implementation, so
    # its cases are shown to fail a fault (the 0.1.0 ones are covered as the must_not cases are).
    spec = spec_dir()
    ledger = json.loads((spec / "requirements-ledger.json").read_text(encoding="utf-8"))["ids"]
    added = {
        requirement.id
        for requirement in lint_spec(spec).requirements
        if requirement.level == "must"
        and requirement.cases
        and ledger[requirement.id]["status"] == "active"
        and ledger[requirement.id]["introduced"] != "0.1.0"
    }
    assert len(added) >= 40, (
        f"only {len(added)} requirements since 0.1.0 found: the ledger or the parse is wrong"
    )
    broken = {requirement for each in BROKEN for requirement in each.violates}
    assert sorted(added - broken) == [], "give each one a broken implementation in broken_implementations.py"
