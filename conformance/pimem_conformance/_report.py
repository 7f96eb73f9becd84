"""Reports: the JSON Lines record of a run, JUnit XML for CI pages, and summaries of a report."""

from __future__ import annotations

import json
import platform
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pimem_conformance import __version__
from pimem_conformance._adapter import PROTOCOL_VERSION
from pimem_conformance._corpus_cases import corpus_tally
from pimem_conformance._paths import spec_dir
from pimem_conformance._releases import is_frozen
from pimem_conformance._runner import OUTCOMES, CaseResult, RunResult
from pimem_conformance._schemas import SCHEMA_ID_PREFIX, SchemaSet

__all__ = [
    "REPORT_SCHEMA_ID",
    "XPASS_MESSAGE",
    "RunSettings",
    "case_line",
    "read_report",
    "render_summary",
    "report_lines",
    "spec_label",
    "spec_version",
    "summarise",
    "utc_now",
    "write_junit",
    "write_report",
]

REPORT_SCHEMA_ID = f"{SCHEMA_ID_PREFIX}report-line"
_SPEC_VERSION = re.compile(r"\*\*Spec version: ([0-9A-Za-z.+-]+?)\.?\*\*")


def spec_version(spec: Path | None = None) -> str:
    """The version stated in `spec/README.md` ("**Spec version: 0.1.0.**")."""
    try:
        found = _SPEC_VERSION.search((spec or spec_dir()).joinpath("README.md").read_text(encoding="utf-8"))
    except OSError:
        found = None
    return found.group(1) if found else "unknown"


def spec_label(version: str, frozen: bool | None) -> str:
    """How a report names the spec release it scored: `0.2.0`, or `0.2.0 (open)` while no
    `releases/0.2.0.json` freezes it (its cases may still change)."""
    return version if frozen is not False else f"{version} (open)"


def scored_release(spec: Path | None, as_of: str | None) -> tuple[str, bool]:
    """The spec release a run scores (the `--as-of` version, else the one spec/README.md states)
    and whether it is frozen."""
    version = as_of or spec_version(spec)
    return version, is_frozen(spec or spec_dir(), version)


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class RunSettings:
    """What the run was asked to do, for the report header."""

    impl: str
    selected_profiles: tuple[str, ...] = ()
    pattern: str | None = None
    seed: int | None = None
    validate_adapter: bool = False
    baseline: str | None = None
    spec: Path | None = None  # None: the spec shipped with the suite
    as_of: str | None = None  # the frozen release judged by (run --as-of)


def header_line(settings: RunSettings, run: RunResult, started: str) -> dict[str, Any]:
    implementation = run.handshake
    version, frozen = scored_release(settings.spec, settings.as_of)
    return {
        "type": "header",
        "suite": {"name": "pimem-conformance", "version": __version__},
        "spec_version": version,
        "spec_frozen": frozen,
        "as_of": settings.as_of,
        "protocol": PROTOCOL_VERSION,
        "impl": settings.impl,
        "implementation": implementation.as_json() if implementation is not None else None,
        "profiles": list(implementation.profiles) if implementation is not None else [],
        "selected_profiles": list(settings.selected_profiles),
        "pattern": settings.pattern,
        "seed": settings.seed,
        "validate_adapter": settings.validate_adapter,
        "baseline": settings.baseline,
        "started": started,
        "run_info": {"python": platform.python_version(), "platform": sys.platform},
    }


def case_line(result: CaseResult) -> dict[str, Any]:
    case, run = result.case, result.run
    line: dict[str, Any] = {
        "type": "case",
        "id": case.id,
        "area": case.area,
        "description": case.description,
        "requirements": list(case.requirements),
        "profile": case.profile,
        "polarity": case.polarity,
        "outcome": result.outcome,
        "raw_outcome": result.raw_outcome,
        "expected": [],
        "actual": [],
    }
    if result.reason:
        line["reason"] = result.reason
    if run is not None:
        line["steps_run"] = run.steps_run
        line["expected"] = [
            {"step": failure.step, **case.steps[failure.step].get("expect", {})} for failure in run.failures
        ]
        line["actual"] = [failure.as_json() for failure in run.failures]
        if run.error is not None:
            line["error"] = {"source": "adapter", **run.error.as_context()}
        elif run.broken_case is not None:
            line["error"] = {"source": "case", "message": run.broken_case}
    return line


