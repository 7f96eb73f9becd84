"""Running a selection of cases: applicability, restarts, baselines, the stop rule, exit codes."""

from __future__ import annotations

import fnmatch
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import get_args

from pimem_conformance._adapter import Adapter, Implementation
from pimem_conformance._cases import Case
from pimem_conformance._connector import AdapterError
from pimem_conformance._driver import CaseRun, Outcome, run_case
from pimem_conformance._schemas import SchemaSet

__all__ = [
    "EXIT_ADAPTER_BROKEN",
    "EXIT_CLEAN",
    "EXIT_FAILED",
    "EXIT_USAGE",
    "OUTCOMES",
    "Baseline",
    "BaselineError",
    "CaseResult",
    "RunResult",
    "judge_case",
    "run_cases",
    "select_cases",
]

EXIT_CLEAN, EXIT_FAILED, EXIT_USAGE, EXIT_ADAPTER_BROKEN = 0, 1, 2, 3
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


_BASELINE_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*(:step-[0-9]+)?")


class BaselineError(ValueError):
    """A baseline file that cannot be read."""


@dataclass(frozen=True)
class Baseline:
    """Known failures: whole cases (`case-id`) or single steps (`case-id:step-N`, 0-based)."""

    reasons: dict[str, str]

    @staticmethod
    def load(path: Path) -> Baseline:
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise BaselineError(f"baseline {path}: {exc}") from None
        entries = content.get("known_failures") if isinstance(content, dict) else None
        if not isinstance(entries, list) or not all(
            isinstance(entry, dict) and isinstance(entry.get("id"), str) for entry in entries
        ):
            raise BaselineError(
                f'baseline {path}: expected {{"known_failures": [{{"id": "case-id", "reason": "..."}}]}}'
            )
        malformed = [entry["id"] for entry in entries if not _BASELINE_ID.fullmatch(entry["id"])]
        if malformed:
            raise BaselineError(
                f"baseline {path}: malformed ids {malformed} (expected 'case-id' or 'case-id:step-2')"
            )
        return Baseline({entry["id"]: str(entry.get("reason", "")) for entry in entries})

    def case_ids(self) -> set[str]:
        return {entry.split(":", 1)[0] for entry in self.reasons}

    def steps_of(self, case_id: str) -> set[int]:
        prefix = f"{case_id}:step-"
        return {int(entry[len(prefix) :]) for entry in self.reasons if entry.startswith(prefix)}


@dataclass
class CaseResult:
    """The outcome of one case, with the evidence behind it."""

    case: Case
    outcome: Outcome
    run: CaseRun | None = None
    reason: str = ""  # why not_applicable / not_run, or the baseline's reason for xfail/xpass

    @property
    def raw_outcome(self) -> Outcome:
        """The outcome before the baseline was applied."""
        return self.run.outcome if self.run is not None else self.outcome


@dataclass
class RunResult:
    implementation: Implementation | None  # None: the next case starts a fresh adapter
    results: list[CaseResult] = field(default_factory=list)
    handshake: Implementation | None = None  # what the adapter declared the last time it started
    stopped_early: bool = False
    stale_baseline_ids: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, int]:
        counts = Counter(result.outcome for result in self.results)
        return {outcome: counts.get(outcome, 0) for outcome in OUTCOMES}

    def exit_code(self) -> int:
        totals = self.totals()
        ran = [result for result in self.results if result.outcome not in ("not_applicable", "not_run")]
        if ran and all(result.run is not None and result.run.error is not None for result in ran):
            return EXIT_ADAPTER_BROKEN
        if not ran:  # nothing applicable ran: never a pass
            return EXIT_FAILED
        if (
            totals["fail"]
            or totals["error"]
            or totals["xpass"]
            or self.stale_baseline_ids
            or self.stopped_early
        ):
            return EXIT_FAILED
        return EXIT_CLEAN


def select_cases(
    cases: Iterable[Case], *, profiles: Iterable[str] = (), pattern: str | None = None
) -> list[Case]:
    """Cases of the given profiles (all if none) whose id or requirement matches the glob/substring."""
    wanted = set(profiles)
    selected = []
    for case in cases:
        if wanted and case.profile not in wanted:
            continue
        if pattern and not any(_matches(name, pattern) for name in (case.id, case.area, *case.requirements)):
            continue
        selected.append(case)
    return selected


