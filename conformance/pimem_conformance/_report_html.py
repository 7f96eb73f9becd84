"""`pimem-conformance report`: one self-contained HTML page over any number of reports, and a badge.

The page is a local file that shows adapter output, so every value from a report is untrusted:
the data travels as JSON in a non-executable block (`<` escaped), the page's one script puts
every text in with textContent, and a <meta> CSP allows only that script and stylesheet (by
hash), nothing else.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from pimem_conformance._report import spec_label
from pimem_conformance._runner import OUTCOMES

__all__ = ["badge_svg", "badge_text", "page_data", "render_page"]

_PAGE = Path(__file__).with_name("_report_page")
_FAILING = ("fail", "error", "xpass")


def _counts(outcomes: Counter[str]) -> dict[str, int]:
    return {outcome: outcomes.get(outcome, 0) for outcome in OUTCOMES}


def scored(lines: list[dict[str, Any]]) -> tuple[int, int]:
    """(passed, total) of a report: total counts every case that applies to the implementation."""
    cases = [line for line in lines if line.get("type") == "case"]
    applicable = [case for case in cases if case["outcome"] != "not_applicable"]
    return sum(case["outcome"] == "pass" for case in applicable), len(applicable)


def _as_of(header: dict[str, Any]) -> str:
    """The spec release the report scored, `(open)` while it was not frozen."""
    return spec_label(
        str(header.get("as_of") or header.get("spec_version") or "unknown"), header.get("spec_frozen")
    )


def _steps(case: dict[str, Any]) -> list[dict[str, Any]]:
    """A failing case's steps, each with what the case expected and what the adapter did."""
    expected = {item["step"]: {k: v for k, v in item.items() if k != "step"} for item in case["expected"]}
    steps = []
    for failure in case["actual"]:
        step = failure.get("step")
        steps.append(
            {
                "step": step,
                "expected": expected.get(step, {}),
                "request": failure.get("request"),
                "mismatches": failure.get("mismatches", []),
            }
        )
    return steps


def _implementation(lines: list[dict[str, Any]], source: str) -> dict[str, Any]:
    header = next((line for line in lines if line.get("type") == "header"), {})
    footer = next((line for line in lines if line.get("type") == "footer"), {})
    cases = [line for line in lines if line.get("type") == "case"]
    about = header.get("implementation") or {"name": header.get("impl") or source, "version": "?"}
    by: dict[str, dict[str, Counter[str]]] = {
        "areas": defaultdict(Counter),
        "profiles": defaultdict(Counter),
        "requirements": defaultdict(Counter),
    }
    for case in cases:
        by["areas"][case["area"]][case["outcome"]] += 1
        by["profiles"][case["profile"]][case["outcome"]] += 1
        for requirement in case["requirements"]:
            by["requirements"][requirement][case["outcome"]] += 1
    passed, total = scored(lines)
    return {
        "source": source,
        "name": str(about.get("name")),
        "version": str(about.get("version")),
        "language": str(about.get("language", "")),
        "impl": header.get("impl"),
        "claimed_profiles": header.get("profiles", []),
        "spec_version": _as_of(header),
        "suite_version": (header.get("suite") or {}).get("version"),
        "started": header.get("started"),
        "totals": _counts(Counter(case["outcome"] for case in cases)),
        "corpus": footer.get("corpus"),  # secrets recall and look-alike false positives, per kind
        "passed": passed,
        "total": total,
        **{name: {key: _counts(value) for key, value in groups.items()} for name, groups in by.items()},
        "failures": [
            {
                "id": case["id"],
                "area": case["area"],
                "description": case.get("description", ""),
                "requirements": case["requirements"],
                "outcome": case["outcome"],
                "reason": case.get("reason"),
                "error": case.get("error"),
                "steps": _steps(case),
            }
            for case in cases
            if case["outcome"] in _FAILING
        ],
    }


def page_data(reports: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """What the page shows: one entry per report, and the columns every matrix shares."""
    implementations = [_implementation(lines, source) for source, lines in reports]
    names = Counter(f"{impl['name']} {impl['version']}" for impl in implementations)
    for impl in implementations:  # the same implementation twice (or patched): tell them apart by file
        name = f"{impl['name']} {impl['version']}"
        impl["label"] = name if names[name] == 1 else f"{name} · {Path(impl['source']).stem}"

    def union(name: str) -> list[str]:
        return sorted({key for implementation in implementations for key in implementation[name]})

    return {
        "secret_kinds": sorted(
            {kind for impl in implementations for kind in (impl["corpus"] or {}).get("secret_kinds", {})}
        ),
        "outcomes": list(OUTCOMES),
        "areas": union("areas"),
        "profiles": union("profiles"),
        "requirements": union("requirements"),
        "implementations": implementations,
    }


def _inline(text: str) -> tuple[str, str]:
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return text, f"'sha256-{digest}'"


def _json_for_html(value: Any) -> str:
    """JSON that cannot end its <script> block or open a comment: <, > and & are escaped."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_page(reports: list[tuple[str, list[dict[str, Any]]]]) -> str:
    style, style_hash = _inline((_PAGE / "report.css").read_text(encoding="utf-8"))
    script, script_hash = _inline((_PAGE / "report.js").read_text(encoding="utf-8"))
    csp = f"default-src 'none'; style-src {style_hash}; script-src {script_hash}; base-uri 'none'"
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        "<title>pimem conformance report</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n"
        '<header><h1>pimem conformance report</h1><p id="about"></p></header>\n'
        '<main id="report"><noscript>This page needs JavaScript to draw its tables.</noscript></main>\n'
        f'<script type="application/json" id="report-data">{_json_for_html(page_data(reports))}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def badge_text(lines: list[dict[str, Any]]) -> tuple[str, str]:
    header = next((line for line in lines if line.get("type") == "header"), {})
    passed, total = scored(lines)
    return f"pimem spec {_as_of(header)}", f"{passed}/{total}"


def badge_svg(lines: list[dict[str, Any]]) -> str:
    """A flat badge: "pimem spec 0.2.0 | 279/279", green when every applicable case passes."""
    label, message = badge_text(lines)
    passed, total = scored(lines)
    color = "#2e8b3a" if total and passed == total else "#c98a00" if passed >= 0.9 * total else "#c0392b"
    left, right = 6 * len(label) + 12, 6 * len(message) + 12
    width = left + right
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="20" role="img" '
        f'aria-label="{escape(label)}: {escape(message)}">'
        f"<title>{escape(label)}: {escape(message)}</title>"
        f'<rect width="{left}" height="20" fill="#555"/>'
        f'<rect x="{left}" width="{right}" height="20" fill="{color}"/>'
        '<g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11">'
        f'<text x="6" y="14">{escape(label)}</text>'
        f'<text x="{left + 6}" y="14">{escape(message)}</text>'
        "</g></svg>\n"
    )
