"""Several `reference/` trees timed in one run: the same corpus, queries and floor, query by query.

`pimem-bench --against REV` (and, always, the `reference/` tree of the last committed run, the
baseline of the ratio targets) exports that revision's `reference/` tree with `git archive` beside
HEAD's, indexes the corpus with each tree's own code into its own state dir (index formats differ
between trees), and starts one search process per tree (`_search_child`). Every tree is met at the
same seam: `pimem._serve.ProtocolServer.handle`, driven by `ToolClient` with the protocol's
messages, each request and response through orjson as over `pimem serve`'s pipe; every tree since
the first has it. What the seam adds to a call is that orjson round trip and the dispatch of one
`tool` command, the same for every tree.

For each query in turn, every tree answers it once (the order rotating by one at each turn: AB,
BA, AB … for two trees), then the bench-owned floor statement of the query runs, and this is
repeated `ROUNDS` times: a query's figure is the median of its rounds, each figure of a pair
measured under the same machine load. A second, untimed pass counts what each search does
(`_work`). Figures compare as ratios: this tree's over the other's, per category and overall.
"""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import IO, Any

import orjson

import pimem_tools
from pimem_tools.bench import _reference
from pimem_tools.bench._floor import Floor
from pimem_tools.bench._queries import Query
from pimem_tools.bench._stats import percentile
from pimem_tools.bench._work import COUNTS

__all__ = [
    "ROUNDS",
    "Searcher",
    "Tree",
    "TreeAnswers",
    "category_latency",
    "committed_baseline",
    "export_reference",
    "index_with",
    "rebuild_with",
    "run_interleaved",
    "tree_env",
    "work_block",
]

_EXPORT_PREFIX = "bench-reference-"
_TOP_FUNCTIONS = 40  # per tree, the functions with the most calls over the query set
# Each query is timed this many times per tree; its figure is the median. With one sample, a
# category's p99 over 10-60 queries is its slowest query, and an identical tree measured 0.68-1.45x.
ROUNDS = 5


@dataclass(frozen=True)
class Tree:
    """A `reference/` tree: `root` holds its `pimem` package."""

    label: str  # "HEAD", or the revision as asked
    commit: str | None
    reference: str | None  # git tree id of reference/ (None outside a git checkout)
    root: Path


def _git(repo: Path, *argv: str) -> bytes:
    return subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True).stdout


def export_reference(repo: Path, revision: str, cache_dir: Path, label: str | None = None) -> Tree:
    """`revision`'s `reference/` tree (a commit, or a tree id), unpacked once under the cache."""
    kind = _git(repo, "cat-file", "-t", revision).decode().strip()
    if kind == "tree":
        commit, tree = None, _git(repo, "rev-parse", revision).decode().strip()
    else:
        commit = _git(repo, "rev-parse", f"{revision}^{{commit}}").decode().strip()
        tree = _git(repo, "rev-parse", f"{commit}:reference").decode().strip()
    target = cache_dir / f"{_EXPORT_PREFIX}{tree}"
    complete = target / ".complete"
    if not complete.is_file():
        archive = _git(repo, "archive", "--format=tar", tree)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
        complete.touch()
    short = revision[:12] if len(revision) == 40 else revision
    return Tree(label or short, commit, tree, target)


def committed_baseline(repo: Path, results_relpath: str) -> str | None:
    """The commit (else the reference/ tree) the last committed run measured, from HEAD's latest.json."""
    try:
        data = orjson.loads(_git(repo, "show", f"HEAD:{results_relpath}/latest.json"))
    except subprocess.CalledProcessError:
        return None
    trees = data.get("trees") or {}
    found = trees.get("commit") or trees.get("reference")
    return str(found) if found else None


def tree_env(tree: Tree, state_dir: Path) -> dict[str, str]:
    """A subprocess's environment in which `import pimem` is this tree's code (tools: the bench's)."""
    env = _reference.isolated_env(state_dir)
    tools = Path(pimem_tools.__file__).resolve().parents[1]
    env["PYTHONPATH"] = f"{tree.root}:{tools}"
    return env


def index_with(tree: Tree, corpus: Any, state_dir: Path) -> _reference.IndexRun:
    """`pimem index` of this tree over the corpus, into `state_dir`."""
    argv = [sys.executable, "-m", "pimem", *_reference.index_argv(corpus, state_dir)]
    return _reference.run_measured(argv, tree_env(tree, state_dir))


def rebuild_with(tree: Tree, corpus: Any, state_dir: Path) -> _reference.IndexRun:
    argv = [sys.executable, "-m", "pimem", *_reference.rebuild_argv(corpus, state_dir)]
    return _reference.run_measured(argv, tree_env(tree, state_dir))


