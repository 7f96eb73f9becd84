"""Query building: the query text is literal, so FTS5 syntax in it is searched as words."""

from __future__ import annotations

import apsw
import pytest
from pimem._query import query_terms
from pimem._terms import index_text
from pimem._terms import query_terms as analysed_terms


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
        ("pool连接池is", ["pool", "连接池", "is"]),  # a run of a script without spaces is its own term
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # combining marks belong to their word
        ("Repeat repeat REPEAT", ["Repeat"]),
        ("!!! ...", []),
    ],
)
def test_query_terms_are_word_runs(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_a_quote_inside_a_term_is_doubled() -> None:
    assert [term.match for term in analysed_terms('a b"c')] == ['"a"', '"b"', '"c"']
    assert analysed_terms("OR")[0].match == '"OR"'


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a OR b", "NEAR(x y)", "pre*", "^x", "text:y", "(z)", "AND", "-", "zAnd0r"]
)
def test_hostile_queries_run_as_literal_matches(query: str) -> None:
    db = apsw.Connection(":memory:")
    db.execute(
        "CREATE VIRTUAL TABLE t USING fts5(text, content='', detail=none,"
        " tokenize='unicode61 remove_diacritics 2 categories ''L* N* Co M*''')"
    )
    text = "a OR b near x y pre text y z and unbalanced zAnd0r"
    db.execute("INSERT INTO t(rowid, text) VALUES (1, ?)", (index_text(text),))
    terms = analysed_terms(query)
    for match in (" AND ".join(t.match for t in terms), " OR ".join(t.match for t in terms)) if terms else ():
        rows = list(db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)))
        assert rows == [(1,)]
