"""`pimem-conformance`: run the suite against an implementation, summarise reports, lint the spec.

Exit codes of `run`: 0 clean; 1 failures, errors or a stale baseline (and any run in which
nothing applicable ran); 2 usage errors; 3 the adapter is broken (every case that ran errored).
Every run also keeps its report as the last report (`summary` and `show` read it by default).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pimem_conformance import __version__
from pimem_conformance._adapter import PROTOCOL_VERSION, Adapter
from pimem_conformance._cases import Case, CaseFileError, load_cases
from pimem_conformance._connector import connector_for, in_process_entry_point
from pimem_conformance._console import describe_report_line
from pimem_conformance._coverage import ReferenceCoverage
from pimem_conformance._lint import LintReport, lint_spec, render_lint
from pimem_conformance._paths import examples_dir, spec_dir
from pimem_conformance._releases import (
    freeze_release,
    release_case_ids,
    release_notes,
    release_requirements,
    release_spec,
    scored,
)
from pimem_conformance._report import (
    XPASS_MESSAGE,
    RunSettings,
    read_report,
    render_summary,
    report_lines,
    scored_release,
    spec_label,
    spec_version,
    summarise,
    utc_now,
    write_junit,
    write_report,
)
from pimem_conformance._report_html import badge_svg, render_page
from pimem_conformance._rule_table import write_rules_doc
from pimem_conformance._runner import EXIT_USAGE, Baseline, BaselineError, CaseResult, run_cases, select_cases
from pimem_conformance._schemas import load_schemas
from pimem_conformance._workspace import scratch_dir

__all__ = ["main"]

PROFILES = ("core", "collector", "backfill", "forget", "context", "ranking", "damage")
EXAMPLES = {"node": "minimal-adapter.mjs", "python": "minimal_adapter.py"}
_RUN_EXAMPLE = {"node": "node adapter.mjs", "python": "python3 adapter.py"}
_ERRORS_SHOWN = 3  # errored cases whose stderr and pending request the console shows


def last_report_path() -> Path:
    """Where every run keeps its report for `summary` and `show` ($XDG_CACHE_HOME or ~/.cache)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache, "pimem-conformance", "last-report.jsonl")


def version_line(spec_folder: Path | None = None) -> str:
    """The suite's own version (it changes when the runner's rules change), the spec release it
    scores by default (`(open)` until it is frozen), and the adapter protocol."""
    spec = spec_label(*scored_release(spec_folder, None))
    return f"pimem-conformance {__version__} (spec {spec}, adapter protocol {PROTOCOL_VERSION})"


