"""pimem-bench: a smoke run writes three well-formed outputs, and the committed results are honest.

Nothing here looks at a timing: the benchmark measures, tests only check shape and consistency.
"""

from __future__ import annotations

import gc
import json
import math
import operator
import statistics
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from pimem_tools.bench._against import ROUNDS
from pimem_tools.bench._git import RESULTS_RELPATH, tree_hash_without
from pimem_tools.bench._readme import BEGIN, END, render_table
from pimem_tools.bench._reference import run_measured
from pimem_tools.bench._targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
LATEST = REPO / RESULTS_RELPATH / "latest.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The comparison each direction names, written out here rather than borrowed from the code under test.
COMPARE = {"at_least": operator.ge, "at_most": operator.le}
RESULT_KEYS = {
    "format", "command", "measured_at", "machine", "trees", "corpus", "indexing", "ceiling", "stages",
    "search", "read", "append", "ripgrep", "rebuild", "scaling", "pi_startup", "targets",
    "viewer_search", "quality", "phases", "recheck", "against",
}  # fmt: skip
GIB = 1 << 30


def _point(data: dict[str, Any], requested: int) -> dict[str, Any]:
    by_size: dict[int, dict[str, Any]] = {point["requested_bytes"]: point for point in data["scaling"]}
    return by_size.get(requested, by_size[data["corpus"]["requested_bytes"]])


def _recomputed_values(data: dict[str, Any]) -> dict[str, float | None]:
    """Every target's value, worked out here from the raw figures of a format-2 result."""
    search, one_gib = data["search"], _point(data, GIB)
    values: dict[str, float | None] = {
        "indexing_vs_ceiling": data["corpus"]["bytes"]
        / data["indexing"]["seconds"]
        / (data["corpus"]["bytes"] / data["ceiling"]["seconds"]),
        "indexing_mb_per_s": data["corpus"]["bytes"] / 1e6 / data["indexing"]["seconds"],
        "index_size_ratio": data["indexing"]["index_bytes"] / data["corpus"]["bytes"],
        "search_p50_ms": statistics.median(search["samples_ms"]),
        "search_p99_ms": search["p99_ms"],
        "search_p50_1gib_ms": one_gib["search_p50_ms"],
        "search_p99_1gib_ms": one_gib["search_p99_ms"],
        "search_over_floor_ms": statistics.median(search["samples_ms"])
        - statistics.median(search["floor"]["samples_ms"]),
        "viewer_search_overhead_ms": data["viewer_search"]["p50_ms"] - data["viewer_search"]["tool_p50_ms"],
        "append_to_searchable_ms": statistics.median(data["append"]["samples_ms"]),
        "recheck_extra_p50_ms": statistics.median(data["recheck"]["recheck_samples_ms"])
        - statistics.median(data["recheck"]["common_samples_ms"])
        if "recheck" in data
        else None,
        "ripgrep_speedup": one_gib["ripgrep_speedup"],
        "redaction_mb_per_s": data["corpus"]["bytes"] / 1e6 / data["stages"]["redact_seconds"],
        "peak_rss_mb": max(mb for point in data["scaling"] for mb in point["peak_rss_mb"].values()),
        "pi_startup_ratio": data["pi_startup"]["1.6.0"]["ratio"],
    }
    quality = data["quality"]
    seeds = list(quality["seeds"].values()) if quality else []

    def worst(figure: Any) -> float | None:
        return min(figure(seed) for seed in seeds) if seeds else None

    def r10(seed: dict[str, Any], system: str, category: str = "overall") -> float:
        return float(seed[system][category]["recall_at_10"])

    values["quality_recall10_over_bm25"] = worst(lambda s: r10(s, "reference") - r10(s, "bm25"))
    values["quality_recall10_over_bm25_worst_category"] = worst(
        lambda s: min(r10(s, "reference", c) - r10(s, "bm25", c) for c in quality["categories"])
    )
    values["quality_recall10_over_bm25_stem_stop"] = worst(
        lambda s: r10(s, "reference") - r10(s, "bm25_stem_stop")
    )
    values["quality_exact_at_1"] = worst(lambda s: s["reference"]["exact"]["recall_at_1"])
    values["quality_scripts_recall10"] = worst(lambda s: r10(s, "reference", "scripts"))
    values.update(_recomputed_in_use(quality))
    values.update(_recomputed_ratios(data))
    return values


