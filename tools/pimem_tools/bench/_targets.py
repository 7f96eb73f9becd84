"""The issue's targets, each with the direction of its comparison spelled out.

`latest.json` stores `{name: {value, target, direction, met, ...}}`; a test recomputes every `met`
with `is_met` so the file cannot claim what its numbers do not show. A target whose value could not
be measured has `value: null`, `met: false` and a `note` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pimem_tools.bench._queries import CATEGORY_SIZES

__all__ = [
    "DIRECTIONS",
    "RATIO_CATEGORIES",
    "RATIO_LIMIT",
    "TARGETS",
    "Target",
    "baseline_block",
    "is_met",
    "quality_target_values",
    "ratio_target_name",
    "target_table",
    "target_values",
]

GIB = 1 << 30
MB = 1_000_000

Direction = Literal["at_least", "at_most"]
# The only two directions a target may have: value >= target, or value <= target.
DIRECTIONS: dict[str, str] = {"at_least": ">=", "at_most": "<="}


@dataclass(frozen=True)
class Target:
    name: str
    threshold: float
    direction: Direction
    unit: str
    description: str


TARGETS: tuple[Target, ...] = (
    Target(
        "indexing_vs_ceiling",
        0.6,
        "at_least",
        "x",
        "first-pass indexing throughput / same-run raw FTS5 insert ceiling (same text, same token stream)",
    ),
    Target("indexing_mb_per_s", 35.0, "at_least", "MB/s", "first-pass indexing throughput"),
    Target("index_size_ratio", 0.10, "at_most", "x", "index bytes / journal bytes"),
    Target(
        "search_p50_ms",
        5.0,
        "at_most",
        "ms",
        "search latency p50, end to end through the tool, every query category",
    ),
    Target(
        "search_p99_ms",
        50.0,
        "at_most",
        "ms",
        "search latency p99, end to end through the tool, every query category",
    ),
    Target(
        "search_p50_1gib_ms",
        5.0,
        "at_most",
        "ms",
        "search latency p50 through the tool at the 1 GiB point of the curve (search-quality budget)",
    ),
    Target(
        "search_p99_1gib_ms",
        50.0,
        "at_most",
        "ms",
        "search latency p99 through the tool at the 1 GiB point of the curve (search-quality budget)",
    ),
    Target(
        "search_over_floor_ms",
        3.0,
        "at_most",
        "ms",
        "tool search p50 minus the bare FTS5 candidate MATCH's p50, same queries",
    ),
    Target(
        "viewer_search_overhead_ms",
        2.0,
        "at_most",
        "ms",
        "pimem view's search p50 over HTTP minus the tool's p50, each query to both in turn",
    ),
    Target(
        "append_to_searchable_ms",
        20.0,
        "at_most",
        "ms",
        "median time from appending one entry to a 50 MB journal among the corpus to finding it by search",
    ),
    Target(
        "recheck_extra_p50_ms",
        45.0,
        "at_most",
        "ms",
        "extra p50 of a search that must first compare every journal with the index (checkedAt past "
        "its 60 s bound, global scope) over a common search, same queries: within the p99 budget",
    ),
    Target(
        "ripgrep_speedup",
        100.0,
        "at_least",
        "x",
        "median ripgrep time / median search time, same single-term queries, at the 1 GiB point",
    ),
    Target(
        "redaction_mb_per_s",
        150.0,
        "at_least",
        "MB/s",
        "redaction alone, full rule table, MB of journal per second",
    ),
    Target(
        "peak_rss_mb",
        300.0,
        "at_most",
        "MB",
        "peak RSS summed over the process tree (main and workers): indexing, search and rebuild, "
        "largest over every corpus size",
    ),
    Target(
        "pi_startup_ratio",
        1.1,
        "at_most",
        "x",
        "Pi 1.6.0 launch to first answered prompt on a 1 GiB corpus: with the extension / without "
        "(median of paired ratios)",
    ),
    Target(
        "quality_recall10_over_bm25",
        0.10,
        "at_least",
        "points",
        "search quality: reference recall@10 minus textbook BM25's, overall (worse seed)",
    ),
    Target(
        "quality_recall10_over_bm25_worst_category",
        0.0,
        "at_least",
        "points",
        "search quality: reference recall@10 minus BM25's in its worst category (worse seed)",
    ),
    Target(
        "quality_recall10_over_bm25_stem_stop",
        0.0,
        "at_least",
        "points",
        "search quality: reference recall@10 minus BM25 with stop words and Porter's, overall (worse seed)",
    ),
    Target(
        "quality_exact_at_1",
        0.95,
        "at_least",
        "x",
        "search quality: exact identifier, path and error queries with the answer at rank 1 (worse seed)",
    ),
    Target(
        "quality_scripts_recall10",
        0.95,
        "at_least",
        "x",
        "search quality: CJK and other non-Latin script queries, recall@10 (worse seed)",
    ),
    Target(
        "quality_in_use_below_clean",
        0.02,
        "at_most",
        "points",
        "search quality in use: reference recall@10 under clean minus under the worst other condition "
        "(typed, asked once, asked 3 times, keywords; worse seed)",
    ),
    Target(
        "quality_in_use_over_bm25",
        0.10,
        "at_least",
        "points",
        "search quality in use: reference recall@10 minus the better BM25's under the same condition, "
        "worst condition (worse seed)",
    ),
)


# Same-run ratios against the last committed run's reference/ tree (its role is "baseline"): at most
# this much slower, per query category and over every query ("all").
RATIO_LIMIT = 1.1
RATIO_CATEGORIES: tuple[str, ...] = (*CATEGORY_SIZES, "all")


def ratio_target_name(figure: str, category: str) -> str:
    return f"search_{figure}_ratio_{category}"


TARGETS += tuple(
    Target(
        ratio_target_name(figure, category),
        RATIO_LIMIT,
        "at_most",
        "x",
        f"search {figure} through the tool, {'every query' if category == 'all' else category + ' queries'}:"
        " HEAD / the last committed run's reference/ tree, same run, query by query",
    )
    for category in RATIO_CATEGORIES
    for figure in ("p50", "p99")
)


def baseline_block(result: dict[str, Any]) -> dict[str, Any] | None:
    """The comparison with the last committed run's tree, if this run made one."""
    return next((block for block in result.get("against", []) if "baseline" in block["role"]), None)


