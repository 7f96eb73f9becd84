"""`pimem-bench`: measure the reference at a real user's scale and write JSON, Markdown and a plot.

pimem-bench                       the full run: a 5 GiB corpus, curve 100 MB / 1 GiB / 5 GiB, Pi
                                  start-up on the 1 GiB corpus, search quality (seeds A and B);
                                  results in tools/bench/results/latest.{json,md,png}, and the
                                  README's performance table rewritten from them (about half an
                                  hour on 2 idle cores: indexing, the stage pass and rebuild of
                                  5 GiB take most of it; `phases` in latest.json has each part)
pimem-bench --quick               a 100 MB smoke run (curve 30 MB / 100 MB) into .cache/bench-results/
pimem-bench --size 10GiB          another corpus size (curve: the default points below it, and it)
pimem-bench --quality             search quality only: the generated question set (seeds A and B)
                                  from a clean slate and as search is used (typed, asked before,
                                  keywords), and the harder set, the reference beside BM25
                                  baselines (and ripgrep, clean), with the quality targets, into
                                  .cache/bench-results/quality.{json,md} (about 6 minutes)
pimem-bench --against f1d43e4     the full run, with f1d43e4's reference/ tree also timed beside HEAD's
                                  (same corpus, queries and floor, query by query): HEAD / f1d43e4
                                  ratios per category; the last committed run's tree always is
pimem-bench --readme              rewrite the README's performance table from the committed
                                  tools/bench/results/latest.json (no measuring)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import sys
from pathlib import Path

from pimem_tools.bench._against import committed_baseline
from pimem_tools.bench._git import RESULTS_RELPATH, export_commit, head_commit
from pimem_tools.bench._readme import update_readme
from pimem_tools.bench._report import write_outputs
from pimem_tools.bench._run import GIB, Options, run

__all__ = ["main", "parse_size"]

FULL_SIZE = 5 * GIB
FULL_CURVE = (100_000_000, GIB, FULL_SIZE)
FULL_PI_RUNS = 7  # pairs per Pi version
QUICK_SIZE = 100_000_000
QUICK_CURVE = (30_000_000, QUICK_SIZE)
DEFAULT_SEED = 1
_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000**2, "gb": 1000**3, "kib": 1 << 10, "mib": 1 << 20, "gib": GIB}


def parse_size(text: str) -> int:
    """`1GiB`, `300MB`, `100mb`, `5000000` → bytes (decimal MB/GB, binary MiB/GiB)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _UNITS or float(match.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}; examples: 1GiB, 300MB, 5000000")
    return int(float(match.group(1)) * _UNITS[unit])


def _repo_root() -> Path:
    from pimem_conformance import repo_root

    return repo_root() or Path.cwd()


# Set in the re-executed process: the commit whose export it runs from.
EXPORTED_COMMIT_ENV = "PIMEM_BENCH_EXPORTED_COMMIT"