def _recomputed_in_use(quality: dict[str, Any] | None) -> dict[str, float | None]:
    """Clean minus each other condition, and the reference minus the better BM25 under each condition,
    recall@10 overall, the worse seed; the clean condition is the clean-slate table itself."""
    conditions = (quality or {}).get("conditions")
    if not conditions:
        return {"quality_in_use_below_clean": None, "quality_in_use_over_bm25": None}
    drops, margins = [], []
    every = quality["in_use_every"]  # type: ignore[index]
    for seed, by_condition in conditions.items():
        assert by_condition["clean"] == quality["seeds"][seed]  # type: ignore[index]
        assert set(by_condition) == {"clean", "typed", "asked_once", "asked_3", "keywords"}
        r10 = {c: {s: f["overall"]["recall_at_10"] for s, f in by.items()} for c, by in by_condition.items()}
        for condition, row in r10.items():
            drops.append(r10["clean"]["reference"] - row["reference"])
            margins.append(row["reference"] - max(row["bm25"], row["bm25_stem_stop"]))
            for category in quality["categories"]:  # type: ignore[index]
                # the clean condition asks every question, the others every `every`th of each category
                clean_count = by_condition["clean"]["reference"][category]["questions"]
                counts = {f[category]["questions"] for f in by_condition[condition].values()}
                expected = clean_count if condition == "clean" else len(range(0, clean_count, every))
                assert counts == {expected}, (condition, category)
    hard = quality["hard"]  # type: ignore[index]
    assert set(hard["conditions"]) == set(conditions) and hard["categories"] == [
        "crowded_lemma",
        "old_partial",
    ]
    for seed, by_condition in hard["conditions"].items():
        assert by_condition["clean"] == hard["seeds"][seed] and len(by_condition) == 5
    return {"quality_in_use_below_clean": max(drops), "quality_in_use_over_bm25": min(margins)}


def _linear(samples: list[float], fraction: float) -> float:
    """The percentile by linear interpolation between closest ranks, written out here."""
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * fraction
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _recomputed_ratios(data: dict[str, Any]) -> dict[str, float | None]:
    """HEAD / the last committed run's tree, p50 and p99 per category and overall, from the samples."""
    baseline = next((b for b in data.get("against", []) if "baseline" in b["role"]), None)
    categories = data["search"]["categories"]
    values: dict[str, float | None] = {}
    for category in [*dict.fromkeys(categories), "all"]:
        for name, fraction in (("p50", 0.5), ("p99", 0.99)):
            key = f"search_{name}_ratio_{category}"
            if baseline is None:
                values[key] = None
                continue
            pairs = zip(data["search"]["samples_ms"], baseline["samples_ms"], categories, strict=True)
            chosen = [(ours, theirs) for ours, theirs, c in pairs if category in (c, "all")]
            ours, theirs = [o for o, _ in chosen], [t for _, t in chosen]
            values[key] = _linear(ours, fraction) / _linear(theirs, fraction)
    return values


def _check_ratio_rows(data: dict[str, Any], markdown: str) -> None:
    """Every ratio target is a row of latest.md's target table with the value latest.json holds, and
    the comparison it comes from has its section, naming the baseline's tree."""
    ratios = [target for target in TARGETS if target.name.startswith("search_") and "_ratio_" in target.name]
    assert len(ratios) == 2 * (len(set(data["search"]["categories"])) + 1)
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in markdown.splitlines()}
    for target in ratios:
        row = data["targets"][target.name]
        line = rows[target.description]
        assert row["target"] == 1.1 and row["direction"] == "at_most"
        if row["value"] is not None:
            assert f"| {row['value']:.3g}x |" in line, line
        assert line.endswith(
            "| yes |" if row["met"] else ("| not measured |" if row["value"] is None else "| **no** |")
        )
    baseline = next((b for b in data.get("against", []) if "baseline" in b["role"]), None)
    if baseline is not None:
        assert f"### HEAD / {baseline['label']} (" in markdown
        assert str(baseline["reference"])[:12] in markdown


