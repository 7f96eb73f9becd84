"""Issue 8.3: a writer appends in random-sized chunks while the indexer runs again and again.

Chunks end anywhere: inside a line, and often exactly before a newline, where the unterminated
line is already complete JSON (the case an indexer gets wrong most easily). Two phases:

- in lock step, the indexer (`/memory index`) runs after every chunk; then the number of entries
  (`/memory status`) must equal the number of newline-terminated entry lines on disk, exactly;
- concurrently, a thread appends while the indexer runs in a loop; each run's entry count must lie
  between the complete lines before the run and after it.

In the end every line is indexed exactly once: a search for its unique word returns its id, once.
"""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

from .reliability_kit import (
    JournalWriter,
    Memory,
    entry_line,
    header_line,
    line_bytes,
    record_figure,
    scaled,
    tally,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"


def journal_bytes(count: int, seed: int) -> tuple[bytes, list[tuple[str, str]]]:
    """Entry lines (no header) and their (id, unique word), in order."""
    rng = random.Random(seed)
    lines, entries = [], []
    parent = None
    for number in range(count):
        entry_id, word = f"{seed:02x}{number:06x}", f"chunkword{seed}x{number}"
        # Lengths vary from tens of bytes to several kilobytes so chunks cut lines at every place.
        padding = " ".join(rng.choice(["alpha", "beta", "gamma"]) for _ in range(rng.randint(0, 600)))
        lines.append(line_bytes(entry_line(entry_id, parent, f"{word} {padding}")))
        entries.append((entry_id, word))
        parent = entry_id
    return b"".join(lines), entries


def chunk_ends(data: bytes, rng: random.Random) -> list[int]:
    """Cut points: random sizes, and a third of them exactly before a newline."""
    ends, position = [], 0
    while position < len(data):
        position = min(len(data), position + rng.randint(1, 3000))
        newline = data.find(b"\n", position)
        if rng.random() < 1 / 3 and newline > position:
            position = newline  # leave a complete JSON object without its newline
        ends.append(position)
    if ends[-1] != len(data):
        ends.append(len(data))
    return ends


def entry_count(memory: Memory) -> int:
    return int(memory.command("a", "status")["details"]["entries"])


def test_partial_lines_are_never_indexed_and_every_line_is_indexed_once(shared_tmp: Path, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    rng = random.Random(3)
    lockstep_data, lockstep_entries = journal_bytes(scaled(150, 1500), seed=1)
    concurrent_data, concurrent_entries = journal_bytes(scaled(150, 1500), seed=2)
    lockstep = writer.write(
        writer.path_for(CWD, "lockstep"), [header_line("0193cccc-0001-7000-8000-000000000000", CWD)]
    )
    concurrent = writer.write(
        writer.path_for(CWD, "concurrent"), [header_line("0193cccc-0002-7000-8000-000000000000", CWD)]
    )
    memory = Memory.connect(impl)
    runs = 0
    try:
        memory.open("a", writer.workspace(CWD, writer.path_for(CWD, "current")))
        written = 0
        with lockstep.open("ab") as journal:
            for end in chunk_ends(lockstep_data, rng):
                journal.write(lockstep_data[written:end])
                journal.flush()
                written = end
                memory.command("a", "index")
                runs += 1
                complete = lockstep_data[:written].count(b"\n")
                assert entry_count(memory) == complete, f"after {written} bytes ({complete} complete lines)"

        done = threading.Event()

        def append() -> None:
            chunk_rng = random.Random(4)
            position = 0
            with concurrent.open("ab") as journal:
                for end in chunk_ends(concurrent_data, chunk_rng):
                    journal.write(concurrent_data[position:end])
                    journal.flush()
                    position = end
                    done.wait(chunk_rng.random() / 500)  # a short, varying pause between chunks
            done.set()

        appender = threading.Thread(target=append)
        appender.start()
        header_size = len(line_bytes(header_line("0193cccc-0002-7000-8000-000000000000", CWD)))
        total_before = len(lockstep_entries)
        while not done.is_set():
            before = concurrent.read_bytes()[header_size:].count(b"\n")
            memory.command("a", "index")
            counted = entry_count(memory) - total_before
            after = concurrent.read_bytes()[header_size:].count(b"\n")
            runs += 1
            assert before <= counted <= after, f"{counted} entries indexed, {before}..{after} complete lines"
        appender.join()
        memory.command("a", "index")
        assert entry_count(memory) == len(lockstep_entries) + len(concurrent_entries)
        wrong = {}
        for entry_id, word in (*lockstep_entries, *concurrent_entries):
            results = memory.tool("a", action="search", query=word)["details"]["results"]
            ids = [item["entryId"] for item in results]
            if ids != [entry_id]:
                wrong[word] = ids
    finally:
        memory.stop()
    record_figure(
        "partial writer: indexer runs / entries checked",
        f"{runs} / {len(lockstep_entries) + len(concurrent_entries)}",
    )
    tally("trials run", runs, "indexer runs beside a writer")
    tally("entries checked", len(lockstep_entries) + len(concurrent_entries), "appended entries")
    assert not wrong, f"not indexed exactly once: {dict(list(wrong.items())[:10])}"
