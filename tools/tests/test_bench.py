"""pimem-bench: a smoke run writes three well-formed outputs, and the committed results are honest.

Nothing here looks at a timing: the benchmark measures, tests only check shape and consistency.
"""

from __future__ import annotations

import json
import operator
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from pimem_tools.bench._git import RESULTS_RELPATH, tree_hash_without
from pimem_tools.bench._targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
LATEST = REPO / RESULTS_RELPATH / "latest.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# The comparison each direction names, written out here rather than borrowed from the code under test.
COMPARE = {"at_least": operator.ge, "at_most": operator.le}
RESULT_KEYS = {
    "format", "command", "measured_at", "machine", "trees", "corpus", "indexing", "ceiling", "stages",
    "search", "read", "append", "ripgrep", "rebuild", "scaling", "pi_startup", "targets",
    "viewer_search",
}  # fmt: skip


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
    result = subprocess.run(
        [str(bench), "--working-tree", "--size", "12MB", "--curve", "6MB,12MB", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]

    data = json.loads((out / "latest.json").read_text())
    assert set(data) >= RESULT_KEYS
    _check_targets(data["targets"])
    assert data["search"]["queries"] >= 200
    assert len(data["search"]["samples_ms"]) == data["search"]["queries"]
    viewer = data["viewer_search"]
    assert viewer["p50_ms"] > 0 and viewer["tool_p50_ms"] > 0
    assert data["targets"]["viewer_search_overhead_ms"]["value"] == viewer["p50_ms"] - viewer["tool_p50_ms"]
    assert data["append"]["found"] == data["append"]["samples"] == 50
    sizes = [point["bytes"] for point in data["scaling"]]
    assert len(sizes) == 2 and sizes == sorted(sizes)

    markdown = (out / "latest.md").read_text()
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    assert "|---|---|---|---|" in table
    assert all(line.endswith("|") for line in table)
    for target in TARGETS:
        assert target.description in markdown

    assert (out / "latest.png").read_bytes().startswith(PNG_SIGNATURE)


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def test_committed_results_recompute_and_match_the_committed_trees() -> None:
    if not LATEST.is_file():
        pytest.skip(f"pending: no full benchmark run committed yet at {RESULTS_RELPATH}/latest.json")
    data = json.loads(LATEST.read_text())
    _check_targets(data["targets"], predating=True)
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