def _check_values(data: dict[str, Any]) -> None:
    """No target's value is anything but what the raw figures give (`_check_targets` says which
    targets a result must hold; one that predates a target has neither its row nor its figures)."""
    for name, expected in _recomputed_values(data).items():
        if name not in data["targets"]:
            continue
        value = data["targets"][name]["value"]
        if expected is None:
            assert value is None, name
        else:
            assert value == pytest.approx(expected, rel=1e-6, abs=1e-4), name


def _check_targets(targets: dict[str, Any], predating: bool = False) -> None:
    """Every target is in the results as the issue sets it; `predating`: results of an earlier run may
    lack targets added since (the next full run records them), never hold unknown ones."""
    names = {target.name for target in TARGETS}
    if predating:
        assert set(targets) <= names, f"targets no issue sets: {sorted(set(targets) - names)}"
    else:
        assert set(targets) == names
    for target in TARGETS:
        if target.name not in targets:
            warnings.warn(f"benchmark results predate the target {target.name}", stacklevel=1)
            continue
        row = targets[target.name]
        assert row["direction"] in COMPARE, f"{target.name}: undocumented direction {row['direction']!r}"
        if predating and (row["target"], row["direction"]) != (target.threshold, target.direction):
            # An earlier run measured against the bar of its day; stale, reported, never failing.
            assert row["direction"] == target.direction, target.name
            warnings.warn(
                f"benchmark results predate {target.name}'s bar: {row['target']} then, "
                f"{target.threshold} now",
                stacklevel=1,
            )
        else:
            # The file cannot lower the bar: the threshold and direction are the issue's.
            assert (row["target"], row["direction"]) == (target.threshold, target.direction), target.name
        value = row["value"]
        expected = value is not None and COMPARE[row["direction"]](value, row["target"])
        assert row["met"] is expected, f"{target.name}: met={row['met']} for {value} vs {row['target']}"
        if value is None:
            assert row.get("note"), f"{target.name} was not measured and does not say why"