def _ratio_values(result: dict[str, Any]) -> tuple[dict[str, float | None], str | None]:
    baseline = baseline_block(result)
    values: dict[str, float | None] = {}
    for category in RATIO_CATEGORIES:
        block = baseline["by_category"].get(category) if baseline else None
        for figure in ("p50", "p99"):
            values[ratio_target_name(figure, category)] = block[f"{figure}_ratio"] if block else None
    if baseline is None:
        return values, "no committed run's reference/ tree was timed beside HEAD's in this run"
    return values, None


def _curve_point(result: dict[str, Any], requested: int) -> tuple[dict[str, Any], str | None]:
    """The curve's point at `requested` bytes, or the main one with a note saying it is not that."""
    for point in result["scaling"]:
        if point["requested_bytes"] == requested:
            return point, None
    main_size = result["corpus"]["requested_bytes"]
    main = next(point for point in result["scaling"] if point["requested_bytes"] == main_size)
    return main, f"measured on {main['bytes'] / MB:,.0f} MB: the curve has no {requested / GIB:g} GiB point"


def _quality_values(quality: dict[str, Any] | None) -> tuple[dict[str, float | None], str | None]:
    names = (
        "quality_recall10_over_bm25",
        "quality_recall10_over_bm25_worst_category",
        "quality_recall10_over_bm25_stem_stop",
        "quality_exact_at_1",
        "quality_scripts_recall10",
    )
    in_use = ("quality_in_use_below_clean", "quality_in_use_over_bm25")
    if quality is None:
        return dict.fromkeys(
            (*names, *in_use), None
        ), "search quality was not measured in this run (--no-quality)"
    per_seed: dict[str, list[float]] = {name: [] for name in (*names, *in_use)}
    for by_condition in quality.get("conditions", {}).values():
        clean = by_condition["clean"]["reference"]["overall"]["recall_at_10"]
        worst_below, worst_over = 0.0, 1.0
        for by_system in by_condition.values():
            ours = by_system["reference"]["overall"]["recall_at_10"]
            better = max(
                by_system[system]["overall"]["recall_at_10"] for system in ("bm25", "bm25_stem_stop")
            )
            worst_below = max(worst_below, clean - ours)
            worst_over = min(worst_over, ours - better)
        per_seed[in_use[0]].append(worst_below)
        per_seed[in_use[1]].append(worst_over)
    for by_system in quality["seeds"].values():
        ours, bm25, stem = by_system["reference"], by_system["bm25"], by_system["bm25_stem_stop"]
        per_seed[names[0]].append(ours["overall"]["recall_at_10"] - bm25["overall"]["recall_at_10"])
        per_seed[names[1]].append(
            min(ours[c]["recall_at_10"] - bm25[c]["recall_at_10"] for c in quality["categories"])
        )
        per_seed[names[2]].append(ours["overall"]["recall_at_10"] - stem["overall"]["recall_at_10"])
        per_seed[names[3]].append(ours["exact"]["recall_at_1"])
        per_seed[names[4]].append(ours["scripts"]["recall_at_10"])
    values: dict[str, float | None] = {name: round(min(per_seed[name]), 4) for name in names}
    if not per_seed[in_use[0]]:
        note = "this run measured search quality from a clean slate only (no conditions)"
        return {**values, **dict.fromkeys(in_use, None)}, note
    values[in_use[0]] = round(max(per_seed[in_use[0]]), 4)  # the worse seed is the larger drop
    values[in_use[1]] = round(min(per_seed[in_use[1]]), 4)
    every = quality.get("in_use_every", 1)
    if every != 1:  # a smoke run's sample: the figures stand, and the note says what they are
        return values, f"asked in use for every {every}th question only (--quality-every {every})"
    return values, None


