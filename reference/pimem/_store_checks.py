"""SQLite off the memory's own path: the doctor's checks, the tokenizer's terms for the quality
tests, and deliberate damage for the tests that prove recovery.

No answer of the memory (a tool call, an event, a command's result) depends on anything here, so
it is kept apart from `_store`, which holds every statement those answers run; the two are the
reference's only SQL. It reads the store's schema pieces and its connection, never writes rows.
"""

from __future__ import annotations

import os

import apsw

from ._store import _TERMS, IndexedJournal, Store, _recreate

__all__ = [
    "add_filler_rows",
    "empty_index_in_memory",
    "fill_up",
    "filler_rows",
    "fts5_tokens",
    "index_copy_in_memory",
    "index_image",
    "indexed_journals",
    "integrity",
    "legacy_index",
    "paths_with_skipped_lines",
    "pretend_newer_schema",
    "probe_fts5",
    "refuse_writes",
    "sqlite_versions",
    "table_names",
    "unchecked_connection",
]


def sqlite_versions() -> dict[str, str]:
    return {"apsw": str(apsw.apsw_version()), "sqlite": str(apsw.sqlite_lib_version())}


def probe_fts5() -> str | None:
    """Why this SQLite cannot hold the terms table as the index makes it, or None when it can."""
    db = apsw.Connection(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5({_TERMS})")
        db.execute("INSERT INTO t(rowid, text) VALUES (1, 'probe')")
        db.execute("DELETE FROM t WHERE rowid = 1")
    except apsw.Error as error:
        return str(error)
    finally:
        db.close()
    return None


def fts5_tokens(texts: list[str], tokenizer: str) -> list[list[str]]:
    """The terms an FTS5 tokenizer (a `tokenize=` value) makes of each text, in order (tokenizers
    elsewhere are checked against it)."""
    tokenize = f"tokenize='{tokenizer}'"
    db = apsw.Connection(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(text, {tokenize})")  # with offsets, for fts5vocab
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        found = []
        for rowid, text in enumerate(texts, start=1):
            db.execute("INSERT INTO t(rowid, text) VALUES(?, ?)", (rowid, text))
            found.append(
                [term for (term,) in db.execute("SELECT term FROM v WHERE doc=? ORDER BY offset", (rowid,))]
            )
        return found
    finally:
        db.close()


def paths_with_skipped_lines(store: Store) -> list[str]:
    """The journals that had overlong or malformed lines, by path (the doctor lists them)."""
    return [path for (path,) in store._all("SELECT path FROM files WHERE skipped_lines > 0 ORDER BY path")]


def indexed_journals(store: Store) -> list[IndexedJournal]:
    """Every journal the index holds, as its header and file were when indexed."""
    fields = ", ".join(IndexedJournal._fields)
    return [IndexedJournal(*row) for row in store._all(f"SELECT {fields} FROM files")]


# -- deliberate damage, for the tests that prove recovery ----------------------------------------


def pretend_newer_schema(store: Store, version: str) -> None:
    """Leave the index as a newer version would: another schema marker, a table and an FTS5 table
    (with its shadow tables) this version does not know, and the entries table read as empty."""
    with store.write():
        store._db.execute("UPDATE meta SET value=? WHERE key='schema'", (version,))
        store._db.execute("CREATE TABLE future_feature(payload TEXT)")
        store._db.execute("CREATE VIRTUAL TABLE future_terms USING fts5(text)")
        store._db.execute("DELETE FROM entries")


def refuse_writes(store: Store) -> None:
    """From now on this connection fails every write as a read-only folder does (SQLITE_READONLY)."""
    store._db.execute("PRAGMA query_only=ON")


def fill_up(store: Store) -> None:
    """From now on this connection's index cannot grow, as on a full disk (SQLITE_FULL)."""
    pages = int(store._value("PRAGMA page_count"))
    store._db.execute(f"PRAGMA max_page_count={pages}")


def table_names(store: Store) -> list[str]:
    return [name for (name,) in store._all("SELECT name FROM sqlite_master WHERE type='table'")]


# -- for the page check's tests and the damage profile's broken implementations ------------------


def add_filler_rows(store: Store, start: int, count: int) -> None:
    """`count` meta rows of 200 bytes each, numbered from `start`, in one transaction."""
    with store.write():
        for number in range(start, start + count):
            store._db.execute("INSERT INTO meta VALUES(?, ?)", (f"row{number:05d}", "x" * 200))


def filler_rows(store: Store) -> int:
    return int(store._value("SELECT count(*) FROM meta WHERE key LIKE 'row%'"))


def integrity(store: Store) -> list[str]:
    """What SQLite's own integrity check says of the index (['ok'] when sound)."""
    return [str(row) for (row,) in store._all("PRAGMA integrity_check")]


def legacy_index(path: str) -> None:
    """An index as a version before the page check made it: no room for CRCs, one filler row."""
    db = apsw.Connection(path)
    db.execute("PRAGMA journal_mode=WAL").fetchall()
    db.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
    db.execute("INSERT INTO meta VALUES('row00001', 'x')")
    db.close()


def unchecked_connection(path: str) -> apsw.Connection:
    """A connection that writes pages as SQLite makes them, without CRCs."""
    return apsw.Connection(path)


def empty_index_in_memory() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    _recreate(db)
    return db


def index_image(store: Store) -> bytes:
    """The index as one database image (its WAL's commits included)."""
    return bytes(store._db.serialize("main"))


def index_copy_in_memory(image: bytes) -> apsw.Connection:
    """An image of `index_image` opened in memory, every journal taken as indexed as it is now (its
    cursor at its end, its size and mtime as they are)."""
    copy = bytearray(image)
    copy[18:20] = b"\x01\x01"  # a rollback-journal database: memory holds no WAL
    db = apsw.Connection(":memory:")
    db.deserialize("main", bytes(copy))
    for (path,) in db.execute("SELECT path FROM files").fetchall():
        try:
            info = os.stat(str(path))
        except OSError:
            continue
        db.execute(
            "UPDATE files SET cursor=?, size=?, mtime_ns=? WHERE path=?",
            (info.st_size, info.st_size, info.st_mtime_ns, path),
        )
    return db