def _corpus(run: RunResult) -> dict[str, Any] | None:
    return corpus_tally(
        (
            result.case.id,
            result.run is not None and result.run.error is None and result.run.broken_case is None,
            [failure.step for failure in result.run.failures] if result.run is not None else [],
        )
        for result in run.results
    )


def footer_line(run: RunResult, exit_code: int, coverage: float | None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": "footer",
        "totals": run.totals(),
        "exit_code": exit_code,
        "stopped_early": run.stopped_early,
        "stale_baseline": run.stale_baseline_ids,
        "finished": utc_now(),
    }
    if coverage is not None:
        line["reference_branch_coverage"] = round(coverage, 1)
    corpus = _corpus(run)
    if corpus is not None:
        line["corpus"] = corpus
    return line


def report_lines(
    settings: RunSettings, run: RunResult, *, started: str, exit_code: int, coverage: float | None = None
) -> list[dict[str, Any]]:
    return [
        header_line(settings, run, started),
        *(case_line(result) for result in run.results),
        footer_line(run, exit_code, coverage),
    ]


def write_report(path: Path, lines: list[dict[str, Any]], schemas: SchemaSet) -> None:
    """Write the report, refusing one that its own schema rejects (a runner bug)."""
    for line in lines:
        problems = schemas.errors(REPORT_SCHEMA_ID, line)
        if problems:
            raise AssertionError(
                f"report line {line.get('type')} {line.get('id', '')} is invalid: {problems}"
            )
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