def _selection() -> argparse.ArgumentParser:
    selection = argparse.ArgumentParser(add_help=False)
    selection.add_argument(
        "--profile",
        action="append",
        choices=PROFILES,
        default=[],
        help="only the cases of this profile (repeatable)",
    )
    selection.add_argument(
        "-k", dest="pattern", help="only cases whose id, area or requirement matches (substring or glob)"
    )
    return selection


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pimem-conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=version_line())
    commands = parser.add_subparsers(dest="command", required=True)
    selection = _selection()
    spec_option = argparse.ArgumentParser(add_help=False)
    spec_option.add_argument(
        "--spec",
        type=Path,
        default=None,
        help="a spec folder (cases/, schemas/) other than the one shipped with the suite",
    )

    run = commands.add_parser(
        "run", parents=[spec_option, selection], help="run the cases against an implementation"
    )
    run.add_argument(
        "--impl",
        required=True,
        help="'reference' (an entry point of pimem_conformance.implementations, run in-process) "
        'or an adapter command, e.g. "node adapter.mjs"',
    )
    run.add_argument("--baseline", type=Path, help="known failures (JSON): listed failures are xfail")
    run.add_argument(
        "--write-baseline",
        type=Path,
        metavar="FILE",
        help="write the current failures as a baseline file; over an existing baseline, only if no "
        "new case fails (see --accept-new-failures)",
    )
    run.add_argument(
        "--accept-new-failures",
        action="store_true",
        help="let --write-baseline record failures the existing baseline does not list",
    )
    run.add_argument(
        "--prune-baseline",
        action="store_true",
        help="rewrite --baseline without the cases that now pass (and entries naming no case)",
    )
    run.add_argument("--report", type=Path, help="write the JSON Lines report here")
    run.add_argument("--junit", type=Path, help="write JUnit XML here")
    run.add_argument("--timeout", type=float, default=30.0, help="seconds per request (subprocess adapters)")
    run.add_argument(
        "--max-errors", type=int, default=3, help="stop after this many consecutive adapter errors"
    )
    run.add_argument("--seed", type=int, help="shuffle the case order with this seed")
    run.add_argument(
        "--as-of",
        metavar="VERSION",
        help="judge by frozen spec release VERSION: its case bodies against its schemas, as frozen "
        "(cases added later are not scored; the runner's own rules are this suite's)",
    )
    run.add_argument(
        "--validate-adapter",
        action="store_true",
        help="check every request and response against spec/schemas/protocol/",
    )
    run.add_argument("--cov", action="store_true", help="measure the in-process reference's branch coverage")
    run.add_argument("--quiet", "-q", action="store_true", help="print only the summary")
    run.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="print every mismatch of every failing step (0-based), with expected and actual",
    )

    summary = commands.add_parser("summary", help="summarise a report (default: the last run's)")
    summary.add_argument("report", type=Path, nargs="?", help="a report written by run --report")
    summary.add_argument("--format", choices=("pretty", "markdown", "json"), default="pretty")

    show = commands.add_parser(
        "show",
        parents=[spec_option],
        help="one case: its journals, steps, requests and expectations, and the last report's answer",
    )
    show.add_argument("case", metavar="CASE", help="a case id (see `list`)")
    show.add_argument(
        "--report", type=Path, help="the report to take the answer from (default: the last run's)"
    )
    report = commands.add_parser(
        "report", help="an HTML page over one or more reports (--html), or an SVG badge of one (--badge)"
    )
    report.add_argument("reports", type=Path, nargs="+", metavar="REPORT.jsonl")
    report.add_argument("--html", type=Path, help="write the self-contained page here")
    report.add_argument("--badge", type=Path, help="write the badge of the one report given here")

    commands.add_parser(
        "list", parents=[spec_option, selection], help="list the cases: id, profile, polarity, requirements"
    )
    dump = commands.add_parser(
        "dump", parents=[spec_option, selection], help="print the cases as plain JSON (to vendor the cases)"
    )
    dump.add_argument("--output", "-o", type=Path, help="write to this file instead of stdout")

    init = commands.add_parser(
        "init-adapter", help="print a complete example adapter to start from (save it with > FILE)"
    )
    init.add_argument("--lang", choices=tuple(EXAMPLES), default="node", help="node (default) or python")

    lint = commands.add_parser(
        "lint", parents=[spec_option], help="check the spec: requirement coverage, case validity, ID ledger"
    )
    lint.add_argument("--json", action="store_true", help="print the coverage numbers as JSON")
    lint.add_argument(
        "--freeze",
        metavar="VERSION",
        help="freeze the spec's version: write spec/releases/VERSION.json (requirement levels, case, "
        "schema and fixture hashes) and spec/releases/VERSION/ (the case bodies and schemas)",
    )
    lint.add_argument(
        "--write",
        action="store_true",
        help="first write what the spec's data gives (redaction-rules.md from redaction-rules.json)",
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
    if options.prune_baseline and not options.baseline:
        print("--prune-baseline rewrites the file given with --baseline FILE", file=sys.stderr)
        return EXIT_USAGE
    try:
        baseline = Baseline.load(options.baseline) if options.baseline else None
    except BaselineError as exc:
        print(exc, file=sys.stderr)
        return EXIT_USAGE
    spec = options.spec or spec_dir()
    all_cases = load_cases(options.spec)
    judged_by = spec  # the spec folder whose case bodies and schemas the run judges by
    requirements = None  # those of the release judged; None: the spec now
    if options.as_of:
        requirements = release_requirements(spec, options.as_of)
        released = release_case_ids(spec, options.as_of)  # ValueError: no such release
        judged_by = release_spec(spec, options.as_of)
        later = [case.id for case in _selected(all_cases, options) if case.id not in released]
        if later:
            print(f"not scored as of spec {options.as_of} (added later): {len(later)} case(s)")
        if not options.pattern and not options.profile:
            print("\n".join(release_notes(spec, options.as_of, all_cases)))
    schemas = load_schemas(judged_by)
    cases = _selected(load_cases(judged_by) if options.as_of else all_cases, options)
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
            suite_case_ids={case.id for case in all_cases} | {case.id for case in cases},
            max_errors=options.max_errors,
            seed=options.seed,
            workdir=Path(workdir),
            on_result=None if options.quiet else _progress,
            requirements=requirements,
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
        as_of=options.as_of,
    )
    lines = report_lines(settings, run, started=started, exit_code=exit_code, coverage=percent)
    if options.report:
        write_report(options.report, lines, load_schemas())  # the suite's own report schema
    _keep_as_last(lines)
    if options.junit:
        write_junit(options.junit, run)
    summary = render_summary(summarise(lines), "pretty")
    print(summary.replace("; -v shows all)", "; all below)") if options.verbose else summary)
    _print_details(lines, verbose=options.verbose)
    if run.stale_baseline_ids:
        print(f"stale baseline entries (no such case): {', '.join(run.stale_baseline_ids)}")
    if run.stopped_early:
        print(f"stopped after {options.max_errors} consecutive adapter errors")
    if percent is not None:
        print(f"reference branch coverage: {percent:.1f}%")
    if options.write_baseline:
        _write_baseline(options.write_baseline, lines, accept_new=options.accept_new_failures)
    if options.prune_baseline:
        _prune_baseline(options.baseline, lines, {case.id for case in all_cases})
    return exit_code


