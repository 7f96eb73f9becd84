"""Query building: the query text is literal, so FTS5 syntax in it is searched as words."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pimem._query import query_terms, scope_of
from pimem._store import Filters, IndexedJournal, Line, Store
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
def test_hostile_queries_run_as_literal_matches(query: str, tmp_path: Path) -> None:
    store = Store(str(tmp_path / "index.sqlite"))
    with store.write():
        store.add_file(IndexedJournal("/j.jsonl", "s", "/", "", 0, 0), b"", 0, b"")
        text = "a OR b near x y pre text y z and unbalanced zAnd0r"
        store.add_lines(1, [Line(20_000, "e1", None, 0, 1, 0, None, "user", len(text), index_text(text))])
    terms = analysed_terms(query)
    for match in (" AND ".join(t.match for t in terms), " OR ".join(t.match for t in terms)) if terms else ():
        assert [
            (found.path, found.offset)
            for found in store.candidates(match, None, Filters(), 10, shortest_first=False)
        ] == [("/j.jsonl", 0)]
    assert len(store.candidates('"absent"', None, Filters(), 10, shortest_first=False)) == 0
    store.close()


class _IndexedSoFar:
    """The index's `known()` while only the project's own journal is indexed."""

    def known(self) -> dict[str, tuple[int, int, int]]:
        return {"/s/app.jsonl": (1, 100, 0)}


def test_a_project_scope_stays_a_list_of_files_when_it_holds_every_journal_indexed_so_far() -> None:
    # Found by the state machine: a project whose journals were every journal indexed so far got
    # "every journal" as its scope, and a journal of another project that the background indexed
    # next was searched with it.
    index: Any = _IndexedSoFar()
    assert scope_of(index, ["/s/app.jsonl"]) == (1,)
    assert scope_of(index, ["/s/app.jsonl", "/s/not-yet-indexed.jsonl"]) == (1,)
    assert scope_of(index, ["/s/app.jsonl"], whole=True) is None


def _store_of(tmp_path: Path, texts: list[str]) -> Store:
    """A store holding one journal with one user entry per text, in order."""
    store = Store(str(tmp_path / "index.sqlite"))
    with store.write():
        store.add_file(IndexedJournal("/j.jsonl", "s", "/", "", 0, 0), b"", 0, b"")
        lines = [
            Line(20_000, f"e{n}", None, n, 1, 0, None, "user", len(t), index_text(t))
            for n, t in enumerate(texts)
        ]
        store.add_lines(1, lines)
    return store


def _rowids(store: Store, match: str) -> list[int]:
    return sorted(
        found.rowid for found in store.candidates(match, None, Filters(), 200, shortest_first=False)
    )


def test_holding_walks_the_matches_or_seeks_the_rowids_with_the_same_answer(tmp_path: Path) -> None:
    store = _store_of(
        tmp_path, [f"common {'rare' if number in (0, 49) else 'other'}" for number in range(100)]
    )
    rowids = _rowids(store, '"common"')
    first, last = rowids[0], rowids[-1]
    assert store.holding('"common"', [first, last]) == {first, last}  # 100 matches: more than 50, seeks
    assert store.holding('"rare"', [first, last]) == {first}  # 2 matches: walks them
    assert store.holding('"rare"', []) == set()
    store.close()


def test_holding_walks_a_prefix_query_however_many_it_matches(tmp_path: Path) -> None:
    # FTS5 expands a prefix again for every rowid it seeks: 2,192 rowids asked about a stem prefix
    # that matched 89,143 entries took 25 s seeking and 49 ms walking, on the bench's 1 GiB corpus.
    store = _store_of(tmp_path, [f"{'keeps' if number % 2 else 'keeping'} {number}" for number in range(100)])
    rowids = _rowids(store, '"keeps"')
    sought: list[Any] = []  # the match of every statement that seeks rowids

    def trace(_cursor: Any, sql: str, bound: Any) -> bool:
        if "AND rowid IN (" in sql:
            sought.append(bound[0])
        return True

    store._db.exec_trace = trace
    ends = [rowids[0], rowids[-1]]
    assert store.holding('("keeps" OR "keep" *)', ends) == set(ends)  # 100 matches in the range
    assert store.holding('("keeps" OR "keeping")', ends) == set(ends)  # as many: this one seeks
    store._db.exec_trace = None
    assert sought == ['("keeps" OR "keeping")']
    store.close()


@given(
    st.lists(
        st.tuples(st.integers(1, 4), st.integers(0, 3), st.sampled_from(["/a.jsonl", "/b.jsonl"])),
        min_size=1,
        max_size=30,
    )
)
@settings(max_examples=60, deadline=None)
def test_shortest_first_is_shorter_then_newer_then_path_and_offset_descending(
    tmp_path_factory: pytest.TempPathFactory, entries: list[tuple[int, int, str]]
) -> None:
    store = Store(str(tmp_path_factory.mktemp("index") / "index.sqlite"))
    with store.write():
        for file_id, path in enumerate(["/a.jsonl", "/b.jsonl"], 1):
            store.add_file(IndexedJournal(path, f"s{file_id}", "/", "", 0, 0), b"", 0, b"")
        for offset, (chars, ms, path) in enumerate(entries):
            line = Line(0, f"e{offset}", None, offset, 1, ms, None, "user", chars, "word")
            store.add_lines(1 if path == "/a.jsonl" else 2, [line])
    newest = store.candidates('"word"', None, Filters(), 20, shortest_first=False)
    ranked = store.candidates('"word"', None, Filters(), 20, shortest_first=True)
    assert sorted(
        newest, key=lambda found: (-found.chars, found.ms, found.path, found.offset), reverse=True
    ) == list(ranked)
    store.close()


def test_candidates_are_the_same_rows_however_they_are_read(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "index.sqlite"))
    with store.write():
        store.add_file(IndexedJournal("/j.jsonl", "s", "/", "", 0, 0), b"", 0, b"")
        lines = [Line(20_000, f"e{n}", None, n, 1, n, None, "user", 10 + n % 3, "word") for n in range(6)]
        store.add_lines(1, lines)
    found = store.candidates('"word"', None, Filters(), 20, shortest_first=True)
    every = list(found)
    assert len(found) == len(every) == 6
    assert [found[n] for n in range(6)] == every and found[-1] == every[-1]
    assert found[1:4] == every[1:4] and found[4:] == every[4:] and found[9:] == []
    assert [(c.chars, c.offset) for c in every] == [(10, 3), (10, 0), (11, 4), (11, 1), (12, 5), (12, 2)]
    store.close()


def test_the_checks_judge_the_redacted_text() -> None:
    from pimem._query import _Checks
    from pimem._redact import redact
    from pimem._terms import query_sequence

    text = "password=alpha beta; alpha and then beta"
    assert "alpha beta" not in redact(text)
    checks = _Checks(analysed_terms("alpha beta"), query_sequence("alpha beta"))
    assert not checks.sequence(text, query_sequence("alpha beta"))  # adjacent only inside the secret
    assert checks.sequence("so alpha beta it is", query_sequence("alpha beta"))  # its twin
    # a marker's words complete a sequence only once the whole text is redacted
    marker = _Checks(analysed_terms("redacted assignment"), query_sequence("redacted assignment"))
    assert marker.whole
    assert marker.sequence("password: hunter2secretvalue", query_sequence("redacted assignment"))


@given(
    st.lists(st.sets(st.sampled_from(["red", "green", "blue", "keeps", "keeping"]), max_size=4), max_size=40),
    st.data(),
)
@settings(max_examples=60, deadline=None)
def test_holding_both_answers_as_holding_does_for_holders_of_the_other_term(
    tmp_path_factory: pytest.TempPathFactory, words: list[set[str]], data: st.DataObject
) -> None:
    texts = [" ".join(sorted(each)) or "nothing" for each in words]
    store = _store_of(tmp_path_factory.mktemp("index"), texts)
    match, alongside = data.draw(
        st.lists(
            st.sampled_from(['"red"', '"green"', '("blue" OR "keep" *)']), min_size=2, max_size=2, unique=True
        )
    )
    holders = _rowids(store, alongside)
    asked = data.draw(st.lists(st.sampled_from(holders), unique=True)) if holders else []
    assert store.holding_both(match, alongside, asked) == store.holding(match, asked)
    store.close()


def test_candidates_without_some_rowids_keep_their_order(tmp_path: Path) -> None:
    store = _store_of(tmp_path, ["word a", "word b", "word c", "word d"])
    found = store.candidates('"word"', None, Filters(), 20, shortest_first=False)
    left = found.without({found[1].rowid, found[3].rowid})
    assert list(left) == [found[0], found[2]] and left.rows == [found.rows[0], found.rows[2]]
    store.close()
