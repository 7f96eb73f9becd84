"""Which code a result was measured on: git tree hashes of `reference/` and `tools/`.

Several people share one checkout, so by default a run measures HEAD's committed `reference/` and
`tools/`, unpacked into the cache (`export_commit`), never whatever happens to be uncommitted; the
recorded hashes are then true by construction. `--working-tree` measures the checkout as it is and
records whether it was clean.

The results live under `tools/bench/results/`, so committing them changes the `tools/` tree. The
recorded `tools` hash is therefore the tree `tools/` would have without `bench/results/`: a real git
tree id, computed from git's own objects without writing any, and stable across result commits.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "RESULTS_RELPATH",
    "MeasuredTrees",
    "export_commit",
    "head_commit",
    "measured_trees",
    "tree_hash_without",
]

RESULTS_RELPATH = "tools/bench/results"
_MEASURED_PATHS = ("reference", "tools")
_EXPORT_PREFIX = "bench-code-"


@dataclass(frozen=True)
class MeasuredTrees:
    commit: str
    reference: str
    tools: str
    source: str  # "commit" (an export of it) or "working tree"
    # Uncommitted changes (or untracked files) in a measured working tree make the hashes a lie.
    clean: bool
    dirty_paths: tuple[str, ...]


def _git(repo: Path, *argv: str) -> bytes:
    return subprocess.run(["git", *argv], cwd=repo, check=True, capture_output=True).stdout


def _tree_entries(repo: Path, tree_id: str) -> list[tuple[bytes, bytes, bytes]]:
    raw = _git(repo, "cat-file", "tree", tree_id)
    entries = []
    position = 0
    while position < len(raw):
        space = raw.index(b" ", position)
        nul = raw.index(b"\0", space)
        entries.append((raw[position:space], raw[space + 1 : nul], raw[nul + 1 : nul + 21]))
        position = nul + 21
    return entries


def _hash_tree(entries: list[tuple[bytes, bytes, bytes]]) -> str:
    body = b"".join(mode + b" " + name + b"\0" + sha for mode, name, sha in entries)
    return hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()


def _entries_without(repo: Path, tree_id: str, excluded: str) -> list[tuple[bytes, bytes, bytes]]:
    first, _, rest = excluded.partition("/")
    kept: list[tuple[bytes, bytes, bytes]] = []
    for mode, name, sha in _tree_entries(repo, tree_id):
        if name.decode() != first:
            kept.append((mode, name, sha))
        elif rest:
            inner = _entries_without(repo, sha.hex(), rest)
            if inner:  # git stores no empty trees
                kept.append((mode, name, bytes.fromhex(_hash_tree(inner))))
    # Dropping or re-hashing entries keeps git's sort order, so the serialisation stays canonical.
    return kept


def tree_hash_without(repo: Path, tree_id: str, excluded: str) -> str:
    """The id of tree `tree_id` with the sub-path `excluded` (a/b/c) removed; `tree_id` if absent."""
    return _hash_tree(_entries_without(repo, tree_id, excluded))


def head_commit(repo: Path) -> str | None:
    """HEAD's commit id, or None outside a git checkout."""
    try:
        return _git(repo, "rev-parse", "HEAD").decode().strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def export_commit(repo: Path, commit: str, cache_dir: Path) -> Path:
    """The commit's `reference/` and `tools/`, unpacked once under the cache; older exports go."""
    target = cache_dir / f"{_EXPORT_PREFIX}{commit}"
    complete = target / ".complete"
    if not complete.is_file():
        for old in cache_dir.glob(f"{_EXPORT_PREFIX}*"):
            shutil.rmtree(old)
        archive = _git(repo, "archive", "--format=tar", commit, *_MEASURED_PATHS)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
        complete.touch()
    return target


def measured_trees(repo: Path, exported: str | None) -> MeasuredTrees | None:
    """The trees a run measures: those of the exported commit, or of HEAD for a working-tree run."""
    commit = exported or head_commit(repo)
    if commit is None:
        return None

    def rev(spec: str) -> str:
        return _git(repo, "rev-parse", spec).decode().strip()

    dirty: tuple[str, ...] = ()
    if exported is None:
        status = _git(
            repo, "status", "--porcelain", "--untracked-files=all", "--",
            *_MEASURED_PATHS, f":(exclude){RESULTS_RELPATH}",
        ).decode()  # fmt: skip
        dirty = tuple(line[3:] for line in status.splitlines() if line)
    return MeasuredTrees(
        commit=commit,
        reference=rev(f"{commit}:reference"),
        tools=tree_hash_without(repo, rev(f"{commit}:tools"), RESULTS_RELPATH.removeprefix("tools/")),
        source="commit" if exported else "working tree",
        clean=not dirty,
        dirty_paths=dirty,
    )