class Searcher:
    """One tree's search process (`_search_child`), answering one command at a time."""

    def __init__(
        self, tree: Tree, workspace: dict[str, Any], now: str, queries: list[Query], work: Path
    ) -> None:
        self.tree = tree
        name = (tree.reference or tree.label)[:12]
        spec = work / f"search-spec-{name}.json"
        spec.write_bytes(
            orjson.dumps(
                {"workspace": workspace, "now": now, "queries": [(q.category, q.arguments) for q in queries]}
            )
        )
        self._stderr_path = work / f"search-stderr-{name}.txt"
        self._stderr = self._stderr_path.open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "pimem_tools.bench._search_child", str(spec)],
            env=tree_env(tree, Path(workspace["state_dir"])),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.peak_rss_bytes = 0
        self._done = threading.Event()
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()
        ready = self._read()  # the index is open
        self.pimem = Path(ready["pimem"])  # the folder of the `pimem` package that answers

    def _poll(self) -> None:
        while not self._done.wait(0.05):
            self.peak_rss_bytes = max(self.peak_rss_bytes, _reference.tree_peak_bytes(self._process.pid))

    def _read(self) -> dict[str, Any]:
        stdout: IO[bytes] | None = self._process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            self._process.wait()
            raise RuntimeError(
                f"the search process of {self.tree.label} ended ({self._process.returncode}): "
                + self._stderr_path.read_text(errors="replace")[-3000:]
            )
        answer: dict[str, Any] = orjson.loads(line)
        return answer

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(orjson.dumps(command) + b"\n")
        stdin.flush()
        return self._read()

    def close(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(b'{"stop": true}\n')
        stdin.close()
        self._process.wait()
        self._done.set()
        self._poller.join()
        self._stderr.close()
        if self._process.stdout is not None:
            self._process.stdout.close()
        if self._process.returncode != 0:
            raise RuntimeError(
                f"the search process of {self.tree.label} exited {self._process.returncode}: "
                + self._stderr_path.read_text(errors="replace")[-3000:]
            )


@dataclass
class TreeAnswers:
    samples_ms: list[float]
    cpu_ms: list[float]
    matches: list[str]
    hits: list[list[tuple[str, str]]]
    work: list[dict[str, Any]]
    peak_rss_bytes: int = 0


def run_interleaved(
    searchers: list[Searcher], queries: list[Query], floor: Floor, floor_matches: list[str | None]
) -> tuple[list[TreeAnswers], list[float]]:
    """Every query through every tree in turn (rotating order), then its floor, `ROUNDS` times;
    then the counting pass. A query's figure is the median of its rounds, so one scheduler stall
    does not become a category's p99. Each tree's answers in the searchers' order, and the
    floor's figures."""
    answers = [TreeAnswers([], [], [], [], []) for _ in searchers]
    floor_ms: list[float] = []
    for number in range(len(queries)):
        rounds_ms: list[list[float]] = [[] for _ in searchers]
        rounds_cpu: list[list[float]] = [[] for _ in searchers]
        floor_rounds: list[float] = []
        for round_number in range(ROUNDS):
            for turn in range(len(searchers)):
                which = (number + round_number + turn) % len(searchers)
                said = searchers[which].ask({"time": number})
                rounds_ms[which].append(said["ms"])
                rounds_cpu[which].append(said["cpu_ms"])
                if round_number == 0:
                    answers[which].matches.append(said["match"])
                    answers[which].hits.append([(str(a), str(b)) for a, b in said["hits"]])
            floor_rounds.append(floor.time_ms(floor_matches[number]))
        for answer, ms, cpu in zip(answers, rounds_ms, rounds_cpu, strict=True):
            answer.samples_ms.append(median(ms))
            answer.cpu_ms.append(median(cpu))
        floor_ms.append(median(floor_rounds))
    for searcher, answer in zip(searchers, answers, strict=True):
        answer.work = [searcher.ask({"count": number}) for number in range(len(queries))]
    for searcher, answer in zip(searchers, answers, strict=True):
        searcher.close()
        answer.peak_rss_bytes = searcher.peak_rss_bytes
    return answers, floor_ms


def category_latency(samples: list[float], categories: list[str]) -> dict[str, dict[str, float]]:
    """p50 and p99 per category, and over every query as `all`."""
    blocks: dict[str, dict[str, float]] = {}
    for category in [*dict.fromkeys(categories), "all"]:
        chosen = [s for s, c in zip(samples, categories, strict=True) if category in ("all", c)]
        blocks[category] = {"p50_ms": percentile(chosen, 0.5), "p99_ms": percentile(chosen, 0.99)}
    return blocks


def work_block(work: list[dict[str, Any]], categories: list[str]) -> dict[str, Any]:
    """The counts per query, their sums per category and overall, and the most called functions."""
    by_category: dict[str, dict[str, int]] = {}
    functions: Counter[str] = Counter()
    for counts, category in zip(work, categories, strict=True):
        for name in (category, "all"):
            into = by_category.setdefault(name, dict.fromkeys(COUNTS, 0))
            for count in COUNTS:
                into[count] += int(counts[count])
        functions.update(counts["calls_by_function"])
    return {
        "per_query": [[int(counts[count]) for count in COUNTS] for counts in work],
        "columns": list(COUNTS),
        "by_category": by_category,
        "top_functions": dict(functions.most_common(_TOP_FUNCTIONS)),
    }
