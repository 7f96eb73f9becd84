"""Batch preparation: what a worker hands the storing process is complete, redacted search terms."""

from __future__ import annotations

from pathlib import Path

from pimem._extract import WITHHELD
from pimem._prepare import Task, as_withheld, prepare
from pimem._redact import redact
from pimem._terms import index_text
from pimem_conformance.journals import entry_line, header_line, write_journal

_SECRET = "ghp_" + "k3Jd8sPq0ZxW2mLr5TyV9nBc4HfG7aE1uQ6i"
_TEXTS = [
    "数据库迁移失败了 in exponentialBackoff",
    f"the token is {_SECRET} today",
    "plain words only",
]


def _prepared(tmp_path: Path) -> list[tuple[str | None, int | None, str | None]]:
    lines = [header_line("s1", "/home/u/app")]
    parent = None
    for number, text in enumerate(_TEXTS):
        lines.append(entry_line(f"e{number}", parent, text))
        parent = f"e{number}"
    path = write_journal(tmp_path / "s1.jsonl", lines)
    found = prepare(Task(str(path), 0, 1 << 20, frozenset()))
    return [(line.kind, line.chars, line.terms) for line in found.lines]


def test_a_prepared_entry_carries_the_terms_of_its_redacted_text(tmp_path: Path) -> None:
    expected = [("user", len(redact(text)), index_text(redact(text))) for text in _TEXTS]
    assert _prepared(tmp_path) == expected


def test_the_terms_hold_the_extra_tokens_and_never_the_secret(tmp_path: Path) -> None:
    cjk, secret, plain = (terms or "" for _, _, terms in _prepared(tmp_path))
    assert "数据" in cjk.split() and "backoff" in cjk.lower().split()  # what unicode61 cannot make itself
    assert _SECRET not in secret and "k3Jd8sPq0ZxW2mLr5TyV9nBc4HfG7aE1uQ6i" not in secret
    assert "today" in secret.split()
    assert plain == "plain words only"


def test_a_withheld_line_has_only_the_markers_terms(tmp_path: Path) -> None:
    path = write_journal(tmp_path / "one.jsonl", [header_line("s2", "/"), entry_line("e9", None, "words")])
    line = prepare(Task(str(path), 0, 1 << 20, frozenset())).lines[0]
    marked = as_withheld(line)
    assert (marked.chars, marked.terms) == (len(WITHHELD), index_text(WITHHELD))
    assert marked._replace(chars=line.chars, terms=line.terms) == line  # nothing else changes


def test_a_line_without_a_string_id_is_no_entry(tmp_path: Path) -> None:
    """The id check lives here, before extraction (extract takes entry lines only)."""
    kept = entry_line("e1", None, "a line with its id")
    lines = [
        header_line("s1", "/home/u/app"),
        {"type": "message", "message": {"role": "user", "content": "v1 line without id"}},
        {**entry_line("e0", None, "an id that is a number"), "id": 7},
        kept,
    ]
    path = write_journal(tmp_path / "s1.jsonl", lines)
    found = prepare(Task(str(path), 0, 1 << 20, frozenset()))
    assert [(line.entry_id, line.kind) for line in found.lines] == [("e1", "user")]