def quality_target_values(quality: dict[str, Any] | None) -> tuple[dict[str, float | None], dict[str, str]]:
    """The search-quality targets' values, and a note for each that could not be measured."""
    values, note = _quality_values(quality)
    in_use = ("quality_in_use_below_clean", "quality_in_use_over_bm25")
    chosen = [name for name, value in values.items() if value is None or name in in_use]
    return values, {name: note for name in chosen if note}


def target_values(result: dict[str, Any]) -> tuple[dict[str, float | None], dict[str, str]]:
    """Each target's value from a run's raw figures, and a note for each that needs one."""
    search, stages, ceiling = result["search"], result["stages"], result["ceiling"]
    one_gib, one_gib_note = _curve_point(result, GIB)
    startup = result["pi_startup"].get("1.6.0", {})
    values: dict[str, float | None] = {
        "indexing_vs_ceiling": result["indexing"]["mb_per_s"] / ceiling["mb_per_s"],
        "indexing_mb_per_s": result["indexing"]["mb_per_s"],
        "index_size_ratio": result["indexing"]["index_ratio"],
        "search_p50_ms": search["p50_ms"],
        "search_p99_ms": search["p99_ms"],
        "search_p50_1gib_ms": one_gib["search_p50_ms"],
        "search_p99_1gib_ms": one_gib["search_p99_ms"],
        "search_over_floor_ms": search["p50_ms"] - search["floor"]["p50_ms"],
        "viewer_search_overhead_ms": result["viewer_search"]["p50_ms"]
        - result["viewer_search"]["tool_p50_ms"],
        "append_to_searchable_ms": result["append"]["median_ms"],
        "recheck_extra_p50_ms": result["recheck"]["extra_p50_ms"],
        "ripgrep_speedup": one_gib["ripgrep_speedup"],
        "redaction_mb_per_s": stages["redact_mb_per_s"],
        "peak_rss_mb": max(max(point["peak_rss_mb"].values()) for point in result["scaling"]),
        "pi_startup_ratio": startup.get("ratio"),
    }
    notes: dict[str, str] = {}
    quality, quality_notes = quality_target_values(result.get("quality"))
    values.update(quality)
    notes.update(quality_notes)
    ratios, ratio_note = _ratio_values(result)
    values.update(ratios)
    if ratio_note:
        notes.update(dict.fromkeys(ratios, ratio_note))
    if one_gib_note:
        for name in ("search_p50_1gib_ms", "search_p99_1gib_ms", "ripgrep_speedup"):
            notes[name] = one_gib_note
    if not result["ripgrep"].get("available", False):
        notes["ripgrep_speedup"] = f"ripgrep unavailable: {result['ripgrep'].get('reason')}"
    if values["pi_startup_ratio"] is None:
        notes["pi_startup_ratio"] = str(startup.get("reason") or "Pi 1.6.0 was not measured")
    elif startup.get("corpus_bytes", 0) < GIB:
        notes["pi_startup_ratio"] = f"measured on {startup['corpus_bytes'] / MB:,.0f} MB, not 1 GiB"
    if result["corpus"]["requested_bytes"] < 5 * GIB:
        size = f"measured on {result['corpus']['bytes'] / MB:,.0f} MB, not the 5 GiB the target names"
        for name in ("indexing_vs_ceiling", "indexing_mb_per_s", "index_size_ratio", "search_p50_ms",
                     "search_p99_ms", "search_over_floor_ms", "append_to_searchable_ms",
                     "recheck_extra_p50_ms"):  # fmt: skip
            notes.setdefault(name, size)
    return values, notes


def is_met(value: float | None, threshold: float, direction: str) -> bool:
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown target direction {direction!r}; expected one of {sorted(DIRECTIONS)}")
    if value is None:
        return False
    return value >= threshold if direction == "at_least" else value <= threshold


def target_table(values: dict[str, float | None], notes: dict[str, str]) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for target in TARGETS:
        value = values.get(target.name)
        row: dict[str, Any] = {
            "value": value,
            "target": target.threshold,
            "direction": target.direction,
            "met": is_met(value, target.threshold, target.direction),
            "unit": target.unit,
            "description": target.description,
        }
        if target.name in notes:
            row["note"] = notes[target.name]
        table[target.name] = row
    return table