def _matches(name: str, pattern: str) -> bool:
    return fnmatch.fnmatchcase(name, pattern) if any(c in pattern for c in "*?[") else pattern in name


def _apply_baseline(result: CaseResult, baseline: Baseline) -> None:
    run = result.run
    assert run is not None
    case_id = result.case.id
    if case_id in baseline.reasons:
        result.reason = baseline.reasons[case_id]
        result.outcome = "xpass" if run.outcome == "pass" else "xfail"
        return
    listed = baseline.steps_of(case_id)
    if not listed or run.outcome == "error":
        return
    failing = {failure.step for failure in run.failures}
    if failing - listed:
        return  # an unlisted step failed: a real failure
    result.reason = "; ".join(baseline.reasons[f"{case_id}:step-{step}"] for step in sorted(listed))
    result.outcome = "xpass" if listed - failing else "xfail"


def run_cases(
    adapter: Adapter,
    cases: list[Case],
    schemas: SchemaSet,
    *,
    baseline: Baseline | None = None,
    suite_case_ids: set[str] | None = None,
    max_errors: int = 3,
    seed: int | None = None,
    workdir: Path | None = None,
    on_result: Callable[[CaseResult], None] | None = None,
    requirements: Set[str] | None = None,
) -> RunResult:
    """Run `cases` (shuffled when `seed` is given); restart the adapter after every adapter error.
    `requirements`: those of the release judged (`run --as-of`), None for the spec now.

    After `max_errors` consecutive adapter errors the remaining cases are `not_run`, so a hung
    adapter costs at most `max_errors` timeouts. Baseline entries naming no case of the suite
    (`suite_case_ids`, default: `cases`) are stale.
    """
    order = list(cases)
    if seed is not None:
        random.Random(seed).shuffle(order)
    run = RunResult(implementation=None)
    consecutive_errors = 0
    for case in order:
        if consecutive_errors >= max_errors:
            run.stopped_early = True
            result = CaseResult(
                case, "not_run", reason=f"stopped after {consecutive_errors} consecutive adapter errors"
            )
        else:
            result = judge_case(
                adapter, case, schemas, baseline=baseline, workdir=workdir, requirements=requirements
            )
            run.implementation = adapter.implementation
            if result.run is not None and result.run.error is not None:
                consecutive_errors += 1
            elif result.outcome != "not_applicable":
                consecutive_errors = 0
        run.results.append(result)
        if on_result is not None:
            on_result(result)
    if baseline is not None:
        known = suite_case_ids if suite_case_ids is not None else {case.id for case in cases}
        run.stale_baseline_ids = sorted(
            entry for entry in baseline.reasons if entry.split(":", 1)[0] not in known
        )
    run.handshake = adapter.declared
    adapter.stop()
    return run


def judge_case(
    adapter: Adapter,
    case: Case,
    schemas: SchemaSet,
    *,
    baseline: Baseline | None = None,
    workdir: Path | None = None,
    requirements: Set[str] | None = None,
) -> CaseResult:
    """One case, judged as `run_cases` and the pytest plugin both judge it: the adapter (re)started
    when none is running (after an adapter error, the next case gets a fresh one), not_applicable
    when its profile is not claimed, its steps, then the baseline (whole cases and single steps)."""
    result = _judged(adapter, case, schemas, workdir, requirements)
    if baseline is not None and result.run is not None:
        _apply_baseline(result, baseline)
    return result


def _judged(
    adapter: Adapter, case: Case, schemas: SchemaSet, workdir: Path | None, requirements: Set[str] | None
) -> CaseResult:
    if adapter.implementation is None:
        try:
            adapter.restart()
        except AdapterError as exc:
            return CaseResult(case, "error", run=CaseRun(error=exc))
    assert adapter.implementation is not None
    if case.profile not in adapter.implementation.profiles:
        return CaseResult(case, "not_applicable", reason=f"profile {case.profile!r} is not claimed")
    case_run = run_case(adapter, case, schemas, workdir=workdir, requirements=requirements)
    if case_run.error is not None:
        adapter.implementation = None
    return CaseResult(case, case_run.outcome, run=case_run)
