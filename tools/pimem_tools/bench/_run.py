"""One benchmark run: every measurement side by side, in one process, on one corpus."""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pimem_tools.bench import _reference
from pimem_tools.bench._ceiling import run_stage_pass
from pimem_tools.bench._corpus import Corpus, ensure_corpus
from pimem_tools.bench._git import RESULTS_RELPATH, MeasuredTrees, measured_trees
from pimem_tools.bench._latency import (
    SearchTimes,
    build_large_journal,
    time_appends,
    time_reads,
    time_searches,
    utc,
)
from pimem_tools.bench._pi_startup import measure_pi_startup
from pimem_tools.bench._queries import Query, TermSample, build_queries
from pimem_tools.bench._ripgrep import ensure_ripgrep, time_ripgrep
from pimem_tools.bench._stats import MB, mb_per_s, percentile
from pimem_tools.bench._targets import target_table
from pimem_tools.bench._viewer import time_viewer_searches

__all__ = ["Options", "run"]

APPEND_JOURNAL_BYTES = 50 * MB
_RIPGREP_QUERIES = 40  # each rg call reads the whole corpus; 40 keeps a 1 GiB run short


@dataclass(frozen=True)
class Options:
    repo: Path
    cache_dir: Path
    code_root: Path  # where the measured reference/ and tools/ are: the repo, or an export of a commit
    exported_commit: str | None
    size: int
    curve: tuple[int, ...]
    seed: int
    command: str
    pi_startup_runs: int  # pairs (at least 5); each run starts the real Pi and prompts it once


