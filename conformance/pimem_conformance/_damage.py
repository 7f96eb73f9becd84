"""Damage to a state dir, as a `damage` step makes it while no instance is open (JM-INDEX-320).

The runner does not know which file is the index: every regular file under the state dir is
damaged alike, by a kind and a seed, so a run is the same on every machine. `read_only` is undone
by `restore_permissions` before the workspace is removed (also when the case fails).
"""

from __future__ import annotations

import os
import random
import stat
from pathlib import Path

__all__ = ["DAMAGE_KINDS", "JournalBytes", "damage_state_dir", "restore_permissions", "snapshot_journals"]

DAMAGE_KINDS = ("truncate", "delete", "random_bytes", "read_only")
# Runs of random bytes in each file, one in each of as many equal stretches. Few and short: a
# storage engine finds heavy damage by itself, light damage is what only a check of one's own finds.
_RUNS_PER_FILE = 4
_RUN_BYTES = (1, 4)  # the length of one run, at least and at most
_READ_ONLY_FILE, _READ_ONLY_FOLDER = 0o444, 0o555
_WRITABLE_FILE, _WRITABLE_FOLDER = 0o644, 0o755

JournalBytes = dict[str, bytes]  # workspace-relative path -> content


def _files(state_dir: Path) -> list[Path]:
    """Every regular file under the state dir, in a fixed order (links are left alone)."""
    if not state_dir.is_dir():
        return []
    return sorted(path for path in state_dir.rglob("*") if path.is_file() and not path.is_symlink())


def damage_state_dir(state_dir: Path, kind: str, seed: int) -> None:
    """Damage every regular file under `state_dir` (see the module's doc and spec/protocol.md)."""
    chance = random.Random(seed)
    if kind == "read_only":
        _make_read_only(state_dir)
        return
    for path in _files(state_dir):
        size = path.stat().st_size
        if kind == "delete":
            path.unlink()
        elif kind == "truncate":
            # a seeded length below the size; a quarter of the files are cut to nothing
            length = 0 if size == 0 or chance.random() < 0.25 else chance.randrange(size)
            os.truncate(path, length)
        elif kind == "random_bytes":
            _write_random_runs(path, size, chance)
        else:
            raise ValueError(f"unknown damage kind {kind!r}")


def _write_random_runs(path: Path, size: int, chance: random.Random) -> None:
    """Runs of random bytes at random offsets, one in each of `_RUNS_PER_FILE` equal stretches of
    the file, so the middle and the end are hit as well as the header."""
    if size == 0:
        return
    stretch = max(1, -(-size // _RUNS_PER_FILE))
    with path.open("r+b") as handle:
        for start in range(0, size, stretch):
            offset = start + chance.randrange(min(stretch, size - start))
            length = min(chance.randint(*_RUN_BYTES), size - offset)
            handle.seek(offset)
            handle.write(chance.randbytes(length))


def _make_read_only(state_dir: Path) -> None:
    if not state_dir.is_dir():
        return
    for path in _files(state_dir):
        path.chmod(_READ_ONLY_FILE)
    folders = [state_dir, *(path for path in state_dir.rglob("*") if path.is_dir() and not path.is_symlink())]
    for folder in sorted(folders, reverse=True):  # the deepest first: a parent stays enterable
        folder.chmod(_READ_ONLY_FOLDER)


def restore_permissions(root: Path) -> None:
    """Make every folder and file under `root` writable again (so the workspace can be removed)."""
    if not root.is_dir():
        return
    root.chmod(root.stat().st_mode | _WRITABLE_FOLDER)
    for current, folders, files in os.walk(root):
        for name in folders:
            folder = Path(current, name)
            if not folder.is_symlink():
                folder.chmod(folder.stat().st_mode | _WRITABLE_FOLDER)
        for name in files:
            path = Path(current, name)
            if not path.is_symlink() and stat.S_ISREG(path.stat().st_mode):
                path.chmod(path.stat().st_mode | _WRITABLE_FILE)


def snapshot_journals(root: Path, state_dir: Path) -> JournalBytes:
    """The bytes of every `.jsonl` file of the workspace outside the state dir (the journals)."""
    found: JournalBytes = {}
    for path in sorted(root.rglob("*.jsonl")):
        if path.is_file() and not path.is_symlink() and state_dir not in path.parents:
            found[str(path.relative_to(root))] = path.read_bytes()
    return found