@pytest.mark.slow
def test_a_small_run_writes_json_markdown_and_a_png(tmp_path: Path) -> None:
    out = tmp_path / "results"
    bench = Path(sys.executable).parent / "pimem-bench"
    # --working-tree: the test checks the bench code as it is, not HEAD's committed copy.
    # --pi-runs 0: the real Pi is the end-to-end tests' (each run would cost seconds here).
    # --quality-every 20: search as it is used is asked of every 20th question (all of them take minutes).
    result = subprocess.run(
        [str(bench), "--working-tree", "--size", "6MB", "--curve", "3MB,6MB", "--pi-runs", "0",
         "--quality-every", "20", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]

    data = json.loads((out / "latest.json").read_text())
    assert set(data) >= RESULT_KEYS
    _check_targets(data["targets"])
    _check_values(data)
    assert data["search"]["queries"] >= 200
    assert len(data["search"]["samples_ms"]) == data["search"]["queries"]
    assert {"question", "scripts"} <= set(data["search"]["by_category"])
    # every query has its floor beside it, and the floor's statement is in the Markdown
    assert len(data["search"]["floor"]["samples_ms"]) == data["search"]["queries"]
    assert data["search"]["floor"]["sql"] and all("MATCH" in sql for sql in data["search"]["floor"]["sql"])
    assert data["quality"]["questions"] == {"A": 900, "B": 900}
    assert data["corpus"]["scripts"]["cjk"] > 0.01
    assert set(data["pi_startup"]) == {"1.6.0", "0.73.1"}
    assert all(not row["measured"] and row["reason"] for row in data["pi_startup"].values())
    viewer = data["viewer_search"]
    assert viewer["p50_ms"] > 0 and viewer["tool_p50_ms"] > 0
    assert data["targets"]["viewer_search_overhead_ms"]["value"] == viewer["p50_ms"] - viewer["tool_p50_ms"]
    assert data["append"]["found"] == data["append"]["samples"] == 50
    recheck = data["recheck"]
    assert recheck["journals"] == data["corpus"]["journals"]  # global scope: every journal compared
    assert recheck["pairs"] == len(recheck["recheck_samples_ms"]) == len(recheck["common_samples_ms"]) > 0
    assert recheck["ratio"] == recheck["recheck_p50_ms"] / recheck["common_p50_ms"]
    sizes = [point["bytes"] for point in data["scaling"]]
    assert len(sizes) == 2 and sizes == sorted(sizes)

    markdown = (out / "latest.md").read_text()
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    assert "|---|---|---|---|" in table
    assert all(line.endswith("|") for line in table)
    for target in TARGETS:
        assert target.description in markdown
    for sql in data["search"]["floor"]["sql"]:
        assert sql in markdown
    assert data["search"]["floor"]["table"] in markdown
    # the floor's statement of each query is derived from the query text alone
    from pimem_tools.bench._floor import floor_match

    assert data["search"]["floor"]["matches"] == [
        floor_match(a["query"]) for a in data["search"]["arguments"]
    ]
    _check_ratio_rows(data, markdown)
    assert "Seed B, recall at 10:" in markdown

    assert (out / "latest.png").read_bytes().startswith(PNG_SIGNATURE)
    readme_table = render_table(data)
    assert readme_table.startswith(BEGIN) and readme_table.endswith(END)
    assert "2.37 GB" in readme_table and "36.8 GB" in readme_table and "not in this run" in readme_table


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def test_committed_results_recompute_and_match_the_committed_trees() -> None:
    if not LATEST.is_file():
        pytest.skip(f"pending: no full benchmark run committed yet at {RESULTS_RELPATH}/latest.json")
    data = json.loads(LATEST.read_text())
    _check_targets(data["targets"], predating=True)
    if data["format"] >= 2:
        _check_values(data)
    if "against" in data:
        _check_ratio_rows(data, (LATEST.parent / "latest.md").read_text())
    else:
        warnings.warn("benchmark results predate the same-run ratio targets", stacklevel=1)
    assert data["corpus"]["bytes"] >= 1 << 30, "latest.json must come from a full 1 GiB run"
    trees = data["trees"]
    assert trees["clean"], f"measured with uncommitted changes: {trees['dirty_paths']}"
    measured = _commit_with_trees(trees["reference"], trees["tools"])
    assert measured is not None, "latest.json names reference/ and tools/ trees no commit of the history has"
    if measured != _git("rev-parse", "HEAD"):
        excluded = RESULTS_RELPATH.removeprefix("tools/")
        head = (
            _git("rev-parse", "HEAD:reference"),
            tree_hash_without(REPO, _git("rev-parse", "HEAD:tools"), excluded),
        )
        if head != (trees["reference"], trees["tools"]):
            # Stale, not wrong: reported, never failing (a later full run brings it up to date).
            warnings.warn(
                f"benchmark results are stale: measured on {measured[:12]}, and reference/ or tools/"
                " changed since; run `pimem-bench` and commit its results",
                stacklevel=1,
            )


def _commit_with_trees(reference: str, tools: str) -> str | None:
    """The newest commit whose reference/ and tools/ (without the results) are these trees."""
    excluded = RESULTS_RELPATH.removeprefix("tools/")
    for commit in _git("rev-list", "HEAD").split():
        try:
            if _git("rev-parse", f"{commit}:reference") != reference:
                continue
        except subprocess.CalledProcessError:
            return None  # older than the reference folder itself
        if tree_hash_without(REPO, _git("rev-parse", f"{commit}:tools"), excluded) == tools:
            return commit
    return None


def test_the_readme_performance_table_is_the_one_rendered_from_the_committed_results() -> None:
    if not LATEST.is_file():
        pytest.skip(f"pending: no full benchmark run committed yet at {RESULTS_RELPATH}/latest.json")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = readme.index(BEGIN), readme.index(END) + len(END)
    assert readme[start:end] == render_table(json.loads(LATEST.read_text())), (
        "the README's performance table is not the committed results': run `pimem-bench --readme`"
    )


def test_the_floor_terms_and_match_come_from_the_text_alone() -> None:
    from pimem_tools.bench._floor import floor_match, floor_terms

    assert floor_terms("Parser_retry: CACHE-miss") == ["parser", "retry", "cache", "miss"]
    # a script without spaces: overlapping pairs; a lone character stays; NFC before anything
    assert floor_terms("x数据库y 中") == ["x", "数据", "据库", "y", "中"]
    assert floor_terms("cafe\u0301") == ["café"]
    assert floor_match("Retry the retry 数据") == '"retry" OR "the" OR "数据"'
    assert floor_match("?! --") is None


def test_the_floor_table_finds_every_text_holding_some_term_of_the_query(tmp_path: Path) -> None:
    from pimem_tools.bench._floor import Floor, build_floor, floor_match

    texts = ["the parser failed", "retry later", "数据库 connection", "nothing here"]
    built = build_floor(texts, tmp_path / "floor.db")
    assert built.entries == 4
    floor = Floor(tmp_path / "floor.db")
    try:
        assert floor.rowids(floor_match("parser retry")) == [2, 1]  # newest (highest rowid) first
        assert floor.rowids(floor_match("据库")) == [3]
        assert floor.rowids(floor_match("absentword")) == []
        assert floor.rowids(None) == []
    finally:
        floor.close()


def test_against_runs_each_tree_from_its_own_export_on_the_same_queries(tmp_path: Path) -> None:
    """Two trees through the same seam, query by query: HEAD's reference/ and an export of it. The
    same code must do the same work (the counts are deterministic), each from its own folder."""
    from pimem_tools.bench._against import (
        Searcher,
        Tree,
        export_reference,
        index_with,
        run_interleaved,
        work_block,
    )  # fmt: skip
    from pimem_tools.bench._corpus import ensure_corpus
    from pimem_tools.bench._floor import Floor, build_floor, floor_match
    from pimem_tools.bench._queries import Query
    from pimem_tools.bench._reference import extracted_entries
    from pimem_tools.bench._run import _workspace

    corpus = ensure_corpus(tmp_path, 1_500_000, seed=5)
    head = Tree("HEAD", None, None, REPO / "reference")
    other = export_reference(REPO, "HEAD", tmp_path / "cache", label="exported")
    assert other.reference == _git("rev-parse", "HEAD:reference") and (other.root / "pimem").is_dir()
    queries = [
        Query(category, {"action": "search", "query": text, "scope": "global"})
        for category, text in (("rare", "cursor"), ("multi", "parser retry"), ("fallback", "hash zzqqxx"))
    ]
    searchers = []
    for tree in (head, other):
        state = tmp_path / f"state-{tree.label}"
        state.mkdir()
        index_with(tree, corpus, state)
        workspace = _workspace(corpus, state, corpus.journals[0])
        searchers.append(Searcher(tree, workspace, "2027-06-01T00:00:00Z", queries, tmp_path))
    assert [s.pimem for s in searchers] == [(REPO / "reference" / "pimem").resolve(), other.root / "pimem"]
    texts = (entry.text for path in corpus.journals for entry in extracted_entries(str(path)))
    build_floor(texts, tmp_path / "floor.db")
    floor = Floor(tmp_path / "floor.db")
    try:
        answers, floor_ms = run_interleaved(
            searchers, queries, floor, [floor_match(q.arguments["query"]) for q in queries]
        )
    finally:
        floor.close()
    assert len(floor_ms) == len(queries)
    ours, theirs = answers
    assert len(ours.samples_ms) == len(theirs.samples_ms) == len(ours.cpu_ms) == len(queries)
    assert ours.matches == theirs.matches and ours.hits == theirs.hits
    categories = [q.category for q in queries]
    assert work_block(ours.work, categories) == work_block(theirs.work, categories)
    total = work_block(ours.work, categories)["by_category"]["all"]
    assert total["sql"] > 0 and total["match"] > 0 and total["calls"] > 0 and total["lines"] > 0
    assert total["match_rows"] > 0 and total["inner_sql"] > 0  # rows of MATCH told from FTS5's own reads


def test_a_cached_corpus_is_reused_only_while_the_generator_writes_the_same_probe(tmp_path: Path) -> None:
    """A change to the generator's output, whatever module it is in, makes the cache be written
    anew; an unchanged generator's corpus is reused. (The probe is the marker's record of that output.)"""
    from pimem_tools.bench._corpus import ensure_corpus

    first = ensure_corpus(tmp_path, 1_000_000, seed=7)
    assert first.generation_seconds is not None
    reused = ensure_corpus(tmp_path, 1_000_000, seed=7)
    assert reused.generation_seconds is None and reused.journals == first.journals
    marker = first.root / "bench-corpus.json"
    written = json.loads(marker.read_text())
    assert len(written["probe"]) == 64
    marker.write_text(json.dumps({**written, "probe": "0" * 64}))  # as an older generator left it
    again = ensure_corpus(tmp_path, 1_000_000, seed=7)
    assert again.generation_seconds is not None
    assert json.loads(marker.read_text())["probe"] == written["probe"]


def _recheck_client(root: Path) -> Any:
    from pimem_conformance.journals import JournalWriter, entry_line, header_line
    from pimem_tools.bench._reference import ToolClient

    writer = JournalWriter(root, home="/home/u")
    paths = [
        writer.write(
            writer.path_for("/home/u/app", f"s{number:02d}"),
            [header_line(f"s-{number}", "/home/u/app"), entry_line(f"e{number:03d}", None, "plain words")],
        )
        for number in range(20)
    ]
    return ToolClient(writer.workspace("/home/u/app", paths[-1]), "2026-11-29T12:00:00.000Z")


def _recheck_queries() -> list[Any]:
    from pimem_tools.bench._queries import Query

    words = ("plain", "words")
    return [Query("rare", {"action": "search", "query": word, "scope": "global"}) for word in words]


def test_the_recheck_figure_pairs_a_common_call_with_one_that_compares_every_journal(tmp_path: Path) -> None:
    from pimem_tools.bench._latency import time_rechecks, utc

    client = _recheck_client(tmp_path)
    try:
        times = time_rechecks(client, _recheck_queries(), utc("2026-11-29T12:00:00.000Z"))
    finally:
        client.close()
    assert times.journals == 20
    assert len(times.common_ms) == len(times.recheck_ms) == 2


def test_the_recheck_figure_refuses_an_implementation_that_never_compares_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the figure would time two common calls and call the difference the sweep's cost
    from pimem import _memory
    from pimem_tools.bench._latency import time_rechecks, utc

    monkeypatch.setattr(_memory.Memory, "recheck_due", lambda self, checked, now: False)
    client = _recheck_client(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="did not compare again"):
            time_rechecks(client, _recheck_queries(), utc("2026-11-29T12:00:00.000Z"))
    finally:
        client.close()


def test_a_measured_run_closes_its_stderr_pipe_and_reports_a_failure_with_its_stderr() -> None:
    gc.collect()  # what earlier tests left unclosed is theirs: only this run's garbage is counted
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_measured([sys.executable, "-c", "import sys; sys.stderr.write('x' * 100_000)"], {})
        gc.collect()
    assert run.seconds > 0
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []
    with pytest.raises(RuntimeError, match="exited 3: oops"):
        run_measured([sys.executable, "-c", "import sys; sys.stderr.write('oops'); sys.exit(3)"], {})


class _StallingSearcher:
    """Answers every query in `ms` milliseconds, except one stalled round per query."""

    def __init__(self, ms: float, stall_ms: float) -> None:
        self.ms, self.stall_ms, self.asked = ms, stall_ms, 0
        self.peak_rss_bytes = 0

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        if "count" in command:
            return {}
        self.asked += 1
        stalled = self.asked % ROUNDS == 1  # the first round of each query
        ms = self.stall_ms if stalled else self.ms
        return {"ms": ms, "cpu_ms": ms, "match": "all", "hits": []}

    def close(self) -> None:
        pass


class _StallingFloor:
    def __init__(self) -> None:
        self.asked = 0

    def time_ms(self, match: str | None) -> float:
        self.asked += 1
        return 50.0 if self.asked % ROUNDS == 1 else 0.5


def test_against_takes_each_query_s_median_over_its_rounds_so_one_stall_is_not_a_p99() -> None:
    from typing import cast

    from pimem_tools.bench._against import Searcher, run_interleaved
    from pimem_tools.bench._floor import Floor
    from pimem_tools.bench._queries import Query

    assert ROUNDS >= 3  # a median needs rounds either side of a stall
    queries = [Query("rare", {"action": "search", "query": q}) for q in ("alpha", "beta")]
    trees = [_StallingSearcher(2.0, 400.0), _StallingSearcher(3.0, 900.0)]
    floor = _StallingFloor()
    answers, floor_ms = run_interleaved(
        cast("list[Searcher]", trees), queries, cast("Floor", floor), [None, None]
    )
    assert [a.samples_ms for a in answers] == [[2.0, 2.0], [3.0, 3.0]]
    assert floor_ms == [0.5, 0.5]
    assert [t.asked for t in trees] == [ROUNDS * len(queries)] * 2 and floor.asked == ROUNDS * len(queries)
