"""The mutation run: its set-up kills a planted mutant, and its committed results are consistent.

The full run is outside CI (`python -m pimem_tools.mutation run`); here a small fixed sample runs:
the planted mutant must be killed and the unmutated reference must survive, through the very path
every mutant takes. Results that measured an older reference tree are reported, not failed.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from pimem_tools.mutation import (
    CORE_MODULES,
    EQUIVALENT_CAP,
    KILL_TARGET,
    KINDS,
    OPERATORS,
    PLANTED,
    PLANTED_KILLER,
    REPO,
    RESULTS,
    Equivalent,
    _forked,
    _Task,
    apply,
    check,
    equivalent_mutants,
    forked_verdicts,
    kills_kept_from,
    load_equivalents,
    main,
    mutants,
    planted_source,
    statement_of,
    statement_starts,
)


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def test_the_core_modules_are_the_indexing_and_search_pipeline() -> None:
    pipeline = {
        "_scope",
        "_query",
        "_terms",
        "_journals",
        "_extract",
        "_redact",
        "_prepare",
        "_index",
        "_store",
    }
    assert set(CORE_MODULES) == pipeline


def test_a_memo_size_is_no_mutation_site_but_other_integers_are() -> None:
    found = mutants("_terms")
    assert "@functools.lru_cache(maxsize=512)" in (REPO / "reference" / "pimem" / "_terms.py").read_text()
    assert not [mutant for mutant in found if "lru_cache" in mutant.text]
    assert [mutant for mutant in found if mutant.operator == "int"]


def test_a_traced_line_counts_for_the_statement_it_belongs_to() -> None:
    # a trace records the line that ran: a condition's second line, never the `while (` above it
    code = "while (\n    a\n):\n    b\n@cache\ndef f():\n    return [\n        1,\n    ]\n"
    assert statement_starts(code) == {1: 1, 2: 1, 3: 1, 4: 4, 5: 6, 6: 6, 7: 7, 8: 7, 9: 7}
    source = (REPO / "reference" / "pimem" / "_prepare.py").read_text(encoding="utf-8")
    condition = next(m for m in mutants("_prepare") if m.text.startswith("position < end"))
    assert condition.line != statement_of(condition)
    assert statement_starts(source)[condition.line] == statement_of(condition)


def test_the_equivalents_are_within_the_cap_each_with_a_reason_and_name_todays_mutants() -> None:
    entries = load_equivalents()
    registry = equivalent_mutants(entries)
    assert registry["share"] <= EQUIVALENT_CAP, registry
    assert registry["equivalent"] >= len(entries) - len(registry["stale"])  # each live entry names a mutant
    if registry["stale"]:
        warnings.warn(
            f"equivalent.json entries that name no mutant any more: {registry['stale']}", stacklevel=1
        )


def test_an_equivalent_entry_is_refused_without_a_reason_or_with_an_unknown_readme_item(
    tmp_path: Path,
) -> None:
    good = {"module": "_scope", "in": "f", "line": "x = 1", "operator": "int", "change": "1 -> 2"}
    path = tmp_path / "equivalent.json"
    path.write_text(json.dumps({"mutants": [{**good, "kind": "equivalent", "reason": "any x reads alike"}]}))
    assert load_equivalents(path) == [
        Equivalent("_scope", "f", "x = 1", "int", "1 -> 2", "equivalent", "any x reads alike", None)
    ]
    refused = [
        {**good, "kind": "equivalent", "reason": ""},
        {**good, "kind": "equivalent", "reason": "two\nlines"},
        {**good, "kind": "implementation-defined", "reason": "ranking", "readme_item": 999},
        {**good, "kind": "implementation-defined", "reason": "ranking"},
        {**good, "kind": "equivalent", "reason": "ok", "readme_item": 1},
        {**good, "kind": "probably", "reason": "ok"},
        {**good, "module": "_tool", "kind": "equivalent", "reason": "ok"},
    ]
    for entry in refused:
        path.write_text(json.dumps({"mutants": [entry]}))
        with pytest.raises(ValueError):
            load_equivalents(path)
    path.write_text(
        json.dumps(
            {"mutants": [{**good, "kind": "implementation-defined", "reason": "rank", "readme_item": 1}]}
        )
    )
    assert load_equivalents(path)[0].readme_item == 1


def test_an_equivalent_entry_names_a_mutant_by_its_text_not_its_number() -> None:
    mutant = mutants("_scope")[3]
    entry = Equivalent(
        mutant.module,
        mutant.where,
        mutant.text,
        mutant.operator,
        mutant.description,
        "equivalent",
        "r",
        None,
        mutant.occurrence,
    )
    registry = equivalent_mutants([entry])
    assert (
        registry["modules"]["_scope"]["equivalent"] == registry["equivalent"] == 1 and not registry["stale"]
    )
    moved = Equivalent(
        mutant.module,
        mutant.where,
        mutant.text + " ",
        mutant.operator,
        mutant.description,
        "equivalent",
        "r",
        None,
    )
    assert equivalent_mutants([moved])["stale"] == [list(moved.key)]


def test_every_mutant_has_a_key_of_its_own() -> None:
    for module in CORE_MODULES:
        keys = [mutant.key for mutant in mutants(module)]
        assert len(keys) == len(set(keys)), module


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


def test_a_peer_process_serves_the_mutant_its_parent_names(tmp_path: Path) -> None:
    planted = tmp_path / f"{PLANTED[0]}.py"
    planted.write_text(planted_source())
    probe = (
        "import pimem_tools.mutation as m; m.mutated_server(); "
        "import pimem._tool as t; print(t._INTEGERS['limit'].high)"
    )
    for named, limit in ((f"{PLANTED[0]}:{planted}", "51"), ("", "50")):
        env = {**os.environ, "PIMEM_MUTANT": named}
        done = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False
        )
        assert done.stdout.strip() == limit, done.stderr[-2000:]


def test_a_mutant_that_never_ends_a_case_is_killed_by_that_cases_limit() -> None:
    [loop] = [m for m in mutants("_scope") if m.where == "_ancestors" and m.operator == "statement"]
    task = _Task(
        loop, apply(loop), ["scope-root-outermost-ancestor"], 120, {"scope-root-outermost-ancestor": 3.0}
    )
    [(_, verdict)] = list(_forked([task], jobs=1))
    assert verdict == {"killed": True, "by": "scope-root-outermost-ancestor (timed out)"}


def test_the_committed_results_are_consistent_and_name_a_tree_of_the_history() -> None:
    if not RESULTS.is_file():
        pytest.fail(f"no committed mutation results at {RESULTS.relative_to(REPO)}")
    data = json.loads(RESULTS.read_text())
    assert data["operators"] == list(OPERATORS)
    assert set(data["modules"]) == set(CORE_MODULES)
    for module, figures in data["modules"].items():
        called = len(figures["equivalent"])
        accounted = figures["killed"] + len(figures["survived"]) + called
        assert accounted == figures["sampled"] <= figures["mutants_in_module"], module
        assert figures["kill_rate"] == round(figures["killed"] / figures["sampled"], 4), module
        assert figures["kill_rate_non_equivalent"] == round(
            figures["killed"] / (figures["sampled"] - called), 4
        )
        assert all(entry["kind"] in KINDS and entry["reason"] for entry in figures["equivalent"]), module
    overall = data["overall"]
    assert overall["sampled"] == sum(f["sampled"] for f in data["modules"].values())
    assert overall["killed"] == sum(f["killed"] for f in data["modules"].values())
    assert overall["equivalent"] == sum(len(f["equivalent"]) for f in data["modules"].values())
    registry = data["equivalent_registry"]
    assert (
        registry["equivalent"] <= registry["cap"] * registry["population"]
        and registry["cap"] == EQUIVALENT_CAP
    )
    tree = data["trees"]["reference"]
    assert subprocess.run(["git", "cat-file", "-e", tree], cwd=REPO, check=False).returncode == 0, (
        f"the measured reference tree {tree} is in no commit of this history"
    )
    assert data["trees"]["clean"], "measured with uncommitted changes under reference/"
    # every mutant, not a sample: with 30 per module, 95 % would be at most one survivor
    assert data["sample"]["per_module"] is None, "the committed results are a full run"
    assert all(f["sampled"] == f["mutants_in_module"] for f in data["modules"].values())
    target = data["target"]
    assert target["kill_rate_non_equivalent"] == KILL_TARGET
    assert target["met"] == [
        module for module, f in data["modules"].items() if f["kill_rate_non_equivalent"] >= KILL_TARGET
    ]
    assert target["unmet"] == [module for module in data["modules"] if module not in target["met"]]
    if tree != _git("rev-parse", "HEAD:reference"):
        warnings.warn(
            f"mutation results measured reference tree {tree[:12]}, not today's; run the mutation again",
            stacklevel=1,
        )


def test_a_rerun_keeps_the_kills_of_a_full_run_of_the_same_tree_and_runs_the_rest() -> None:
    every = {module: [m.name for m in mutants(module)] for module in ("_scope", "_prepare")}
    survivor, called = every["_scope"][0], every["_prepare"][1]
    earlier = {
        "trees": {"reference": "t1", "commit": "c1"},
        "sample": {"per_module": None},
        "modules": {
            "_scope": {"survived": [{"mutant": survivor}], "equivalent": []},
            "_prepare": {"survived": [], "equivalent": [{"mutant": called}]},
        },
    }
    kept = kills_kept_from(earlier, "t1")
    assert kept == {name for names in every.values() for name in names} - {survivor, called}
    with pytest.raises(SystemExit, match="t0"):
        kills_kept_from(earlier, "t0")  # another reference tree: its mutants are other code
    with pytest.raises(SystemExit, match="full run"):
        kills_kept_from({**earlier, "sample": {"per_module": 30}}, "t1")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("_scope:99999", "_scope has mutants 0 to"),
        ("_scope:x", "_scope has mutants 0 to"),
        ("_tool:1", "no core module '_tool'"),
    ],
)
def test_show_and_try_refuse_a_mutant_that_is_not_there(
    name: str, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("show", "try"):
        with pytest.raises(SystemExit) as ended:
            main([command, name])
        assert ended.value.code == 2
        assert said in capsys.readouterr().err