def read_report(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_junit(path: Path, run: RunResult) -> None:
    totals = run.totals()
    suite = ET.Element(
        "testsuite",
        {
            "name": "pimem-conformance",
            "tests": str(len(run.results)),
            "failures": str(totals["fail"] + totals["xpass"]),
            "errors": str(totals["error"]),
            "skipped": str(totals["not_applicable"] + totals["not_run"] + totals["xfail"]),
        },
    )
    for result in run.results:
        element = ET.SubElement(suite, "testcase", {"classname": result.case.area, "name": result.case.id})
        line = case_line(result)
        if result.outcome == "fail":
            messages = [m["message"] for failure in line["actual"] for m in failure["mismatches"]]
            failed = ET.SubElement(element, "failure", {"message": messages[0] if messages else "failed"})
            failed.text = json.dumps(line["actual"], indent=2, ensure_ascii=False)
        elif result.outcome == "xpass":
            ET.SubElement(
                element, "failure", {"message": f"passed but listed in the baseline: {result.reason}"}
            )
        elif result.outcome == "error":
            error = line.get("error", {})
            errored = ET.SubElement(
                element,
                "error",
                {"message": error.get("message", "error"), "type": error.get("kind", "case")},
            )
            errored.text = json.dumps(line.get("error", {}), indent=2, ensure_ascii=False)
        elif result.outcome in ("xfail", "not_applicable", "not_run"):
            ET.SubElement(element, "skipped", {"message": f"{result.outcome}: {result.reason}"})
    tree = ET.ElementTree(suite)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def summarise(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals and rollups per requirement and per profile, from the lines of a report."""
    header = next((line for line in lines if line.get("type") == "header"), {})
    footer = next((line for line in lines if line.get("type") == "footer"), {})
    cases = [line for line in lines if line.get("type") == "case"]
    by_requirement: dict[str, Counter[str]] = defaultdict(Counter)
    by_profile: dict[str, Counter[str]] = defaultdict(Counter)
    by_area: dict[str, Counter[str]] = defaultdict(Counter)
    for case in cases:
        for requirement in case["requirements"]:
            by_requirement[requirement][case["outcome"]] += 1
        by_profile[case["profile"]][case["outcome"]] += 1
        by_area[case["area"]][case["outcome"]] += 1
    totals = Counter(case["outcome"] for case in cases)

    def rollup(counts: Counter[str]) -> dict[str, Any]:
        return {**{outcome: counts.get(outcome, 0) for outcome in OUTCOMES}, "status": _status(counts)}

    return {
        "implementation": header.get("implementation"),
        "spec_version": header.get("spec_version"),
        "spec_frozen": header.get("spec_frozen"),
        "suite_version": (header.get("suite") or {}).get("version"),
        "totals": {outcome: totals.get(outcome, 0) for outcome in OUTCOMES},
        "requirements": {req: rollup(by_requirement[req]) for req in sorted(by_requirement)},
        "profiles": {profile: rollup(by_profile[profile]) for profile in sorted(by_profile)},
        "areas": {area: rollup(by_area[area]) for area in sorted(by_area)},
        "adapter_errors": dict(
            sorted(
                Counter(case["error"]["kind"] for case in cases if "kind" in case.get("error", {})).items()
            )
        ),
        "corpus": footer.get("corpus"),
        "failures": [
            {
                "id": case["id"],
                "outcome": case["outcome"],
                "requirements": case["requirements"],
                "message": _first_message(case),
            }
            for case in cases
            if case["outcome"] in ("fail", "error", "xpass")
        ],
    }


def _error_kinds(cases: list[dict[str, Any]]) -> list[str]:
    """The kind of each adapter error (crash, timeout, framing, schema, handshake)."""
    return [case["error"]["kind"] for case in cases if "kind" in case.get("error", {})]


def _status(counts: Counter[str]) -> str:
    """One word per requirement or profile: the worst outcome among its cases."""
    for outcome in ("error", "fail", "xpass", "xfail", "not_run", "pass"):
        if counts.get(outcome):
            return outcome
    return "not_applicable"


XPASS_MESSAGE = "now passes: remove it from the baseline (--prune-baseline does)"


def _first_message(case: dict[str, Any]) -> str:
    if case["outcome"] == "xpass":
        return XPASS_MESSAGE
    if "error" in case:
        return str(case["error"]["message"])
    mismatches = [
        f"step {failure['step']} (0-based): {mismatch['message']}"
        for failure in case.get("actual", [])
        for mismatch in failure["mismatches"]
    ]
    if mismatches:
        more = len(mismatches) - 1
        return mismatches[0] + (f" (+{more} more mismatch(es); -v shows all)" if more else "")
    return str(case.get("reason", ""))


def render_summary(summary: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(summary, indent=2, ensure_ascii=False)
    implementation = summary["implementation"] or {"name": "(adapter never started)", "version": "?"}
    spec = spec_label(str(summary["spec_version"]), summary.get("spec_frozen"))
    title = f"{implementation['name']} {implementation['version']} against spec {spec}"
    if summary.get("suite_version"):
        title += f" (pimem-conformance {summary['suite_version']})"
    totals = ", ".join(f"{count} {outcome}" for outcome, count in summary["totals"].items() if count)
    if fmt == "markdown":
        rows = [
            f"## {title}",
            "",
            f"**Totals:** {totals or 'no cases'}",
            "",
            "| profile | status | pass | fail | error | xfail | not applicable |",
            "|---|---|---|---|---|---|---|",
        ]
        rows += [
            f"| {name} | {r['status']} | {r['pass']} | {r['fail']} | {r['error']} | {r['xfail']} | "
            f"{r['not_applicable']} |"
            for name, r in summary["profiles"].items()
        ]
        rows += [
            "",
            "| area | status | pass | fail | error | xfail | not applicable |",
            "|---|---|---|---|---|---|---|",
        ]
        rows += [
            f"| {name} | {r['status']} | {r['pass']} | {r['fail']} | {r['error']} | {r['xfail']} | "
            f"{r['not_applicable']} |"
            for name, r in summary.get("areas", {}).items()
        ]
        rows += ["", "| requirement | status | pass | fail | error |", "|---|---|---|---|---|"]
        rows += [
            f"| {name} | {r['status']} | {r['pass']} | {r['fail']} | {r['error']} |"
            for name, r in summary["requirements"].items()
        ]
        rows += _corpus_rows(summary.get("corpus"), markdown=True)
        if summary["failures"]:
            rows += ["", "### Failures", ""]
            rows += [
                f"- `{f['id']}` ({f['outcome']}, {', '.join(f['requirements'])}): {f['message']}"
                for f in summary["failures"]
            ]
        return "\n".join(rows)
    rows = [title, f"totals: {totals or 'no cases'}", "", "profiles:"]
    rows += [
        f"  {name:<12} {r['status']:<15} pass {r['pass']:>4}  fail {r['fail']:>4}  error {r['error']:>4}"
        for name, r in summary["profiles"].items()
    ]
    areas = summary.get("areas", {})
    width = max([12, *map(len, areas)])
    rows += ["", "areas:"]
    rows += [
        f"  {name:<{width}} {r['status']:<15} pass {r['pass']:>4}  fail {r['fail']:>4}  error {r['error']:>4}"
        for name, r in areas.items()
    ]
    failing = {
        name: r
        for name, r in summary["requirements"].items()
        if r["status"] not in ("pass", "not_applicable")
    }
    rows += ["", f"requirements: {len(summary['requirements'])}, not passing: {len(failing)}"]
    rows += [f"  {name:<16} {r['status']}" for name, r in failing.items()]
    rows += _corpus_rows(summary.get("corpus"))
    if summary["adapter_errors"]:
        kinds = ", ".join(f"{count} {kind}" for kind, count in summary["adapter_errors"].items())
        rows += ["", f"adapter errors: {kinds}"]
    if summary["failures"]:
        rows += ["", "failures:"]
        rows += [f"  {f['id']} [{f['outcome']}] {f['message']}" for f in summary["failures"]]
    return "\n".join(rows)


def _corpus_rows(corpus: dict[str, Any] | None, *, markdown: bool = False) -> list[str]:
    """Recall and false positives of the secrets corpus, overall and for every kind below 100 %."""
    if corpus is None:
        return []
    secrets, lookalikes = corpus["secrets"], corpus["lookalikes"]
    overall = (
        f"secrets corpus: recall {secrets['recall']:.1%} ({secrets['caught']}/{secrets['planted']}), "
        f"false positives {lookalikes['false_positives']}/{lookalikes['planted']}"
    )
    missed = {kind: t for kind, t in corpus["secret_kinds"].items() if t["caught"] < t["planted"]}
    wrong = {kind: t for kind, t in corpus["lookalike_kinds"].items() if t["false_positives"]}
    if markdown:
        rows = ["", f"**{overall}**"]
        if missed or wrong:
            rows += ["", "| kind | planted | missed or redacted |", "|---|---|---|"]
            rows += [
                f"| {k} (secret) | {t['planted']} | {t['planted'] - t['caught']} |" for k, t in missed.items()
            ]
            rows += [
                f"| {k} (look-alike) | {t['planted']} | {t['false_positives']} |" for k, t in wrong.items()
            ]
        return rows
    rows = ["", overall]
    rows += [
        f"  {kind:<28} recall {t['recall']:.1%} ({t['caught']}/{t['planted']})" for kind, t in missed.items()
    ]
    rows += [
        f"  {kind:<28} false positives {t['false_positives']}/{t['planted']} (look-alike)"
        for kind, t in wrong.items()
    ]
    return rows
