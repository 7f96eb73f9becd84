"""One benchmark run: every measurement side by side, in one process tree, on one corpus per size.

At every size of the curve: first-pass indexing (time, peak RSS of the process tree), the whole
query set through the tool in a process of its own (latency per category, the bare FTS5 floor of
each query beside it, the search's peak RSS), ripgrep on the same single-term queries, and
`pimem rebuild` (time, peak RSS). At the main size besides: the stage pass (extraction, redaction,
term maker, and the raw FTS5 insert ceiling on the same tokens), reads, the viewer, and append →
searchable on a 50 MB journal among the corpus. Once: Pi start-up (on the 1 GiB point's corpus)
and search quality (seeds A and B).
"""

from __future__ import annotations

import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pimem_tools.bench import _reference
from pimem_tools.bench._against import (
    ROUNDS,
    Searcher,
    Tree,
    TreeAnswers,
    category_latency,
    export_reference,
    index_with,
    rebuild_with,
    run_interleaved,
    work_block,
)
from pimem_tools.bench._ceiling import run_stage_pass
from pimem_tools.bench._corpus import Corpus, ensure_corpus, warm
from pimem_tools.bench._floor import FLOOR_SQL, FLOOR_TABLE, Floor, build_floor, floor_match
from pimem_tools.bench._git import RESULTS_RELPATH, MeasuredTrees, measured_trees
from pimem_tools.bench._latency import (
    RECHECK_SAMPLES,
    RecheckTimes,
    build_large_journal,
    time_appends,
    time_reads,
    time_rechecks,
    utc,
)
from pimem_tools.bench._pi_startup import PI_VERSIONS, PiStartup, measure_pi_startup
from pimem_tools.bench._queries import Query, TermSample, build_queries, quality_questions
from pimem_tools.bench._reference import IndexRun
from pimem_tools.bench._ripgrep import ensure_ripgrep, time_ripgrep
from pimem_tools.bench._stats import MB, mb_per_s, percentile
from pimem_tools.bench._targets import target_table, target_values
from pimem_tools.bench._viewer import time_viewer_searches

__all__ = ["GIB", "Options", "run"]

GIB = 1 << 30
APPEND_JOURNAL_BYTES = 50 * MB
_RIPGREP_QUERIES = 40  # each rg call reads the whole corpus; 40 keeps a 5 GiB run short
_VIEWER_QUERIES = 100  # each goes to the viewer and to the tool once more


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
    pi_startup_runs: int  # pairs (0: not measured; else at least 5); each run starts the real Pi once
    quality: bool = True
    quality_every: int = 1  # ask every Nth question in use and of the harder set (smoke runs)
    against: tuple[str, ...] = ()  # revisions whose reference/ tree is timed beside HEAD's
    # The reference/ tree of the last committed run (a commit or tree id): the ratio targets' baseline.
    baseline: str | None = None


# When each progress message of this run was said: the phases a full run's time goes to.
_SAID: list[tuple[str, float]] = []


def _say(message: str) -> None:
    now = time.perf_counter()
    _SAID.append((message.strip(), now))
    print(f"pimem-bench [{now - _SAID[0][1]:5.0f} s]: {message}", file=sys.stderr, flush=True)


def _phases(end: float) -> list[dict[str, Any]]:
    """Each message with the seconds until the next one (or `end`)."""
    starts = [at for _, at in _SAID[1:]] + [end]
    return [
        {"phase": said, "seconds": round(until - at, 2)}
        for (said, at), until in zip(_SAID, starts, strict=True)
    ]


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


def _floor_texts(corpus: Corpus) -> Iterator[str]:
    """The corpus's entry texts, as extraction gives them (before redaction), journal by journal."""
    for path in corpus.journals:
        for entry in _reference.extracted_entries(str(path)):
            yield entry.text


