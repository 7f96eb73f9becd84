"""The README's performance table, rendered from a run's result and nothing else.

The table sits between two marker comments in README.md. A full run rewrites it; `pimem-bench
--readme` rewrites it from the committed `latest.json`; a test checks that the README holds exactly
what `render_table` makes of the committed results, so no figure in it is typed by hand.
Beside our 1 GiB and 5 GiB points stand the only published figures of the seed design and the peer
figures the performance issue quotes (CASS, from its issue tracker), as published.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

__all__ = ["BEGIN", "END", "render_table", "update_readme"]

BEGIN = "<!-- pimem-bench:performance-table (generated from tools/bench/results/latest.json) -->"
END = "<!-- /pimem-bench:performance-table -->"
GIB = 1 << 30
MB = 1_000_000
_NOT_RUN = "not in this run"

# (row, seed design as published, CASS as its users report it)
_PUBLISHED = {
    "corpus": ("2.37 GB of real journals, 709 sessions", "about 1.1 million messages"),
    "first pass": ("102 s, about 23 MB/s", "a 25-hour index run (CASS #244)"),
    "peak memory": ("—", "36.8 GB resident for a full index (CASS #456)"),
    "index size": ("270 MB, 11.4 % of journal bytes", "—"),
    "search p50 / p99": ("21 ms / —", "—"),
    "ripgrep ÷ search": ("—", "—"),
}


def _point(result: dict[str, Any], size: int) -> dict[str, Any] | None:
    """The curve's point generated for `size` bytes (or, in older results, within 1 % of it)."""
    points: list[dict[str, Any]] = result.get("scaling", [])
    for point in points:
        requested = point.get("requested_bytes")
        if requested == size or (requested is None and abs(point["bytes"] - size) <= size / 100):
            return point
    return None


def _peak(point: dict[str, Any]) -> str:
    peak = point["peak_rss_mb"]
    if isinstance(peak, dict):
        parts = ", ".join(f"{stage} {mb:.0f}" for stage, mb in peak.items())
        return f"{max(peak.values()):.0f} MB ({parts})"
    return f"{peak:.0f} MB (indexing)"


def _cells(point: dict[str, Any] | None) -> dict[str, str]:
    if point is None:
        return dict.fromkeys(_PUBLISHED, _NOT_RUN)
    p99 = point.get("search_p99_ms")
    speedup = point.get("ripgrep_speedup")
    return {
        "corpus": f"{point['bytes'] / MB:,.0f} MB generated, {point['journals']:,} sessions",
        "first pass": f"{point['index_seconds']:.1f} s, {point['mb_per_s']:.1f} MB/s",
        "peak memory": _peak(point),
        "index size": f"{point['index_bytes'] / MB:,.1f} MB, {point['index_ratio']:.1%} of journal bytes",
        "search p50 / p99": f"{point['search_p50_ms']:.2f} ms / "
        + ("—" if p99 is None else f"{p99:.2f} ms")
        + " end to end through the tool",
        "ripgrep ÷ search": "—" if speedup is None else f"{speedup:.0f}x",
    }


def render_table(result: dict[str, Any]) -> str:
    """The block between the markers (markers included)."""
    ours = {size: _cells(_point(result, size)) for size in (GIB, 5 * GIB)}
    trees = result.get("trees") or {}
    commit = str(trees.get("commit", ""))[:7] or "no commit"
    machine = result["machine"]
    load = machine["load_average"]
    lines = [
        BEGIN,
        f"Measured {result['measured_at']} on commit `{commit}` (`{result['command']}`), "
        f"{machine['cpus']} CPUs, 1-minute load average {load['start']:.1f} at the start and "
        f"{load['end']:.1f} at the end:",
        "",
        "| | seed design (published) | CASS (its users' reports) | `pimem`, 1 GiB | `pimem`, 5 GiB |",
        "|---|---|---|---|---|",
    ]
    for row, (seed, cass) in _PUBLISHED.items():
        lines.append(f"| {row} | {seed} | {cass} | {ours[GIB][row]} | {ours[5 * GIB][row]} |")
    targets = result.get("targets", {})
    met = sum(1 for row in targets.values() if row["met"])
    lines += ["", f"Targets met in that run: {met} of {len(targets)} (every one in `latest.md`)."]
    lines += _recheck_lines(result.get("recheck"))
    return "\n".join([*lines, END])


def _recheck_lines(recheck: dict[str, Any] | None) -> list[str]:
    """What keeping `indexing.checkedAt` within its minute costs, in results that measured it."""
    if recheck is None:
        return []
    return [
        "",
        f"At most once a minute a search first compares every journal of its scope with the index "
        f"(`indexing.checkedAt`, JM-INDEX-191); over all {recheck['journals']:,} journals that call "
        f"took {recheck['recheck_p50_ms']:.2f} ms at p50, {recheck['extra_p50_ms']:+.2f} ms or "
        f"{recheck['ratio']:.1f}x the same search as a common call.",
    ]


def update_readme(readme: Path, result: dict[str, Any]) -> Path:
    """Replace the table between the markers with the one rendered from `result`."""
    text = readme.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise RuntimeError(f"{readme} has no performance table between {BEGIN!r} and {END!r}")
    readme.write_text(pattern.sub(lambda _: render_table(result), text), encoding="utf-8")
    return readme