def _say(message: str) -> None:
    print(f"pimem-bench: {message}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Indexed:
    corpus: Corpus
    state_dir: Path
    seconds: float
    peak_rss_bytes: int
    index_bytes: int

    def point(self, search_p50_ms: float) -> dict[str, Any]:
        return {
            "bytes": self.corpus.bytes,
            "journals": len(self.corpus.journals),
            "index_seconds": self.seconds,
            "mb_per_s": mb_per_s(self.corpus.bytes, self.seconds),
            "index_bytes": self.index_bytes,
            "index_ratio": self.index_bytes / self.corpus.bytes,
            "search_p50_ms": search_p50_ms,
            "peak_rss_mb": self.peak_rss_bytes / MB,
        }


def _index(corpus: Corpus, state_dir: Path) -> Indexed:
    state_dir.mkdir(parents=True)
    run = _reference.run_pimem(_reference.index_argv(corpus, state_dir), _reference.isolated_env(state_dir))
    index_bytes = sum(p.stat().st_size for p in _reference.index_files(state_dir))
    return Indexed(corpus, state_dir, run.seconds, run.peak_rss_bytes, index_bytes)


def _workspace(
    corpus: Corpus, state_dir: Path, session_file: Path, extra_dirs: tuple[Path, ...] = ()
) -> dict[str, Any]:
    header = corpus.header(session_file)
    return {
        "home": corpus.home(),
        "cwd": header["cwd"],
        "agent_dir": str(corpus.agent_dir) if corpus.agent_dir else str(state_dir / "no-agent-dir"),
        "session_dirs": [str(d) for d in (*corpus.session_dirs, *extra_dirs)],
        "state_dir": str(state_dir),
        "session_file": str(session_file),
    }


def _latency_block(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": percentile(samples, 0.5),
        "p95_ms": percentile(samples, 0.95),
        "p99_ms": percentile(samples, 0.99),
        "max_ms": max(samples),
    }


def _search_block(queries: list[Query], times: SearchTimes) -> dict[str, Any]:
    by_category: dict[str, dict[str, Any]] = {}
    for category in dict.fromkeys(times.categories):
        samples = [s for s, c in zip(times.samples_ms, times.categories, strict=True) if c == category]
        by_category[category] = {"queries": len(samples), **_latency_block(samples)}
    return {
        "queries": len(queries),
        **_latency_block(times.samples_ms),
        "by_category": by_category,
        "matches": times.matches,
        "samples_ms": times.samples_ms,
        "categories": times.categories,
        "arguments": [q.arguments for q in queries],
    }


def _ripgrep_block(corpus: Corpus, queries: list[Query], samples_ms: list[float]) -> dict[str, Any]:
    rg = ensure_ripgrep()
    if rg.executable is None:
        return {"available": False, "reason": rg.unavailable_reason}

    def pairs(category: str) -> list[tuple[str, float]]:
        return [
            (str(q.single_term), ours)
            for q, ours in zip(queries, samples_ms, strict=True)
            if q.category == category
        ]

    # Rare and common terms alternate, so a capped run still compares both.
    chosen = [pair for duo in zip(pairs("rare"), pairs("common"), strict=False) for pair in duo]
    chosen = chosen[:_RIPGREP_QUERIES]
    rg_ms = [time_ripgrep(rg.executable, str(term), corpus.root) * 1000 for term, _ in chosen]
    ours_ms = [ours for _, ours in chosen]
    rg_median, ours_median = statistics.median(rg_ms), statistics.median(ours_ms)
    return {
        "available": True,
        "reason": None,
        "version": rg.version,
        "queries": len(chosen),
        "terms": [term for term, _ in chosen],
        "rg_ms": rg_ms,
        "ours_ms": ours_ms,
        "rg_median_ms": rg_median,
        "ours_median_ms": ours_median,
        "speedup": rg_median / ours_median,
    }


def _search_p50(indexed: Indexed, queries: list[Query], session_file: Path, now: str) -> float:
    client = _reference.ToolClient(_workspace(indexed.corpus, indexed.state_dir, session_file), now)
    try:
        return percentile(time_searches(client, queries).samples_ms, 0.5)
    finally:
        client.close()


def run(options: Options) -> dict[str, Any]:
    started = time.perf_counter()
    load_at_start = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    trees = measured_trees(options.repo, options.exported_commit)
    if trees is None:
        _say("not a git checkout: the result records no tree hashes")
    elif not trees.clean:
        _say(f"uncommitted changes under reference/ or tools/: {', '.join(trees.dirty_paths[:5])}")
    _say(f"corpus of {options.size / MB:,.0f} MB (seed {options.seed})")
    corpus = ensure_corpus(options.cache_dir, options.size, options.seed)
    work = Path(tempfile.mkdtemp(prefix="pimem-bench-"))
    try:
        result = _measure(options, trees, corpus, work, started)
        result["machine"]["load_average"] = {"start": load_at_start, "end": os.getloadavg()[0]}
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(
    options: Options, trees: MeasuredTrees | None, corpus: Corpus, work: Path, started: float
) -> dict[str, Any]:
    _say(f"1. first-pass indexing of {len(corpus.journals):,} journals ({corpus.bytes / MB:,.0f} MB)")
    main = _index(corpus, work / "state")
    _say(f"   {main.seconds:.1f} s, peak RSS {main.peak_rss_bytes / MB:.0f} MB")

    _say("2-3. extraction, redaction and the raw FTS5 ceiling, stage by stage")
    sample = TermSample()
    stages = run_stage_pass(
        corpus.journals, work / "ceiling.db", sample, _reference.fts_options(main.state_dir)
    )
    (work / "ceiling.db").unlink()
    queries = build_queries(sample)
    assert sample.last_timestamp is not None
    now = (utc(sample.last_timestamp) + timedelta(days=1)).isoformat().replace("+00:00", "Z")
    session_file = corpus.journals[len(corpus.journals) // 2]

    _say(f"5-6. {len(queries)} searches and the reads of their hits, through the tool")
    client = _reference.ToolClient(_workspace(corpus, main.state_dir, session_file), now)
    search_times = time_searches(client, queries)
    read_samples = time_reads(client, list(search_times.hits))
    _say("7. the same searches through pimem view's HTTP endpoint, each beside the tool's")
    workspace = _workspace(corpus, main.state_dir, session_file)
    viewer_samples, paired_tool = time_viewer_searches(workspace, now, queries, client)
    client.close()
    search = _search_block(queries, search_times)
    viewer = {**_latency_block(viewer_samples), "tool_p50_ms": percentile(paired_tool, 0.5)}

    _say("8. ripgrep over the same corpus")
    ripgrep = _ripgrep_block(corpus, queries, search_times.samples_ms)

    _say("9. pimem rebuild")
    rebuild = _reference.run_pimem(
        _reference.rebuild_argv(corpus, main.state_dir), _reference.isolated_env(main.state_dir)
    )

    _say("4. append → searchable on a 50 MB journal")
    append_dir = work / "append-sessions"
    big_journal = append_dir / "large-session.jsonl"
    parent = build_large_journal(
        big_journal, list(corpus.journals), APPEND_JOURNAL_BYTES, str(corpus.header(session_file)["cwd"])
    )
    big_bytes = big_journal.stat().st_size
    client = _reference.ToolClient(_workspace(corpus, main.state_dir, big_journal, (append_dir,)), now)
    appends = time_appends(client, big_journal, parent, utc(now))
    client.close()

    _say("10. scaling curve")
    points = {corpus.bytes: main.point(search["p50_ms"])}
    peak_rss = main.peak_rss_bytes
    for size in options.curve:
        if size == options.size:
            continue
        other = ensure_corpus(options.cache_dir, size, options.seed)
        indexed = _index(other, work / f"state-{size}")
        peak_rss = max(peak_rss, indexed.peak_rss_bytes)
        other_session = other.journals[len(other.journals) // 2]
        points[other.bytes] = indexed.point(_search_p50(indexed, queries, other_session, now))
        shutil.rmtree(indexed.state_dir)
        _say(f"    {other.bytes / MB:,.0f} MB: {indexed.seconds:.1f} s")

    _say("Pi start-up")
    startup = measure_pi_startup(options.repo, options.code_root, options.pi_startup_runs, options.cache_dir)

    ours_mb_per_s = mb_per_s(corpus.bytes, main.seconds)
    ceiling_mb_per_s = mb_per_s(corpus.bytes, stages.insert_seconds)
    append_median = statistics.median(appends.samples_ms)
    values: dict[str, float | None] = {
        "indexing_vs_ceiling": ours_mb_per_s / ceiling_mb_per_s,
        "indexing_mb_per_s": ours_mb_per_s,
        "index_size_ratio": main.index_bytes / corpus.bytes,
        "search_p50_ms": search["p50_ms"],
        "search_p99_ms": search["p99_ms"],
        "viewer_search_overhead_ms": viewer["p50_ms"] - viewer["tool_p50_ms"],
        "append_to_searchable_ms": append_median,
        "ripgrep_speedup": ripgrep.get("speedup"),
        "peak_rss_mb": peak_rss / MB,
        "pi_startup_ratio": startup.ratio,
    }
    notes = {}
    if not ripgrep["available"]:
        notes["ripgrep_speedup"] = f"ripgrep unavailable: {ripgrep['reason']}"
    if startup.reason:
        notes["pi_startup_ratio"] = startup.reason
    if corpus.bytes < 1 << 30:
        notes.update(
            {
                name: f"measured on {corpus.bytes / MB:,.0f} MB, not the 1 GiB the target names"
                for name in ("indexing_mb_per_s", "search_p50_ms", "search_p99_ms", "ripgrep_speedup")
                if name not in notes
            }
        )
    return {
        "format": 1,
        "command": options.command,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "run_seconds": time.perf_counter() - started,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "sqlite": _reference.sqlite_version(),
            "system": f"{platform.system()} {platform.machine()}",
        },
        "trees": {**asdict(trees), "tools_excludes": RESULTS_RELPATH} if trees else None,
        "corpus": {
            "requested_bytes": options.size,
            "bytes": corpus.bytes,
            "journals": len(corpus.journals),
            "entries": stages.entries,
            "seed": options.seed,
            "generation_seconds": corpus.generation_seconds,
        },
        "indexing": {
            "seconds": main.seconds,
            "mb_per_s": ours_mb_per_s,
            "peak_rss_mb": main.peak_rss_bytes / MB,
            "index_bytes": main.index_bytes,
            "index_ratio": main.index_bytes / corpus.bytes,
        },
        "ceiling": {
            "seconds": stages.insert_seconds,
            "mb_per_s": ceiling_mb_per_s,
            "ours_over_ceiling": ours_mb_per_s / ceiling_mb_per_s,
            "fts_options": stages.fts_options,
        },
        "stages": {
            "extract_seconds": stages.extract_seconds,
            "extract_mb_per_s": mb_per_s(corpus.bytes, stages.extract_seconds),
            "redact_seconds": stages.redact_seconds,
            "redact_mb_per_s": mb_per_s(corpus.bytes, stages.redact_seconds),
            "redact_text_mb_per_s": mb_per_s(stages.text_bytes, stages.redact_seconds),
            "text_bytes": stages.text_bytes,
            "entries": stages.entries,
        },
        "search": search,
        "viewer_search": viewer,
        "read": {
            "pages": len(read_samples),
            "p50_ms": percentile(read_samples, 0.5),
            "p99_ms": percentile(read_samples, 0.99),
            "samples_ms": read_samples,
        },
        "append": {
            "journal_bytes": big_bytes,
            "samples": len(appends.samples_ms),
            "found": appends.found,
            "median_ms": append_median,
            "p95_ms": percentile(appends.samples_ms, 0.95),
            "samples_ms": appends.samples_ms,
        },
        "ripgrep": ripgrep,
        "rebuild": {
            "seconds": rebuild.seconds,
            "mb_per_s": mb_per_s(corpus.bytes, rebuild.seconds),
            "peak_rss_mb": rebuild.peak_rss_bytes / MB,
        },
        "scaling": [points[size] for size in sorted(points)],
        "pi_startup": {
            "measured": startup.ratio is not None,
            "ratio": startup.ratio,
            "reason": startup.reason,
            "with_ms": startup.with_extension_ms,
            "without_ms": startup.without_extension_ms,
            "pair_ratios": list(startup.pair_ratios),
            "corpus_bytes": startup.corpus_bytes,
        },
        "targets": target_table(values, notes),
    }
