"""The benchmark corpus: generated once by the fixture generator's scale mode, then reused.

A corpus lives in `<repo>/.cache/bench-corpus-<bytes>-<seed>/` (git-ignored). A `bench-corpus.json`
written after generation finishes marks it complete, so an interrupted generation is redone, never
measured half-written. The marker also holds the digest of a small probe corpus of the same seed,
written anew on every run: a cached corpus is reused only while the generator still writes those
bytes, whatever module the change was in (its version number alone missed such changes).

`warm` reads a corpus once, so that every timed pass reads it from the page cache, as the stage
pass and the FTS5 ceiling do: a first pass then measures the reference, not how cold the disk was.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson

__all__ = ["Corpus", "ensure_corpus", "probe_digest", "warm"]

_MARKER = "bench-corpus.json"
_PROBE_BYTES = 3_000_000  # enough for every kind of entry and every script the generator writes
_READ_BYTES = 1 << 20


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


def _generate(root: Path, size: int, seed: int) -> None:
    from pimem_tools.fixtures._scale import write_scale_corpus

    with contextlib.redirect_stdout(io.StringIO()):  # it prints its statistics; ours is the report
        write_scale_corpus(root, size, seed, progress=False)


@functools.cache  # one probe per seed and run, for every size of the curve
def probe_digest(seed: int) -> str:
    """The sha256 of the journals (names and bytes) the generator writes today for a small corpus
    of `seed`."""
    digest = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="pimem-bench-probe-") as temp:
        root = Path(temp)
        _generate(root, _PROBE_BYTES, seed)
        for journal in sorted(root.rglob("*.jsonl")):
            digest.update(journal.relative_to(root).as_posix().encode() + b"\0")
            digest.update(journal.read_bytes())
    return digest.hexdigest()


def _complete(root: Path, generator: int, probe: str) -> bool:
    marker = root / _MARKER
    if not marker.is_file():
        return False
    written = orjson.loads(marker.read_bytes())
    return bool(written.get("generator") == generator and written.get("probe") == probe)


def ensure_corpus(cache_dir: Path, size: int, seed: int) -> Corpus:
    """The corpus of `size` bytes and `seed`: reused when it was written completely by a generator
    that still writes the same probe corpus."""
    from pimem_tools.fixtures._scale import GENERATOR_VERSION

    root = cache_dir / f"bench-corpus-{size}-{seed}"
    generation_seconds: float | None = None
    probe = probe_digest(seed)
    if not _complete(root, GENERATOR_VERSION, probe):
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        started = time.perf_counter()
        _generate(root, size, seed)
        generation_seconds = time.perf_counter() - started
        agent_dir, flat, journals = _layout(root)
        marker = {
            "generator": GENERATOR_VERSION,
            "probe": probe,
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


def warm(corpus: Corpus) -> None:
    """Read every journal of the corpus once (into the page cache)."""
    for journal in corpus.journals:
        with journal.open("rb", buffering=0) as handle:
            while handle.read(_READ_BYTES):
                pass