def _search_block(
    queries: list[Query], head: TreeAnswers, floor_ms: list[float], floor_matches: list[str | None]
) -> dict[str, Any]:
    categories = [q.category for q in queries]
    by_category: dict[str, dict[str, Any]] = {}
    for category in dict.fromkeys(categories):
        samples = [s for s, c in zip(head.samples_ms, categories, strict=True) if c == category]
        floor = [s for s, c in zip(floor_ms, categories, strict=True) if c == category]
        by_category[category] = {
            "queries": len(samples),
            **_latency_block(samples),
            "floor_p50_ms": percentile(floor, 0.5),
        }
    matches: dict[str, int] = {}
    for match in head.matches:
        matches[match] = matches.get(match, 0) + 1
    return {
        "queries": len(queries),
        "rounds": ROUNDS,  # each figure is the median of this many timings of the query
        **_latency_block(head.samples_ms),
        "by_category": by_category,
        "matches": matches,
        "samples_ms": head.samples_ms,
        "cpu_ms": head.cpu_ms,
        "categories": categories,
        "arguments": [q.arguments for q in queries],
        "peak_rss_mb": head.peak_rss_bytes / MB,
        "floor": {
            "table": FLOOR_TABLE,
            "sql": [FLOOR_SQL],
            "matches": floor_matches,
            **_latency_block(floor_ms),
            "samples_ms": floor_ms,
        },
        "work": work_block(head.work, categories),
    }


