"""Issue 8.8: a damaged state folder gets a clear error or an automatic rebuild, never a crash.

The damages: a read-only state folder, a full disk, an index overwritten with random bytes, and an
index left by a newer schema version. Read-only and full are real file-system conditions (a tmpfs
remounted read-only, a tmpfs of 256 KiB), so they hold for root too; mounting needs root, which CI
has, and the two tests skip with a reason elsewhere. In every case each tool call answers with
results or the `index_unavailable` error, results (when given) after an automatic rebuild equal a
clean index's, the journals stay byte for byte the same, and `pimem rebuild` recovers.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .reliability_kit import (
    JournalWriter,
    Memory,
    assert_no_internal_text,
    entry_line,
    line_bytes,
    linear_session,
    pimem_command,
    record_figure,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"
JOURNALS = 8
FILLER = " ".join(["damaged environment filler words for the index"] * 12)


def write_corpus(writer: JournalWriter) -> None:
    for journal in range(JOURNALS):
        entries = [
            (
                f"d{journal:03x}{entry:04x}",
                f"damageword{journal} {FILLER}",
                f"2026-11-{1 + journal:02d}T10:{entry:02d}:00.000Z",
            )
            for entry in range(25)
        ]
        session = f"0193abcd-{journal:04d}-7000-8000-000000000000"
        writer.write(writer.path_for(CWD, f"j{journal}"), linear_session(session, CWD, entries))


def open_memory(impl: str, writer: JournalWriter, state: Path) -> tuple[Memory, str]:
    memory = Memory.connect(impl)
    workspace = {**writer.workspace(CWD, writer.path_for(CWD, "current")), "state_dir": str(state)}
    memory.open("a", workspace)
    return memory, "a"


def observe(memory: Memory, instance: str) -> dict[str, Any]:
    """Result ids per journal word, or the error code each call gave instead."""
    seen: dict[str, Any] = {}
    for journal in range(JOURNALS):
        word = f"damageword{journal}"
        arguments: dict[str, Any] = {"action": "search", "query": word, "limit": 50}
        response = memory.tool(instance, **arguments)
        assert_no_internal_text(response, arguments)
        if "error" in response:
            assert response["error"]["code"] == "index_unavailable", response
            assert response["error"]["message"].strip()
            seen[word] = "index_unavailable"
        else:
            seen[word] = sorted(item["entryId"] for item in response["details"]["results"])
    return seen


def clean_answers(impl: str, writer: JournalWriter, state: Path) -> dict[str, Any]:
    memory, instance = open_memory(impl, writer, state)
    try:
        return observe(memory, instance)
    finally:
        memory.stop()


def rebuild(writer: JournalWriter, state: Path) -> None:
    result = subprocess.run(
        [
            *pimem_command(),
            "--agent-dir",
            str(writer.agent_dir),
            "--index",
            str(state / "index.sqlite"),
            "--cwd",
            CWD,
            "--json",
            "rebuild",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]


@contextmanager
def tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def damaged_then_rebuilt(
    impl: str,
    writer: JournalWriter,
    state: Path,
    damage: Callable[[], None],
    undo: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """Damage the state folder, ask every question, undo, rebuild; the answers while damaged."""
    expected = clean_answers(impl, writer, writer.root / "clean")
    damage()
    journals = writer.snapshot()
    memory, instance = open_memory(impl, writer, state)
    try:
        while_damaged = observe(memory, instance)
    finally:
        memory.stop()
    answered = {query: ids for query, ids in while_damaged.items() if ids != "index_unavailable"}
    assert all(ids == expected[query] for query, ids in answered.items()), (while_damaged, expected)
    undo()
    rebuild(writer, state)
    assert clean_answers(impl, writer, state) == expected
    assert writer.snapshot() == journals, "a journal was changed"
    return while_damaged


def outcome(while_damaged: dict[str, Any]) -> str:
    errors = sum(ids == "index_unavailable" for ids in while_damaged.values())
    return f"{errors} clear errors, {len(while_damaged) - errors} correct answers, rebuilt"


def build_index(impl: str, writer: JournalWriter, state: Path) -> None:
    memory, _ = open_memory(impl, writer, state)
    memory.stop()


def test_read_only_state_folder(shared_tmp: Path, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    write_corpus(writer)
    with tmpfs(shared_tmp / "state", "64m") as state:
        build_index(impl, writer, state)
        # New text the index would have to take in, then a folder that refuses every write.
        with writer.path_for(CWD, "j0").open("ab") as journal:
            journal.write(line_bytes(entry_line("d000ffff", None, f"damageword0 late {FILLER}")))
        result = damaged_then_rebuilt(
            impl, writer, state, lambda: remount(state, "ro"), lambda: remount(state, "rw")
        )
    record_figure("damaged: read-only state folder", outcome(result))


def test_full_disk(shared_tmp: Path, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    write_corpus(writer)
    with tmpfs(shared_tmp / "state", "256k") as state:
        result = damaged_then_rebuilt(impl, writer, state, lambda: None, lambda: remount(state, "size=64m"))
    record_figure("damaged: full disk (256 KiB tmpfs)", outcome(result))


def test_index_overwritten_with_random_bytes(shared_tmp: Path, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    write_corpus(writer)
    state = writer.root / "state"
    build_index(impl, writer, state)
    rng = random.Random(8)

    def damage() -> None:
        for path in state.iterdir():
            if path.is_file() and path.suffix != ".jsonl":  # the index, not the lease log
                path.write_bytes(rng.randbytes(max(path.stat().st_size, 4096)))

    result = damaged_then_rebuilt(impl, writer, state, damage)
    record_figure("damaged: index overwritten with random bytes", outcome(result))


def test_index_from_a_newer_schema_version(shared_tmp: Path, impl: str) -> None:
    if impl != "reference":
        pytest.skip("writing a newer schema needs the reference's schema marker (meta.schema)")
    writer = JournalWriter(shared_tmp)
    write_corpus(writer)
    state = writer.root / "state"
    build_index(impl, writer, state)

    def damage() -> None:
        from pimem._store import Store  # the reference's own storage, damaged on purpose
        from pimem._store_checks import pretend_newer_schema

        store = Store(str(state / "index.sqlite"))
        pretend_newer_schema(store, "pimem-999")
        store.close()

    result = damaged_then_rebuilt(impl, writer, state, damage)
    record_figure("damaged: index from a newer schema version", outcome(result))
