"""The issue's targets, each with the direction of its comparison spelled out.

`latest.json` stores `{name: {value, target, direction, met, ...}}`; a test recomputes every `met`
with `is_met` so the file cannot claim what its numbers do not show. A target whose value could not
be measured has `value: null`, `met: false` and a `note` saying why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DIRECTIONS", "TARGETS", "Target", "is_met", "target_table"]

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
        "first-pass indexing throughput / same-run raw FTS5 insert ceiling",
    ),
    Target("indexing_mb_per_s", 25.0, "at_least", "MB/s", "first-pass indexing throughput"),
    Target("index_size_ratio", 0.08, "at_most", "x", "index bytes / journal bytes"),
    Target("search_p50_ms", 5.0, "at_most", "ms", "search latency p50, end to end through the tool"),
    Target("search_p99_ms", 50.0, "at_most", "ms", "search latency p99, end to end through the tool"),
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
        "median time from appending one entry to a 50 MB journal to finding it by search",
    ),
    Target(
        "ripgrep_speedup",
        100.0,
        "at_least",
        "x",
        "median ripgrep time / median search time, same single-term queries",
    ),
    Target(
        "peak_rss_mb",
        300.0,
        "at_most",
        "MB",
        "peak RSS of the first-pass indexing process, largest over every corpus size run",
    ),
    Target(
        "pi_startup_ratio",
        1.1,
        "at_most",
        "x",
        "Pi launch to first answered prompt, 200 MB corpus: with the extension / without "
        "(median of paired ratios)",
    ),
)


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
