"""Which code a result was measured on: git tree hashes of `reference/` and `tools/`.

The results live under `tools/bench/results/`, so committing them changes the `tools/` tree. The
recorded `tools` hash is therefore the tree `tools/` would have without `bench/results/`: a real git
tree id, computed from git's own objects without writing any, and stable across result commits.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RESULTS_RELPATH", "MeasuredTrees", "measured_trees", "tree_hash_without"]

RESULTS_RELPATH = "tools/bench/results"


@dataclass(frozen=True)
class MeasuredTrees:
    head: str
    reference: str
    tools: str
    # Uncommitted changes (or untracked files) under the measured paths make the hashes a lie.
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


def measured_trees(repo: Path) -> MeasuredTrees | None:
    """The trees at HEAD and whether the work tree matches them; None outside a git checkout."""
    try:
        return _measured_trees(repo)
    except (OSError, subprocess.CalledProcessError):
        return None


def _measured_trees(repo: Path) -> MeasuredTrees:
    def rev(spec: str) -> str:
        return _git(repo, "rev-parse", spec).decode().strip()

    status = _git(
        repo,
        "status",
        "--porcelain",
        "--untracked-files=all",
        "--",
        "reference",
        "tools",
        f":(exclude){RESULTS_RELPATH}",
    ).decode()
    dirty = tuple(line[3:] for line in status.splitlines() if line)
    excluded = RESULTS_RELPATH.removeprefix("tools/")
    return MeasuredTrees(
        head=rev("HEAD"),
        reference=rev("HEAD:reference"),
        tools=tree_hash_without(repo, rev("HEAD:tools"), excluded),
        clean=not dirty,
        dirty_paths=dirty,
    )
