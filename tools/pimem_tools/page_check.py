"""What the index's page check costs (JM-INDEX-321), checked against unchecked in one run.

    python -m pimem_tools.page_check [--entries 40000] [--searches 200]

Builds the same synthetic journals into two indexes in a temp folder: one as the reference makes
it (4 reserved bytes per page holding a CRC-32, a stamp beside it), one without (no reserved bytes,
no check on open). Then, alternating the two so machine load falls on both alike: open with a
matching stamp, open with a full check (per MiB of index), the first search after open and warm
search p50. It prints medians and the checked/unchecked ratio of each; nothing is written to the
repository.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pimem import _pages
from pimem._maintenance import run_command
from pimem._memory import Config, Memory
from pimem._store import Store
from pimem._store_checks import unchecked_connection
from pimem._tool import run_tool

__all__ = ["main"]

_CWD = "/home/u/app"
_NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def _write_journals(agent: Path, entries: int, chance: random.Random) -> list[str]:
    """Journals of `entries` messages in all, 500 each; returns some words to search for."""
    folder = agent / "sessions" / "--home-u-app--"
    folder.mkdir(parents=True)
    vocabulary = [
        "".join(chance.choice("bdfgklmnprstvz") + chance.choice("aeiou") for _ in range(3))
        for _ in range(5000)
    ]
    for number in range(0, entries, 500):
        lines = [
            {
                "type": "session",
                "version": 3,
                "id": f"s{number:08d}",
                "timestamp": "2026-11-01T09:00:00.000Z",
                "cwd": _CWD,
            }
        ]
        for line in range(number, min(entries, number + 500)):
            text = " ".join(chance.choice(vocabulary) for _ in range(chance.randrange(10, 60)))
            lines.append(
                {
                    "type": "message",
                    "id": f"e{line:08d}",
                    "parentId": None,
                    "timestamp": f"2026-11-{1 + line % 28:02d}T10:00:00.000Z",
                    "message": {"role": "user", "content": [{"type": "text", "text": text}], "timestamp": 0},
                }
            )
        (folder / f"j{number:08d}.jsonl").write_text("".join(json.dumps(item) + "\n" for item in lines))
    return chance.sample(vocabulary, 50)


@contextlib.contextmanager
def _unchecked(active: bool) -> Iterator[None]:
    """The index as made without the check: no reserved bytes, no CRCs written, nothing checked on
    open."""
    replaced: dict[str, Callable[..., Any]] = {
        "reserve_bytes": lambda db: None,
        "damage": lambda path: None,
        "checkpointer": unchecked_connection,
    }
    saved = {name: getattr(_pages, name) for name in replaced}
    for name, value in (replaced if active else {}).items():
        setattr(_pages, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(_pages, name, value)


def _memory(root: Path, state: str) -> Memory:
    config = Config(state_dir=str(root / state), agent_dir=str(root / "agent"), cwd=_CWD, home="/home/u")
    return Memory(config, _NOW)


def _measure(root: Path, kind: str, words: list[str], found: dict[str, list[float]], searches: int) -> None:
    """One round of every measure on one index, in milliseconds."""
    path = str(root / kind / "index.sqlite")
    Store(path).close()  # the stamp now matches (it is written on close)
    started = time.perf_counter()
    store = Store(path)
    found.setdefault("open, stamp matches (ms)", []).append((time.perf_counter() - started) * 1e3)
    store.close()
    with contextlib.suppress(FileNotFoundError):
        os.remove(f"{path}.pages")
    megabytes = os.path.getsize(path) / (1 << 20)
    started = time.perf_counter()
    _pages.damage(path)
    found.setdefault("full check (ms per MiB)", []).append((time.perf_counter() - started) * 1e3 / megabytes)
    memory = _memory(root, kind)
    for number in range(searches + 1):
        started = time.perf_counter()
        run_tool(memory, {"action": "search", "query": random.choice(words)})
        measure = "warm search p50 (ms)" if number else "first search after open (ms)"
        found.setdefault(measure, []).append((time.perf_counter() - started) * 1e3)
    memory.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=40_000)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=15)
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        words = _write_journals(root / "agent", options.entries, random.Random(30))
        kinds = {"checked": False, "unchecked": True}
        for kind, without in kinds.items():
            with _unchecked(without):
                memory = _memory(root, kind)
                run_command(memory, "index")
                memory.close()
        times: dict[str, dict[str, list[float]]] = {kind: {} for kind in kinds}
        for _ in range(options.rounds):
            for kind, without in kinds.items():
                with _unchecked(without):
                    _measure(root, kind, words, times[kind], options.searches // options.rounds + 1)
        size = os.path.getsize(root / "checked" / "index.sqlite") / (1 << 20)
        print(
            f"{options.entries} entries, index {size:.1f} MiB, {options.rounds} rounds,"
            " checked and unchecked alternating"
        )
        for measure in times["checked"]:
            checked, plain = (float(statistics.median(times[kind][measure])) for kind in kinds)
            ratio = f"{checked / plain:5.2f}x" if plain > 0.01 else "(nothing to check)"
            print(f"  {measure:32} checked {checked:9.3f}  unchecked {plain:9.3f}  ratio {ratio}")


if __name__ == "__main__":
    main()
