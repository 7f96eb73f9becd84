"""Two connections that index the same journals (two processes sharing a state dir): what one
commits between another's reads must neither look like a rewrite nor leave a stale view in use.

Each test plants the other connection's commit at the one moment that matters, so the outcome
does not depend on timing (the reliability suite runs the same with real processes, at random).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from memory_kit import memory_in
from pimem._index import Index
from pimem._journals import DEFAULT_MAX_LINE_BYTES, Journal, read_header
from pimem._memory import Memory
from pimem._query import scope_of
from pimem._tool import run_tool
from pimem_conformance.journals import JournalWriter, entry_line, header_line, line_bytes, write_journal

APP = "/home/u/app"


def _journal(path: Path) -> Journal:
    header = read_header(str(path), DEFAULT_MAX_LINE_BYTES)
    assert header is not None
    return Journal.from_header(str(path), header[0], os.stat(path))


def _append(path: Path, entry_id: str, parent: str, text: str) -> None:
    with path.open("ab") as handle:  # as Pi appends: one whole line at a time
        handle.write(line_bytes(entry_line(entry_id, parent, text)))


def _sync(index: Index, path: Path) -> int:
    """Entries added."""
    return index.sync(_journal(path), verify=False, forgotten=None)


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    return write_journal(
        tmp_path / "sessions" / "s.jsonl", [header_line("s1", APP), entry_line("e1", None, "first words")]
    )


def _two_indexes(tmp_path: Path) -> tuple[Index, Index]:
    path = str(tmp_path / "state" / "index.sqlite")
    return Index(path, DEFAULT_MAX_LINE_BYTES), Index(path, DEFAULT_MAX_LINE_BYTES)


def test_a_pass_that_finds_the_index_ahead_of_its_stat_keeps_the_journal(
    tmp_path: Path, journal: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, theirs = _two_indexes(tmp_path)
    _sync(ours, journal)
    _append(journal, "e2", "e1", "second words")
    write = ours.write

    def others_first() -> object:  # between this pass's stat and its transaction
        _append(journal, "e3", "e2", "third words")
        _sync(theirs, journal)
        monkeypatch.setattr(ours, "write", write)
        return write()

    monkeypatch.setattr(ours, "write", others_first)
    assert _sync(ours, journal) == 0, "a journal that only grew was taken as rewritten and indexed anew"
    state = ours.store.file_state(str(journal))
    assert state is not None and state.size == journal.stat().st_size
    ours.close()
    theirs.close()


def test_a_journal_that_shrank_while_another_connection_indexed_it_is_indexed_anew(
    tmp_path: Path, journal: Path
) -> None:
    ours, theirs = _two_indexes(tmp_path)
    assert _sync(theirs, journal) == 1
    write_journal(journal, [header_line("s1", APP), entry_line("e9", None, "other")])  # shorter
    assert _sync(ours, journal) == 1, "the shrunk journal was not indexed anew"
    ours.close()
    theirs.close()


def _project(tmp_path: Path) -> tuple[Memory, Path]:
    """A memory whose current journal is indexed, and a second journal of the project that is
    discovered but not indexed yet (its backfill is left to another process)."""
    workspace = JournalWriter(tmp_path)
    current = workspace.write(
        workspace.path_for(APP, "current"), [header_line("c1", APP), entry_line("c01", None, "current words")]
    )
    workspace.write(
        workspace.path_for(APP, "older"),
        [header_line("o1", APP), entry_line("o01", None, "zephyrine answer")],
    )
    return memory_in(workspace, APP, current, datetime(2026, 11, 29, 12, 0, tzinfo=UTC)), workspace.path_for(
        APP, "older"
    )


def _found(memory: Memory, query: str) -> list[str]:
    answer = run_tool(memory, {"action": "search", "query": query})
    return [result["entryId"] for result in answer["details"]["results"]]


def test_a_commit_seen_while_a_view_is_made_is_not_hidden_by_that_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, older = _project(tmp_path)
    assert _found(memory, "zephyrine") == [], "not indexed yet"
    theirs = memory.open_index()
    _append(Path(memory.config.session_file or ""), "c02", "c01", "a new question")

    def then_another_process_indexes(*args: object) -> object:  # after the view took its file ids
        scope = scope_of(*args)  # type: ignore[arg-type]
        _sync(theirs, older)
        monkeypatch.setattr("pimem._memory.scope_of", scope_of)
        return scope

    monkeypatch.setattr("pimem._memory.scope_of", then_another_process_indexes)
    _found(memory, "question")
    assert _found(memory, "zephyrine") == ["o01"], "the next call answered from the view made before"
    theirs.close()
    memory.close()


def test_a_view_is_reused_while_nothing_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, _ = _project(tmp_path)
    _found(memory, "current")
    looks: list[object] = []
    look: Callable[..., object] = memory._look

    def counted(*args: object) -> object:
        looks.append(args)
        return look(*args)

    monkeypatch.setattr(memory, "_look", counted)
    assert _found(memory, "current") == ["c01"] and _found(memory, "words") == ["c01"]
    assert looks == [], "a call with nothing new made its view again"
    memory.close()
