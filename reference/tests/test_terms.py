"""What the index is given for a text, and what a query term asks of it (see _terms.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pimem
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pimem import _terms
from pimem._terms import (
    STOP_WORDS,
    atoms,
    contains_run,
    holds_sequence,
    holds_term,
    index_text,
    iter_terms,
    query_sequence,
    query_terms,
    sequence_in,
    split_terms,
)


def _tokens(text: str) -> set[str]:
    return set(index_text(text).lower().split())


def test_a_run_without_spaces_becomes_its_pairs_and_its_last_character() -> None:
    tokens = _tokens("数据库迁移")
    assert tokens == {"数据", "据库", "库迁", "迁移", "移"}  # every character starts a token
    assert _tokens("库") == {"库"}


def test_a_character_keeps_its_marks() -> None:
    assert _tokens("น้ำ") == {"น้ำ", "ำ"}  # the tone mark stays on its letter
    assert _tokens("ถังน้ำ") == {"ถัง", "งน้", "น้ำ", "ำ"}


def test_identifiers_keep_their_whole_and_add_their_parts() -> None:
    tokens = _tokens("exponentialBackoff HTTPServer sha256sum parseJSONResponse")
    assert {"exponentialbackoff", "exponential", "backoff", "http", "server", "sha", "256", "sum"} <= tokens
    assert {"parse", "json", "response"} <= tokens


def test_identifiers_beside_other_scripts_keep_their_parts() -> None:
    tokens = _tokens("数据fooBar库 البَيانات getHTTPValue")
    assert {"foobar", "foo", "bar", "数据", "据", "库", "البيانات"} <= tokens
    assert {"gethttpvalue", "get", "http", "value"} <= tokens


def test_hex_ids_and_long_blobs_add_no_parts() -> None:
    assert index_text("id 0193a4b2ff digest") == "id 0193a4b2ff digest"
    blob = "aB1cD2eF3gH4iJ5kL6"  # more than eight parts: not an identifier
    assert index_text(blob) == blob


# The definition the fast identifier finder must agree with: an ASCII letter/digit run, not inside
# a longer one, with an internal boundary (lower→upper, upper run→word, letter↔digit).
_IDENTIFIER_DEFINITION = re.compile(
    r"(?<![A-Za-z0-9])(?=[A-Za-z0-9]*?(?:[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]|[0-9][A-Za-z]))"
    r"[A-Za-z0-9]+"
)
_PART_DEFINITION = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _defined_parts(text: str) -> list[str]:
    parts: list[str] = []
    for identifier in dict.fromkeys(_IDENTIFIER_DEFINITION.findall(text)):
        found = _PART_DEFINITION.findall(identifier)
        if not re.fullmatch(r"[0-9a-f]{8,}", identifier) and len(found) <= 8:
            parts += found
    return parts


_IDENTIFIER_TEXT = st.lists(
    st.sampled_from(
        [*"aZb9Q0xY_-. \n\t\r\x0b\x0c\x1c\x1f\u00a0\u2028éßİ٣ﬁ", "HTTP", "Server", "sha256", "deadbeef00"]
    ),
    max_size=40,
).map("".join)


@given(_IDENTIFIER_TEXT)
@settings(max_examples=400)
def test_identifier_parts_follow_their_definition(text: str) -> None:
    parts = _defined_parts(text)
    assert index_text(text) == (text + "\n" + " ".join(parts) if parts else text)


def test_harakat_are_dropped_on_both_sides() -> None:
    assert index_text("البَيَانَاتِ") == "البيانات"
    assert query_terms("البَيَانَاتِ")[0].text == "البيانات"


@pytest.mark.parametrize(
    ("query", "match", "check"),
    [
        ("库", '"库" *', False),  # its pair with the next character, or the run's last
        ("น", '"น" *', True),  # a Thai letter: the prefix also finds it carrying a mark
        ("外键", '"外键"', False),
        ("迁移失败", '"迁移" AND "移失" AND "失败"', True),
        ("backoff", '"backoff"', False),
        ("exponentialBackoff", '("exponentialBackoff" OR ("exponential" AND "backoff"))', True),
    ],
)
def test_query_terms_say_how_the_index_finds_them(query: str, match: str, check: bool) -> None:
    (term,) = query_terms(query)
    assert (term.match, term.check) == (match, check)


def test_contiguity_is_checked_within_one_word() -> None:
    line = atoms("retry with exponentialBackoff; 迁移脚本写好了\uff0c失败再说")
    assert contains_run(line, ("exponential", "backoff"), "exponentialbackoff")
    assert not contains_run(line, ("backoff", "exponential"), "backoffexponential")
    assert contains_run(line, ("迁", "移"), "迁移")
    assert not contains_run(line, ("迁", "移", "失", "败"), "迁移失败")
    assert not contains_run(
        atoms("the exponential backoff"), ("exponential", "backoff"), "exponentialbackoff"
    )


def test_the_whole_query_in_sequence() -> None:
    wanted = query_sequence("test_loqua.py")
    assert sequence_in(atoms("see tests/test_loqua.py:12"), wanted)
    assert not sequence_in(atoms("test_loqua_extra.py"), wanted)
    assert not sequence_in(atoms("py test loqua"), wanted)
    repeated = query_sequence("a_b of b")  # repeats count: "a b of b", not "a b of"
    assert not sequence_in(atoms("a_b of c"), repeated)


def test_stop_words_are_function_words_only() -> None:
    assert {"the", "did", "we", "what", "how", "for"} <= STOP_WORDS
    assert not {"error", "index", "search", "file", "test"} & STOP_WORDS


def test_the_shipped_stop_list_is_the_spec_s() -> None:
    # The package carries its own copy (npm packs no symlinks); the spec's list is the normative one.
    shipped = Path(pimem.__file__).with_name("stop-words-en.txt").read_bytes()
    assert shipped == (Path(__file__).resolve().parents[2] / "spec" / "stop-words" / "en.txt").read_bytes()


def test_the_scripts_without_spaces_are_the_spec_s_table() -> None:
    # JM-SEARCH-230's table in spec/search.md is the normative one; its cases test each range's ends.
    search_md = (Path(__file__).resolve().parents[2] / "spec" / "search.md").read_text(encoding="utf-8")
    rows = re.findall("^\\| U\\+([0-9A-F]+)\u2013U\\+([0-9A-F]+) \\|", search_md, re.MULTILINE)
    assert len(rows) > 10
    assert sorted(_terms._NO_SPACE_SPANS) == sorted((int(first, 16), int(last, 16)) for first, last in rows)


# -- the text-level checks: the same answers as the word-by-word ones, found in C ----------------

_PIECES = [
    "exponential",
    "Backoff",
    "exponentialBackoff",
    "HTTPServer",
    "http",
    "server",
    "sha256sum",
    "sha",
    "256",
    "index",
    "dex",
    "数据库",
    "数据",
    "库",
    "迁移",
    "数",
    "น้ำ",
    "น",
    "हिन्दी",
    "البَيَانَاتِ",
    "البيانات",
    "İstanbul",
    "istanbul",
    "ΟΔΟΣ",
    "οδος",
    "foo",
    "bar",
    "Foo",
    "BAR",
    "[REDACTED:github-pat]",
]
_GLUE_TEXT = [" ", "", "_", "-", "\n", ", ", "。", "  ", ".", "\u0301"]


@given(
    st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_GLUE_TEXT)), max_size=12),
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=3),
)
@settings(max_examples=400)
def test_the_text_checks_agree_with_the_word_checks(pieces: list[tuple[str, str]], query: list[str]) -> None:
    text = "".join(piece + glue for piece, glue in pieces)
    words = atoms(text)
    for term in query_terms(" ".join(query)):
        assert holds_term(text, term) == contains_run(words, term.atoms, term.text.lower()), (text, term)
    wanted = query_sequence(" ".join(query))
    assert holds_sequence(text, wanted) == sequence_in(words, wanted), (text, wanted)


def test_the_text_checks_find_what_they_must_and_not_what_they_must_not() -> None:
    exponential, backoff = query_terms("exponentialBackoff")[0], query_terms("dex")[0]
    assert holds_term("retry with ExponentialBackoff()", exponential)
    assert not holds_term("exponential then Backoff", exponential)
    assert not holds_term("the index grows", backoff)
    assert holds_term("数据库迁移失败了", query_terms("迁移失败")[0])
    assert not holds_term("迁移 失败", query_terms("迁移失败")[0])
    assert holds_sequence("see test_loqua.py now", query_sequence("test_loqua.py"))
    assert not holds_sequence("test then loqua.py", query_sequence("test_loqua.py"))
    assert holds_sequence(
        "a very long text " * 5000 + "exponential backoff", query_sequence("exponentialBackoff")
    )


def test_the_shape_memory_stays_bounded_and_right() -> None:
    for n in range(_terms._BOUNDED.size + 10):
        shape = format(n, "b").translate(str.maketrans("01", "aA")).encode()
        assert _terms._BOUNDED[shape] == (b"aA" in shape or b"AAa" in shape)
        assert len(_terms._BOUNDED) <= _terms._BOUNDED.size
    blob = b"aA0" * 100  # a long run is judged, not remembered
    assert _terms._BOUNDED[blob] and blob not in _terms._BOUNDED


@pytest.mark.parametrize(
    "text", ["Where does staging run? Check it.", "數據庫 migration, 数据ꀀ", "हिन्दी भाषा", "a_b-c", ""]
)
def test_iter_terms_are_the_split_terms_with_repeats(text: str) -> None:
    terms = list(iter_terms(text + " " + text))
    assert terms == list(iter_terms(text)) * 2 if text else terms == []
    assert list(dict.fromkeys(term.casefold() for term in terms)) == [t.casefold() for t in split_terms(text)]


@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_GLUE_TEXT)), max_size=12))
def test_the_terms_before_a_space_are_the_first_terms_of_the_text(pieces: list[tuple[str, str]]) -> None:
    # a search judges whether an entry restates its query on the text up to a space first
    text = "".join(piece + glue for piece, glue in pieces)
    every = list(iter_terms(text))
    for cut in (at for at, char in enumerate(text) if char == " "):
        head = list(iter_terms(text[:cut]))
        assert every[: len(head)] == head
