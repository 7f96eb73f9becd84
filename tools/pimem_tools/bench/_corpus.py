"""The benchmark corpus: generated once by the fixture generator's scale mode, then reused.

A corpus lives in `<repo>/.cache/bench-corpus-<bytes>-<seed>/` (git-ignored). A `bench-corpus.json`
written after generation finishes marks it complete, so an interrupted generation is redone, never
measured half-written.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

__all__ = ["Corpus", "ensure_corpus"]

_MARKER = "bench-corpus.json"


@dataclass(frozen=True)
class Corpus:
    root: Path
    requested_bytes: int
    seed: int
    journals: tuple[Path, ...]
    bytes: int
    agent_dir: Path | None
    session_dirs: tuple[Path, ...]
    generation_seconds: float | None  # None when reused from the cache

    @property
    def scripts(self) -> dict[str, float] | None:
        """The measured shares of journal bytes in other scripts (the generator's statistics)."""
        stats = self.root / "corpus-stats.json"
        if not stats.is_file():
            return None
        found: dict[str, float] | None = orjson.loads(stats.read_bytes()).get("scripts")
        return found

    def header(self, journal: Path) -> dict[str, object]:
        with journal.open("rb") as handle:
            header: dict[str, object] = orjson.loads(handle.readline())
        return header

    def home(self) -> str:
        """The folder every project lives under: where the user's home is, as far as scope cares."""
        return os.path.commonpath([str(self.header(journal)["cwd"]) for journal in self.journals])


def _layout(root: Path) -> tuple[Path | None, tuple[Path, ...], tuple[Path, ...]]:
    """Agent dir (holding `sessions/*/*.jsonl`), flat session dirs, and every journal, sorted."""
    journals = tuple(sorted(root.rglob("*.jsonl")))
    agent_dirs = {p.parents[2] for p in journals if p.parents[1].name == "sessions"}
    flat = tuple(sorted({p.parent for p in journals if p.parents[1].name != "sessions"}))
    if len(agent_dirs) > 1:
        raise RuntimeError(f"corpus at {root} has several agent dirs: {sorted(agent_dirs)}")
    return (next(iter(agent_dirs)) if agent_dirs else None), flat, journals


def _complete(root: Path, generator: int) -> bool:
    marker = root / _MARKER
    return marker.is_file() and orjson.loads(marker.read_bytes()).get("generator") == generator


def ensure_corpus(cache_dir: Path, size: int, seed: int) -> Corpus:
    """The corpus of `size` bytes and `seed`: reused when the same generator wrote it completely."""
    from pimem_tools.fixtures._scale import GENERATOR_VERSION, write_scale_corpus

    root = cache_dir / f"bench-corpus-{size}-{seed}"
    generation_seconds: float | None = None
    if not _complete(root, GENERATOR_VERSION):
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):  # it prints its statistics; ours is the report
            write_scale_corpus(root, size, seed, progress=False)
        generation_seconds = time.perf_counter() - started
        agent_dir, flat, journals = _layout(root)
        marker = {
            "generator": GENERATOR_VERSION,
            "bytes": sum(p.stat().st_size for p in journals),
            "journals": len(journals),
            "seconds": round(generation_seconds, 1),
        }
        (root / _MARKER).write_text(json.dumps(marker))
    agent_dir, flat, journals = _layout(root)
    if not journals:
        raise RuntimeError(f"the fixture generator wrote no journal under {root}")
    return Corpus(
        root,
        size,
        seed,
        journals,
        sum(p.stat().st_size for p in journals),
        agent_dir,
        flat,
        generation_seconds,
    )