def _run_from_export(repo: Path, cache_dir: Path, argv: list[str]) -> None:
    """Re-execute this command with HEAD's exported reference/ and tools/ first on the import path."""
    commit = head_commit(repo)
    if commit is None:
        raise SystemExit(
            "pimem-bench: not a git checkout, so there is no commit to measure; add --working-tree"
        )
    code = export_commit(repo, commit, cache_dir)
    path = os.pathsep.join([str(code / "reference"), str(code / "tools"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path.rstrip(os.pathsep), EXPORTED_COMMIT_ENV: commit}
    os.execve(sys.executable, [sys.executable, "-m", "pimem_tools.bench", *argv], env)


def _quality_only(out: Path, every: int) -> int:
    from pimem_tools.bench._quality import HARD_NOTE, conditions_table, markdown_table, measure_quality
    from pimem_tools.bench._targets import TARGETS, quality_target_values, target_table

    quality = measure_quality(every=every)
    out.mkdir(parents=True, exist_ok=True)
    tables = "\n".join(markdown_table(quality, figure) for figure in ("recall_at_10", "recall_at_1", "mrr"))
    tables += "\n" + conditions_table(quality) + "\n## The harder question set\n\n"
    tables += conditions_table(quality["hard"], HARD_NOTE)
    values, notes = quality_target_values(quality)
    table = target_table(values, notes)
    rows = []
    for target in (target for target in TARGETS if target.name in values):
        row = table[target.name]
        verdict = "met" if row["met"] else "NOT met"
        bar = f"{target.direction.replace('_', ' ')} {target.threshold}"
        rows.append(f"- {target.description}: {row['value']} ({bar}): {verdict}")
    quality["targets"] = {name: table[name] for name in values}
    tables += "\nTargets:\n\n" + "\n".join(rows) + "\n"
    (out / "quality.json").write_text(json.dumps(quality, indent=2) + "\n")
    (out / "quality.md").write_text("# Search quality\n\n" + tables)
    print(tables)
    print(out / "quality.json")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pimem-bench",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    parser.add_argument("--size", type=parse_size, help="corpus size (default 1GiB)")
    parser.add_argument("--quick", action="store_true", help="100 MB smoke run with a reduced curve")
    parser.add_argument(
        "--quality", action="store_true", help="search quality only (seeds A and B), about 6 minutes"
    )
    parser.add_argument(
        "--readme", action="store_true", help="rewrite the README's performance table from latest.json"
    )
    parser.add_argument(
        "--pi-runs",
        type=int,
        help=f"Pi start-up pairs per Pi version (default {FULL_PI_RUNS} in the full run, 5 otherwise;"
        " 0 skips it, recorded as not measured)",
    )
    parser.add_argument(
        "--no-quality", action="store_true", help="leave the search-quality figures out of this run"
    )
    parser.add_argument(
        "--quality-every",
        type=int,
        default=1,
        metavar="N",
        help="ask only every Nth question as search is used (typed, asked before, keywords) and of the "
        "harder set (a smoke run's shortcut; recorded in the results, and the in-use targets say so)",
    )
    parser.add_argument(
        "--curve",
        type=lambda t: tuple(parse_size(s) for s in t.split(",")),
        help="scaling-curve sizes, comma-separated (for example 30MB,100MB)",
    )
    parser.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"corpus seed (default {DEFAULT_SEED})"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: tools/bench/results for the full run, .cache/bench-results otherwise)",
    )
    parser.add_argument("--cache-dir", type=Path, help="where corpora are kept (default: <repo>/.cache)")
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="REV",
        help="also time REV's reference/ tree beside HEAD's, query by query, and report HEAD / REV"
        " ratios (repeatable); the last committed run's tree is always timed, as the ratio targets'"
        " baseline",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="the ratio targets' baseline (default: the commit the committed latest.json measured)",
    )
    parser.add_argument(
        "--working-tree", action="store_true", help="measure the checkout as it is, not HEAD's commit"
    )
    arguments = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(arguments)
    if args.quick and args.size is not None:
        parser.error("--quick is a fixed 100 MB run; use --size alone for another size, e.g. --size 300MB")
    repo = _repo_root()
    cache_dir = args.cache_dir or repo / ".cache"
    exported = os.environ.get(EXPORTED_COMMIT_ENV)
    if exported is None and not args.working_tree:
        _run_from_export(repo, cache_dir, arguments)
    if args.readme:
        print(
            update_readme(
                repo / "README.md", json.loads((repo / RESULTS_RELPATH / "latest.json").read_text())
            )
        )
        return 0
    if args.quality:
        return _quality_only(args.out or repo / ".cache" / "bench-results", args.quality_every)
    size = QUICK_SIZE if args.quick else (args.size or FULL_SIZE)
    default_curve = QUICK_CURVE if args.quick else (*(s for s in FULL_CURVE if s < size), size)
    curve = tuple(sorted(set(args.curve or default_curve) | {size}))
    full_run = size == FULL_SIZE and not args.quick
    out = args.out or (repo / RESULTS_RELPATH if full_run else repo / ".cache" / "bench-results")
    command = shlex.join(["pimem-bench", *arguments])
    options = Options(
        repo=repo,
        cache_dir=cache_dir,
        code_root=export_commit(repo, exported, cache_dir) if exported else repo,
        exported_commit=exported,
        size=size,
        curve=curve,
        seed=args.seed,
        command=command,
        pi_startup_runs=args.pi_runs if args.pi_runs is not None else (FULL_PI_RUNS if full_run else 5),
        quality=not args.no_quality,
        quality_every=args.quality_every,
        against=tuple(args.against),
        baseline=args.baseline or committed_baseline(repo, RESULTS_RELPATH),
    )
    result = run(options)
    for path in write_outputs(result, out):
        print(path)
    if out.resolve() == (repo / RESULTS_RELPATH).resolve():
        print(update_readme(repo / "README.md", result))
    missed = [name for name, row in result["targets"].items() if not row["met"]]
    print(
        f"targets met: {len(result['targets']) - len(missed)}/{len(result['targets'])}"
        + (f"; not met: {', '.join(missed)}" if missed else "")
    )
    return 0
