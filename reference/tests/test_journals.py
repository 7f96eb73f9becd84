"""Discovery, header validation, chunked reading and tolerant parsing."""

from __future__ import annotations

import os
from pathlib import Path

from pimem._journals import DEFAULT_MAX_LINE_BYTES, Catalog, Discovery, parse_line, read_chunk, read_line_at
from pimem_conformance.journals import JournalWriter, entry_line, header_line, write_journal

CWD = "/home/u/app"
HELLO = entry_line("u1", None, "hello")


def discover(agent_dir: str, session_dirs: list[str]) -> Discovery:
    return Catalog(agent_dir, session_dirs, DEFAULT_MAX_LINE_BYTES).refresh(full=False)


def test_discovery_default_layout_and_flat_dirs(workspace: JournalWriter) -> None:
    workspace.write(workspace.path_for(CWD, "a"), [header_line("s-a", CWD), HELLO])
    write_journal(workspace.root / "flat" / "b.jsonl", [header_line("s-b", "/home/u/other")])
    write_journal(workspace.sessions_dir / "x" / "bad.jsonl", [{"type": "message", "id": "m"}])
    write_journal(workspace.sessions_dir / "x" / "notes.txt", [header_line("s-c", CWD)])
    found = discover(str(workspace.agent_dir), [str(workspace.root / "flat")])
    assert sorted((j.session_id, j.cwd) for j in found.journals) == [
        ("s-a", "/home/u/app"),
        ("s-b", "/home/u/other"),
    ]
    assert found.skipped_files == 0


def test_symlink_outside_roots_and_fifo_are_skipped_and_counted(workspace: JournalWriter) -> None:
    outside = write_journal(workspace.root / "outside" / "o.jsonl", [header_line("s-o", CWD)])
    folder = workspace.sessions_dir / "--home-u-app--"
    workspace.write(workspace.path_for(CWD, "in"), [header_line("s-in", CWD)])
    os.symlink(outside, folder / "link.jsonl")
    os.mkfifo(folder / "pipe.jsonl")
    found = discover(str(workspace.agent_dir), [])
    assert [j.session_id for j in found.journals] == ["s-in"]
    assert found.skipped_files == 2


def test_header_without_newline_is_not_a_journal_yet(workspace: JournalWriter) -> None:
    path = workspace.sessions_dir / "--home-u-app--" / "p.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text('{"type":"session","id":"s","cwd":"/x"}')
    assert discover(str(workspace.agent_dir), []).journals == []


def test_lone_surrogate_escape_is_parsed_and_made_safe() -> None:
    raw = b'{"id":"a","text":"cut \\ud83d here"}'
    value = parse_line(raw)
    assert value == {"id": "a", "text": "cut \ufffd here"}
    assert parse_line(b"{not json") is None


def test_read_chunk_keeps_partial_lines_and_skips_overlong(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"short\n" + b"x" * 50 + b"\n" + b"tail\n" + b"partial")
    chunk = read_chunk(str(path), 0, max_line_bytes=20, chunk_bytes=8)
    assert (chunk.lines, chunk.end) == ([(0, b"short")], 6)  # about one chunk per call
    lines, position, overlong = [], 0, 0
    while True:
        chunk = read_chunk(str(path), position, max_line_bytes=20, chunk_bytes=8)
        lines += chunk.lines
        overlong += chunk.overlong
        if chunk.end == position:
            break
        position = chunk.end
    assert lines == [(0, b"short"), (57, b"tail")]
    assert overlong == 1
    assert position == 62  # the partial last line waits
    assert read_line_at(str(path), 57, 4) == b"tail"
    assert read_line_at(str(path), 57, 3) is None


def test_nesting_deeper_than_the_parsers_go_is_not_json() -> None:
    deep = b'{"id":"a","extra":' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    assert parse_line(deep) is None


def test_catalog_lists_again_only_when_a_folder_changes(workspace: JournalWriter) -> None:
    first = workspace.write(workspace.path_for(CWD, "a"), [header_line("s-a", CWD), HELLO])
    catalog = Catalog(str(workspace.agent_dir), [], DEFAULT_MAX_LINE_BYTES)
    assert [j.session_id for j in catalog.refresh(full=False).journals] == ["s-a"]
    generation = catalog.generation
    workspace.write(workspace.path_for(CWD, "b"), [header_line("s-b", "/home/u/b")])
    assert [j.session_id for j in catalog.refresh(full=False).journals] == ["s-a", "s-b"]
    assert catalog.generation is not generation
    first.unlink()
    assert [j.session_id for j in catalog.refresh(full=False).journals] == ["s-b"]


def test_catalog_sees_a_header_rewritten_in_place_on_a_full_look(workspace: JournalWriter) -> None:
    path = workspace.write(workspace.path_for(CWD, "a"), [header_line("s-1", CWD), HELLO])
    catalog = Catalog(str(workspace.agent_dir), [], DEFAULT_MAX_LINE_BYTES)
    assert [j.session_id for j in catalog.refresh(full=False).journals] == ["s-1"]
    before = os.stat(path)
    path.write_bytes(path.read_bytes().replace(b'"s-1"', b'"s-9"'))  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime
    assert [j.session_id for j in catalog.refresh(full=False).journals] == ["s-1"]  # the quick look trusts it
    assert [j.session_id for j in catalog.refresh(full=True).journals] == ["s-9"]


def test_catalog_restat_follows_growth_and_removal(workspace: JournalWriter) -> None:
    path = workspace.write(workspace.path_for(CWD, "a"), [header_line("s-1", CWD)])
    catalog = Catalog(str(workspace.agent_dir), [], DEFAULT_MAX_LINE_BYTES)
    (journal,) = catalog.refresh(full=False).journals
    with path.open("a") as handle:
        handle.write('{"type":"label","id":"l1","label":"x"}\n')
    assert catalog.refresh(full=False).journals == [journal]  # a quick refresh does not stat it
    assert catalog.recent(1) == [journal.path]
    catalog.restat([journal.path])
    (grown,) = catalog.refresh(full=False).journals
    assert (grown.path, grown.size > journal.size) == (journal.path, True)
    path.unlink()
    catalog.restat([journal.path])
    assert catalog.refresh(full=False).journals == []
