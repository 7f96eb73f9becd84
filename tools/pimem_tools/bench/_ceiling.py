"""Where the time goes, and the ceiling: one pass over the corpus, each stage timed on its own.

For every journal: read + parse + extract (the reference's code), then redaction (the reference's
code), then the reference's term maker (`index_text`: CJK character pairs, identifier parts),
then a raw insert of what the term maker gave into a bare FTS5 table with the reference's own
options (tokenizer included) through apsw. So the ceiling's token stream is the real index's. Only
the insert and its commits count towards the ceiling: the fastest the index could possibly be built
from the same tokens, with nothing else around it. Each other stage is timed on its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import apsw

from pimem_tools.bench import _reference
from pimem_tools.bench._queries import TermSample

__all__ = ["DEFAULT_FTS_OPTIONS", "StagePass", "run_stage_pass"]

DEFAULT_FTS_OPTIONS = "text, content=''"
# One transaction per this much journal: batching is a lever the reference may use too.
_COMMIT_EVERY_BYTES = 16 << 20


@dataclass(frozen=True)
class StagePass:
    journal_bytes: int
    entries: int
    text_bytes: int
    extract_seconds: float
    redact_seconds: float
    terms_seconds: float
    insert_seconds: float
    fts_options: str


def run_stage_pass(
    journals: Iterable[Path], scratch_db: Path, sample: TermSample, fts_options: str = DEFAULT_FTS_OPTIONS
) -> StagePass:
    connection = apsw.Connection(str(scratch_db))
    # The same durability a real index needs: WAL with NORMAL sync.
    connection.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
    connection.execute(f"CREATE VIRTUAL TABLE ceiling USING fts5({fts_options})")
    # The first argument is the text column; any further columns stay empty.
    column = fts_options.split(",")[0].strip()
    journal_bytes = entries = text_bytes = 0
    extract_seconds = redact_seconds = terms_seconds = insert_seconds = 0.0
    uncommitted = 0
    connection.execute("BEGIN")
    for path in journals:
        size = path.stat().st_size
        started = time.perf_counter()
        extracted = list(_reference.extracted_entries(str(path)))
        extracted_at = time.perf_counter()
        texts = [_reference.redact(entry.text) for entry in extracted]
        redacted_at = time.perf_counter()
        tokens = [(_reference.index_terms(text),) for text in texts]
        termed_at = time.perf_counter()
        connection.executemany(f"INSERT INTO ceiling({column}) VALUES (?)", tokens)
        uncommitted += size
        if uncommitted >= _COMMIT_EVERY_BYTES:
            connection.execute("COMMIT; BEGIN")
            uncommitted = 0
        inserted_at = time.perf_counter()
        extract_seconds += extracted_at - started
        redact_seconds += redacted_at - extracted_at
        terms_seconds += termed_at - redacted_at
        insert_seconds += inserted_at - termed_at
        journal_bytes += size
        entries += len(texts)
        for entry, text in zip(extracted, texts, strict=True):
            text_bytes += len(text.encode())
            sample.add(entry.kind, entry.timestamp, text)
    started = time.perf_counter()
    connection.execute("COMMIT")
    insert_seconds += time.perf_counter() - started
    connection.close()
    return StagePass(
        journal_bytes,
        entries,
        text_bytes,
        extract_seconds,
        redact_seconds,
        terms_seconds,
        insert_seconds,
        fts_options,
    )
