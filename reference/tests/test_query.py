"""Query building: the query text is literal, so FTS5 syntax in it is searched as words."""

from __future__ import annotations

import apsw
import pytest
from pimem._query import fts_all, fts_any, query_terms


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ('say "hello', ["say", "hello"]),
        ("cats OR dogs", ["cats", "OR", "dogs"]),
        ("NEAR(a b, 2)", ["NEAR", "a", "b", "2"]),
        ("pref* ^start", ["pref", "start"]),
        ("text:column (group) -minus", ["text", "column", "group", "minus"]),
        ("snake_case-and.dots", ["snake", "case", "and", "dots"]),
        ("Grüße 日本語 café", ["Grüße", "日本語", "café"]),
        ("Repeat repeat REPEAT", ["Repeat"]),
        ("!!! ...", []),
    ],
)
def test_query_terms_are_letter_digit_runs(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_quoting() -> None:
    assert fts_all(["a", 'b"c']) == '"a" "b""c"'
    assert fts_any(["a", "OR"]) == '"a" OR "OR"'


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a OR b", "NEAR(x y)", "pre*", "^x", "text:y", "(z)", "AND", "-"]
)
def test_hostile_queries_run_as_literal_matches(query: str) -> None:
    db = apsw.Connection(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, content='', detail=none,"
        " tokenize='unicode61 remove_diacritics 2')"
    )
    db.execute("INSERT INTO t(rowid, text) VALUES (1, 'a OR b near x y pre text y z and unbalanced')")
    terms = query_terms(query)
    for match in (fts_all(terms), fts_any(terms)) if terms else ():
        rows = list(db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)))
        assert rows == [(1,)]
