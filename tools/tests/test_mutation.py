"""The mutation run: its set-up kills a planted mutant, and its committed results are consistent.

The full run is outside CI (`python -m pimem_tools.mutation run`); here a small fixed sample runs:
the planted mutant must be killed and the unmutated reference must survive, through the very path
every mutant takes. Results that measured an older reference tree are reported, not failed.
"""

from __future__ import annotations

import ast
import json
import subprocess
import warnings

import pytest
from pimem_tools.mutation import (
    CORE_MODULES,
    OPERATORS,
    PLANTED,
    PLANTED_KILLER,
    REPO,
    RESULTS,
    apply,
    check,
    forked_verdicts,
    mutants,
    planted_source,
)


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def test_every_operator_has_mutants_and_every_mutant_is_valid_python_that_differs() -> None:
    seen = set()
    for module in CORE_MODULES:
        found = mutants(module)
        assert found, module
        seen |= {mutant.operator for mutant in found}
        for mutant in found[:: max(1, len(found) // 5)]:  # a spread of each module's sites
            mutated = apply(mutant)
            ast.parse(mutated)
            original = ast.unparse(ast.parse((REPO / "reference" / "pimem" / f"{module}.py").read_text()))
            assert mutated != original, mutant
    assert seen == set(OPERATORS)


# The case that kills the planted mutant, and cases of other areas beside it: the full control
# (every case against the unmutated module) runs at the start of every measuring run.
CHECKED = (
    PLANTED_KILLER,
    "search-limit-default-and-truncated",
    "read-paging-code-points",
    "scope-session-current-only",
)


def test_the_planted_mutant_is_killed_and_the_unmutated_reference_survives() -> None:
    planted, unmutated = check(CHECKED)
    assert planted["killed"] and planted["by"].startswith(PLANTED_KILLER), planted
    assert not unmutated["killed"], unmutated


def test_the_forked_path_of_a_run_kills_the_planted_mutant_and_spares_the_reference() -> None:
    original = (REPO / "reference" / "pimem" / f"{PLANTED[0]}.py").read_text()
    planted, unmutated = forked_verdicts(PLANTED[0], [planted_source(), original], CHECKED)
    assert planted["killed"] and planted["by"].startswith(PLANTED_KILLER), planted
    assert not unmutated["killed"], unmutated


def test_the_committed_results_are_consistent_and_name_a_tree_of_the_history() -> None:
    if not RESULTS.is_file():
        pytest.fail(f"no committed mutation results at {RESULTS.relative_to(REPO)}")
    data = json.loads(RESULTS.read_text())
    assert data["operators"] == list(OPERATORS)
    assert set(data["modules"]) == set(CORE_MODULES)
    for module, figures in data["modules"].items():
        accounted = figures["killed"] + len(figures["survived"]) + len(figures["equivalent"])
        assert accounted == figures["sampled"] <= figures["mutants_in_module"], module
        assert figures["kill_rate"] == round(figures["killed"] / figures["sampled"], 4), module
        assert len(figures["equivalent"]) <= 0.03 * figures["sampled"], module
    overall = data["overall"]
    assert overall["sampled"] == sum(f["sampled"] for f in data["modules"].values())
    assert overall["killed"] == sum(f["killed"] for f in data["modules"].values())
    tree = data["trees"]["reference"]
    assert subprocess.run(["git", "cat-file", "-e", tree], cwd=REPO, check=False).returncode == 0, (
        f"the measured reference tree {tree} is in no commit of this history"
    )
    assert data["trees"]["clean"], "measured with uncommitted changes under reference/"
    if tree != _git("rev-parse", "HEAD:reference"):
        warnings.warn(
            f"mutation results measured reference tree {tree[:12]}, not today's; run the mutation again",
            stacklevel=1,
        )
