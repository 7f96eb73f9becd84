"""Stemming in the any-term ranking (ranking.md's notes): a word that is its own Porter stem finds
its inflected forms (`bookmark`: `bookmarks`, `bookmarking`), and never a longer word that merely
starts with it (`cafe` is no form of `cafebabe`)."""

from __future__ import annotations

from pathlib import Path

import Stemmer
from hypothesis import given
from hypothesis import strategies as st
from pimem._terms import stem_forms, stem_prefix
from test_cli_context import PROJECT, _message, _write, search_details

_PORTER = Stemmer.Stemmer("porter")


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12))
def test_every_form_stems_to_the_word(word: str) -> None:
    forms = stem_forms(word)
    assert all(_PORTER.stemWord(form) == word and form != word for form in forms)
    if forms:  # only a word that is its own stem has forms; another is searched by its stem's prefix
        assert stem_prefix(word) is None and len(word) >= 4


def test_forms_of_common_words() -> None:
    assert {"bookmarks", "bookmarked", "bookmarking"} <= set(stem_forms("bookmark"))
    assert {"stops", "stopped", "stopping"} <= set(stem_forms("Stop"))
    assert {"makes", "making"} <= set(stem_forms("make"))
    assert {"pushes", "pushed"} <= set(stem_forms("push"))
    assert stem_forms("cafe") == ("cafed", "cafes", "cafing")  # never cafebabe
    assert stem_forms("migrating") == () and stem_prefix("migrating") == "migrat"
    assert stem_forms("rows") == stem_forms("日本語") == stem_forms("v2api") == ()


def _found(tmp_path: Path, query: str) -> list[tuple[str, str]]:
    _write(
        tmp_path / PROJECT / "2026-12-03T09-00-00-000Z_aaaa1111.jsonl",
        "aaaa1111",
        _message("aaaa0000", None, "assistant", "For bookmarking we rely on the collector job."),
        _message("aaaa0001", "aaaa0000", "user", "Keep cafebabe in mind, and the bookmarks folder too."),
        _message("aaaa0002", "aaaa0001", "user", "Nothing to do with it."),
    )
    return [(result["entryId"], result["match"]) for result in search_details(tmp_path, query)["results"]]


def test_a_word_finds_its_inflected_forms_as_any_term_results(tmp_path: Path) -> None:
    assert sorted(_found(tmp_path, "bookmark")) == [("aaaa0000", "any"), ("aaaa0001", "any")]


def test_a_word_never_finds_a_longer_word_that_starts_with_it(tmp_path: Path) -> None:
    assert _found(tmp_path, "cafe") == []
    assert _found(tmp_path, "cafebabe") == [("aaaa0001", "all")]