def _against_block(
    queries: list[Query], head: TreeAnswers, tree: Tree, other: TreeAnswers, role: str, indexed: IndexRun
) -> dict[str, Any]:
    """One other tree beside HEAD: its figures, and HEAD's over its as ratios."""
    categories = [q.category for q in queries]
    ours = category_latency(head.samples_ms, categories)
    theirs = category_latency(other.samples_ms, categories)
    our_cpu = category_latency(head.cpu_ms, categories)
    their_cpu = category_latency(other.cpu_ms, categories)
    return {
        "label": tree.label,
        "role": role,
        "commit": tree.commit,
        "reference": tree.reference,
        "index_seconds": indexed.seconds,
        "samples_ms": other.samples_ms,
        "cpu_ms": other.cpu_ms,
        "matches": other.matches,
        "peak_rss_mb": other.peak_rss_bytes / MB,
        "by_category": {
            category: {
                "head_p50_ms": ours[category]["p50_ms"],
                "head_p99_ms": ours[category]["p99_ms"],
                "p50_ms": theirs[category]["p50_ms"],
                "p99_ms": theirs[category]["p99_ms"],
                "p50_ratio": ours[category]["p50_ms"] / theirs[category]["p50_ms"],
                "p99_ratio": ours[category]["p99_ms"] / theirs[category]["p99_ms"],
                "cpu_p50_ratio": our_cpu[category]["p50_ms"] / their_cpu[category]["p50_ms"],
            }
            for category in ours
        },
        "work": work_block(other.work, categories),
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


@dataclass
class Point:
    """Every figure of one corpus size."""

    corpus: Corpus
    state_dir: Path
    index_seconds: float
    index_peak_rss_bytes: int
    index_bytes: int
    search: dict[str, Any]
    hits: list[tuple[str, str]]
    ripgrep: dict[str, Any]
    rebuild_seconds: float = 0.0
    rebuild_peak_rss_bytes: int = 0

    def row(self) -> dict[str, Any]:
        return {
            "requested_bytes": self.corpus.requested_bytes,
            "bytes": self.corpus.bytes,
            "journals": len(self.corpus.journals),
            "index_seconds": self.index_seconds,
            "mb_per_s": mb_per_s(self.corpus.bytes, self.index_seconds),
            "index_bytes": self.index_bytes,
            "index_ratio": self.index_bytes / self.corpus.bytes,
            "search_p50_ms": self.search["p50_ms"],
            "search_p99_ms": self.search["p99_ms"],
            "floor_p50_ms": self.search["floor"]["p50_ms"],
            "ripgrep_speedup": self.ripgrep.get("speedup"),
            "rebuild_seconds": self.rebuild_seconds,
            "peak_rss_mb": {
                "indexing": self.index_peak_rss_bytes / MB,
                "search": self.search["peak_rss_mb"],
                "rebuild": self.rebuild_peak_rss_bytes / MB,
            },
        }


def _measure_point(
    corpus: Corpus,
    queries: list[Query],
    now: str,
    work: Path,
    head_tree: Tree,
    others: list[tuple[Tree, str]],
    extra: Callable[[Point], None] | None = None,
) -> Point:
    """Index, search (HEAD beside each other tree, interleaved, with the floor), (whatever `extra`
    measures on the fresh index), ripgrep, rebuild."""
    size = f"{corpus.bytes / MB:,.0f} MB"
    state_dir = work / f"state-{corpus.requested_bytes}"
    state_dir.mkdir(parents=True)
    warm(corpus)  # as the stage pass and the ceiling read theirs: from the page cache
    _say(f"{size}: first-pass indexing of {len(corpus.journals):,} journals")
    indexed = index_with(head_tree, corpus, state_dir)
    index_bytes = sum(p.stat().st_size for p in _reference.index_files(state_dir))
    _say(f"{size}:   {indexed.seconds:.1f} s, peak RSS {indexed.peak_rss_bytes / MB:.0f} MB")
    other_states: list[Path] = []
    other_indexed: list[IndexRun] = []
    for tree, role in others:
        other_state = work / f"state-{corpus.requested_bytes}-{(tree.reference or tree.label)[:12]}"
        other_state.mkdir(parents=True)
        _say(f"{size}: indexing with {tree.label}'s reference/ ({role})")
        other_indexed.append(index_with(tree, corpus, other_state))
        other_states.append(other_state)
    _say(f"{size}: the floor's table, built from the corpus's texts")
    floor_db = work / f"floor-{corpus.requested_bytes}.db"
    build_floor(_floor_texts(corpus), floor_db)
    floor_matches = [floor_match(str(q.arguments["query"])) for q in queries]
    session_file = corpus.journals[len(corpus.journals) // 2]
    names = ", ".join(["HEAD", *(tree.label for tree, _ in others)])
    _say(f"{size}: {len(queries)} searches through the tool ({names}, in turn), each with its floor")
    searchers = [
        Searcher(tree, _workspace(corpus, state, session_file), now, queries, work)
        for tree, state in [(head_tree, state_dir), *zip([t for t, _ in others], other_states, strict=True)]
    ]
    floor = Floor(floor_db)
    try:
        answers, floor_ms = run_interleaved(searchers, queries, floor, floor_matches)
    finally:
        floor.close()
    floor_db.unlink()
    for other_state in other_states:
        shutil.rmtree(other_state)
    search = _search_block(queries, answers[0], floor_ms, floor_matches)
    search["against"] = [
        _against_block(queries, answers[0], tree, answer, role, run)
        for (tree, role), answer, run in zip(others, answers[1:], other_indexed, strict=True)
    ]
    _say(f"{size}:   p50 {search['p50_ms']:.2f} ms, p99 {search['p99_ms']:.2f} ms")
    for block in search["against"]:
        overall = block["by_category"]["all"]
        _say(
            f"{size}:   HEAD / {block['label']}: p50 {overall['p50_ratio']:.2f}x, "
            f"p99 {overall['p99_ratio']:.2f}x"
        )
    hits = [hit for per_query in answers[0].hits for hit in per_query]
    point = Point(
        corpus,
        state_dir,
        indexed.seconds,
        indexed.peak_rss_bytes,
        index_bytes,
        search,
        list(dict.fromkeys(hits)),
        {},
    )
    if extra is not None:
        extra(point)
    _say(f"{size}: ripgrep over the same corpus")
    point.ripgrep = _ripgrep_block(corpus, queries, search["samples_ms"])
    _say(f"{size}: pimem rebuild")
    rebuilt = rebuild_with(head_tree, corpus, state_dir)
    point.rebuild_seconds, point.rebuild_peak_rss_bytes = rebuilt.seconds, rebuilt.peak_rss_bytes
    return point


def run(options: Options) -> dict[str, Any]:
    started = time.perf_counter()
    _SAID.clear()
    load_at_start = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    trees = measured_trees(options.repo, options.exported_commit)
    if trees is None:
        _say("not a git checkout: the result records no tree hashes")
    elif not trees.clean:
        _say(f"uncommitted changes under reference/ or tools/: {', '.join(trees.dirty_paths[:5])}")
    work = Path(tempfile.mkdtemp(prefix="pimem-bench-"))
    try:
        result = _measure(options, trees, work, started)
        result["machine"]["load_average"] = {"start": load_at_start, "end": os.getloadavg()[0]}
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _main_extras(work: Path, queries: list[Query], now: str, into: dict[str, Any]) -> Callable[[Point], None]:
    """What the main size measures on its fresh index besides the curve's figures."""

    def measure(point: Point) -> None:
        corpus = point.corpus
        session_file = corpus.journals[len(corpus.journals) // 2]
        workspace = _workspace(corpus, point.state_dir, session_file)
        client = _reference.ToolClient(workspace, now)
        _say("main: reads of the search hits, through the tool")
        into["read"] = time_reads(client, point.hits)
        _say("main: the same searches through pimem view's HTTP endpoint, each beside the tool's")
        stride = max(1, len(queries) // _VIEWER_QUERIES)
        viewer_samples, paired_tool = time_viewer_searches(workspace, now, queries[::stride], client)
        _say("main: searches that must first compare every journal with the index, beside common ones")
        every = max(1, len(queries) // RECHECK_SAMPLES)
        into["recheck"] = time_rechecks(client, queries[::every][:RECHECK_SAMPLES], utc(now))
        client.close()
        into["viewer"] = {
            "queries": len(viewer_samples),
            **_latency_block(viewer_samples),
            "tool_p50_ms": percentile(paired_tool, 0.5),
        }
        _say("main: append → searchable on a 50 MB journal among the corpus")
        append_dir = work / "append-sessions"
        big_journal = append_dir / "large-session.jsonl"
        parent = build_large_journal(
            big_journal, list(corpus.journals), APPEND_JOURNAL_BYTES, str(corpus.header(session_file)["cwd"])
        )
        client = _reference.ToolClient(_workspace(corpus, point.state_dir, big_journal, (append_dir,)), now)
        appends = time_appends(client, big_journal, parent, utc(now))
        client.close()
        into["append"] = (big_journal.stat().st_size, appends)
        shutil.rmtree(append_dir)

    return measure


def _recheck_block(times: RecheckTimes) -> dict[str, Any]:
    """What keeping `indexing.checkedAt` within its bound costs the call that re-checks."""
    common, recheck = percentile(times.common_ms, 0.5), percentile(times.recheck_ms, 0.5)
    return {
        "journals": times.journals,
        "scope": "global",
        "pairs": len(times.recheck_ms),
        "common_p50_ms": common,
        "recheck_p50_ms": recheck,
        "recheck_p99_ms": percentile(times.recheck_ms, 0.99),
        "extra_p50_ms": recheck - common,
        "ratio": recheck / common,
        "common_samples_ms": times.common_ms,
        "recheck_samples_ms": times.recheck_ms,
    }


def _other_trees(options: Options, head: Tree) -> list[tuple[Tree, str]]:
    """The trees timed beside HEAD's: the baseline first, then each asked for (one tree once)."""
    found: dict[str, tuple[Tree, str]] = {}
    asked = [(options.baseline, "baseline")] if options.baseline else []
    for revision, role in [*asked, *((revision, "asked") for revision in options.against)]:
        assert revision is not None
        tree = export_reference(options.repo, revision, options.cache_dir)
        key = tree.reference or revision
        if key in found:
            found[key] = (found[key][0], "baseline+asked")
        else:
            found[key] = (tree, role)
    if head.reference is not None and head.reference in found:
        _say(f"HEAD's reference/ tree is {found[head.reference][0].label}'s: it is timed beside itself")
    return list(found.values())


def _measure(options: Options, trees: MeasuredTrees | None, work: Path, started: float) -> dict[str, Any]:
    _say(f"corpus of {options.size / MB:,.0f} MB (seed {options.seed})")
    corpus = ensure_corpus(options.cache_dir, options.size, options.seed)
    _say(f"stage pass over {len(corpus.journals):,} journals: extraction, redaction, terms, FTS5 ceiling")
    sample = TermSample()
    stages = run_stage_pass(corpus.journals, work / "ceiling.db", sample, _reference.fts_options_of_schema())
    (work / "ceiling.db").unlink()
    queries = build_queries(sample, quality_questions())
    assert sample.last_timestamp is not None
    now = (utc(sample.last_timestamp) + timedelta(days=1)).isoformat().replace("+00:00", "Z")

    head_tree = Tree(
        "HEAD",
        trees.commit if trees else None,
        trees.reference if trees else None,
        options.code_root / "reference",
    )
    others = _other_trees(options, head_tree)
    extras: dict[str, Any] = {}
    points: dict[int, Point] = {}
    for size in sorted(options.curve):
        other = corpus if size == options.size else ensure_corpus(options.cache_dir, size, options.seed)
        main = size == options.size
        point = _measure_point(
            other,
            queries,
            now,
            work,
            head_tree,
            others if main else [],
            _main_extras(work, queries, now, extras) if main else None,
        )
        shutil.rmtree(point.state_dir)
        points[size] = point
    main_point = points[options.size]

    startup_corpus = points[GIB].corpus if GIB in points else corpus
    startups: dict[str, PiStartup] = {}
    for version in PI_VERSIONS:
        if options.pi_startup_runs <= 0:
            startups[version] = PiStartup(reason="not asked for (--pi-runs 0)")
            continue
        _say(f"Pi {version} start-up with and without the extension ({startup_corpus.bytes / MB:,.0f} MB)")
        startups[version] = measure_pi_startup(
            version, options.repo, options.code_root, options.pi_startup_runs, startup_corpus
        )

    quality: dict[str, Any] | None = None
    if options.quality:
        from pimem_tools.bench._quality import measure_quality

        _say("search quality: seeds A and B")
        quality = measure_quality(every=options.quality_every)

    big_bytes, appends = extras["append"]
    read_samples: list[float] = extras["read"]
    viewer = extras["viewer"]
    recheck: RecheckTimes = extras["recheck"]
    indexing_mb_per_s = mb_per_s(corpus.bytes, main_point.index_seconds)
    ceiling_mb_per_s = mb_per_s(corpus.bytes, stages.insert_seconds)
    result: dict[str, Any] = {
        "format": 2,
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
            "scripts": corpus.scripts,
        },
        "indexing": {
            "seconds": main_point.index_seconds,
            "mb_per_s": indexing_mb_per_s,
            "peak_rss_mb": main_point.index_peak_rss_bytes / MB,
            "index_bytes": main_point.index_bytes,
            "index_ratio": main_point.index_bytes / corpus.bytes,
        },
        "ceiling": {
            "seconds": stages.insert_seconds,
            "mb_per_s": ceiling_mb_per_s,
            "ours_over_ceiling": indexing_mb_per_s / ceiling_mb_per_s,
            "fts_options": stages.fts_options,
            "token_stream": "the reference's term maker (pimem._terms.index_text) on the redacted text",
        },
        "stages": {
            "extract_seconds": stages.extract_seconds,
            "extract_mb_per_s": mb_per_s(corpus.bytes, stages.extract_seconds),
            "redact_seconds": stages.redact_seconds,
            "redact_mb_per_s": mb_per_s(corpus.bytes, stages.redact_seconds),
            "redact_text_mb_per_s": mb_per_s(stages.text_bytes, stages.redact_seconds),
            "terms_seconds": stages.terms_seconds,
            "terms_mb_per_s": mb_per_s(corpus.bytes, stages.terms_seconds),
            "text_bytes": stages.text_bytes,
            "entries": stages.entries,
        },
        "search": main_point.search,
        "against": main_point.search.pop("against"),
        "viewer_search": viewer,
        "read": {
            "pages": len(read_samples),
            "p50_ms": percentile(read_samples, 0.5),
            "p99_ms": percentile(read_samples, 0.99),
            "samples_ms": read_samples,
        },
        "append": {
            "journal_bytes": big_bytes,
            "corpus_bytes": corpus.bytes,
            "samples": len(appends.samples_ms),
            "found": appends.found,
            "median_ms": statistics.median(appends.samples_ms),
            "p95_ms": percentile(appends.samples_ms, 0.95),
            "samples_ms": appends.samples_ms,
        },
        "recheck": _recheck_block(recheck),
        "ripgrep": main_point.ripgrep,
        "rebuild": {
            "seconds": main_point.rebuild_seconds,
            "mb_per_s": mb_per_s(corpus.bytes, main_point.rebuild_seconds),
            "peak_rss_mb": main_point.rebuild_peak_rss_bytes / MB,
        },
        "scaling": [points[size].row() for size in sorted(points)],
        "pi_startup": {
            version: {
                "measured": startup.ratio is not None,
                "ratio": startup.ratio,
                "reason": startup.reason,
                "with_ms": startup.with_extension_ms,
                "without_ms": startup.without_extension_ms,
                "pair_ratios": list(startup.pair_ratios),
                "corpus_bytes": startup.corpus_bytes,
            }
            for version, startup in startups.items()
        },
        "quality": quality,
    }
    result["phases"] = _phases(time.perf_counter())
    values, notes = target_values(result)
    result["targets"] = target_table(values, notes)
    return result