def _selected(cases: list[Case], options: argparse.Namespace) -> list[Case]:
    return select_cases(cases, profiles=options.profile, pattern=options.pattern)


def _keep_as_last(lines: list[dict[str, Any]]) -> None:
    """The report of this run, for `summary` and `show` without a path; a run never fails for it."""
    path = last_report_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
        )
    except OSError as exc:
        print(f"(the last report was not kept: {exc})", file=sys.stderr)


def _print_details(lines: list[dict[str, Any]], *, verbose: bool) -> None:
    """Adapter errors always (the first few: why it broke); with -v, every failing step as well."""
    cases = [line for line in lines if line.get("type") == "case"]
    errored = [line for line in cases if line.get("error", {}).get("source") == "adapter"]
    failing = [line for line in cases if line["outcome"] == "fail"] if verbose else []
    shown = failing + errored[:_ERRORS_SHOWN]
    if not shown:
        return
    print("\ndetails (steps are 0-based):")
    previous = None
    for line in shown:
        error = line.get("error", {})
        same = previous is not None and (error.get("message"), error.get("stderr")) == previous
        if same:  # a restarted adapter that breaks the same way again
            print(f"{line['id']} [{line['outcome']}]: the same adapter error as above")
            continue
        print("\n".join(describe_report_line(line)))
        if error:
            previous = (error.get("message"), error.get("stderr"))
    if len(errored) > _ERRORS_SHOWN:
        print(f"… and {len(errored) - _ERRORS_SHOWN} more adapter error(s); --report FILE has them all")
    elif failing == [] and any(line["outcome"] == "fail" for line in cases):
        print("(-v shows every mismatch of every failing step)")


def _failing(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("type") == "case" and line["raw_outcome"] in ("fail", "error")]


def _write_baseline(path: Path, lines: list[dict[str, Any]], *, accept_new: bool) -> None:
    """Today's failures as a baseline; over an existing one, new failures only when accepted."""
    failing = _failing(lines)
    if path.exists() and not accept_new:
        try:
            known = Baseline.load(path).case_ids()
        except BaselineError:
            known = set()
        new = [line["id"] for line in failing if line["id"] not in known]
        if new:
            print(
                f"--write-baseline: not written: {len(new)} case(s) fail that {path} does not list "
                f"({', '.join(new[:5])}{', …' if len(new) > 5 else ''}); fix them, or add "
                "--accept-new-failures to record them as known",
                file=sys.stderr,
            )
            return
    entries = [{"id": line["id"], "reason": _reason(line)} for line in failing]
    _save_baseline(path, entries)
    print(f"baseline {path}: {len(entries)} known failure(s)")


def _prune_baseline(path: Path, lines: list[dict[str, Any]], suite_ids: set[str]) -> None:
    """The baseline without entries for cases that now pass or no longer exist; cases this run
    did not select keep their entries."""
    content = json.loads(path.read_text(encoding="utf-8"))
    ran = {line["id"]: line for line in lines if line.get("type") == "case"}

    def keep(entry: dict[str, Any]) -> bool:
        case_id, _, step = entry["id"].partition(":step-")
        if case_id not in suite_ids:
            return False
        line = ran.get(case_id)
        if line is None or line["raw_outcome"] in ("not_applicable", "not_run"):
            return True
        if line["raw_outcome"] == "pass":
            return False
        return (
            not step
            or line["raw_outcome"] == "error"
            or any(failure["step"] == int(step) for failure in line.get("actual", []))
        )

    entries = content["known_failures"]
    kept = [entry for entry in entries if keep(entry)]
    _save_baseline(path, kept)
    print(f"baseline {path}: removed {len(entries) - len(kept)} entr(ies) that now pass; {len(kept)} remain")


