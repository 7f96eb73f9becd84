"""`pimem-conformance report --html/--badge`: the page over several reports, the badge, untrusted
adapter output kept as text, and CI's page over the reference, the Node example and two broken
implementations (written to .cache/report/index.html), opened in a real Chromium."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broken_implementations import BROKEN
from pimem_conformance import main, page_data
from suite_kit import faux_command, make_spec, read_lines, search_case

REPO = Path(__file__).resolve().parents[2]
CI_PAGE = REPO / ".cache" / "report" / "index.html"
# Each broken implementation runs the cases of what it breaks, not the whole suite again: the
# page still shows four implementations, and the corpus table what the leaky one lets through.
CI_BROKEN = {"like-prefix-scope": "scope", "secrets-indexed": "corpus-secret-g*"}
INJECTED = "<script>window.__pwned=1</script><img/src=x/onerror=window.__pwned=2>"


def _faux_report(tmp_path: Path, name: str, cases: list[dict[str, Any]], mode: str = "ok") -> Path:
    spec = make_spec(tmp_path / name, cases)
    report = tmp_path / f"{name}.jsonl"
    main(["run", "--spec", str(spec), "--impl", faux_command(mode), "--report", str(report), "-q"])
    return report


@pytest.fixture
def hostile_report(tmp_path: Path) -> Path:
    """A run in which the adapter's answer carries markup: the failing case's actual ids are it."""
    cases = [
        search_case("passes", "alpha", ["alpha"]),
        search_case("answers-markup", f"{INJECTED} beta", ["expected-id"]),
        search_case("elsewhere", "gamma", ["gamma"], profile="forget"),
    ]
    return _faux_report(tmp_path, "hostile", cases, mode="profiles-core")


def _data_block(page: str) -> Any:
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert found is not None
    return json.loads(found.group(1))


def test_the_badge_says_the_spec_version_and_passed_over_total(hostile_report: Path, tmp_path: Path) -> None:
    badge = tmp_path / "badge.svg"
    assert main(["report", "--badge", str(badge), str(hostile_report)]) == 0
    svg = badge.read_text()
    lines = read_lines(hostile_report)
    header = lines[0]
    outcomes = [line["outcome"] for line in lines if line["type"] == "case"]
    assert outcomes.count("not_applicable") == 1  # not counted: the adapter does not claim that profile
    applicable = [outcome for outcome in outcomes if outcome != "not_applicable"]
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts == [
        f"pimem spec {header['spec_version']} (open)",
        f"{applicable.count('pass')}/{len(applicable)}",
    ]
    assert texts == ["pimem spec 9.9.9 (open)", "1/2"]  # no releases/9.9.9.json: not frozen
    assert 'fill="#c0392b"' in svg  # not everything passes: red


def test_a_clean_report_gets_a_green_badge(tmp_path: Path) -> None:
    report = _faux_report(tmp_path, "clean", [search_case("passes", "alpha", ["alpha"])])
    badge = tmp_path / "badge.svg"
    assert main(["report", "--badge", str(badge), str(report)]) == 0
    assert '<text x="6" y="14">pimem spec 9.9.9 (open)</text>' in badge.read_text()
    assert ">1/1<" in badge.read_text() and 'fill="#2e8b3a"' in badge.read_text()


def test_report_needs_an_output_and_one_report_per_badge(hostile_report: Path, tmp_path: Path) -> None:
    assert main(["report", str(hostile_report)]) == 2
    assert main(["report", "--badge", str(tmp_path / "b.svg"), str(hostile_report), str(hostile_report)]) == 2
    assert not (tmp_path / "b.svg").exists()


def test_markup_in_an_adapters_answer_is_data_in_the_page(hostile_report: Path, tmp_path: Path) -> None:
    page_path = tmp_path / "page.html"
    assert main(["report", "--html", str(page_path), str(hostile_report)]) == 0
    page = page_path.read_text()
    assert "window.__pwned" in page  # the answer is on the page ...
    assert "<script>window.__pwned" not in page and "<img" not in page  # ... never as markup
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'', page)
    data = _data_block(page)
    failure = data["implementations"][0]["failures"][0]
    assert failure["id"] == "answers-markup"
    assert INJECTED in json.dumps(failure["steps"][0]["mismatches"], ensure_ascii=False)


def test_the_page_counts_every_outcome_per_area_profile_and_requirement(hostile_report: Path) -> None:
    data = page_data([("hostile.jsonl", read_lines(hostile_report))])
    impl = data["implementations"][0]
    assert impl["spec_version"] == "9.9.9 (open)"
    assert impl["areas"]["x"] == {
        **dict.fromkeys(data["outcomes"], 0),
        "pass": 1,
        "fail": 1,
        "not_applicable": 1,
    }
    assert impl["profiles"]["forget"]["not_applicable"] == 1 and impl["profiles"]["core"]["pass"] == 1
    assert impl["requirements"]["JM-SEARCH-001"]["fail"] == 1
    assert (impl["passed"], impl["total"]) == (1, 2)


# -- CI: the reference, the Node example and two broken implementations -------------------------


def _run_reference(report: Path, *selection: str) -> None:
    main(["run", "--impl", "reference", "--report", str(report), "-q", *selection])


@pytest.fixture(scope="module")
def ci_reports(
    tmp_path_factory: pytest.TempPathFactory, reference_report: Path, node_example_run: tuple[int, Path]
) -> Iterator[list[Path]]:
    folder = tmp_path_factory.mktemp("ci-reports")
    reports = [reference_report, node_example_run[1]]
    for name, selection in CI_BROKEN.items():
        broken = next(item for item in BROKEN if item.name == name)
        reports.append(folder / f"broken-{name}.jsonl")
        with pytest.MonkeyPatch.context() as monkeypatch:
            broken.patch(monkeypatch)
            _run_reference(reports[-1], "-k", selection)
    assert main(["report", "--html", str(CI_PAGE), *map(str, reports)]) == 0
    assert main(["report", "--badge", str(CI_PAGE.with_name("reference.svg")), str(reports[0])]) == 0
    yield reports


def test_ci_writes_the_page_over_four_implementations(ci_reports: list[Path]) -> None:
    data = _data_block(CI_PAGE.read_text())
    impls = {impl["label"]: impl for impl in data["implementations"]}
    assert len(impls) == 4
    # the reference's runs are labelled "pimem <version> · <report file>": the version moves with releases
    pimem_runs = {
        label.split(" · ", 1)[1]: impl
        for label, impl in impls.items()
        if label.startswith("pimem ") and " · " in label
    }
    reference = pimem_runs["reference"]
    assert reference["passed"] == reference["total"] > 0 and reference["failures"] == []
    node = next(impl for impl in impls.values() if impl["language"] == "javascript")
    assert node["failures"] and node["totals"]["not_applicable"] > 0
    for name in CI_BROKEN:
        broken = pimem_runs[f"broken-{name}"]
        assert broken["failures"] and broken["passed"] < broken["total"], name
    assert data["secret_kinds"], "the secrets corpus ran in every run"
    assert reference["corpus"]["secrets"]["recall"] == 1.0
    leaky = pimem_runs["broken-secrets-indexed"]["corpus"]["secrets"]
    assert leaky["caught"] < leaky["planted"]  # the page shows what the broken one lets through
    badge = CI_PAGE.with_name("reference.svg").read_text()
    assert f">{reference['passed']}/{reference['total']}<" in badge


# -- in the browser -------------------------------------------------------------------------------


def _open(browser: Any, path: Path) -> Any:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    page.goto(path.as_uri())
    page.locator("#implementations").wait_for()
    return page


def test_the_ci_page_in_a_browser(browser: Any, ci_reports: list[Path], screenshot_dir: Path) -> None:
    page = _open(browser, CI_PAGE)
    try:
        rows = page.locator("#implementations tbody tr").all_inner_texts()
        assert len(rows) == 4
        assert page.locator("table.matrix").count() == 2
        assert page.locator("table.matrix td[data-status='fail']").count() > 0
        kinds = page.locator("#corpus tbody tr").count()
        assert kinds >= 3 and page.locator("#corpus td[data-status='fail']").count() > 0
        page.screenshot(path=str(screenshot_dir / "report-matrix.png"))
        failing = page.locator("[data-impl='minimal-adapter'] details").first
        failing.locator("summary").click()
        expected = failing.locator(".expected pre").first.inner_text()
        actual = failing.locator(".actual pre").first.inner_text()
        assert expected.strip() and actual.strip() and expected != actual
        failing.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / "report-failure.png"))
    finally:
        page.context.close()


def test_markup_in_an_answer_shows_as_text_and_never_runs(
    browser: Any, hostile_report: Path, tmp_path: Path, screenshot_dir: Path
) -> None:
    page_path = tmp_path / "page.html"
    main(["report", "--html", str(page_path), str(hostile_report)])
    page = _open(browser, page_path)
    try:
        failing = page.locator("details[data-case='answers-markup']")
        failing.locator("summary").click()
        assert "expected-id" in failing.locator(".expected pre").inner_text()
        assert INJECTED in failing.locator(".actual pre").inner_text()
        assert page.evaluate("() => window.__pwned") is None
        assert page.evaluate("() => document.querySelectorAll('main img, main script').length") == 0
        csp = page.locator("meta[http-equiv='Content-Security-Policy']").get_attribute("content")
        assert csp.startswith("default-src 'none'")
        page.screenshot(path=str(screenshot_dir / "report-markup.png"))
    finally:
        page.context.close()
