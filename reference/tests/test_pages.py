"""The index's page check (JM-INDEX-321): CRCs in every page, the stamp that skips the check, a
rebuild of a damaged index, and SQLite's own recovery of a damaged WAL."""

from __future__ import annotations

import os
import struct
import threading
import zlib
from pathlib import Path
from typing import BinaryIO

import pytest
from pimem import _pages, _store
from pimem._store import Store
from pimem._store_checks import add_filler_rows, filler_rows, integrity, legacy_index

ROWS = 400


def _filled(path: Path, rows: int = ROWS) -> Store:
    """A store whose meta table holds `rows` numbered rows, one transaction each tenth."""
    store = Store(str(path))
    for start in range(0, rows, rows // 10):
        add_filler_rows(store, start, rows // 10)
    return store


def _pages_of(path: Path) -> list[bytes]:
    data = path.read_bytes()
    (size,) = struct.unpack(">H", data[16:18])
    return [data[start : start + size] for start in range(0, len(data), size)]


def test_every_page_written_carries_its_crc(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    _filled(index).close()
    pages = _pages_of(index)
    assert len(pages) > 20 and pages[0][20] == _pages.RESERVED_BYTES
    for page in pages:
        assert page[-4:] == struct.pack(">I", zlib.crc32(page[:-4]))
    assert not os.path.getsize(f"{index}-wal"), "close leaves the WAL empty"


def test_a_matching_stamp_skips_the_check_and_a_changed_file_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index.sqlite"
    _filled(index).close()
    checked: list[str] = []
    original = _pages.page_damage

    def page_damage(handle: BinaryIO, size: int) -> str | None:
        checked.append("page")
        return original(handle, size)

    monkeypatch.setattr(_pages, "page_damage", page_damage)
    assert _pages.damage(str(index)) is None and checked == []
    with index.open("r+b") as handle:  # a byte in a middle page, the size kept
        handle.seek(os.path.getsize(index) // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0x5A]))
    assert _pages.damage(str(index)) is not None and checked == ["page"]


@pytest.mark.parametrize("damage", ["middle_page", "truncated", "no_reserved_bytes"])
def test_a_damaged_index_is_built_anew(tmp_path: Path, damage: str) -> None:
    index = tmp_path / "index.sqlite"
    _filled(index).close()
    if damage == "middle_page":
        with index.open("r+b") as handle:
            handle.seek(os.path.getsize(index) // 2 + 7)
            handle.write(b"\x00\xff")
    elif damage == "truncated":
        os.truncate(index, os.path.getsize(index) - 4096)
    else:
        index.unlink()
        legacy_index(str(index))  # as an earlier version made it: no room for CRCs
    store = Store(str(index))
    assert filler_rows(store) == 0, "a damaged index is never read: it is made anew"
    store.close()
    assert _pages.damage(str(index)) is None


def test_a_damaged_wal_gives_an_earlier_consistent_state(tmp_path: Path) -> None:
    """A process that ended without closing leaves its commits in the WAL (only checkpoints write
    the main file); random bytes in a frame there make SQLite's recovery stop before that frame, at
    a commit: fewer rows, never a broken index."""
    index = tmp_path / "index.sqlite"
    store = _filled(index)
    wal = Path(f"{index}-wal")
    assert wal.stat().st_size > 100_000, "the commits are in the WAL"
    store._db.close()  # as a killed process leaves it: no checkpoint
    with wal.open("r+b") as handle:
        handle.seek(wal.stat().st_size // 2)
        handle.write(os.urandom(16))
    reopened = Store(str(index))
    rows = filler_rows(reopened)
    assert 0 <= rows < ROWS and rows % (ROWS // 10) == 0, "recovery stops at a commit"
    assert integrity(reopened) == ["ok"]
    reopened.close()
    assert _pages.damage(str(index)) is None


def test_an_open_waits_while_another_connection_writes_the_main_file(tmp_path: Path) -> None:
    """A checkpoint writes pages and page 1's count one by one: a check that read the file half way
    would call it damaged, and the rebuild would wipe an index other processes are using."""
    index = tmp_path / "index.sqlite"
    _filled(index).close()
    whole = index.read_bytes()
    opened: list[Store] = []
    with _pages.writing_main_file(str(index)) as writing:
        assert writing, "nothing else holds the file"
        index.write_bytes(whole[: len(whole) // 2])  # page 1 already counts pages not written yet
        opener = threading.Thread(target=lambda: opened.append(Store(str(index))))
        opener.start()
        opener.join(0.3)
        assert opener.is_alive() and opened == [], "opened a file while it was written"
        index.write_bytes(whole)
    opener.join()
    assert filler_rows(opened[0]) == ROWS, "the index was taken as damaged and made anew"
    opened[0].close()


def test_a_checkpoint_leaves_the_main_file_alone_while_it_is_held(tmp_path: Path) -> None:
    index = tmp_path / "index.sqlite"
    store = _filled(index)
    before = index.read_bytes()
    with _pages.holding_main_file(str(index)):  # as another process's check on open holds it
        store.checkpoint()
        assert index.read_bytes() == before, "a checkpoint wrote the main file while it was held"
    store.checkpoint()
    assert index.read_bytes() != before, "once free, the checkpoint writes the main file"
    assert filler_rows(store) == ROWS
    store.close()
    assert _pages.damage(str(index)) is None


def test_an_open_decides_there_is_no_index_while_it_holds_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Processes that start together all find no index. Were that decided before holding the file,
    a late one would make its own after the first had made one and written to its WAL, and remove
    that WAL as left over."""
    index = tmp_path / "index.sqlite"
    held: list[bool] = []
    exists = os.path.exists

    def looked(path: str) -> bool:
        if path == str(index):
            with _pages.writing_main_file(path) as free:
                held.append(not free)
        return exists(path)

    monkeypatch.setattr(os.path, "exists", looked)
    Store(str(index)).close()
    assert held and all(held), "the open looked for the file without holding it"


def test_an_index_made_anew_by_one_process_is_not_removed_by_another_that_found_the_same_damage(
    tmp_path: Path,
) -> None:
    index = tmp_path / "index.sqlite"
    _filled(index).close()
    os.truncate(index, os.path.getsize(index) - 4096)
    with pytest.raises(_pages.DamagedIndex) as damaged:  # what the second process found
        _store._connect(str(index))
    first = _filled(index)  # the first process made it anew and wrote to it
    second = Store(str(index))
    assert filler_rows(second) == ROWS and filler_rows(first) == ROWS
    _store._remove_damaged(str(index), damaged.value.found)  # the second, late
    assert filler_rows(first) == ROWS and os.path.exists(f"{index}-wal")
    second.close()
    first.close()
