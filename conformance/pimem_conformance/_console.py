"""What an implementer reads: a failing case's steps (0-based) with expected against actual, and
why a broken adapter broke (its last stderr lines, the request it left unanswered)."""

from __future__ import annotations

import json
from typing import Any

from pimem_conformance._cases import Case
from pimem_conformance._driver import CaseRun

__all__ = ["STDERR_LINES", "describe_error", "describe_failure", "describe_report_line"]

STDERR_LINES = 20
_ACTUAL_CHARS = 2000


def _json(value: Any, limit: int | None = None) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if limit is None or len(text) <= limit else text[:limit] + "…"


def describe_error(error: dict[str, Any]) -> list[str]:
    """An adapter error (a report's `error` object): message, pending request, stderr tail."""
    kind = f" ({error['kind']})" if "kind" in error else ""
    lines = [f"adapter error{kind}: {error['message']}"]
    if "request" in error:
        lines.append(f"pending request: {_json(error['request'], _ACTUAL_CHARS)}")
    stderr = error.get("stderr", "").rstrip("\n").splitlines()[-STDERR_LINES:]
    if stderr:
        lines.append(f"adapter stderr (last {len(stderr)} lines):")
        lines += [f"  | {line}" for line in stderr]
    elif error.get("source") == "adapter":
        lines.append("adapter stderr: (empty)")
    if error.get("traceback"):
        lines += ["traceback:", *(f"  {line}" for line in error["traceback"].rstrip("\n").splitlines())]
    return lines


def _failures(failures: list[dict[str, Any]]) -> list[str]:
    lines = []
    for failure in failures:
        lines.append(f"step {failure['step']} (0-based): {_json(failure['request'], _ACTUAL_CHARS)}")
        for mismatch in failure["mismatches"]:
            lines.append(f"  {mismatch['message']}")
            lines.append(f"    expected: {_json(mismatch['expected'], _ACTUAL_CHARS)}")
            lines.append(f"    actual:   {_json(mismatch['actual'], _ACTUAL_CHARS)}")
    return lines


def describe_report_line(line: dict[str, Any]) -> list[str]:
    """Everything a report says about one failing or erroring case."""
    lines = [f"{line['id']} [{line['outcome']}] ({', '.join(line['requirements'])}): {line['description']}"]
    if "error" in line:
        return lines + [f"  {text}" for text in describe_error(line["error"])]
    return lines + [f"  {text}" for text in _failures(line.get("actual", []))]


def describe_failure(case: Case, run: CaseRun) -> str:
    """Expected against actual for every failing step, readable in a pytest report."""
    if run.error is not None:
        return "\n".join(describe_error({"source": "adapter", **run.error.as_context()}))
    if run.broken_case is not None:
        return run.broken_case
    head = f"{case.id} ({', '.join(case.requirements)}): {case.description}"
    return "\n".join([head, *_failures([failure.as_json() for failure in run.failures])])
