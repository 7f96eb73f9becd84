"""The three outputs of a run: the JSON result, a Markdown table and a PNG plot.

All three are rendered from the one result dictionary, so they cannot disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pimem_tools.bench._stats import MB
from pimem_tools.bench._targets import DIRECTIONS

__all__ = ["render_markdown", "write_outputs"]


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return "not measured"
    if unit == "points":
        return f"{value * 100:+.1f} points"
    if isinstance(value, float):
        text = f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
    else:
        text = f"{value:,}" if isinstance(value, int) else str(value)
    return f"{text} {unit}".strip() if unit and unit != "x" else (f"{text}x" if unit == "x" else text)


def _latency(block: dict[str, Any], *keys: str) -> str:
    return " / ".join(f"{block[key]:.2f}" for key in keys) + " ms"


def _target_rows(targets: dict[str, dict[str, Any]]) -> list[str]:
    rows = ["| target | measured | wanted | met |", "|---|---|---|---|"]
    for row in targets.values():
        wanted = f"{DIRECTIONS[row['direction']]} {_fmt(row['target'], row['unit'])}"
        met = "yes" if row["met"] else ("not measured" if row["value"] is None else "**no**")
        note = f" ({row['note']})" if row.get("note") else ""
        rows.append(f"| {row['description']} | {_fmt(row['value'], row['unit'])}{note} | {wanted} | {met} |")
    return rows


def _measurement_rows(result: dict[str, Any]) -> list[str]:
    indexing, ceiling, stages = result["indexing"], result["ceiling"], result["stages"]
    search, read, append = result["search"], result["read"], result["append"]
    rg, rebuild = result["ripgrep"], result["rebuild"]
    floor = search["floor"]
    rows = ["| measurement | result |", "|---|---|"]
    rows.append(
        f"| first-pass indexing (`pimem index`) | {indexing['mb_per_s']:.1f} MB/s "
        f"({indexing['seconds']:.1f} s), peak RSS {indexing['peak_rss_mb']:.0f} MB |"
    )
    rows.append(
        f"| raw FTS5 insert ceiling, same redacted text, same token stream (the term maker's output), "
        f"same FTS5 options | {ceiling['mb_per_s']:.1f} MB/s of journal "
        f"({ceiling['seconds']:.1f} s); ours ÷ ceiling = {ceiling['ours_over_ceiling']:.2f} |"
    )
    rows.append(f"| read + parse + extract alone | {stages['extract_mb_per_s']:.1f} MB/s of journal |")
    rows.append(
        f"| redaction alone | {stages['redact_mb_per_s']:.1f} MB/s of journal "
        f"({stages['redact_text_mb_per_s']:.1f} MB/s of extracted text) |"
    )
    rows.append(
        f"| term maker alone (CJK character pairs, identifier parts) | "
        f"{stages['terms_mb_per_s']:.1f} MB/s of journal |"
    )
    rows.append(
        f"| append → searchable (50 MB journal, median of {append['samples']}) | "
        f"{append['median_ms']:.2f} ms (p95 {append['p95_ms']:.2f} ms) |"
    )
    recheck = result["recheck"]
    rows.append(
        f"| a search that must first compare all {recheck['journals']:,} journals with the index "
        f"(clock past checkedAt's 60 s bound), beside the same search as a common call, p50 of "
        f"{recheck['pairs']} pairs | {recheck['recheck_p50_ms']:.2f} ms vs "
        f"{recheck['common_p50_ms']:.2f} ms: "
        f"{recheck['extra_p50_ms']:+.2f} ms, {recheck['ratio']:.1f}x (re-checking p99 "
        f"{recheck['recheck_p99_ms']:.2f} ms) |"
    )
    rows.append(
        f"| search p50 / p95 / p99 ({search['queries']} queries), peak RSS of the searching process | "
        f"{_latency(search, 'p50_ms', 'p95_ms', 'p99_ms')}, {search['peak_rss_mb']:.0f} MB |"
    )
    rows.append(
        f"| search floor p50 / p95 / p99: the bare FTS5 candidate MATCH of the same queries "
        f"(SQL below) | {_latency(floor, 'p50_ms', 'p95_ms', 'p99_ms')} |"
    )
    rows.append(
        f"| read p50 / p99 ({read['pages']} pages of 16,000 chars) | {_latency(read, 'p50_ms', 'p99_ms')} |"
    )
    rows.append(
        f"| index size | {indexing['index_bytes'] / MB:.1f} MB = "
        f"{indexing['index_ratio'] * 100:.2f} % of journal bytes |"
    )
    if rg["available"]:
        rows.append(
            f"| ripgrep, same {rg['queries']} single-term queries | median {rg['rg_median_ms']:.0f} ms "
            f"vs ours {rg['ours_median_ms']:.2f} ms: speedup {_fmt(rg['speedup'], 'x')} |"
        )
    else:
        rows.append(f"| ripgrep | unavailable: {rg['reason']} |")
    rows.append(
        f"| `pimem rebuild` | {rebuild['seconds']:.1f} s ({rebuild['mb_per_s']:.1f} MB/s), "
        f"peak RSS {rebuild['peak_rss_mb']:.0f} MB |"
    )
    for version, startup in result["pi_startup"].items():
        what = f"Pi {version} launch to first answered prompt, with ÷ without the extension"
        if startup["measured"]:
            rows.append(
                f"| {what}, {startup['corpus_bytes'] / MB:,.0f} MB corpus | {startup['ratio']:.3f} "
                f"(median of {len(startup['pair_ratios'])} paired ratios; medians "
                f"{startup['with_ms']:.0f} ms vs {startup['without_ms']:.0f} ms) |"
            )
        else:
            rows.append(f"| {what} | not measured: {startup['reason']} |")
    return rows


def _floor_lines(search: dict[str, Any]) -> list[str]:
    floor = search["floor"]
    if "table" not in floor:  # a result from before the bench owned its floor
        return ["The floor of this run: the FTS5 expressions the reference's search asked.", "",
                "```sql", *floor["sql"], "```"]  # fmt: skip
    return [
        "The floor does not move with the reference's code: the bench builds its own FTS5 table from",
        "the corpus's entry texts (as extraction gives them, before redaction) and runs one statement",
        "per query, whose MATCH expression is derived from the query text alone, frozen with the",
        "query set (`pimem_tools.bench._floor`). The terms of a text, for the table and the query",
        "alike: NFC, case-folded; the runs of letters and digits (`_` and everything else",
        "separates); inside a run, each stretch of a script written without spaces (Thai, Lao, Khmer,",
        "Myanmar, kana, Han, Hangul syllables) becomes its overlapping character pairs. A query's",
        "expression is its distinct terms, each double-quoted, joined by `OR` (the any-term match,",
        'e.g. `"parser" OR "retry"`); filters (kind, dates, project) are not part of it. The',
        "`ascii` tokenizer keeps each such term one FTS5 token. The expression of every query is in",
        "latest.json (`search.floor.matches`).",
        "",
        "```sql",
        floor["table"],
        *floor["sql"],
        "```",
    ]


def _against_lines(result: dict[str, Any]) -> list[str]:
    blocks = result.get("against") or []
    if not blocks:
        return ["No other `reference/` tree was timed in this run."]
    rounds = result["search"].get("rounds", 1)
    lines = [
        "Each tree below indexed the same corpus with its own code into its own state dir, then",
        "answered the same queries in a process of its own, through the same seam as HEAD",
        "(`pimem._serve.ProtocolServer.handle`, each request and response through orjson as over",
        "`pimem serve`'s pipe); every query went to every tree in turn (the order rotating at each",
        f"turn), its floor beside them, so each pair shares the machine's load, {rounds} rounds; a",
        "query's figure is the median of its rounds (HEAD's figures above too). Ratios are HEAD's",
        "figure over the tree's; CPU is the searching thread's CPU time. The work columns sum, over",
        "the category's queries, SQL statements started, rows stepped by FTS5 MATCH statements,",
        "journal lines read and Python calls in `pimem` (an untimed second pass: they do not",
        "depend on the machine).",
    ]
    for block in blocks:
        commit = f"commit `{block['commit'][:12]}`, " if block.get("commit") else ""
        lines += [
            "",
            f"### HEAD / {block['label']} ({block['role']}: {commit}`reference/` tree "
            f"`{str(block['reference'])[:12]}`)",
            "",
            "| query category | p50 HEAD / tree | ratio | p99 HEAD / tree | ratio | CPU p50 ratio |"
            " SQL HEAD / tree | MATCH rows HEAD / tree | lines read HEAD / tree | Python calls HEAD / tree |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        head_work = result["search"]["work"]["by_category"]
        their_work = block["work"]["by_category"]
        for category, row in block["by_category"].items():
            ours, theirs = head_work[category], their_work[category]
            lines.append(
                f"| {category} | {row['head_p50_ms']:.2f} / {row['p50_ms']:.2f} ms | {row['p50_ratio']:.2f}x "
                f"| {row['head_p99_ms']:.2f} / {row['p99_ms']:.2f} ms | {row['p99_ratio']:.2f}x "
                f"| {row['cpu_p50_ratio']:.2f}x | {ours['sql']:,} / {theirs['sql']:,} "
                f"| {ours['match_rows']:,} / {theirs['match_rows']:,} "
                f"| {ours['lines']:,} / {theirs['lines']:,} "
                f"| {ours['calls']:,} / {theirs['calls']:,} |"
            )
    return lines


def _quality_lines(quality: dict[str, Any] | None) -> list[str]:
    if quality is None:
        return ["Not measured in this run (`--no-quality`)."]
    from pimem_tools.bench._quality import HARD_NOTE, conditions_table, markdown_table

    counts = ", ".join(f"seed {seed}: {count}" for seed, count in quality["questions"].items())
    lines = [f"Questions per seed: {counts}. Seed A is tuned on; seed B is reported beside it.", ""]
    for figure in ("recall_at_10", "recall_at_5", "recall_at_1", "mrr"):
        lines += markdown_table(quality, figure).splitlines()
    lines += conditions_table(quality).splitlines()
    if "hard" in quality:
        lines += [
            "",
            "### The harder question set",
            "",
            *conditions_table(quality["hard"], HARD_NOTE).splitlines(),
        ]
    return lines


def _category_rows(search: dict[str, Any]) -> list[str]:
    rows = ["| query category | queries | p50 | p95 | p99 | floor p50 |", "|---|---|---|---|---|---|"]
    for category, block in search["by_category"].items():
        rows.append(
            f"| {category} | {block['queries']} | {block['p50_ms']:.2f} ms | {block['p95_ms']:.2f} ms "
            f"| {block['p99_ms']:.2f} ms | {block['floor_p50_ms']:.2f} ms |"
        )
    return rows


def _scaling_rows(scaling: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| corpus | journals | indexing | index size | search p50 / p99 | floor p50 | ripgrep ÷ search "
        "| rebuild | peak RSS: indexing / search / rebuild |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for point in scaling:
        peak = point["peak_rss_mb"]
        speedup = point["ripgrep_speedup"]
        rows.append(
            f"| {point['bytes'] / MB:,.0f} MB | {point['journals']:,} | {point['index_seconds']:.1f} s "
            f"({point['mb_per_s']:.1f} MB/s) | {point['index_bytes'] / MB:.1f} MB "
            f"({point['index_ratio'] * 100:.2f} %) | {point['search_p50_ms']:.2f} / "
            f"{point['search_p99_ms']:.2f} ms | {point['floor_p50_ms']:.2f} ms | "
            f"{'unavailable' if speedup is None else _fmt(speedup, 'x')} | {point['rebuild_seconds']:.1f} s "
            f"| {peak['indexing']:.0f} / {peak['search']:.0f} / {peak['rebuild']:.0f} MB |"
        )
    return rows


def _scripts(corpus: dict[str, Any]) -> str:
    shares = corpus.get("scripts")
    if not shares:
        return ""
    return "; " + ", ".join(f"{share * 100:.1f} % {script}" for script, share in shares.items()) + " of bytes"


def render_markdown(result: dict[str, Any]) -> str:
    corpus, trees = result["corpus"], result["trees"]
    if trees is None:
        measured_on = "outside a git checkout (no tree hashes)"
    else:
        hashes = f"`reference/` tree `{trees['reference'][:12]}`, `tools/` tree `{trees['tools'][:12]}`"
        if trees["source"] == "commit":
            measured_on = f"on commit `{trees['commit'][:12]}` as committed ({hashes})"
        else:
            clean = "clean" if trees["clean"] else "with uncommitted changes"
            measured_on = f"on the working tree at `{trees['commit'][:12]}`, {clean} ({hashes})"
    lines = [
        "# pimem-bench results",
        "",
        f"Corpus: {corpus['bytes'] / MB:,.0f} MB of journals ({corpus['journals']:,} journals, "
        f"{corpus['entries']:,} entries, seed {corpus['seed']}{_scripts(corpus)}). "
        f"Machine: {result['machine']['cpus']} CPUs, "
        f"Python {result['machine']['python']}, SQLite {result['machine']['sqlite']}, 1-minute load average "
        f"{result['machine']['load_average']['start']:.1f} at the start and "
        f"{result['machine']['load_average']['end']:.1f} at the end. "
        f"Measured {result['measured_at']} {measured_on}.",
        "",
        f"Reproduce: `{result['command']}`",
        "",
        "## Targets",
        "",
        *_target_rows(result["targets"]),
        "",
        "## Measurements (one run)",
        "",
        *_measurement_rows(result),
        "",
        "## Search latency by query category",
        "",
        *_category_rows(result["search"]),
        "",
        "## The search floor",
        "",
        *_floor_lines(result["search"]),
        "",
        "## Same-run comparison with other `reference/` trees",
        "",
        *_against_lines(result),
        "",
        "## Scaling",
        "",
        "Every corpus size is indexed from scratch, searched with the same query set as the main run, "
        "compared with ripgrep and rebuilt. Peak RSS is summed over the process tree (main process and "
        "workers).",
        "",
        *_scaling_rows(result["scaling"]),
        "",
        "## Search quality",
        "",
        *_quality_lines(result.get("quality")),
        "",
    ]
    return "\n".join(lines)


def _plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, never a display
    import matplotlib.pyplot as plt

    figure, ((by_category, others), (build, latency)) = plt.subplots(2, 2, figsize=(12, 8.5))
    figure.suptitle(f"pimem-bench, {result['corpus']['bytes'] / MB:,.0f} MB corpus")

    def ecdf(axis: Any, samples: list[float], label: str) -> None:
        ordered = sorted(samples)
        axis.step(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], where="post", label=label)

    for category in result["search"]["by_category"]:
        samples = [
            s
            for s, c in zip(result["search"]["samples_ms"], result["search"]["categories"], strict=True)
            if c == category
        ]
        ecdf(by_category, samples, category)
    for threshold, label in ((5, "p50 target"), (50, "p99 target")):
        by_category.axvline(threshold, color="grey", linestyle="--", linewidth=0.8)
        by_category.text(threshold, 0.02, f" {label}", color="grey", fontsize=7)
    by_category.set(
        xscale="log",
        xlabel="search latency (ms)",
        ylabel="fraction of queries",
        title="search, end to end through the tool",
    )
    ecdf(others, result["search"]["samples_ms"], "search (all)")
    ecdf(others, result["read"]["samples_ms"], "read (16,000-char pages)")
    ecdf(others, result["append"]["samples_ms"], "append → searchable")
    others.set(xscale="log", xlabel="latency (ms)", ylabel="fraction", title="latency distributions")
    for axis in (by_category, others):
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=8)

    sizes = [p["bytes"] / MB for p in result["scaling"]]
    build.plot(sizes, [p["index_seconds"] for p in result["scaling"]], "o-", label="first-pass indexing (s)")
    build.plot(sizes, [p["index_bytes"] / MB for p in result["scaling"]], "s-", label="index size (MB)")
    build.set(xlabel="corpus (MB)", title="scaling: indexing time and index size")
    latency.plot(sizes, [p["search_p50_ms"] for p in result["scaling"]], "o-", label="search p50 (ms)")
    latency.plot(sizes, [p["search_p99_ms"] for p in result["scaling"]], "s-", label="search p99 (ms)")
    latency.plot(sizes, [p["floor_p50_ms"] for p in result["scaling"]], "^-", label="floor p50 (ms)")
    latency.set(xlabel="corpus (MB)", ylabel="ms", title="scaling: search latency", yscale="log")
    for axis in (build, latency):
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_outputs(result: dict[str, Any], out_dir: Path, stem: str = "latest") -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path, png_path = (out_dir / f"{stem}{suffix}" for suffix in (".json", ".md", ".png"))
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    md_path.write_text(render_markdown(result))
    _plot(result, png_path)
    return [json_path, md_path, png_path]
