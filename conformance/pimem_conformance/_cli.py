"""`pimem-conformance`: run the suite against an implementation, summarise reports, lint the spec.

Exit codes of `run`: 0 clean; 1 failures, errors or a stale baseline (and any run in which
nothing applicable ran); 2 usage errors; 3 the adapter is broken (every case that ran errored).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pimem_conformance._adapter import Adapter
from pimem_conformance._cases import CaseFileError, load_cases
from pimem_conformance._connector import connector_for, in_process_entry_point
from pimem_conformance._coverage import ReferenceCoverage
from pimem_conformance._lint import LintReport, lint_spec, render_lint
from pimem_conformance._paths import spec_dir
from pimem_conformance._releases import freeze_release, release_case_ids, scored
from pimem_conformance._report import (
    RunSettings,
    read_report,
    render_summary,
    report_lines,
    spec_version,
    summarise,
    utc_now,
    write_junit,
    write_report,
)
from pimem_conformance._report_html import badge_svg, render_page
from pimem_conformance._runner import EXIT_USAGE, Baseline, BaselineError, CaseResult, run_cases, select_cases
from pimem_conformance._schemas import load_schemas
from pimem_conformance._workspace import scratch_dir

__all__ = ["main"]

PROFILES = ("core", "collector", "backfill", "forget", "context", "ranking")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pimem-conformance", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    spec_option = argparse.ArgumentParser(add_help=False)
    spec_option.add_argument(
        "--spec",
        type=Path,
        default=None,
        help="a spec folder (cases/, schemas/) other than the one shipped with the suite",
    )

    run = commands.add_parser("run", parents=[spec_option], help="run the cases against an implementation")
    run.add_argument(
        "--impl",
        required=True,
        help="'reference' (an entry point of pimem_conformance.implementations, run in-process) "
        'or an adapter command, e.g. "node adapter.mjs"',
    )
    run.add_argument(
        "--profile",
        action="append",
        choices=PROFILES,
        default=[],
        help="run only the cases of this profile (repeatable)",
    )
    run.add_argument("--baseline", type=Path, help="known failures (JSON): listed failures are xfail")
    run.add_argument("--write-baseline", type=Path, help="write the current failures as a baseline file")
    run.add_argument("--report", type=Path, help="write the JSON Lines report here")
    run.add_argument("--junit", type=Path, help="write JUnit XML here")
    run.add_argument(
        "-k", dest="pattern", help="only cases whose id, area or requirement matches (substring or glob)"
    )
    run.add_argument("--timeout", type=float, default=30.0, help="seconds per request (subprocess adapters)")
    run.add_argument(
        "--max-errors", type=int, default=3, help="stop after this many consecutive adapter errors"
    )
    run.add_argument("--seed", type=int, help="shuffle the case order with this seed")
    run.add_argument(
        "--as-of",
        metavar="VERSION",
        help="score only the cases of frozen spec release VERSION (later cases are not scored)",
    )
    run.add_argument(
        "--validate-adapter",
        action="store_true",
        help="check every request and response against spec/schemas/protocol/",
    )
    run.add_argument("--cov", action="store_true", help="measure the in-process reference's branch coverage")
    run.add_argument("--quiet", "-q", action="store_true", help="print only the summary")

    summary = commands.add_parser("summary", help="summarise a report")
    summary.add_argument("report", type=Path)
    summary.add_argument("--format", choices=("pretty", "markdown", "json"), default="pretty")

    report = commands.add_parser(
        "report", help="an HTML page over one or more reports (--html), or an SVG badge of one (--badge)"
    )
    report.add_argument("reports", type=Path, nargs="+", metavar="REPORT.jsonl")
    report.add_argument("--html", type=Path, help="write the self-contained page here")
    report.add_argument("--badge", type=Path, help="write the badge of the one report given here")

    commands.add_parser(
        "list", parents=[spec_option], help="list every case: id, profile, polarity, requirements"
    )
    dump = commands.add_parser(
        "dump", parents=[spec_option], help="print every case as plain JSON (to vendor the cases)"
    )
    dump.add_argument("--output", "-o", type=Path, help="write to this file instead of stdout")

    lint = commands.add_parser(
        "lint", parents=[spec_option], help="check the spec: requirement coverage, case validity, ID ledger"
    )
    lint.add_argument("--json", action="store_true", help="print the coverage numbers as JSON")
    lint.add_argument(
        "--freeze",
        metavar="VERSION",
        help="write spec/releases/VERSION.json (requirement levels, case hashes) for the spec's version",
    )
    return parser


def _progress(result: CaseResult) -> None:
    mark = {
        "pass": ".",
        "fail": "F",
        "error": "E",
        "xfail": "x",
        "xpass": "X",
        "not_applicable": "-",
        "not_run": "s",
    }[result.outcome]
    print(mark, end="", flush=True)


def _run(options: argparse.Namespace) -> int:
    if options.max_errors < 1 or options.timeout <= 0:
        print("--max-errors must be ≥ 1 and --timeout > 0", file=sys.stderr)
        return EXIT_USAGE
    try:
        baseline = Baseline.load(options.baseline) if options.baseline else None
    except BaselineError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    schemas = load_schemas(options.spec)
    all_cases = load_cases(options.spec)
    cases = select_cases(all_cases, profiles=options.profile, pattern=options.pattern)
    if options.as_of:
        released = release_case_ids(options.spec or spec_dir(), options.as_of)
        later = [case.id for case in cases if case.id not in released]
        cases = [case for case in cases if case.id in released]
        if later:
            print(f"not scored as of spec {options.as_of} (added later): {len(later)} case(s)")
    withdrawn = [case.id for case in cases if not scored(case, options.as_of)]
    cases = [case for case in cases if scored(case, options.as_of)]
    if withdrawn:
        print(f"not scored (withdrawn): {', '.join(withdrawn)}")
    if not cases:
        print(f"no case matches (-k {options.pattern!r}, --profile {options.profile})", file=sys.stderr)
        return EXIT_USAGE
    if options.cov and in_process_entry_point(options.impl) is None:
        print("--cov measures an in-process implementation (--impl reference)", file=sys.stderr)
        return EXIT_USAGE
    coverage = ReferenceCoverage() if options.cov else None
    if coverage is not None:
        coverage.start()  # before the entry point is loaded, so module-level code is measured
    connector = connector_for(options.impl, timeout=options.timeout)
    started = utc_now()
    with tempfile.TemporaryDirectory(prefix="pimem-run-", dir=scratch_dir()) as workdir:
        run = run_cases(
            Adapter(connector, schemas, validate=options.validate_adapter),
            cases,
            schemas,
            baseline=baseline,
            suite_case_ids={case.id for case in all_cases},
            max_errors=options.max_errors,
            seed=options.seed,
            workdir=Path(workdir),
            on_result=None if options.quiet else _progress,
        )
    if not options.quiet:
        print()
    percent = coverage.stop() if coverage is not None else None
    exit_code = run.exit_code()
    settings = RunSettings(
        impl=options.impl,
        selected_profiles=tuple(options.profile),
        pattern=options.pattern,
        seed=options.seed,
        validate_adapter=options.validate_adapter,
        baseline=str(options.baseline) if options.baseline else None,
        spec=options.spec,
    )
    lines = report_lines(settings, run, started=started, exit_code=exit_code, coverage=percent)
    if options.report:
        write_report(options.report, lines, load_schemas())  # the suite's own report schema
    if options.junit:
        write_junit(options.junit, run)
    if options.write_baseline:
        _write_baseline(options.write_baseline, lines)
    print(render_summary(summarise(lines), "pretty"))
    if run.stale_baseline_ids:
        print(f"stale baseline entries (no such case): {', '.join(run.stale_baseline_ids)}")
    if run.stopped_early:
        print(f"stopped after {options.max_errors} consecutive adapter errors")
    if percent is not None:
        print(f"reference branch coverage: {percent:.1f}%")
    return exit_code


def _write_baseline(path: Path, lines: list[dict[str, Any]]) -> None:
    failing = [
        line for line in lines if line.get("type") == "case" and line["raw_outcome"] in ("fail", "error")
    ]
    entries = [{"id": line["id"], "reason": _reason(line)} for line in failing]
    path.write_text(
        json.dumps({"known_failures": entries}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def _reason(line: dict[str, Any]) -> str:
    if "error" in line:
        return f"error: {line['error']['message']}"
    first = line["actual"][0]
    return f"step {first['step']}: {first['mismatches'][0]['message']}"


def _report(reports: list[Path], html: Path | None, badge: Path | None) -> int:
    if html is None and badge is None:
        print("report: say what to write, e.g. --html out.html or --badge out.svg", file=sys.stderr)
        return EXIT_USAGE
    if badge is not None and len(reports) != 1:
        print(f"report --badge is the badge of one report; {len(reports)} were given", file=sys.stderr)
        return EXIT_USAGE
    loaded = [(str(path), read_report(path)) for path in reports]
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(render_page(loaded), encoding="utf-8")
        print(f"wrote {html} ({len(loaded)} report(s))")
    if badge is not None:
        badge.parent.mkdir(parents=True, exist_ok=True)
        badge.write_text(badge_svg(loaded[0][1]), encoding="utf-8")
        print(f"wrote {badge}")
    return 0


def _list(spec: Path | None) -> int:
    for case in load_cases(spec):
        print(f"{case.id}  [{case.profile}, {case.polarity}]  {' '.join(case.requirements)}")
    return 0


def _dump(spec: Path | None, output: Path | None) -> int:
    dumped = {
        "spec_version": spec_version(spec),
        "cases": [{"area": case.area, **case.raw} for case in load_cases(spec)],
    }
    text = json.dumps(dumped, indent=2, ensure_ascii=False) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
    return 0


def _freeze(spec: Path, version: str, report: LintReport) -> int:
    """Freeze the spec as release `version`: only a clean spec, only its own stated version."""
    if version != spec_version(spec):
        print(f"--freeze {version}: the spec states version {spec_version(spec)}", file=sys.stderr)
        return EXIT_USAGE
    if not report.ok:
        print(render_lint(report), file=sys.stderr)
        return 1
    levels = {requirement.id: requirement.level for requirement in report.requirements}
    print(f"froze spec {version}: {freeze_release(spec, version, levels, report.cases)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    try:
        if options.command == "run":
            return _run(options)
        if options.command == "summary":
            print(render_summary(summarise(read_report(options.report)), options.format))
            return 0
        if options.command == "report":
            return _report(options.reports, options.html, options.badge)
        if options.command == "list":
            return _list(options.spec)
        if options.command == "dump":
            return _dump(options.spec, options.output)
        report = lint_spec(options.spec or spec_dir())
        if options.freeze:
            return _freeze(options.spec or spec_dir(), options.freeze, report)
        if options.json:
            print("\n".join(report.problems), file=sys.stderr)
            print(json.dumps(report.numbers()))
        else:
            print(render_lint(report))
        return 0 if report.ok else 1
    except CaseFileError as exc:
        print(f"invalid case file:\n{exc}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError) as exc:
        print(f"pimem-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
