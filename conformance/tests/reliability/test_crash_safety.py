"""Issue 8.1: `pimem index` killed with SIGKILL at random points loses and duplicates nothing.

Each trial starts a first pass over a fresh state folder, kills it after a random delay within the
measured duration of one whole pass: after its index file appears, at a uniform random point of
the time one pass spends writing it, runs `pimem index` again to the end, and then compares the
index with a clean one through the protocol: the same entry count, and for every journal's own
word and for words shared by all journals the same result ids. A duplicate row shows up as an id
twice or a count too high, a lost one as an id missing or a count too low.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from .reliability_kit import (
    JournalWriter,
    Memory,
    linear_session,
    pimem_command,
    record_figure,
    scaled,
    tally,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"
JOURNALS = 20
ENTRIES = 30
SHARED_WORDS = ["retries", "backoff", "indexing"]


def write_corpus(writer: JournalWriter) -> None:
    filler = " ".join(["the retries backoff note explains indexing of journals"] * 10)
    for journal in range(JOURNALS):
        entries = [
            (
                f"{journal:04x}{entry:04x}",
                f"crashword{journal} entry {entry}: {filler}",
                f"2026-11-{1 + journal:02d}T10:{entry:02d}:00.000Z",
            )
            for entry in range(ENTRIES)
        ]
        session = f"0193dddd-{journal:04d}-7000-8000-000000000000"
        writer.write(writer.path_for(CWD, f"j{journal:03d}"), linear_session(session, CWD, entries))


def index_command(writer: JournalWriter, state: Path) -> list[str]:
    return [
        *pimem_command(),
        "--agent-dir",
        str(writer.agent_dir),
        "--index",
        str(state / "index.sqlite"),
        "--cwd",
        CWD,
        "--json",
        "index",
    ]


def observe(impl: str, writer: JournalWriter, state: Path) -> dict[str, Any]:
    """What the index answers: its entry count and the result ids of every probe query."""
    memory = Memory.connect(impl)
    try:
        workspace = {**writer.workspace(CWD, writer.path_for(CWD, "current")), "state_dir": str(state)}
        memory.open("v", workspace, index=False)
        seen: dict[str, Any] = {"entries": memory.command("v", "status")["details"]["entries"]}
        for word in [*(f"crashword{journal}" for journal in range(JOURNALS)), *SHARED_WORDS]:
            results = memory.tool("v", action="search", query=word, limit=50)["details"]["results"]
            seen[word] = sorted(item["entryId"] for item in results)
    finally:
        memory.stop()
    return seen


def wait_for(path: Path, process: subprocess.Popen[bytes]) -> bool:
    """Poll until `path` exists (True) or the process has ended without making it (False)."""
    while not path.exists():
        if process.poll() is not None:
            return path.exists()
        time.sleep(0.002)
    return True


def timed_pass(writer: JournalWriter, state: Path) -> tuple[float, float]:
    """One clean pass: seconds until its index file appears, and until it ends."""
    started = time.monotonic()
    process = subprocess.Popen(index_command(writer, state), stdout=subprocess.DEVNULL)
    assert wait_for(state / "index.sqlite", process), "the first pass made no index file"
    appeared = time.monotonic() - started
    assert process.wait(timeout=120) == 0
    return appeared, time.monotonic() - started


def test_kill_9_during_a_first_pass_then_reindex_equals_a_clean_index(shared_tmp: Path, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    write_corpus(writer)
    clean_state = shared_tmp / "clean"
    index_appears, one_pass = timed_pass(writer, clean_state)
    writing = one_pass - index_appears
    expected = observe(impl, writer, clean_state)
    assert expected["entries"] == JOURNALS * ENTRIES

    rng = random.Random(1)
    trials = scaled(50, 500)
    killed_while_writing = 0
    mismatches = []
    for trial in range(trials):
        state = shared_tmp / f"trial-{trial}"
        victim = subprocess.Popen(
            index_command(writer, state), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # Kill within the part of one pass that writes the index: from its file's appearance on.
        if wait_for(state / "index.sqlite", victim) and victim.poll() is None:
            time.sleep(rng.uniform(0, writing))
            if victim.poll() is None:
                victim.kill()
                killed_while_writing += 1
        victim.wait()
        rerun = subprocess.run(index_command(writer, state), capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, f"trial {trial}: the index did not open cleanly: {rerun.stderr[-2000:]}"
        seen = observe(impl, writer, state)
        if seen != expected:
            differing = {
                key: (seen.get(key), value) for key, value in expected.items() if seen.get(key) != value
            }
            mismatches.append(f"trial {trial}: {str(differing)[:300]}")
        shutil.rmtree(state)
    record_figure(
        "crash safety: kill -9 trials",
        f"{trials} ({killed_while_writing} killed while writing the index; "
        f"one pass {one_pass:.2f} s), {JOURNALS * ENTRIES} entries checked per trial",
    )
    tally("trials run", trials, "kill -9 trials")
    tally("entries checked", trials * JOURNALS * ENTRIES, "entries after kills")
    assert not mismatches, "\n".join(mismatches[:10])
