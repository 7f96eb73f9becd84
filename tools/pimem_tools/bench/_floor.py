"""The search floor: a bare FTS5 lookup per query that no change to the reference can move.

The bench owns everything about it:
- the table: one FTS5 table (`floor`, contentless, `detail=none`, the `ascii` tokenizer) built
  once per corpus by the bench from the corpus's entry texts (the text extraction gives, before
  redaction), each text turned into terms by `floor_terms`;
- the statement: one per query, `FLOOR_SQL`, whose MATCH expression `floor_match` derives from the
  query text alone (never from what a search asked its store), so it is frozen with the query set.

`floor_terms`, the derivation, used alike for entry texts and query texts:
1. NFC, then case-folded;
2. the runs of letters and digits (Python's `\\w` without `_`): every other character separates;
3. inside a run, each stretch of a script written without spaces (`_SPACELESS`: Thai, Lao, Khmer,
   Myanmar, kana, Han, Hangul syllables) becomes its overlapping character pairs (a lone
   character stays as it is); the rest of the run is one term.

`floor_match(query)` is the query's distinct terms in order, each double-quoted, joined by `OR`:
the any-term match, whose rows include those of every match a search may make of the same words
(all terms, any term), newest first (highest rowid) up to `FLOOR_CAP`. Filters (kind, dates,
project) are not part of the floor: it is the text lookup alone. The `ascii` tokenizer splits on
ASCII non-alphanumerics only, so each term of the bench's own making is one FTS5 token.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import apsw

__all__ = [
    "FLOOR_CAP",
    "FLOOR_SQL",
    "FLOOR_TABLE",
    "Floor",
    "FloorBuild",
    "build_floor",
    "floor_match",
    "floor_terms",
]

FLOOR_CAP = 1000
FLOOR_TABLE = "CREATE VIRTUAL TABLE floor USING fts5(text, content='', detail=none, tokenize='ascii')"
FLOOR_SQL = f"SELECT rowid FROM floor WHERE floor MATCH ? ORDER BY rowid DESC LIMIT {FLOOR_CAP}"

_RUN = re.compile(r"[^\W_]+")
_SPACELESS = re.compile(
    "[\u0e00-\u0e7f\u0e80-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+"
)
_COMMIT_EVERY = 20_000  # rows per transaction while building


def _pairs(stretch: str) -> list[str]:
    if len(stretch) == 1:
        return [stretch]
    return [stretch[i : i + 2] for i in range(len(stretch) - 1)]


def floor_terms(text: str) -> list[str]:
    """The floor's terms of a text, in order (see the module's docstring)."""
    folded = unicodedata.normalize("NFC", text).casefold()
    if folded.isascii():
        return _RUN.findall(folded)
    terms: list[str] = []
    for run in _RUN.findall(folded):
        if run.isascii():
            terms.append(run)
            continue
        position = 0
        for stretch in _SPACELESS.finditer(run):
            if stretch.start() > position:
                terms.append(run[position : stretch.start()])
            terms.extend(_pairs(stretch.group()))
            position = stretch.end()
        if position < len(run):
            terms.append(run[position:])
    return terms


def floor_match(query: str) -> str | None:
    """The FTS5 expression of a query's floor statement, or None when the query has no term."""
    terms = list(dict.fromkeys(floor_terms(query)))
    return " OR ".join(f'"{term}"' for term in terms) if terms else None


@dataclass(frozen=True)
class FloorBuild:
    entries: int
    seconds: float


def build_floor(texts: Iterable[str], db_path: Path) -> FloorBuild:
    """The floor table of these texts (one row each, in order), written anew at `db_path`."""
    started = time.perf_counter()
    db_path.unlink(missing_ok=True)
    db = apsw.Connection(str(db_path))
    try:
        db.execute("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF")
        db.execute(FLOOR_TABLE)
        entries = 0
        db.execute("BEGIN")
        for text in texts:
            db.execute("INSERT INTO floor(text) VALUES (?)", (" ".join(floor_terms(text)),))
            entries += 1
            if entries % _COMMIT_EVERY == 0:
                db.execute("COMMIT; BEGIN")
        db.execute("COMMIT")
        db.execute("INSERT INTO floor(floor) VALUES ('optimize')")
    finally:
        db.close()
    return FloorBuild(entries, time.perf_counter() - started)


class Floor:
    """The floor table, read-only: each query's floor statement, timed."""

    def __init__(self, db_path: Path) -> None:
        self._db = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)

    def rowids(self, match: str | None) -> list[int]:
        if match is None:
            return []
        return [rowid for (rowid,) in self._db.execute(FLOOR_SQL, (match,))]

    def time_ms(self, match: str | None) -> float:
        started = time.perf_counter()
        self.rowids(match)
        return (time.perf_counter() - started) * 1000

    def close(self) -> None:
        self._db.close()