def _save_baseline(path: Path, entries: list[dict[str, Any]]) -> None:
    path.write_text(
        json.dumps({"known_failures": entries}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def _reason(line: dict[str, Any]) -> str:
    if "error" in line:
        return f"error: {line['error']['message']}"
    first = line["actual"][0]
    return f"step {first['step']} (0-based): {first['mismatches'][0]['message']}"


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


def _list(options: argparse.Namespace) -> int:
    cases = _selected(load_cases(options.spec), options)
    for case in cases:
        print(f"{case.id}  [{case.profile}, {case.polarity}]  {' '.join(case.requirements)}")
    return 0 if cases else _no_match(options)


def _no_match(options: argparse.Namespace) -> int:
    print(f"no case matches (-k {options.pattern!r}, --profile {options.profile})", file=sys.stderr)
    return EXIT_USAGE


def _dump(options: argparse.Namespace) -> int:
    cases = _selected(load_cases(options.spec), options)
    if not cases:
        return _no_match(options)
    dumped = {
        "spec_version": spec_version(options.spec),
        "cases": [{"area": case.area, **case.raw} for case in cases],
    }
    text = json.dumps(dumped, indent=2, ensure_ascii=False) + "\n"
    if options.output is None:
        sys.stdout.write(text)
    else:
        options.output.write_text(text, encoding="utf-8")
    return 0


def _report_or_last(path: Path | None) -> Path:
    chosen = path or last_report_path()
    if not chosen.is_file():
        raise FileNotFoundError(
            f"no report at {chosen}: run `pimem-conformance run --impl ...` first, or name a report file"
        )
    return chosen


def _show(options: argparse.Namespace) -> int:
    cases = {case.id: case for case in load_cases(options.spec)}
    case = cases.get(options.case)
    if case is None:
        near = [case_id for case_id in cases if options.case in case_id][:10]
        hint = f"; did you mean: {', '.join(near)}" if near else "; `pimem-conformance list` names them all"
        print(f"no case {options.case!r}{hint}", file=sys.stderr)
        return EXIT_USAGE
    print(f"{case.id} ({case.area}, {case.profile}, {case.polarity}): {case.description}")
    print(f"requirements: {' '.join(case.requirements)}")
    raw = case.raw
    for path, journal in raw.get("journals", {}).items():
        print(f"journal {path}:")
        for line in journal.get("lines", []) if isinstance(journal, dict) else []:
            print(f"  {json.dumps(line, ensure_ascii=False)}")
    if raw.get("setup"):
        print(f"setup: {json.dumps(raw['setup'], ensure_ascii=False)}")
    print("steps (0-based):")
    for number, step in enumerate(raw["steps"]):
        sent = {key: value for key, value in step.items() if key != "expect"}
        print(f"  step {number}: {json.dumps(sent, ensure_ascii=False)}")
        if "expect" in step:
            print(f"    expect: {json.dumps(step['expect'], ensure_ascii=False)}")
    _show_answer(case.id, options.report)
    return 0


def _show_answer(case_id: str, report: Path | None) -> None:
    try:
        path = _report_or_last(report)
    except FileNotFoundError:
        print("last report: none yet (`pimem-conformance run` keeps one)")
        return
    found = [line for line in read_report(path) if line.get("type") == "case" and line["id"] == case_id]
    if not found:
        print(f"last report ({path}): this case was not run")
        return
    line = found[0]
    print(f"last report ({path}): {line['outcome']}")
    if line["outcome"] == "xpass":
        print(f"  {XPASS_MESSAGE}")
    elif line["outcome"] in ("fail", "error"):
        print("\n".join(describe_report_line(line)[1:]))


def _init_adapter(lang: str) -> int:
    sys.stdout.write((examples_dir() / EXAMPLES[lang]).read_text(encoding="utf-8"))
    saved = "adapter.mjs" if lang == "node" else "adapter.py"
    if not sys.stdout.isatty():
        print(
            f'(then: pimem-conformance run --impl "{_RUN_EXAMPLE[lang]}" with the file saved as {saved})',
            file=sys.stderr,
        )
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


def _main(options: argparse.Namespace) -> int:
    if options.command == "run":
        return _run(options)
    if options.command == "summary":
        print(render_summary(summarise(read_report(_report_or_last(options.report))), options.format))
        return 0
    if options.command == "show":
        return _show(options)
    if options.command == "report":
        return _report(options.reports, options.html, options.badge)
    if options.command == "list":
        return _list(options)
    if options.command == "dump":
        return _dump(options)
    if options.command == "init-adapter":
        return _init_adapter(options.lang)
    if options.write:
        write_rules_doc(options.spec or spec_dir())
    report = lint_spec(options.spec or spec_dir())
    if options.freeze:
        return _freeze(options.spec or spec_dir(), options.freeze, report)
    if options.json:
        print("\n".join(report.problems), file=sys.stderr)
        print(json.dumps(report.numbers()))
    else:
        print(render_lint(report))
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    options = _parser().parse_args(argv)
    try:
        code = _main(options)
        sys.stdout.flush()
    except BrokenPipeError:  # `pimem-conformance list | head`: the reader has all it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        return 0
    except CaseFileError as exc:
        print(f"invalid case file:\n{exc}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError) as exc:
        print(f"pimem-conformance: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return code


if __name__ == "__main__":
    sys.exit(main())
