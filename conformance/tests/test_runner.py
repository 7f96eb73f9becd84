"""The runner judged with fauxmplementations: outcomes, baselines, reports and exit codes."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance import (
    REPORT_SCHEMA_ID,
    __version__,
    freeze_release,
    load_cases,
    load_schemas,
    main,
    page_data,
    render_summary,
    spec_dir,
    summarise,
    version_line,
)
from suite_kit import faux_command, make_spec, outcomes, read_lines, search_case

PASSING = search_case("finds-both", "alpha beta", ["alpha", "beta"])
FAILING = search_case("finds-one", "alpha beta", ["alpha"])


def run(
    tmp_path: Path, cases: list[dict[str, Any]], *args: str, mode: str = "ok"
) -> tuple[int, list[dict[str, Any]]]:
    """Run the CLI over `cases` against a fauxmplementation; return the exit code and the report lines."""
    spec = tmp_path / "spec" if (tmp_path / "spec").exists() else make_spec(tmp_path, cases)
    report = tmp_path / "report.jsonl"
    code = main(
        ["run", "--spec", str(spec), "--impl", faux_command(mode), "--report", str(report), "-q", *args]
    )
    return code, read_lines(report)


def test_clean_run_exits_0_and_the_report_validates(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [PASSING])
    assert code == 0
    assert outcomes(lines) == {"finds-both": "pass"}
    schemas = load_schemas()
    assert all(schemas.errors(REPORT_SCHEMA_ID, line) == [] for line in lines)
    header, footer = lines[0], lines[-1]
    assert header["implementation"] == {"name": "fake", "version": "0", "language": "python"}
    assert (header["spec_version"], header["spec_frozen"], header["as_of"]) == ("9.9.9", False, None)
    assert footer["totals"]["pass"] == 1 and footer["exit_code"] == 0


def test_a_failure_exits_1_with_expected_and_actual(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [PASSING, FAILING])
    assert code == 1
    failed = next(line for line in lines if line.get("id") == "finds-one")
    assert failed["outcome"] == "fail"
    assert failed["expected"] == [{"step": 0, "ids": ["alpha"]}]
    (mismatch,) = failed["actual"][0]["mismatches"]
    assert mismatch["check"] == "ids" and mismatch["actual"] == ["alpha", "beta"]


def test_an_unexpected_tool_error_fails_the_step(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [search_case("errs", "error", ["error"])])
    assert code == 1
    assert outcomes(lines) == {"errs": "fail"}


def with_steps(case_id: str, *steps: dict[str, Any]) -> dict[str, Any]:
    """A case whose first step searches "alpha beta" (results alpha, beta), then these steps."""
    case = search_case(case_id, "alpha beta", ["alpha", "beta"])
    case["steps"].extend(steps)
    return case


SEARCH_GAMMA = {"tool": {"action": "search", "query": "gamma"}, "expect": {"ids": ["gamma"]}}
UNKNOWN_CMD = {"cmd": "frobnicate", "instance": "a"}


def test_an_expected_errored_answer_passes_without_restarting_the_adapter(tmp_path: Path) -> None:
    # After a restart the fake forgets instance "a", so the search after the request would error.
    case = with_steps("errored-ok", {"request": UNKNOWN_CMD, "expect": {"errored": True}}, SEARCH_GAMMA)
    code, lines = run(tmp_path, [case])
    assert (code, outcomes(lines)) == (0, {"errored-ok": "pass"})


def test_an_ordinary_answer_where_errored_is_expected_fails_the_step(tmp_path: Path) -> None:
    request = {"cmd": "tool", "instance": "a", "name": "memory_context", "arguments": {"query": "gamma"}}
    case = with_steps("not-errored", {"request": request, "expect": {"errored": True}}, SEARCH_GAMMA)
    code, lines = run(tmp_path, [case])
    assert (code, outcomes(lines)) == (1, {"not-errored": "fail"})
    assert lines[1]["actual"][0]["step"] == 1 and lines[1]["actual"][0]["mismatches"][0]["check"] == "errored"


def test_an_unexpected_errored_answer_to_a_request_step_is_an_adapter_error(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [with_steps("errored-unexpected", {"request": UNKNOWN_CMD}), PASSING])
    assert (code, outcomes(lines)) == (1, {"errored-unexpected": "error", "finds-both": "pass"})


def test_from_carries_a_value_of_an_earlier_response_into_a_request(tmp_path: Path) -> None:
    captured = {"tool": {"action": "search", "query": {"$from": "step0.details.results[1].entryId"}}}
    case = with_steps("captures", {**captured, "expect": {"ids": ["beta"]}})
    code, lines = run(tmp_path, [case])
    assert (code, outcomes(lines)) == (0, {"captures": "pass"})


def test_from_a_value_the_earlier_response_lacks_fails_the_step_and_goes_on(tmp_path: Path) -> None:
    missing = {"tool": {"action": "search", "query": {"$from": "step0.details.results[5].entryId"}}}
    case = with_steps("captures-nothing", {**missing, "expect": {"ids": []}}, SEARCH_GAMMA)
    code, lines = run(tmp_path, [case])
    assert (code, outcomes(lines)) == (1, {"captures-nothing": "fail"})
    (failure,) = lines[1]["actual"]
    assert failure["step"] == 1 and failure["mismatches"][0]["check"] == "$from"


def test_as_of_a_release_scores_only_its_cases(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = make_spec(tmp_path, [PASSING, FAILING])
    freeze_release(spec, "9.9.9", {}, [case for case in load_cases(spec) if case.id == "finds-both"])
    code, lines = run(tmp_path, [], "--as-of", "9.9.9")
    assert (code, outcomes(lines)) == (0, {"finds-both": "pass"})
    assert "not scored as of spec 9.9.9 (added later): 1 case(s)" in capsys.readouterr().out
    assert main(["run", "--spec", str(spec), "--impl", faux_command(), "--as-of", "1.0.0"]) == 2


def test_as_of_a_release_judges_its_frozen_case_bodies_against_its_frozen_schemas(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = make_spec(tmp_path, [PASSING])
    (spec / "schemas").unlink()
    shutil.copytree(spec_dir() / "schemas", spec / "schemas")
    freeze_release(spec, "9.9.9", {}, load_cases(spec))
    # Since the freeze, the case asks more and search details need a field the fake never sends.
    stricter = {**PASSING, "changed": {"9.9.10": "asks for a third id"}}
    stricter["steps"] = [{**PASSING["steps"][0], "expect": {"ids": ["alpha", "beta", "gamma"]}}]
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": [stricter]}))
    details = spec / "schemas" / "details-search.schema.json"
    schema = json.loads(details.read_text())
    schema["required"] = [*schema.get("required", []), "addedLater"]
    details.write_text(json.dumps(schema))
    load_schemas.cache_clear()
    code, lines = run(tmp_path, [])
    failure = lines[1]["actual"][0]["mismatches"]
    assert (code, {m["check"] for m in failure}) == (1, {"ids", "details_schema"})
    code, lines = run(tmp_path, [], "--as-of", "9.9.9")
    assert (code, outcomes(lines)) == (0, {"finds-both": "pass"})
    said = capsys.readouterr().out
    assert "1 frozen case(s) changed in the spec since (scored as frozen here):" in said
    assert "  finds-both: 9.9.10: asks for a third id" in said


def test_the_run_names_the_release_it_scored_and_the_suite_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = make_spec(tmp_path, [PASSING])
    suite = f"(pimem-conformance {__version__})"
    assert version_line(spec) == f"pimem-conformance {__version__} (spec 9.9.9 (open), adapter protocol 1)"
    _, lines = run(tmp_path, [])
    summary = render_summary(summarise(lines), "pretty").splitlines()[0]
    assert summary == f"fake 0 against spec 9.9.9 (open) {suite}"
    freeze_release(spec, "9.9.9", {}, load_cases(spec))
    assert version_line(spec) == f"pimem-conformance {__version__} (spec 9.9.9, adapter protocol 1)"
    _, lines = run(tmp_path, [])
    assert (lines[0]["spec_version"], lines[0]["spec_frozen"]) == ("9.9.9", True)
    assert render_summary(summarise(lines), "pretty").splitlines()[0] == f"fake 0 against spec 9.9.9 {suite}"
    (spec / "README.md").write_text("**Spec version: 9.10.0.**\n")  # the next version, still open
    _, lines = run(tmp_path, [], "--as-of", "9.9.9")
    header = lines[0]
    assert (header["spec_version"], header["spec_frozen"], header["as_of"]) == ("9.9.9", True, "9.9.9")
    assert page_data([("r", lines)])["implementations"][0]["spec_version"] == "9.9.9"
    _, lines = run(tmp_path, [])
    assert page_data([("r", lines)])["implementations"][0]["spec_version"] == "9.10.0 (open)"
    assert page_data([("r", lines)])["implementations"][0]["suite_version"] == __version__


def write_baseline(tmp_path: Path, *ids: str) -> Path:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"known_failures": [{"id": entry, "reason": "known"} for entry in ids]}))
    return path


def test_a_listed_failure_is_xfail_and_the_run_is_clean(tmp_path: Path) -> None:
    baseline = write_baseline(tmp_path, "finds-one")
    code, lines = run(tmp_path, [PASSING, FAILING], "--baseline", str(baseline))
    assert code == 0
    assert outcomes(lines) == {"finds-both": "pass", "finds-one": "xfail"}


def test_a_listed_case_that_passes_is_xpass_and_fails_the_run(tmp_path: Path) -> None:
    baseline = write_baseline(tmp_path, "finds-both")
    code, lines = run(tmp_path, [PASSING], "--baseline", str(baseline))
    assert code == 1
    assert outcomes(lines) == {"finds-both": "xpass"}


def test_a_baseline_entry_naming_no_case_is_stale(tmp_path: Path) -> None:
    baseline = write_baseline(tmp_path, "no-such-case")
    code, lines = run(tmp_path, [PASSING], "--baseline", str(baseline))
    assert code == 1
    assert lines[-1]["stale_baseline"] == ["no-such-case"]


def two_step_case() -> dict[str, Any]:
    case = search_case("two-steps", "alpha", ["alpha"])
    case["steps"].append({"tool": {"action": "search", "query": "beta"}, "expect": {"ids": ["gamma"]}})
    return case


def test_step_entries_cover_exactly_the_failing_steps(tmp_path: Path) -> None:
    code, lines = run(
        tmp_path, [two_step_case()], "--baseline", str(write_baseline(tmp_path, "two-steps:step-1"))
    )
    assert (code, outcomes(lines)) == (0, {"two-steps": "xfail"})


def test_a_step_entry_for_a_passing_step_is_stale(tmp_path: Path) -> None:
    baseline = write_baseline(tmp_path, "two-steps:step-0", "two-steps:step-1")
    code, lines = run(tmp_path, [two_step_case()], "--baseline", str(baseline))
    assert (code, outcomes(lines)) == (1, {"two-steps": "xpass"})


def test_an_unlisted_failing_step_is_a_failure(tmp_path: Path) -> None:
    code, lines = run(
        tmp_path, [two_step_case()], "--baseline", str(write_baseline(tmp_path, "two-steps:step-0"))
    )
    assert (code, outcomes(lines)) == (1, {"two-steps": "fail"})


def test_write_baseline_then_run_with_it_is_clean(tmp_path: Path) -> None:
    baseline = tmp_path / "written.json"
    code, _ = run(tmp_path, [PASSING, FAILING], "--write-baseline", str(baseline))
    assert code == 1
    assert [entry["id"] for entry in json.loads(baseline.read_text())["known_failures"]] == ["finds-one"]
    code, lines = run(tmp_path, [], "--baseline", str(baseline))
    assert (code, outcomes(lines)) == (0, {"finds-both": "pass", "finds-one": "xfail"})


@pytest.mark.parametrize(
    ("mode", "kind"),
    [
        ("crash", "crash"),
        ("hang", "timeout"),
        ("garbage", "framing"),
        ("invalid-json", "framing"),
        ("wrong-protocol", "handshake"),
        ("errored", "crash"),
        ("bad-seq", "framing"),
    ],
)
def test_a_broken_adapter_errors_on_every_case_and_exits_3(
    tmp_path: Path, mode: str, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [search_case(f"case-{n}", "alpha", ["alpha"]) for n in range(3)]
    code, lines = run(tmp_path, cases, "--timeout", "0.5", "--max-errors", "5", mode=mode)
    assert code == 3
    assert set(outcomes(lines).values()) == {"error"}
    assert all(line["error"]["message"] for line in lines if line["type"] == "case")
    assert {line["error"]["kind"] for line in lines if line["type"] == "case"} == {kind}
    capsys.readouterr()
    assert main(["summary", str(tmp_path / "report.jsonl"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["adapter_errors"] == {kind: 3}


def test_the_run_goes_on_after_an_adapter_crash(tmp_path: Path) -> None:
    cases = [
        search_case("before", "alpha", ["alpha"]),
        search_case("crashes", "boom", ["boom"]),
        search_case("after", "beta", ["beta"]),
    ]
    code, lines = run(tmp_path, cases, mode="crash-on-boom")
    assert code == 1
    assert outcomes(lines) == {"before": "pass", "crashes": "error", "after": "pass"}
    crashed = next(line for line in lines if line.get("id") == "crashes")
    assert "crashing on purpose" in crashed["error"]["stderr"]


def test_max_errors_consecutive_errors_stop_the_run(tmp_path: Path) -> None:
    cases = [search_case(f"case-{n}", "alpha", ["alpha"]) for n in range(4)]
    code, lines = run(tmp_path, cases, "--timeout", "0.3", "--max-errors", "2", mode="hang")
    assert code == 3
    assert list(outcomes(lines).values()) == ["error", "error", "not_run", "not_run"]
    assert lines[-1]["stopped_early"] is True


def test_unclaimed_profiles_are_not_applicable_and_never_a_clean_run(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [search_case("ctx", "alpha", ["alpha"], profile="context")])
    assert (code, outcomes(lines)) == (1, {"ctx": "not_applicable"})


def test_claimed_optional_profiles_run(tmp_path: Path) -> None:
    code, lines = run(
        tmp_path, [search_case("ctx", "alpha", ["alpha"], profile="context")], mode="profiles-core+context"
    )
    assert (code, outcomes(lines)) == (0, {"ctx": "pass"})


def test_validate_adapter_turns_a_malformed_response_into_an_error(tmp_path: Path) -> None:
    code, lines = run(tmp_path, [PASSING], mode="bad-shape")
    assert (code, outcomes(lines)) == (0, {"finds-both": "pass"})
    code, lines = run(tmp_path, [], "--validate-adapter", mode="bad-shape")
    assert code == 3
    assert "violates the protocol schema" in lines[1]["error"]["message"]
    assert lines[1]["error"]["kind"] == "schema"


@pytest.mark.parametrize(
    "args",
    [
        ["run"],  # --impl missing
        ["run", "--impl", "x", "--profile", "nonsense"],
        ["run", "--impl", "x", "-k", "matches-no-case-at-all"],
        ["run", "--impl", "x", "--max-errors", "0"],
        ["bogus-command"],
    ],
)
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse's own usage errors
        code = int(exit_.code or 0)
    assert code == 2
    assert capsys.readouterr().err


def test_a_malformed_baseline_is_a_usage_error(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, [PASSING])
    baseline = tmp_path / "b.json"
    baseline.write_text(json.dumps({"known_failures": [{"id": "Not An Id"}]}))
    assert main(["run", "--spec", str(spec), "--impl", faux_command(), "--baseline", str(baseline)]) == 2


def test_cov_needs_an_in_process_implementation(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, [PASSING])
    assert main(["run", "--spec", str(spec), "--impl", faux_command(), "--cov"]) == 2


def test_seed_shuffles_the_order_reproducibly(tmp_path: Path) -> None:
    cases = [search_case(f"case-{n}", "alpha", ["alpha"]) for n in range(8)]
    _, first = run(tmp_path, cases, "--seed", "7")
    _, second = run(tmp_path, [], "--seed", "7")
    order = list(outcomes(first))
    assert order == list(outcomes(second)) and order != sorted(order)
    assert first[0]["seed"] == 7


def test_junit_and_summaries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junit = tmp_path / "junit.xml"
    run(
        tmp_path, [PASSING, FAILING, search_case("ctx", "a", ["a"], profile="context")], "--junit", str(junit)
    )
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    capsys.readouterr()
    assert main(["summary", str(tmp_path / "report.jsonl"), "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["totals"]["pass"] == 1 and summary["totals"]["fail"] == 1
    assert summary["requirements"]["JM-SEARCH-001"]["status"] == "fail"
    assert summary["profiles"]["context"]["status"] == "not_applicable"
    assert main(["summary", str(tmp_path / "report.jsonl"), "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| JM-SEARCH-001 | fail |" in markdown and "`finds-one`" in markdown
