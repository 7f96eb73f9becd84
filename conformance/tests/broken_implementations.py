"""Deliberately broken implementations: the reference with exactly one rule broken.

Each is a monkeypatch of one reference function (or a one-method subclass of its protocol
server), never a copy of its code. `conformance/tests/test_broken_implementations.py` proves the
suite rejects each one on the requirements it violates, and that every must_not case fails
against at least one of them. Only these tests may reach into the reference's internals.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import re
import shlex
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pimem import (
    _context,
    _echo,
    _errors,
    _extract,
    _forget,
    _index,
    _journals,
    _maintenance,
    _memo,
    _memory,
    _pages,
    _prepare,
    _query,
    _redact,
    _redact_rules,
    _scope,
    _serve,
    _store,
    _store_checks,
    _terms,
    _time,
    _tool,
)
from pimem._serve import ProtocolServer

Patch = Callable[[pytest.MonkeyPatch], None]


@dataclass(frozen=True)
class Broken:
    """One broken rule: how to break it, which case areas to run, which requirements must fail."""

    name: str
    rule: str
    areas: tuple[str, ...]
    violates: frozenset[str]
    patch: Patch = lambda monkeypatch: None
    server: type[ProtocolServer] = ProtocolServer


def _wrap(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, make: Callable[[Any], Any]) -> None:
    """Replace `owner.name` by `make(original)`."""
    monkeypatch.setattr(owner, name, make(getattr(owner, name)))


def _instead_on(
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    error: type[BaseException],
    instead: Callable[[], Any],
) -> None:
    """Replace `owner.name` by a call of it that answers `instead()` where it raised `error`."""

    def make(original: Callable[..., Any]) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            try:
                return original(*args, **kwargs)
            except error:
                return instead()

        return called

    _wrap(monkeypatch, owner, name, make)


def _with_settings(**overrides: Any) -> type[ProtocolServer]:
    """A protocol server that opens every instance with these settings, whatever the case says."""

    class Overridden(ProtocolServer):
        def _open(self, request: dict[str, Any]) -> dict[str, Any]:
            settings = {**(request.get("settings") or {}), **overrides}
            settings = {key: value for key, value in settings.items() if value is not None}
            return super()._open({**request, "settings": settings})

    return Overridden


# ---- read ---------------------------------------------------------------------------------------


def _trust_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Show whatever a stored offset lands on: another entry's line, or (no line) an empty text.

    This is the reference without its line check, the way a naive implementation behaves; it
    makes index faults that the check would hide visible again.
    """

    def make(original: Any) -> Any:
        def load(view: Any, row: Any, *rest: Any) -> Any:
            raw = _journals.read_line_at(row.path, row.offset, row.length)
            line = _journals.parse_line(raw) if raw is not None else None
            found = line.get("id") if isinstance(line, dict) else None
            if isinstance(found, str):
                return original(view, row._replace(entry_id=found), *rest)
            return _extract.Extracted(row.timestamp, row.kind, None, None, "", None)

        return load

    _wrap(monkeypatch, _query, "_load", make)


def _unverified(*patches: Patch) -> Patch:
    """These faults in an implementation that also trusts its index."""

    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        for each in (*patches, _trust_the_index):
            each(monkeypatch)

    return patch


def _read_ignoring_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def read(view: Any, *args: Any) -> Any:
            everything = list(view.index.known())
            return original(view.narrowed(everything), *args)

        return read

    _wrap(monkeypatch, _tool, "read", make)


def _source_path_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def lookup(view: Any, entry_id: str | None, source: str | None) -> Any:
            if source is not None and source.startswith("/"):  # a path given as source is read directly
                return original(view.narrowed([source]), entry_id, None)
            return original(view, entry_id, source)

        return lookup

    _wrap(monkeypatch, _query, "_lookup", make)


def _source_outside_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def lookup(view: Any, entry_id: str | None, source: str | None) -> Any:
            if source is not None:  # a handle is resolved among every indexed journal
                view = view.narrowed(list(view.index.known()))
            return original(view, entry_id, source)

        return lookup

    _wrap(monkeypatch, _query, "_lookup", make)


def _around_first_child(monkeypatch: pytest.MonkeyPatch) -> None:
    # The children come last-written first, so the walk takes the first-written one.
    _wrap(
        monkeypatch,
        _store.Store,
        "children",
        lambda original: lambda self, file_id, parent_id: original(self, file_id, parent_id)[::-1],
    )


def _around_walk_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Around's walk keeps no record of the entries it passed: a parentId cycle repeats them."""

    def walk(view: Any, hit: Any, count: int, upward: bool) -> list[Any]:
        found: list[Any] = []
        key = hit.parent_id if upward else hit.entry_id
        while key is not None and len(found) < count:
            store = view.index.store
            latest_child = next(reversed(store.children(hit.file_id, key)), None)
            node = store.node(hit.file_id, key) if upward else latest_child
            if node is None:
                break
            if node.kind is not None:
                found.append(node)
            key = node.parent_id if upward else node.entry_id
        return found

    monkeypatch.setattr(_query, "_walk", walk)


# ---- scope --------------------------------------------------------------------------------------


def _like(cwd: str, root: str) -> bool:
    """`cwd LIKE root || '%'`: a string prefix where `_` and `%` are wildcards."""
    pattern = "".join(".*" if char == "%" else "." if char == "_" else re.escape(char) for char in root)
    return re.match(pattern, cwd) is not None


def _like_prefix_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scope, "in_project", _like)


def _project_is_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scope, "in_project", lambda cwd, root: True)


def _home_children_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # Pretend home is somewhere else, so ~/code and its neighbours count as project roots.
    _wrap(
        monkeypatch,
        _scope,
        "project_root",
        lambda original: lambda cwd, home, cwds: original(cwd, "/nonexistent-home", cwds),
    )


def _session_is_project(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _memory,
        "scoped_journals",
        lambda original: (
            lambda journals, scope, **kw: original(journals, "project" if scope == "session" else scope, **kw)
        ),
    )


def _session_id_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _memory.Memory,
        "journals",
        lambda original: lambda self, found, scope, session_id=None: original(self, found, scope, None),
    )


def _unknown_arguments_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    known = set(_tool.PARAMETERS["properties"])
    _wrap(
        monkeypatch,
        _tool,
        "validate",
        lambda original: (
            lambda arguments, tz: original(
                {key: value for key, value in arguments.items() if key in known}
                if isinstance(arguments, dict)
                else arguments,
                tz,
            )
        ),
    )


# ---- journals and extraction --------------------------------------------------------------------


def _discovery_takes_any_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def candidates(agent_dir: str | None, session_dirs: list[str]) -> Iterator[str]:
            yield from original(agent_dir, session_dirs)
            if agent_dir:  # also stray files in the agent dir and non-.jsonl files in session folders
                for path in sorted([*Path(agent_dir).glob("*.jsonl"), *Path(agent_dir).glob("sessions/*/*")]):
                    if path.suffix != ".jsonl" or path.parent == Path(agent_dir):
                        yield str(path)

        return candidates

    _wrap(
        monkeypatch,
        _journals,
        "_roots",
        lambda original: (
            lambda agent_dir, session_dirs: [
                *original(agent_dir, session_dirs),
                *([os.path.realpath(agent_dir)] if agent_dir else []),
            ]
        ),
    )
    _wrap(monkeypatch, _journals, "_candidates", make)
    _wrap(
        monkeypatch,
        _journals,
        "_valid_header",
        lambda original: (
            lambda value: (
                isinstance(value, dict) and all(isinstance(value.get(key), str) for key in ("id", "cwd"))
            )
        ),
    )


def _links_followed_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_journals, "_inside", lambda real, roots: True)


def _header_type_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any first line with a string id and cwd passes for a session header.
    monkeypatch.setattr(
        _journals,
        "_valid_header",
        lambda value: (
            isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("cwd"), str)
        ),
    )


def _cwd_from_folder_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def read_header(path: str, max_line_bytes: int) -> Any:
            found = original(path, max_line_bytes)
            folder = Path(path).parent.name
            if found is None or not (folder.startswith("--") and folder.endswith("--")):
                return found
            return {**found[0], "cwd": "/" + folder[2:-2].replace("-", "/")}, found[1]

        return read_header

    _wrap(monkeypatch, _journals, "read_header", make)


def _headers_held_to_a_mebibyte(monkeypatch: pytest.MonkeyPatch) -> None:
    """A header line is read at most 1 MiB far, whatever max_line_bytes allows."""

    def make(original: Any) -> Any:
        def read_header(path: str, max_line_bytes: int) -> Any:
            return original(path, min(max_line_bytes, (1 << 20) - 1))

        return read_header

    for module in (_journals, _index, _memory):
        _wrap(monkeypatch, module, "read_header", make)


def _raw_lines_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Index a line's whole JSON text instead of its extracted text (thinking, details, data, ...)."""

    def make(original: Any) -> Any:
        def extract(obj: Any, withheld: set[str]) -> Any:
            entry = original(obj, withheld)
            if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                return entry
            raw = _extract._compact_json(obj)
            if entry is None:
                return _extract.Extracted(str(obj.get("timestamp", "")), "custom", None, None, raw, None)
            return entry._replace(text=raw)

        return extract

    _wrap(monkeypatch, _prepare, "extract", make)
    _wrap(monkeypatch, _query, "extract", make)


def _sensitive_files_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_extract, "is_sensitive_path", lambda path: False)


def _long_lines_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    # The max_line_bytes setting is ignored: every line is parsed, however long.
    monkeypatch.setattr(
        _prepare,
        "read_chunk",
        lambda path, start, max_line_bytes, *rest: _journals.read_chunk(path, start, 2**62, *rest),
    )


# ---- Pi 1.x -------------------------------------------------------------------------------------


def _system_messages_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Pi 1.x system message is an entry whose text is its prompt sections."""

    def make(original: Any) -> Any:
        def entry_text(obj: dict[str, Any], withheld: set[str]) -> Any:
            message = obj.get("message") if obj.get("type") == "message" else None
            if isinstance(message, dict) and message.get("role") == "system":
                sections = message.get("sections") or {}
                return "custom", "\n".join(v for v in sections.values() if isinstance(v, str)), None, None
            return original(obj, withheld)

        return entry_text

    _wrap(monkeypatch, _extract, "_entry_text", make)


def _context_edits_not_entries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A context_edit's replacement is not indexed (the line is treated as an unknown type)."""

    def make(original: Any) -> Any:
        def entry_text(obj: dict[str, Any], withheld: set[str]) -> Any:
            return ("", "", None, None) if obj.get("type") == "context_edit" else original(obj, withheld)

        return entry_text

    _wrap(monkeypatch, _extract, "_entry_text", make)


def _pi1x_metadata_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """usage entries, nestedCalls, deferred handles and systemMessage are indexed as JSON text."""
    extra = ("nestedCalls", "deferred", "systemMessage", "note")

    def make(original: Any) -> Any:
        def entry_text(obj: dict[str, Any], withheld: set[str]) -> Any:
            kind, text, role, tool = original(obj, withheld)
            holder = obj.get("message") if obj.get("type") == "message" else obj
            parts = [
                _extract._compact_json(holder[key])
                for key in extra
                if isinstance(holder, dict) and key in holder
            ]
            if obj.get("type") == "usage":
                kind = "custom"
            return kind, "\n".join([text, *parts]).strip(), role, tool

        return entry_text

    _wrap(monkeypatch, _extract, "_entry_text", make)


def _namespace_in_call_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call reads `[tool call] <namespace>.<name> ...`."""

    def make(original: Any) -> Any:
        def blocks(content: Any, images: bool, calls: bool = False, **more: Any) -> Any:
            if isinstance(content, list):
                content = [
                    {**block, "name": f"{block['namespace']}.{block.get('name')}"}
                    if isinstance(block, dict) and "namespace" in block
                    else block
                    for block in content
                ]
            return original(content, images, calls, **more)

        return blocks

    _wrap(monkeypatch, _extract, "_blocks", make)


def _session_id_from_file_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session id is the file name after its last `_` (a UUIDv7 has none, a --session-id may)."""

    def make(original: Any) -> Any:
        def read_header(path: str, max_line_bytes: int) -> Any:
            found = original(path, max_line_bytes)
            if found is None:
                return None
            header, raw = found
            return {**header, "id": Path(path).stem.rpartition("_")[2]}, raw

        return read_header

    _wrap(monkeypatch, _journals, "read_header", make)
    _wrap(monkeypatch, _index, "read_header", make)


def _context_edits_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_store.Store, "context_edits", lambda self, file_id, target_ids: [])


def _first_context_edit_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    """Of several edits of a target, the first one on the branch counts."""

    def make(original: Any) -> Any:
        def context_edits(self: Any, file_id: int, target_ids: list[str]) -> Any:
            return original(self, file_id, target_ids)[::-1]  # the first written first

        return context_edits

    _wrap(monkeypatch, _store.Store, "context_edits", make)


def _context_edit_marks_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mark is taken from the index without looking at the line it comes from."""
    monkeypatch.setattr(_query, "_still_there", lambda path, edit: True)


class _Everywhere:
    def __contains__(self, _offset: object) -> bool:
        return True


def _context_edits_branch_blind(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every line of the journal counts as on the current branch."""
    monkeypatch.setattr(_store.Store, "current_branch", lambda self, file_id, since: _Everywhere())


# ---- indexing -----------------------------------------------------------------------------------


def _shrink_not_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _index.Index,
        "_rewritten",
        lambda original: (
            lambda self, journal, state, *rest: (
                False
                if journal.size < state.size or journal.size < state.cursor
                else original(self, journal, state, *rest)
            )
        ),
    )


def _same_size_rewrite_not_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    # The mtime tier is blind: the stored mtime always looks like the file's.
    _wrap(
        monkeypatch,
        _index.Index,
        "_rewritten",
        lambda original: (
            lambda self, journal, state, *rest: original(
                self, journal, dataclasses.replace(state, mtime_ns=journal.mtime_ns), *rest
            )
        ),
    )


def _header_change_not_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    # The header tier is blind: the stored header hash always looks like the file's.
    _wrap(
        monkeypatch,
        _index.Index,
        "_rewritten",
        lambda original: (
            lambda self, journal, state, header_hash, verify: original(
                self, journal, dataclasses.replace(state, header_hash=header_hash), header_hash, verify
            )
        ),
    )


def _partial_lines_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An unterminated last line is taken as a complete line."""

    def make(original: Any) -> Any:
        def read_chunk(path: str, start: int, *rest: Any) -> Any:
            chunk = original(path, start, *rest)
            with open(path, "rb") as journal:
                journal.seek(chunk.end)
                tail = journal.read()
            if tail and b"\n" not in tail:
                chunk.lines.append((chunk.end, tail))
                chunk.end += len(tail)
            return chunk

        return read_chunk

    _wrap(monkeypatch, _prepare, "read_chunk", make)


def _rewrites_not_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index.Index, "_rewritten", lambda self, journal, state, *rest: False)


def _rows_never_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_index.Index, "forget_path", lambda self, path: None)


def _journals_from_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index, not the disk, says which journals exist."""

    def make(original: Any) -> Any:
        def discover(self: Any, *args: Any, **named: Any) -> Any:
            found = original(self, *args, **named)
            known = {journal.path for journal in found.journals}
            for row in _store_checks.indexed_journals(self.index.store):
                if row.path not in known:
                    found.journals.append(_journals.Journal(**row._asdict()))
            return found

        return discover

    _wrap(monkeypatch, _memory.Memory, "discover", make)


def _idless_lines_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Version 1 lines (no id) get an id made up from their bytes."""

    def make(original: Any) -> Any:
        def parse_line(raw: bytes) -> Any:
            line = original(raw)
            if isinstance(line, dict) and "id" not in line and line.get("type") != "session":
                line["id"] = "v1-" + hashlib.sha256(raw).hexdigest()[:8]
            return line

        return parse_line

    _wrap(monkeypatch, _prepare, "parse_line", make)


# ---- words in every script ---------------------------------------------------------------------


def _cjk_characters_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run without spaces matches wherever all its characters occur, apart or not."""

    def make(original: Any) -> Any:
        def terms(query: str) -> Any:
            found = original(query)
            return [
                dataclasses.replace(term, match=" AND ".join(f'"{a}" *' for a in term.atoms), check=False)
                if term.check and term.whole is None
                else term
                for term in found
            ]

        return terms

    _wrap(monkeypatch, _query, "analysed_terms", make)


def _without_marks(text: str) -> str:
    return "".join(" " if unicodedata.category(char)[0] == "M" else char for char in text)


def _marks_split_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """Combining marks separate words, as unicode61 does by default (हिन्दी becomes ह न द)."""
    _wrap(monkeypatch, _prepare, "index_text", lambda original: lambda text: original(_without_marks(text)))
    _wrap(monkeypatch, _query, "analysed_terms", lambda original: lambda q: original(_without_marks(q)))


def _harakat_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Arabic harakat are kept as marks of their word, so البيانات and البَيَانَاتِ are two words."""
    monkeypatch.setattr(_terms, "_HARAKAT", re.compile("(?!)"))


def _newest_first_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Relevance picks the results, but recency orders them (what a recency-first design shows)."""

    def make(original: Any) -> Any:
        def search_once(*args: Any) -> Any:
            match, hits, more, stale = original(*args)
            return match, sorted(hits, key=lambda hit: hit.row.age, reverse=True), more, stale

        return search_once

    _wrap(monkeypatch, _query, "_search_once", make)


def _parts_in_any_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """An identifier term matches wherever its parts occur, in any order (no contiguity check)."""
    _wrap(
        monkeypatch,
        _query._Checks,
        "term",
        lambda original: lambda self, text, term: term.text.isascii() or original(self, text, term),
    )


def _checks_on_unredacted_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Contiguity and the query in sequence are checked on the text before redaction (0.1.0's
    reading of a check that shows nothing)."""
    monkeypatch.setattr(_query._Checks, "_pieces", lambda self, text, wanted, apart: [text])


def _han_ends_at_9fa5(monkeypatch: pytest.MonkeyPatch) -> None:
    """Han is the range many programs type, U+4E00-U+9FA5 (Unicode 1.1's), not U+4E00-U+9FFF."""
    ranges = _terms._NO_SPACE_RANGES.replace("\u4e00-\u9fff", "\u4e00-\u9fa5")
    assert ranges != _terms._NO_SPACE_RANGES
    monkeypatch.setattr(_terms, "_NO_SPACE_RUN", re.compile(f"[{ranges}]+"))
    monkeypatch.setattr(_terms, "_NO_SPACE_CHAR", re.compile(f"[{ranges}]"))


def _identifier_parts_unbounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every identifier is split into its parts, however many it has (hex ids still are not)."""

    def every_part(identifier: bytes) -> tuple[str, ...]:
        text = identifier.decode("ascii")
        return () if _terms._HEX.fullmatch(text) else tuple(_terms._parts(text))

    monkeypatch.setattr(_terms, "_INDEXED_PARTS", _memo.PureMemo(every_part))


def _ascii_runs_inside_words_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run of ASCII letters is indexed as an identifier's part, also one inside a word with
    letters outside ASCII: vet and na of naïveté become words of their own."""
    monkeypatch.setattr(_terms, "_BOUNDED", _memo.PureMemo(lambda shape: True))


def _no_inflected_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    """A term matches only itself: neither its inflected forms nor the words of its stem."""
    monkeypatch.setattr(_query, "stem_forms", lambda word: ())
    monkeypatch.setattr(_query, "stem_prefix", lambda word: None)


def _excerpt_from_the_text_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every excerpt shows its entry's first words, wherever the query's terms stand."""
    monkeypatch.setattr(_query, "_first", lambda text, terms: 0)


def _excerpt_without_ellipses(monkeypatch: pytest.MonkeyPatch) -> None:
    """An excerpt never says that it leaves text out: its ellipses are dropped."""
    _wrap(
        monkeypatch,
        _query,
        "_excerpts",
        lambda original: lambda texts, terms: [excerpt.strip("…") for excerpt in original(texts, terms)],
    )


def _excerpt_of_480_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    """Excerpts twice as long: 480 characters of a long text."""
    monkeypatch.setattr(_query, "_EXCERPT_CHARS", 480)


def _excerpt_cut_at_a_fixed_length(monkeypatch: pytest.MonkeyPatch) -> None:
    """An excerpt is cut at its 240th character wherever that falls: inside a word, or inside a
    redaction marker."""
    monkeypatch.setattr(_query, "_word_end", lambda flat: flat[: _query._EXCERPT_CHARS])


def _arguments_numbers_as_python_writes_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call's arguments keep the notation of the JSON library: 1e-6 for JavaScript's 0.000001."""
    monkeypatch.setattr(_extract, "_js_float", lambda found: found.group(0))


def _unnormalized_lines_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index holds NFC, but a line that is not in NFC is taken without its contiguity check
    (the check on the line as written would find nothing)."""
    _wrap(
        monkeypatch,
        _query._Checks,
        "term",
        lambda original: (
            lambda self, text, term: text != unicodedata.normalize("NFC", text) or original(self, text, term)
        ),
    )


def _json_constants_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """NaN, Infinity and -Infinity are read as numbers, as Python's json reads them."""
    monkeypatch.setattr(_journals, "_not_json", float)


def _entries_indexed_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts are indexed and queries cut in the form they come in: NFD and NFC differ."""
    monkeypatch.setattr(_terms, "nfc", lambda text: text)


def _long_runs_searched_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of a script without spaces is searched to its end, however long it is."""
    monkeypatch.setattr(_terms, "_MAX_RUN_UNITS", 1 << 30)


def _marks_after_a_run_in_its_grams(monkeypatch: pytest.MonkeyPatch) -> None:
    """A term's marks from outside the table go into its last pair, which the index never holds
    (U+0301 alone is dropped by FTS5's diacritics rule, so `都́` finds a bare `都`)."""
    monkeypatch.setattr(_terms, "_without_marks_after", lambda term: term)


def _context_texts_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Around entries and summaries come whole, however long."""
    monkeypatch.setattr(_query, "_CONTEXT_CHARS", 1 << 30)


# ---- redaction ----------------------------------------------------------------------------------


def _secrets_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_prepare, "redact_many", lambda texts: list(texts))


def _redaction_windows_without_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    # A long text is redacted in 1 MiB slices that do not overlap: a secret across an edge escapes.
    whole = _redact._spans
    size = 1 << 20

    def sliced(text: str) -> list[tuple[int, int, str]]:
        return [
            (offset + start, offset + end, name)
            for offset in range(0, len(text), size)
            for start, end, name in whole(text[offset : offset + size])
        ]

    monkeypatch.setattr(_redact, "_spans", sliced)


def _blind_after_json_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    # The letter of "\\n" before a token reads as part of it, so the token never starts.
    monkeypatch.setattr(_redact_rules, "_escape_ends_at", lambda text, position: False)


def _user_patterns_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    # The settings are read, but neither the user's patterns nor the allowlist reach the redactor.
    monkeypatch.setattr(_redact, "_apply_policy", lambda text, found: found)


def _outputs_not_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tool, "redact_tree", lambda value: value)


def _excerpts_miss_open_key_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # An excerpt's neighbourhood is redacted alone, never widened back to a key block's BEGIN line.
    monkeypatch.setattr(_redact, "_OPENINGS", tuple(o for o in _redact._OPENINGS if "BEGIN" not in o))


def _excerpts_from_a_fixed_neighbourhood(monkeypatch: pytest.MonkeyPatch) -> None:
    # An excerpt is redacted with 512 characters around it and nothing more: a long secret that
    # begins before it shows its tail, a Secret's values far below data: show as written.
    monkeypatch.setattr(
        _redact, "_widen", lambda text, start, end: (max(0, start - 512), min(len(text), end + 512))
    )


def _errors_not_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_errors, "redact", lambda text: text)
    monkeypatch.setattr(_echo, "redact", lambda text: text)  # the echo of a value is not redacted either


def _huge_numbers_clamped(monkeypatch: pytest.MonkeyPatch) -> None:
    # a number past what a 64-bit integer holds is taken as the nearest bound instead of refused
    def clamped(original: Callable[[str, Any], int]) -> Callable[[str, Any], int]:
        def integer(name: str, value: Any) -> int:
            if isinstance(value, int | float) and not isinstance(value, bool) and abs(value) >= 2**63:
                bounds = _tool._INTEGERS[name]
                value = bounds.low if value < 0 or bounds.high is None else bounds.high
            return original(name, value)

        return integer

    _wrap(monkeypatch, _tool, "_integer", clamped)


def _context_edit_of_any_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    # Any context_edit line marks its target, whatever its targetId and replacement hold.
    def make(original: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def edit(obj: Any) -> Any:
            found = original(obj)
            if found is None and isinstance(obj, dict) and obj.get("type") == "context_edit":
                return _extract.ContextEdit(str(obj.get("targetId")), obj.get("replacement") is not None)
            return found

        return edit

    _wrap(monkeypatch, _prepare, "context_edit", make)


def _malformed_settings_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    # A redaction setting that does not parse is dropped without a word: the instance opens without it.
    _instead_on(monkeypatch, _serve, "_redaction", _errors.AdapterError, _redact.Policy)


def _booleans_as_integers(monkeypatch: pytest.MonkeyPatch) -> None:
    # Python's bool is an int: true is taken as 1 and false as 0 instead of refused
    def lenient(original: Callable[[str, Any], int]) -> Callable[[str, Any], int]:
        def integer(name: str, value: Any) -> int:
            return original(name, int(value) if isinstance(value, bool) else value)

        return integer

    _wrap(monkeypatch, _tool, "_integer", lenient)


def _echo_uncapped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_tool, "echo", lambda value: json.dumps(value, default=str))


def _echo_cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    # a value is shown as its first 12 characters (quotes included), however short the value is
    _wrap(monkeypatch, _tool, "echo", lambda original: lambda value: original(value)[:12])


def _error_names_unquoted(monkeypatch: pytest.MonkeyPatch) -> None:
    # a tool error's message writes parameter names (and every other quoted text) without quotes
    def make(original: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        def answer(error: Exception, *args: Any) -> dict[str, Any]:
            result = original(error, *args)
            if isinstance(error, _errors.ToolError):
                result["error"]["message"] = result["error"]["message"].replace('"', "")
            return result

        return answer

    _wrap(monkeypatch, _tool, "protocol_answer", make)


# ---- summaries ----------------------------------------------------------------------------------


def _summaries_of_every_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _store.Store,
        "entries",
        lambda original: lambda self, scope, filters: original(self, scope, filters._replace(kinds=None)),
    )


# ---- hooks --------------------------------------------------------------------------------------


def _manifest_with(change: Callable[[dict[str, Any]], None]) -> Patch:
    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        def make(original: Any) -> Any:
            def manifest() -> dict[str, Any]:
                registered: dict[str, Any] = original()
                change(registered)
                return registered

            return manifest

        _wrap(monkeypatch, _serve, "manifest", make)

    return patch


def _registers(event: str) -> Patch:
    return _manifest_with(lambda registered: registered["events"].append(event))


def _tool_field(name: str) -> Patch:
    return _manifest_with(
        lambda registered: registered["tools"][0].update({name: "Use memory_context often."})
    )


def _parameter_bound_widened(registered: dict[str, Any]) -> None:
    tool = registered["tools"][0]
    parameters = copy.deepcopy(tool["parameters"])  # the reference's own dict must stay as it is
    parameters["properties"]["limit"] = {"type": "integer", "minimum": 1}
    registered["tools"][0] = {**tool, "parameters": parameters}


def _details_with(owner: Any, name: str, status: str, extra: dict[str, Any]) -> Patch:
    """`owner.name`'s details carry `extra` whenever their status is `status`."""

    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        def make(original: Any) -> Any:
            def answer(*args: Any) -> Any:
                details: dict[str, Any] = original(*args)
                return {**details, **extra} if details.get("status") == status else details

            return answer

        _wrap(monkeypatch, owner, name, make)

    return patch


def _around_without_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def around(*args: Any) -> Any:
            details: dict[str, Any] = original(*args)
            return {**details, "candidates": []} if "candidates" in details else details

        return around

    _wrap(monkeypatch, _tool, "around", make)


def _unparsable_times_newest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A timestamp that does not parse is indexed as the newest moment there is."""

    def make(original: Any) -> Any:
        def entry_ms(timestamp: str) -> int:
            return _time.MAX_MS if _time.epoch_ms(timestamp) is None else int(original(timestamp))

        return entry_ms

    _wrap(monkeypatch, _prepare, "entry_ms", make)


def _single_pager_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.1.0's reading: only a line that is one pager command of exactly one path shows a file."""

    def paged_paths(command: str) -> list[str]:
        try:
            words = shlex.split(command)
        except ValueError:
            return []
        paths = [word for word in words[1:] if not word.startswith("-")]
        return paths if words and words[0] in ("cat", "head", "tail", "less") and len(paths) == 1 else []

    monkeypatch.setattr(_extract, "_paged_paths", paged_paths)


def _empty_query_matches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def search(view: Any, query: str | None, **filters: Any) -> Any:
            blank = query is not None and not query.strip()
            return original(view, "·" if blank else query, **filters)  # no letter: match none

        return search

    _wrap(monkeypatch, _tool, "search", make)


def _ignored_parameters_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parameters the action does not use are dropped before the arguments are checked."""
    used = {
        "search": {"query", "kind", "since", "until", "limit"},
        "read": {"entryId", "source", "offset"},
    }

    def make(original: Any) -> Any:
        def validate(arguments: Any, tz: str) -> Any:
            if isinstance(arguments, dict) and arguments.get("action") in used:
                keep = used[arguments["action"]] | {"action", "scope", "sessionId"}
                arguments = {key: value for key, value in arguments.items() if key in keep}
            return original(arguments, tz)

        return validate

    _wrap(monkeypatch, _tool, "validate", make)


def _aws_context_too_short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_redact_rules, "_AWS_CONTEXT_CHARS", 100)


def _index_unavailable_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def __init__(self: Any, reason: str, detail: str) -> None:
            original(self, f"{reason} ({detail})", detail)  # the OS error, with its path

        return __init__

    _wrap(monkeypatch, _errors.IndexUnavailable, "__init__", make)


# ---- commands -----------------------------------------------------------------------------------


def _gc_current_journal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_maintenance, "_current_path", lambda memory: None)


def _gc_ignores_quiet_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_maintenance, "_QUIET", timedelta(0))


def _gc_confirm_without_preview(monkeypatch: pytest.MonkeyPatch) -> None:
    # Confirm acts on a fresh preview rather than the one the user saw.
    _wrap(
        monkeypatch,
        _maintenance,
        "gc_confirm",
        lambda original: lambda memory: (_maintenance.gc_preview(memory), original(memory))[1],
    )


def _gc_confirm_forgets_current(monkeypatch: pytest.MonkeyPatch) -> None:
    # Confirm checks only size and mtime; which journal is current now is not its concern.
    def make(original: Any) -> Any:
        def gc_confirm(memory: Any) -> Any:
            current, memory.config.session_file = memory.config.session_file, None
            try:
                return original(memory)
            finally:
                memory.config.session_file = current

        return gc_confirm

    _wrap(monkeypatch, _maintenance, "gc_confirm", make)


def _index_details_as_status(monkeypatch: pytest.MonkeyPatch) -> None:
    """index and rebuild answer with status's details, as 0.1.0's table said, not their own."""

    def make(original: Any) -> Any:
        def index_all(memory: Any, *args: Any, **kwargs: Any) -> Any:
            original(memory, *args, **kwargs)
            return _maintenance.run_command(memory, "status")["details"]

        return index_all

    _wrap(monkeypatch, _maintenance, "index_all", make)


def _no_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every process backfills whenever it likes; no lease is ever written or shown."""
    monkeypatch.setattr(_maintenance.Lease, "take", lambda self: True)
    monkeypatch.setattr(_maintenance.Lease, "release", lambda self: None)
    monkeypatch.setattr(_maintenance, "current_lease", lambda index: None)


def _lease_in_process_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lease is kept in this process's memory, shared by its instances but by no other process."""
    held: dict[str, str | None] = {"value": None}

    def write(self: Any, event: str, value: str | None, expires: str | None) -> None:
        held["value"] = value

    def current(index: Any) -> dict[str, str] | None:
        value = held["value"]
        if value is None:
            return None
        owner, _, expires = value.rpartition("@")
        return {"owner": owner, "expiresAt": expires}

    monkeypatch.setattr(_maintenance.Lease, "_write", write)
    monkeypatch.setattr(_maintenance, "current_lease", current)


def _index_file_per(owner: Callable[[Any], object]) -> Patch:
    """Each owner keeps its own index file in the state dir, named by `owner(memory)`: a process
    (its id) or an instance (its Memory object)."""

    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        def index_path(self: Any) -> str:
            return self.config.index_path or os.path.join(
                self.config.state_dir, f"index-{owner(self)}.sqlite"
            )

        monkeypatch.setattr(_memory.Memory, "index_path", property(index_path))

    return patch


def _forget_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    def forget(memory: Any, target: str) -> dict[str, Any]:  # answers as if done, does nothing
        sessions = {journal.session_id for journal in memory.discover().journals}
        return {"forgotten": {"kind": "session" if target in sessions else "entry", "id": target}}

    monkeypatch.setattr(_maintenance, "forget", forget)


def _state_dir_must_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index is made only in a state dir that exists already: no folder is created."""

    def make(original: Any) -> Any:
        def connect(path: str) -> Any:
            if not os.path.isdir(os.path.dirname(path)):
                raise _store.unavailable(
                    FileNotFoundError(2, "No such file or directory", os.path.dirname(path))
                )
            return original(path)

        return connect

    _wrap(monkeypatch, _store, "_connect", make)


class _Unwiped:
    """A connection that runs what hides (the rows' updates, the terms' deletes) and skips what wipes:
    the secure delete, the FTS5 merge and the checkpoint of the write-ahead log."""

    _WIPING = ("secure_delete", "optimize", "wal_checkpoint")
    filename = ""  # the store's own checkpoint skips a connection without a file

    def __init__(self, db: Any) -> None:
        self.db = db

    def execute(self, sql: str, params: Any = ()) -> Any:
        return iter(()) if any(word in sql for word in self._WIPING) else self.db.execute(sql, params)


def _forget_leaves_terms_on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget hides the entries, but their terms stay in free pages and in the write-ahead log."""

    def make(original: Any) -> Any:
        def hide_entries(store: Any, kind: str, key: str) -> None:
            db, store._db = store._db, _Unwiped(store._db)
            try:
                original(store, kind, key)
            finally:
                store._db = db

        return hide_entries

    _wrap(monkeypatch, _store.Store, "hide_entries", make)


def _forget_lost_on_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def rebuild(memory: Any) -> Any:  # as if the forget list lived in the index
            Path(memory.config.state_dir, "forget.json").unlink(missing_ok=True)
            memory.forget = _forget.ForgetList(memory.config.state_dir)
            return original(memory)

        return rebuild

    _wrap(monkeypatch, _maintenance, "rebuild", make)


def _forget_applied_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # forget hides what is indexed when it runs; later passes index everything again.
    _wrap(
        monkeypatch,
        _index.Index,
        "sync_many",
        lambda original: (
            lambda self, journals, *args, forgotten=None, **kwargs: original(self, journals, *args, **kwargs)
        ),
    )


class _WritesTheJournal(ProtocolServer):
    """Appends a note to the current session's journal at every message_end."""

    def _event(self, instance: Any, name: Any, data: dict[str, Any]) -> None:
        super()._event(instance, name, data)
        session_file = instance.memory.config.session_file
        if name == "message_end" and session_file and os.path.exists(session_file):
            with open(session_file, "a", encoding="utf-8") as journal:
                journal.write(
                    '{"type":"custom_message","id":"memo0001","parentId":null,'
                    '"timestamp":"2026-11-29T12:00:00.000Z","customType":"memory","content":"noted",'
                    '"display":false}\n'
                )


# ---- spec 0.2.0 decisions ---------------------------------------------------------------------


def _other_journals_never_caught_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call indexes the current journal only; what another process appended to another
    journal waits for the next session_start, however many idles pass."""
    monkeypatch.setattr(_memory.Memory, "catch_up", lambda self, journals: None)


def _never_rechecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`checkedAt` is honest, but no tool call ever compares every journal again: it stays the time
    of the last backfill, however old."""
    monkeypatch.setattr(_memory.Memory, "recheck_due", lambda self, checked, now: False)


def _complete_and_fresh_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """`checkedAt` is always the answer's own time, while no call compares the journals again."""
    _never_rechecked(monkeypatch)

    def make(original: Any) -> Any:
        def indexing(memory: Any, journals: Any, checked: Any = None) -> Any:
            return {**original(memory, journals, checked), "checkedAt": _time.iso_utc(memory.now())}

        return indexing

    _wrap(monkeypatch, _memory.Memory, "indexing", make)


def _string_content_for_every_role(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def text(message: dict[str, Any], kind: str, withheld: bool) -> str:
            content = message.get("content")
            if kind in ("assistant", "tool_result") and isinstance(content, str):
                return content  # guessed at: Pi never writes it
            result: str = original(message, kind, withheld)
            return result

        return text

    _wrap(monkeypatch, _extract, "_message_text", make)


def _pages_redacted_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages are cut from the raw text and each page redacted on its own (by the output pass)."""

    def make(original: Any) -> Any:
        def read(*args: Any) -> Any:
            with pytest.MonkeyPatch.context() as inner:
                inner.setattr(_query, "_redact_cached", lambda view, text: text)
                return original(*args)

        return read

    _wrap(monkeypatch, _tool, "read", make)


def _current_journal_only_inside_the_roots(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery is the session roots' files only: a current journal elsewhere is indexed but
    counted nowhere and in no scope."""
    monkeypatch.setattr(_memory.Memory, "discover", lambda self, full=False: self.catalog.refresh(full))


def _forget_in_project_scope(monkeypatch: pytest.MonkeyPatch) -> None:
    """`/memory forget <entryId>` looks only at the current project's journals."""

    def make(original: Any) -> Any:
        def forget(memory: Any, target: str) -> Any:
            discover = memory.discover

            def in_project(full: bool = False) -> Any:
                found = discover(full)
                return dataclasses.replace(found, journals=memory.journals(found, "project"))

            memory.discover = in_project
            try:
                return original(memory, target)
            finally:
                del memory.discover

        return forget

    _wrap(monkeypatch, _maintenance, "forget", make)


def _skipped_counts_stray_files(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every discovered `*.jsonl` that is no journal counts as a skipped file: no header, empty."""
    monkeypatch.setattr(_journals._Look, "skipped", property(lambda look: look.journal is None))


_KEY_BEFORE = re.compile(r"[\w.\-]+[ \t]*[=:][ \t]*[\"']?$")


def _marker_takes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """A marker replaces the key name and its `=` (or `scheme://user:`) with the value."""

    def make(original: Any) -> Any:
        def spans(text: str) -> list[tuple[int, int, str]]:
            widened = []
            for start, end, name in original(text):
                before = _KEY_BEFORE.search(text, max(0, start - 80), start)
                widened.append((before.start() if before else start, end, name))
            return widened

        return spans

    _wrap(monkeypatch, _redact, "_spans", make)


def _prefix_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """A token prefix counts wherever it occurs, inside a longer word too."""
    monkeypatch.setattr(_redact_rules, "starts_token", lambda text, start: True)


def _rule_finder(monkeypatch: pytest.MonkeyPatch, rule_id: str, make: Callable[[Any], Any]) -> None:
    """Replace the finder of one rule of the table (windowed and whole-text rules alike), on top of
    the finders replaced already (so several rules can be broken at once)."""
    rules = _redact_rules.RULES
    monkeypatch.setattr(
        _redact,
        "_FINDERS",
        tuple(
            make(find) if rule.id == rule_id else find
            for rule, find in zip(rules, _redact._FINDERS, strict=True)
        ),
    )
    monkeypatch.setattr(
        _redact,
        "_WHOLE",
        tuple(
            (priority, dataclasses.replace(rule, find=make(rule.find)) if rule.id == rule_id else rule)
            for priority, rule in _redact._WHOLE
        ),
    )


def _open_key_blocks_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A private key block counts only with its END line: a key cut short by `head` stays."""

    def make(original: Any) -> Any:
        def find(text: str, position: int) -> list[tuple[int, int]]:
            return [(s, e) for s, e in original(text, position) if text[s:e].rstrip().endswith("-----")]

        return find

    _rule_finder(monkeypatch, "private-key", make)


def _identifier_bodies_taken_for_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Words joined by `_`, `-` or `.` read as generated text: a name after a token's prefix
    (`xoxb-event-handler-registry.ts`) is masked as a token, and so is a secret's name inside `$(…)`."""
    monkeypatch.setattr(_redact_rules, "_word_like", lambda value: False)


def _secret_references_taken_for_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """A path or URI that only says where a secret is kept (`op://Private/GitHub/credential`) is
    masked as the secret under its key name."""
    monkeypatch.setattr(_redact_rules, "_locator", lambda value: False)


def _curl_user_on_the_curl_line_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """curl's `-u user:pass` is caught only on the line that says `curl`, not after lines that a
    trailing `\\` continues."""

    def make(original: Any) -> Any:
        def find(text: str, position: int) -> list[tuple[int, int]]:
            return [(s, e) for s, e in original(text, position) if "\n" not in text[position:s]]

        return find

    _rule_finder(monkeypatch, "curl-auth-user", make)


def _redactor_without(*rule_ids: str) -> Patch:
    """A redactor with every rule but these: their secrets go through."""

    def patch(monkeypatch: pytest.MonkeyPatch) -> None:
        def nothing(text: str, position: int) -> tuple[tuple[int, int], ...]:
            return ()

        for rule_id in rule_ids:
            _rule_finder(monkeypatch, rule_id, lambda original: nothing)

    return patch


_HEX_40 = re.compile(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")


def _git_shas_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every 40-character hexadecimal string is taken for a secret (git SHAs too)."""

    def make(original: Any) -> Any:
        def apply(text: str, found: list[Any]) -> list[Any]:
            kept: list[Any] = original(text, found)
            return [*kept, *((m.start(), m.end(), 0) for m in _HEX_40.finditer(text))]

        return apply

    _wrap(monkeypatch, _redact, "_apply_policy", make)


_ID_SHAPE = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9a-fA-F]+"
)


def _id_shapes_never_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """0.1.0's JM-REDACT-004 read literally: a UUID, a hexadecimal string or digits is never a
    secret, not even as the value a vendor's key name is given (`HEROKU_API_KEY=<uuid>`)."""

    def make(original: Any) -> Any:
        def apply(text: str, found: list[Any]) -> list[Any]:
            kept: list[Any] = original(text, found)
            return [span for span in kept if not _ID_SHAPE.fullmatch(text[span[0] : span[1]])]

        return apply

    _wrap(monkeypatch, _redact, "_apply_policy", make)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _uuids_always_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """The other way round: every UUID is taken for a secret, a request id outside any credential's
    value too."""

    def make(original: Any) -> Any:
        def apply(text: str, found: list[Any]) -> list[Any]:
            kept: list[Any] = original(text, found)
            return [*kept, *((m.start(), m.end(), 0) for m in _UUID.finditer(text))]

        return apply

    _wrap(monkeypatch, _redact, "_apply_policy", make)


def _allowlist_spares_its_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """An allowlisted value spares every secret its rule finds, not only itself."""

    def make(original: Any) -> Any:
        def apply(text: str, found: list[Any]) -> list[Any]:
            kept: list[Any] = original(text, found)  # `found` now holds the user's patterns' spans too
            spared = {priority for start, end, priority in set(found) - set(kept)}
            return [span for span in kept if span[2] not in spared]

        return apply

    _wrap(monkeypatch, _redact, "_apply_policy", make)


def _lease_taken_at_idle(monkeypatch: pytest.MonkeyPatch) -> None:
    """With background_on_idle, session_start leaves the lease free: it is taken when idle backfills."""

    def defer(self: Any, first: bool) -> None:
        self.due = first if self.due is None else self.due or first

    monkeypatch.setattr(_serve._Instance, "_defer", defer)


def _kind_list_first_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def kinds(value: Any) -> Any:
            found = original(value)
            return found[:1] if found else found

        return kinds

    _wrap(monkeypatch, _tool, "_kinds", make)


def _kind_filtered_after_the_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    """All-or-any is decided over entries of every kind, and the kind filter drops rows afterwards."""

    def make(original: Any) -> Any:
        def search_once(view: Any, query: Any, filters: Any, limit: int) -> Any:
            if filters.kinds is None:
                return original(view, query, filters, limit)
            match, hits, more, stale = original(view, query, filters._replace(kinds=None), 1000)
            kept = [hit for hit in hits if hit.row.kind in filters.kinds]
            return match, kept[:limit], more or len(kept) > limit, stale

        return search_once

    _wrap(monkeypatch, _query, "_search_once", make)


def _session_id_prefix_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sessionId matches every session whose id starts with it."""

    def make(original: Any) -> Any:
        def journals(self: Any, found: Any, scope: str, session_id: str | None = None) -> Any:
            chosen = original(self, found, scope, None)
            return [j for j in chosen if session_id is None or j.session_id.startswith(session_id)]

        return journals

    _wrap(monkeypatch, _memory.Memory, "journals", make)


def _lease_taken_for_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A background_on_idle session_start takes the lease whether or not a journal waits."""

    def claim(memory: Any, owner: str) -> Any:
        index = memory.open_index()
        try:
            lease = _maintenance.Lease(memory, index, owner)
            return lease if lease.take() else None
        finally:
            index.close()

    monkeypatch.setattr(_serve, "claim_lease", claim)


def _verify_reindexes_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """A verify pass takes every journal's prefix for changed, and reindexes each in full."""
    monkeypatch.setattr(_index, "prefix_digest", lambda path, end, max_line_bytes: "changed")


def _markers_one_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule's span ends one character early: a marker leaves a secret's last character."""

    def make(original: Any) -> Any:
        def spans(text: str) -> list[Any]:
            return [(start, end - 1, priority) for start, end, priority in original(text)]

        return spans

    _wrap(monkeypatch, _redact, "_rule_spans", make)


def _header_changes_unseen(monkeypatch: pytest.MonkeyPatch) -> None:
    """A header rewritten in place with another cwd leaves the remembered scopes as they were."""
    monkeypatch.setattr(_journals, "_identity", lambda journal: None)


# ---- spec 0.3.0: the suite's blind spots --------------------------------------------------------


class _UnknownInstancesIgnored(ProtocolServer):
    """`event`, `idle` and `clock` for an instance never opened answer `{}` instead of an error."""

    def _dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        if request.get("cmd") in ("event", "idle", "clock") and request.get("instance") not in self.instances:
            return {}
        return super()._dispatch(request)


def _assignment_value_through_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bare assignment value runs on through JSON escapes up to real white space: in escaped
    arguments `DB_PASSWORD=v\\nAPI_HOST=h` takes the next line into the secret."""
    through = r"((?:[^\s\"',;(){}\[\]<>])+)"
    pattern = _redact_rules._ASSIGNMENT.pattern.replace(_redact_rules._BARE_VALUE, through)
    assert pattern != _redact_rules._ASSIGNMENT.pattern
    monkeypatch.setattr(_redact_rules, "_ASSIGNMENT", re.compile(pattern))


def _sensitive_names_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sensitive names compare as written: `.ENV`, `Server.PEM` and `.SSH` hold no credentials.
    (Every name of the list is lower-case, so an upper-case letter never matches one.)"""
    original = _extract.is_sensitive_path
    monkeypatch.setattr(_extract, "is_sensitive_path", lambda path: original(re.sub("[A-Z]", "?", path)))


def _escape_letters_join_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool call's JSON escapes are left as written in its search terms: `\\npelican` is the
    word `npelican`."""
    for module in (_extract, _prepare):
        monkeypatch.setattr(module, "read_call_escapes", lambda text: text)


def _discovery_at_any_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `.jsonl` below the roots is a candidate, however deep (and directly in sessions/)."""

    def candidates(agent_dir: str, session_dirs: list[str]) -> Iterator[str]:
        for root in (Path(agent_dir, "sessions"), *map(Path, session_dirs)):
            yield from sorted(str(path) for path in root.rglob("*.jsonl"))

    monkeypatch.setattr(_journals, "_candidates", candidates)


def _temp_dir_by_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cwd counts as under a temp dir when it starts with its letters: `/tmpfoo/app` is junk."""
    monkeypatch.setattr(_maintenance, "_under", lambda path, root: path.startswith(root.rstrip("/")))


def _summaries_by_day(monkeypatch: pytest.MonkeyPatch) -> None:
    """Newest first by UTC day only; within a day, by journal path (the order journals are read)."""
    day = 86_400_000
    monkeypatch.setattr(
        _query, "_newest_first", lambda rows: sorted(rows, key=lambda r: (r.ms // day, r.path), reverse=True)
    )


def _around_counts_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """`before` and `after` count every line walked: a model_change uses up one place of the window.
    (Each step of a walk reads one node or one set of children; past `count` steps there are none.)"""

    def make(original: Any) -> Any:
        def walk(view: Any, hit: Any, count: int, upward: bool) -> Any:
            store, steps = view.index.store, [0]

            def budgeted(read: Any, nothing: Any) -> Any:
                def step(*args: Any) -> Any:
                    steps[0] += 1
                    return read(*args) if steps[0] <= count else nothing

                return step

            store.node, store.children = budgeted(store.node, None), budgeted(store.children, [])
            try:
                return original(view, hit, count, upward)
            finally:
                del store.node, store.children

        return walk

    _wrap(monkeypatch, _query, "_walk", make)


def _skipped_lines_of_the_last_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A journal's skipped-line count is what its latest pass skipped: earlier passes' are lost."""

    def make(original: Any) -> Any:
        def file_state(self: Any, path: str) -> Any:
            state = original(self, path)
            return None if state is None else dataclasses.replace(state, skipped_lines=0)

        return file_state

    _wrap(monkeypatch, _store.Store, "file_state", make)


def _edit_kind_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The id check of a context_edit's mark compares its id and target, not what it does: a line
    rewritten from an omission into a replacement keeps the omitted mark."""

    def make(original: Any) -> Any:
        def still_there(path: str, edit: Any) -> bool:
            flipped = edit._replace(replaced=not edit.replaced)
            return bool(original(path, edit) or original(path, flipped))

        return still_there

    _wrap(monkeypatch, _query, "_still_there", make)


# ---- search as it is used (issue #29) ------------------------------------------------------------


def _hard_all_terms_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    """When some entry holds every term, only such entries are returned (0.2.0's JM-SEARCH-002)."""

    def make(original: Any) -> Any:
        def take(self: Any, hits: Any, match: str) -> bool:
            if match == "any" and self.shown:
                return False
            return bool(original(self, hits, match))

        return take

    _wrap(monkeypatch, _query._Page, "take", make)


def _no_result_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """The page is filled, but every result of an all-terms page says match all."""

    def make(original: Any) -> Any:
        def search(*args: Any, **kwargs: Any) -> Any:
            found = original(*args, **kwargs)
            if found["match"] == "all":
                for result in found["results"]:
                    result["match"] = "all"
            return found

        return search

    _wrap(monkeypatch, _tool, "search", make)


# -- the model's context (issue #29) -----------------------------------------------------------------


def _context_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_query, "in_context", lambda *args: frozenset())


def _last_line(view: Any) -> str | None:
    known = view.index.known().get(view.current or "")
    lines = view.index.store.lines(known[0]) if known is not None else []
    return lines[-1].entry_id if lines else None


def _context_from_last_line(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _tool,
        "context_of",
        lambda original: lambda view, leaf: original(view, leaf and _last_line(view)),
    )


def _no_leaf_means_last_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        return lambda view, leaf: original(view, _last_line(view) if leaf is None else leaf)

    _wrap(monkeypatch, _tool, "context_of", make)


def _first_kept_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_context, "_kept", lambda path: path)


def _unkept_keeps_the_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def kept(path: list[Any]) -> list[Any]:
            found = original(path)
            compaction = found[0] if found and found[0].kind == "compaction" else None
            after = path[path.index(compaction) + 1 :] if compaction is not None else None
            return path if after is not None and found[1:] == after else found  # none kept before C

        return kept

    _wrap(monkeypatch, _context, "_kept", make)


def _every_line_on_the_path_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_context, "_sent", lambda row: row.kind is not None)


class _NoEdits:
    """A store whose journals have no context_edit lines, for the context only."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def lines(self, file_id: int) -> Any:
        return self.store.lines(file_id)

    def context_edits(self, file_id: int, target_ids: list[str]) -> list[Any]:
        return []


def _edited_targets_kept_in(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(
        monkeypatch,
        _context,
        "_compute",
        lambda original: lambda store, *rest: original(_NoEdits(store), *rest),
    )


def _context_set_per_journal(monkeypatch: pytest.MonkeyPatch) -> None:
    stored: dict[int, Any] = {}

    def make(original: Any) -> Any:
        def in_context(store: Any, file_id: int | None, leaf_id: str | None, generation: object) -> Any:
            if file_id is None or leaf_id is None:
                return frozenset()
            if file_id not in stored:  # as if the set were written to the index with the journal
                stored[file_id] = original(store, file_id, leaf_id, generation)
            return stored[file_id]

        return in_context

    _wrap(monkeypatch, _query, "in_context", make)


def _copies_by_id_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # the copy's own timestamp, so only the id is compared
    monkeypatch.setattr(_store, "_PAIRS", _store._PAIRS.replace("value ->> 1", "e.ts"))


def _in_context_count_unfiltered(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        return lambda view, query, filters: original(view, query, _store.Filters(hidden=filters.hidden))

    _wrap(monkeypatch, _query, "_in_context_matches", make)


def _in_context_count_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def count(view: Any, query: str | None, filters: Any) -> Any:
            if query is None or not filters.hidden:
                return original(view, query, filters)
            rowids = view.index.store.entries_among(view.scope, filters, filters.hidden)
            matches = " OR ".join(f"({term.match})" for term in _terms.query_terms(query))
            return len(view.index.store.holding(matches, rowids)) if matches and rowids else 0

        return count

    _wrap(monkeypatch, _query, "_in_context_matches", make)


def _include_context_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        return lambda arguments, tz: dataclasses.replace(original(arguments, tz), include_context=False)

    _wrap(monkeypatch, _tool, "validate", make)


def _no_hint_when_all_in_context(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def search(*args: Any, **kwargs: Any) -> Any:
            found = original(*args, **kwargs)
            return {**found, "hint": None} if found["inContext"] and not found["results"] else found

        return search

    _wrap(monkeypatch, _tool, "search", make)


def _restatements_not_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every asking of the question takes a place of its own on the page."""
    monkeypatch.setattr(_query._Page, "_restates", lambda self, text: False)


def _question_asked_again_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """The folded askings of the question keep the first place their first asking ranks at."""
    monkeypatch.setattr(_query._Page, "ordered", lambda self: self.shown)


def _memory_answers_searched(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memory's own tool results and calls are indexed and listed like any other entry."""
    monkeypatch.setattr(_extract, "_search_text", lambda obj, kind, tool, text: None)
    monkeypatch.setattr(_query, "_own_answer", lambda entry: False)


def _summaries_leave_out_context(monkeypatch: pytest.MonkeyPatch) -> None:
    def make(original: Any) -> Any:
        def answer(memory: Any, args: Any, leaf_id: str | None = None) -> Any:
            details = original(memory, args, leaf_id)
            if args.action != "summaries" or leaf_id is None:
                return details
            seen = {
                entry
                for entry, _ in _query.context_of(memory.before_answer(args.scope, args.session_id), leaf_id)
            }
            return {
                **details,
                "results": [item for item in details["results"] if item["entryId"] not in seen],
            }

        return answer

    _wrap(monkeypatch, _tool, "_answer", make)


def _ids(*names: str) -> frozenset[str]:
    return frozenset(names)


FORBIDDEN_EVENTS = (
    "context",
    "before_agent_start",
    "before_provider_request",
    "agent_end",
    "turn_end",
    "input",
    "tool_call",
    "tool_result",
)


def _pages_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pages, "page_damage", lambda handle, size: None)


def _damage_not_mended(monkeypatch: pytest.MonkeyPatch) -> None:
    """A damage found is neither rebuilt nor reported: the store answers from an empty index in
    memory (each connection its own, so what a backfill indexes is lost to the tool calls)."""
    _instead_on(monkeypatch, _store, "_connect", _pages.DamagedIndex, _store_checks.empty_index_in_memory)


def _damage_left_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A damage found is reported and never mended: the damaged files stay, so every open finds
    them again and every answer is index_unavailable, though the state dir can be written."""
    monkeypatch.setattr(_store, "_remove_damaged", lambda path, found: None)


def _stale_after_damage(monkeypatch: pytest.MonkeyPatch) -> None:
    """A damage found restores the copy of the index the adapter took when the state dir was first
    closed, and takes every journal as indexed as it is now (its cursor at its end): answers stay
    as they were before whatever the journals gained since that copy."""
    copies: dict[str, bytes] = {}

    def close(original: Callable[[_store.Store], None]) -> Callable[[_store.Store], None]:
        def closed(store: _store.Store) -> None:
            copies.setdefault(store.path, _store_checks.index_image(store))
            original(store)

        return closed

    def connect(original: Callable[[str], Any]) -> Callable[[str], Any]:
        def connected(path: str) -> Any:
            try:
                return original(path)
            except _pages.DamagedIndex:
                if path not in copies:
                    raise
            return _store_checks.index_copy_in_memory(copies[path])

        return connected

    _wrap(monkeypatch, _store.Store, "close", close)
    _wrap(monkeypatch, _store, "_connect", connect)


BROKEN: tuple[Broken, ...] = (
    Broken(
        "read-without-id-check",
        "read returns whatever its stored offset lands on, never unavailable",
        ("read", "summaries"),
        _ids("JM-READ-008"),
        _trust_the_index,
    ),
    Broken(
        "source-path-followed",
        "read follows a file path given as source, in scope or not",
        ("scope",),
        _ids("JM-READ-014"),
        _source_path_followed,
    ),
    Broken(
        "read-ignores-scope",
        "read by id looks in every journal, not only the scope's",
        ("scope", "read"),
        _ids("JM-SCOPE-009"),
        _read_ignoring_scope,
    ),
    Broken(
        "source-outside-scope",
        "a source handle resolves in any indexed journal, in scope or not",
        ("read",),
        _ids("JM-READ-014"),
        _source_outside_scope,
    ),
    Broken(
        "around-follows-first-child",
        "around continues along the first-written child",
        ("read",),
        _ids("JM-READ-012"),
        _around_first_child,
    ),
    Broken(
        "around-walk-repeats",
        "around's walk repeats the entries of a parentId cycle until before or after is used up",
        ("read",),
        _ids("JM-READ-290"),
        _around_walk_repeats,
    ),
    Broken(
        "like-prefix-scope",
        "project scope is `cwd LIKE root || '%'`, so app sees app2",
        ("scope",),
        _ids("JM-SCOPE-004", "JM-SCOPE-005"),
        _like_prefix_scope,
    ),
    Broken(
        "project-is-everything",
        "project scope contains every journal",
        ("scope",),
        _ids("JM-SCOPE-009"),
        _project_is_everything,
    ),
    Broken(
        "home-children-count",
        "home and its children count as project roots",
        ("scope",),
        _ids("JM-SCOPE-002"),
        _home_children_count,
    ),
    Broken(
        "session-is-project",
        "session scope covers the whole project",
        ("scope",),
        _ids("JM-SCOPE-006"),
        _session_is_project,
    ),
    Broken(
        "session-id-ignored",
        "the sessionId argument narrows nothing",
        ("scope",),
        _ids("JM-SCOPE-011"),
        _session_id_ignored,
    ),
    Broken(
        "global-without-setting",
        "global scope works without the user's allow_global",
        ("scope",),
        _ids("JM-SCOPE-007"),
        server=_with_settings(allow_global=True),
    ),
    Broken(
        "unknown-arguments-ignored",
        "unknown tool arguments (allow_global) are dropped silently",
        ("scope", "tool"),
        _ids("JM-TOOL-006"),
        _unknown_arguments_ignored,
    ),
    Broken(
        "discovery-takes-any-file",
        "stray and non-.jsonl files count as journals",
        ("journals",),
        _ids("JM-JOURNAL-001"),
        _discovery_takes_any_file,
    ),
    Broken(
        "links-followed-anywhere",
        "a symbolic link is followed wherever it points (one to the current journal counts it twice)",
        ("journals", "scope"),
        _ids("JM-JOURNAL-005", "JM-SCOPE-121"),
        _links_followed_anywhere,
    ),
    Broken(
        "header-type-unchecked",
        "a first line of any type with an id and a cwd counts as a session header",
        ("indexing", "journals"),
        _ids("JM-JOURNAL-002"),
        _header_type_unchecked,
    ),
    Broken(
        "cwd-from-folder-name",
        "a journal's cwd comes from its folder name",
        ("journals",),
        _ids("JM-JOURNAL-003"),
        _cwd_from_folder_name,
    ),
    Broken(
        "long-lines-parsed",
        "max_line_bytes is ignored",
        ("journals",),
        _ids("JM-JOURNAL-008"),
        _long_lines_parsed,
    ),
    Broken(
        "headers-held-to-a-mebibyte",
        "a header line over 1 MiB is no header, though max_line_bytes allows it",
        ("journals",),
        _ids("JM-JOURNAL-250"),
        _headers_held_to_a_mebibyte,
    ),
    Broken(
        "raw-lines-indexed",
        "a line's whole JSON is indexed instead of its extracted text",
        ("extraction",),
        _ids("JM-EXTRACT-003"),
        _raw_lines_indexed,
    ),
    Broken(
        "sensitive-files-indexed",
        "files such as .env are indexed like any other",
        ("extraction",),
        _ids("JM-EXTRACT-004"),
        _sensitive_files_indexed,
    ),
    Broken(
        "system-messages-indexed",
        "Pi 1.x system messages are entries with their prompt sections as text",
        ("journals-earendil",),
        _ids("JM-EXTRACT-070"),
        _system_messages_indexed,
    ),
    Broken(
        "context-edits-not-entries",
        "a context_edit's replacement is never indexed",
        ("read-context-edit",),
        _ids("JM-EXTRACT-071", "JM-JOURNAL-070"),
        _context_edits_not_entries,
    ),
    Broken(
        "pi1x-metadata-indexed",
        "usage entries, nestedCalls, deferred handles and systemMessage become text",
        ("journals-earendil",),
        _ids("JM-EXTRACT-072"),
        _pi1x_metadata_indexed,
    ),
    Broken(
        "namespace-in-call-text",
        "a namespaced tool call reads [tool call] <namespace>.<name>",
        ("journals-earendil",),
        _ids("JM-JOURNAL-070"),
        _namespace_in_call_text,
    ),
    Broken(
        "session-id-from-file-name",
        "the session id is the file name after its last underscore",
        ("journals-earendil",),
        _ids("JM-JOURNAL-071"),
        _session_id_from_file_name,
    ),
    Broken(
        "context-edits-ignored",
        "edited and omitted entries show as if nothing happened",
        ("read-context-edit",),
        _ids("JM-READ-070"),
        _context_edits_ignored,
    ),
    Broken(
        "first-context-edit-wins",
        "of several edits of one target, the first counts",
        ("read-context-edit",),
        _ids("JM-READ-070"),
        _first_context_edit_wins,
    ),
    Broken(
        "context-edit-marks-unchecked",
        "a contextEdit comes from the index, whatever line its pointer now lands on",
        ("read-context-edit",),
        _ids("JM-READ-072"),
        _context_edit_marks_unchecked,
    ),
    Broken(
        "context-edits-branch-blind",
        "a context_edit on any branch marks its target",
        ("read-context-edit",),
        _ids("JM-READ-071"),
        _context_edits_branch_blind,
    ),
    Broken(
        "shrink-not-detected",
        "a journal that got shorter is not reindexed",
        ("indexing",),
        _ids("JM-INDEX-006"),
        _shrink_not_detected,
    ),
    Broken(
        "same-size-rewrite-not-detected",
        "a same-size rewrite with a new mtime is not reindexed",
        ("indexing",),
        _ids("JM-INDEX-007"),
        _same_size_rewrite_not_detected,
    ),
    Broken(
        "header-change-not-detected",
        "a changed header line does not trigger a full reindex",
        ("indexing",),
        _ids("JM-INDEX-008"),
        _header_change_not_detected,
    ),
    Broken(
        "partial-lines-indexed",
        "an unterminated last line is indexed (and the index is trusted)",
        ("indexing",),
        _ids("JM-JOURNAL-007"),
        _unverified(_partial_lines_indexed),
    ),
    Broken(
        "rewrites-not-detected",
        "no rewrite is ever detected (and the index is trusted)",
        ("indexing",),
        _ids("JM-INDEX-006", "JM-INDEX-007", "JM-INDEX-009"),
        _unverified(_rewrites_not_detected),
    ),
    Broken(
        "deleted-journal-kept",
        "a deleted journal's rows and terms stay, in an index that lists journals itself and is trusted",
        ("indexing", "read"),
        _ids("JM-INDEX-005"),
        _unverified(_rows_never_dropped, _journals_from_the_index),
    ),
    Broken(
        "idless-lines-indexed",
        "version 1 lines without ids are indexed (and the index is trusted)",
        ("indexing", "journals"),
        _ids("JM-JOURNAL-011"),
        _unverified(_idless_lines_indexed),
    ),
    Broken(
        "cjk-characters-only",
        "a run without spaces matches wherever its characters occur, apart or in another order",
        ("search",),
        _ids("JM-SEARCH-040"),
        _cjk_characters_only,
    ),
    Broken(
        "marks-split-words",
        "combining marks separate words (unicode61's default categories)",
        ("search",),
        _ids("JM-SEARCH-041"),
        _marks_split_words,
    ),
    Broken(
        "harakat-kept",
        "Arabic harakat count as marks of their word instead of being ignored",
        ("search",),
        _ids("JM-SEARCH-041"),
        _harakat_kept,
    ),
    Broken(
        "hard-all-terms-filter",
        "entries that hold only some terms never fill a page that holders of every term leave room on",
        ("search",),
        _ids("JM-SEARCH-350"),
        _hard_all_terms_filter,
    ),
    Broken(
        "no-per-result-match",
        "every result of an all-terms page says match all, also those that hold only some terms",
        ("search",),
        _ids("JM-SEARCH-351"),
        _no_result_match,
    ),
    Broken(
        "restatements-not-folded",
        "every entry that only restates the query is a result of its own",
        ("search",),
        _ids("JM-SEARCH-352"),
        _restatements_not_folded,
    ),
    Broken(
        "question-asked-again-first",
        "the query asked again (a restatement holding every term) ranks before the answers",
        ("search",),
        _ids("JM-SEARCH-352"),
        _question_asked_again_first,
    ),
    Broken(
        "memory-answers-searched",
        "memory_context results are search results and memory_context calls give terms",
        ("search",),
        _ids("JM-SEARCH-340"),
        _memory_answers_searched,
    ),
    Broken(
        "newest-first-ranking",
        "results are ordered newest first instead of by relevance",
        ("rank",),
        _ids("JM-RANK-001", "JM-RANK-005", "JM-RANK-003", "JM-RANK-004"),
        _newest_first_ranking,
    ),
    Broken(
        "checks-on-unredacted-text",
        "contiguity is checked on the candidate's text before redaction",
        ("search",),
        _ids("JM-SEARCH-140"),
        _checks_on_unredacted_text,
    ),
    Broken(
        "identifier-parts-in-any-order",
        "an identifier term matches wherever its parts occur, in any order",
        ("search",),
        _ids("JM-SEARCH-042"),
        _parts_in_any_order,
    ),
    Broken(
        "han-ends-at-9fa5",
        "the table of scripts without spaces ends Han at U+9FA5, as many programs type it",
        ("search",),
        _ids("JM-SEARCH-230"),
        _han_ends_at_9fa5,
    ),
    Broken(
        "identifier-parts-unbounded",
        "an identifier of any number of parts matches by its parts",
        ("search",),
        _ids("JM-SEARCH-231"),
        _identifier_parts_unbounded,
    ),
    Broken(
        "ascii-runs-inside-words-indexed",
        "the ASCII letters inside a word with letters outside ASCII are words of their own",
        ("search",),
        _ids("JM-SEARCH-001", "JM-SEARCH-042"),
        _ascii_runs_inside_words_indexed,
    ),
    Broken(
        "no-inflected-forms",
        "a term matches only itself: ship never finds shipped, nor patch patches",
        ("search",),
        _ids("JM-SEARCH-240"),
        _no_inflected_forms,
    ),
    Broken(
        "excerpt-from-the-text-start",
        "every excerpt shows its entry's first words, wherever the query's terms stand",
        ("search",),
        _ids("JM-SEARCH-360"),
        _excerpt_from_the_text_start,
    ),
    Broken(
        "excerpt-without-ellipses",
        "an excerpt never says that it leaves text out",
        ("search",),
        _ids("JM-SEARCH-361"),
        _excerpt_without_ellipses,
    ),
    Broken(
        "excerpt-of-480-characters",
        "excerpts of long texts hold 480 characters",
        ("search",),
        _ids("JM-SEARCH-362"),
        _excerpt_of_480_characters,
    ),
    Broken(
        "excerpt-cut-at-a-fixed-length",
        "an excerpt is cut at its 240th character, inside a word or a redaction marker",
        ("search",),
        _ids("JM-SEARCH-363"),
        _excerpt_cut_at_a_fixed_length,
    ),
    Broken(
        "arguments-numbers-as-python-writes-them",
        "a tool call's arguments write numbers as Python's JSON library does, not as JSON.stringify",
        ("extraction",),
        _ids("JM-EXTRACT-001"),
        _arguments_numbers_as_python_writes_them,
    ),
    Broken(
        "json-constants-read",
        "a journal line with NaN or Infinity as a value is indexed, where JSON.parse rejects it",
        ("journals",),
        _ids("JM-JOURNAL-006"),
        _json_constants_read,
    ),
    Broken(
        "unnormalized-lines-unchecked",
        "a candidate line in NFD matches a Hangul term whose syllables it holds only apart",
        ("search",),
        _ids("JM-SEARCH-330"),
        _unnormalized_lines_unchecked,
    ),
    Broken(
        "entries-indexed-as-written",
        "an entry in NFD or with a compatibility ideograph is not found by the query of its NFC form",
        ("search",),
        _ids("JM-SEARCH-330"),
        _entries_indexed_as_written,
    ),
    Broken(
        "long-runs-searched-whole",
        "a run of a script without spaces is searched past its 2,000th character",
        ("search",),
        _ids("JM-SEARCH-232"),
        _long_runs_searched_whole,
    ),
    Broken(
        "marks-after-a-run-in-its-grams",
        "a term ending in combining marks from outside the script table is not found, or found without them",
        ("search",),
        _ids("JM-SEARCH-040", "JM-SEARCH-230"),
        _marks_after_a_run_in_its_grams,
    ),
    Broken(
        "context-texts-whole",
        "around entries and summaries are never cut, however long",
        ("read", "summaries"),
        _ids("JM-READ-233", "JM-SUMMARY-234"),
        _context_texts_whole,
    ),
    Broken(
        "secrets-indexed",
        "terms come from unredacted text",
        ("redaction",),
        _ids("JM-REDACT-001"),
        _secrets_indexed,
    ),
    Broken(
        "blind-after-json-escapes",
        "a token right after a JSON escape (\\n, \\t, \\u001b) in escaped text is not redacted",
        ("redaction",),
        _ids("JM-REDACT-040"),
        _blind_after_json_escapes,
    ),
    Broken(
        "user-patterns-ignored",
        "the user's own secret formats (redact_patterns) are not masked",
        ("redaction",),
        _ids("JM-REDACT-042"),
        _user_patterns_ignored,
    ),
    Broken(
        "redaction-windows-without-overlap",
        "text over 1 MB is redacted in slices that do not overlap",
        ("redaction",),
        _ids("JM-REDACT-005"),
        _redaction_windows_without_overlap,
    ),
    Broken(
        "excerpts-miss-open-key-blocks",
        "a search excerpt inside a long private key block is redacted without the block's BEGIN line",
        ("redaction",),
        _ids("JM-REDACT-002"),
        _excerpts_miss_open_key_blocks,
    ),
    Broken(
        "excerpts-from-a-fixed-neighbourhood",
        "a search excerpt is redacted with a fixed margin around it, blind to long secrets begun before it",
        ("redaction",),
        _ids("JM-REDACT-270"),
        _excerpts_from_a_fixed_neighbourhood,
    ),
    Broken(
        "errors-not-redacted",
        "tool and command error messages echo the caller's input unredacted",
        ("redaction",),
        _ids("JM-REDACT-002"),
        _errors_not_redacted,
    ),
    Broken(
        "huge-numbers-clamped",
        "an integer parameter beyond 64 bits is taken as its nearest bound instead of refused",
        ("tool",),
        _ids("JM-TOOL-110"),
        _huge_numbers_clamped,
    ),
    Broken(
        "context-edit-of-any-shape",
        "a context_edit marks its target whatever its targetId and replacement hold",
        ("read",),
        _ids("JM-READ-071"),
        _context_edit_of_any_shape,
    ),
    Broken(
        "malformed-redaction-settings-ignored",
        "an open with a malformed redaction setting opens without it, silently",
        ("redaction",),
        _ids("JM-REDACT-160"),
        _malformed_settings_ignored,
    ),
    Broken(
        "lease-taken-for-nothing",
        "a background_on_idle session_start takes the lease with no journal to backfill",
        ("backfill",),
        _ids("JM-PROTO-180"),
        _lease_taken_for_nothing,
    ),
    Broken(
        "booleans-as-integers",
        "an integer parameter given true or false takes it as 1 or 0",
        ("tool",),
        _ids("JM-TOOL-160"),
        _booleans_as_integers,
    ),
    Broken(
        "echo-uncapped",
        "error messages echo caller values in full, however long",
        ("tool",),
        _ids("JM-TOOL-111"),
        _echo_uncapped,
    ),
    Broken(
        "echo-cut-short",
        "error messages show at most 12 characters of a value, so a short wrong value is not seen whole",
        ("tool",),
        _ids("JM-TOOL-111"),
        _echo_cut_short,
    ),
    Broken(
        "error-names-unquoted",
        "tool error messages name parameters without double quotes",
        ("tool",),
        _ids("JM-TOOL-112"),
        _error_names_unquoted,
    ),
    Broken(
        "outputs-not-redacted",
        "tool output is not redacted again",
        ("redaction",),
        _ids("JM-REDACT-002"),
        _outputs_not_redacted,
    ),
    Broken(
        "summaries-of-every-kind",
        "summaries lists entries of every kind",
        ("summaries",),
        _ids("JM-SUMMARY-001"),
        _summaries_of_every_kind,
    ),
    *(
        Broken(
            f"registers-{event.replace('_', '-')}",
            f"the integration registers a {event} handler",
            ("hooks",),
            _ids("JM-HOOK-003"),
            _registers(event),
        )
        for event in FORBIDDEN_EVENTS
    ),
    Broken(
        "prompt-snippet",
        "the tool carries a promptSnippet",
        ("hooks",),
        _ids("JM-HOOK-004"),
        _tool_field("promptSnippet"),
    ),
    Broken(
        "prompt-guidelines",
        "the tool carries promptGuidelines",
        ("hooks",),
        _ids("JM-HOOK-004"),
        _tool_field("promptGuidelines"),
    ),
    Broken(
        "writes-the-journal",
        "the integration appends to the session's journal",
        ("hooks",),
        _ids("JM-HOOK-006"),
        server=_WritesTheJournal,
    ),
    Broken(
        "calls-set-active-tools",
        "the integration calls setActiveTools",
        ("hooks",),
        _ids("JM-HOOK-005"),
        _manifest_with(lambda registered: registered["calls"].append("setActiveTools")),
    ),
    Broken(
        "gc-lists-current-journal",
        "gc offers the current session's journal",
        ("commands",),
        _ids("JM-CMD-008"),
        _gc_current_journal,
    ),
    Broken(
        "gc-ignores-quiet-period",
        "gc offers journals written in the last 24 h",
        ("commands",),
        _ids("JM-CMD-008"),
        _gc_ignores_quiet_period,
    ),
    Broken(
        "gc-confirm-without-preview",
        "gc confirm deletes a fresh preview's files",
        ("commands",),
        _ids("JM-CMD-009", "JM-CMD-010"),
        _gc_confirm_without_preview,
    ),
    Broken(
        "gc-confirm-forgets-current",
        "gc confirm deletes a previewed journal that became the current session",
        ("commands",),
        _ids("JM-CMD-016"),
        _gc_confirm_forgets_current,
    ),
    Broken(
        "forget-applied-once",
        "forget hides only the entries indexed when it ran",
        ("commands",),
        _ids("JM-CMD-012"),
        _forget_applied_once,
    ),
    Broken(
        "state-dir-must-exist",
        "the index is made only in a state dir that exists already",
        ("indexing",),
        _ids("JM-INDEX-310"),
        _state_dir_must_exist,
    ),
    Broken(
        "forget-leaves-terms-on-disk",
        "forget hides the entries but leaves their terms in free pages and the write-ahead log",
        ("commands",),
        _ids("JM-CMD-014"),
        _forget_leaves_terms_on_disk,
    ),
    Broken(
        "forget-ignored",
        "forgotten entries and sessions still show",
        ("commands",),
        _ids("JM-CMD-011", "JM-CMD-012"),
        _forget_ignored,
    ),
    Broken(
        "parameter-bound-widened",
        "the manifest's limit parameter has no maximum",
        ("tool",),
        _ids("JM-TOOL-020"),
        _manifest_with(_parameter_bound_widened),
    ),
    Broken(
        "unasked-details-invalid",
        "a read of an unknown id carries text, which only a read that found its entry has",
        ("tool",),
        _ids("JM-TOOL-021"),
        _details_with(_tool, "read", "not_found", {"text": "try a search"}),
    ),
    Broken(
        "around-without-candidates",
        "around on an ambiguous id names no candidates",
        ("read",),
        _ids("JM-READ-020"),
        _around_without_candidates,
    ),
    Broken(
        "unparsable-times-newest",
        "an entry whose timestamp does not parse sorts as the newest",
        ("journals",),
        _ids("JM-JOURNAL-020"),
        _unparsable_times_newest,
    ),
    Broken(
        "index-details-as-status",
        "index and rebuild answer status's details",
        ("commands",),
        _ids("JM-CMD-020"),
        _index_details_as_status,
    ),
    Broken(
        "sensitive-single-pager-command",
        "only a line that is a single pager command of one path counts as showing a file",
        ("extraction",),
        _ids("JM-EXTRACT-020"),
        _single_pager_command,
    ),
    Broken(
        "empty-query-matches-nothing",
        "an empty or blank query matches nothing instead of listing",
        ("search",),
        _ids("JM-SEARCH-020"),
        _empty_query_matches_nothing,
    ),
    Broken(
        "ignored-parameters-unchecked",
        "parameters the action does not use are not checked",
        ("tool",),
        _ids("JM-TOOL-023"),
        _ignored_parameters_unchecked,
    ),
    Broken(
        "index-unavailable-says-why",
        "the index_unavailable message carries the operating-system error and its path",
        ("tool",),
        _ids("JM-TOOL-022"),
        _index_unavailable_says_why,
    ),
    Broken(
        "aws-context-too-short",
        "an AWS secret needs its key id within 100 characters, not 200",
        ("redaction",),
        _ids("JM-REDACT-022"),
        _aws_context_too_short,
    ),
    Broken(
        "redactor-missing-one-corpus-kind",
        "the redactor has no rule for JSON Web Tokens, one kind of the secrets corpus",
        ("corpus",),
        _ids("JM-REDACT-024"),
        _redactor_without("jwt"),  # a 97 % redactor
    ),
    Broken(
        "no-lease",
        "backfill takes no lease: every process backfills at once",
        ("backfill",),
        _ids("JM-BACKFILL-020"),
        _no_lease,
    ),
    Broken(
        "index-per-process",
        "each process keeps its own index in the state dir, so one finds nothing another indexed",
        ("backfill",),
        _ids("JM-BACKFILL-021"),
        _index_file_per(lambda memory: os.getpid()),
    ),
    Broken(
        "index-per-instance",
        "each instance keeps its own index in the state dir: another instance finds nothing it indexed",
        ("backfill",),
        _ids("JM-BACKFILL-021"),
        _index_file_per(id),
    ),
    Broken(
        "lease-in-process-memory",
        "the lease lives in process memory, shared by one process's instances only",
        ("backfill",),
        _ids("JM-BACKFILL-020"),
        _lease_in_process_memory,
    ),
    Broken(
        "forget-lost-on-rebuild",
        "the forget list is dropped by rebuild",
        ("commands",),
        _ids("JM-CMD-013"),
        _forget_lost_on_rebuild,
    ),
    Broken(
        "other-journals-never-caught-up",
        "a tool call indexes the current journal only; other journals wait for a session_start",
        ("commands", "indexing"),
        _ids("JM-INDEX-020"),
        _other_journals_never_caught_up,
    ),
    Broken(
        "never-rechecked",
        "no tool call compares every journal again: checkedAt is the last backfill's, however old",
        ("indexing",),
        _ids("JM-INDEX-191"),
        _never_rechecked,
    ),
    Broken(
        "complete-and-fresh-unchecked",
        "checkedAt is the answer's own time while no call compares the journals again",
        ("indexing",),
        _ids("JM-INDEX-190"),
        _complete_and_fresh_unchecked,
    ),
    Broken(
        "string-content-for-every-role",
        "a string content of an assistant or toolResult message is extracted as its text",
        ("extraction",),
        _ids("JM-EXTRACT-021"),
        _string_content_for_every_role,
    ),
    Broken(
        "pages-redacted-one-by-one",
        "a read cuts its page from the raw text and redacts the page alone",
        ("redaction", "read"),
        _ids("JM-READ-021"),
        _pages_redacted_one_by_one,
    ),
    Broken(
        "current-journal-only-inside-the-roots",
        "a current journal outside the session roots is counted nowhere and in no scope",
        ("scope",),
        _ids("JM-SCOPE-020"),
        _current_journal_only_inside_the_roots,
    ),
    Broken(
        "forget-in-project-scope",
        "/memory forget <entryId> looks only at the current project's journals",
        ("commands",),
        _ids("JM-CMD-021"),
        _forget_in_project_scope,
    ),
    Broken(
        "skipped-counts-stray-files",
        "skipped.files counts every *.jsonl that is no journal (no header, empty)",
        ("commands",),
        _ids("JM-CMD-022"),
        _skipped_counts_stray_files,
    ),
    Broken(
        "marker-takes-the-key",
        "a marker replaces the key name and its = (or scheme://user:) along with the value",
        ("redaction",),
        _ids("JM-REDACT-020"),
        _marker_takes_the_key,
    ),
    Broken(
        "prefix-anywhere",
        "a token prefix counts inside a longer word too (xAKIA..., a SHA beside it)",
        ("redaction",),
        _ids("JM-REDACT-021"),
        _prefix_anywhere,
    ),
    Broken(
        "open-key-blocks-kept",
        "a private key block without its END line is not redacted",
        ("redaction",),
        _ids("JM-REDACT-023"),
        _open_key_blocks_kept,
    ),
    Broken(
        "git-shas-redacted",
        "every 40-character hexadecimal string is masked, git SHAs included",
        ("corpus",),
        _ids("JM-REDACT-025"),
        _git_shas_redacted,
    ),
    Broken(
        "id-shapes-never-credentials",
        "a UUID, a hexadecimal string or digits is never masked, even as a vendor key's value",
        ("redaction",),
        _ids("JM-REDACT-006"),
        _id_shapes_never_credentials,
    ),
    Broken(
        "uuids-always-credentials",
        "every UUID is masked, outside a credential's value too",
        ("redaction",),
        _ids("JM-REDACT-006"),
        _uuids_always_credentials,
    ),
    Broken(
        "families-table-partial",
        "the redactor lacks two families of the table (Heroku v2 keys, Slack webhook URLs)",
        ("redaction",),
        _ids("JM-REDACT-041"),
        _redactor_without("heroku-api-key-v2", "slack-webhook-url"),
    ),
    Broken(
        "credential-lists-and-new-providers-missed",
        "the redactor lacks the credential-list rules and two provider formats nobody's rule list names",
        ("redaction",),
        _ids("JM-REDACT-070"),
        _redactor_without("keyed-value", "netrc-password", "sql-password", "groq-api-key", "docker-hub-pat"),
    ),
    Broken(
        "identifier-bodies-taken-for-tokens",
        "a token prefix followed by words joined by _ - . is masked as a token",
        ("redaction",),
        _ids("JM-REDACT-071"),
        _identifier_bodies_taken_for_tokens,
    ),
    Broken(
        "secret-references-taken-for-values",
        "a reference to where a secret is kept (op://, vault:, a Secret Manager name) is masked",
        ("redaction",),
        _ids("JM-REDACT-071"),
        _secret_references_taken_for_values,
    ),
    Broken(
        "public-formats-missed",
        "the redactor lacks the bare Facebook app token and the legacy Vault token after a token key",
        ("redaction",),
        _ids("JM-REDACT-072"),
        _redactor_without("facebook-app-access-token", "vault-service-token-legacy"),
    ),
    Broken(
        "curl-user-on-the-curl-line-only",
        "curl's -u is caught only on the line that says curl, not after continued lines",
        ("redaction",),
        _ids("JM-REDACT-072"),
        _curl_user_on_the_curl_line_only,
    ),
    Broken(
        "allowlist-spares-its-rule",
        "an allowlisted value spares every secret of its rule",
        ("redaction",),
        _ids("JM-REDACT-043"),
        _allowlist_spares_its_rule,
    ),
    Broken(
        "lease-taken-at-idle",
        "with background_on_idle, session_start leaves the lease free until idle backfills",
        ("backfill",),
        _ids("JM-PROTO-020"),
        _lease_taken_at_idle,
    ),
    Broken(
        "kind-list-first-only",
        "a kind list restricts results to its first kind",
        ("search",),
        _ids("JM-SEARCH-090"),
        _kind_list_first_only,
    ),
    Broken(
        "kind-filtered-after-the-decision",
        "all-or-any is decided over every kind, and the kind filter drops rows afterwards",
        ("search",),
        _ids("JM-SEARCH-121"),
        _kind_filtered_after_the_decision,
    ),
    Broken(
        "session-id-prefix-matches",
        "a sessionId matches every session whose id starts with it",
        ("scope",),
        _ids("JM-SCOPE-120"),
        _session_id_prefix_matches,
    ),
    Broken(
        "verify-reindexes-everything",
        "index --verify reindexes every journal, changed or not",
        ("commands",),
        _ids("JM-CMD-200"),
        _verify_reindexes_everything,
    ),
    Broken(
        "markers-one-short",
        "a marker leaves the last character of the secret it replaces",
        ("redaction",),
        _ids("JM-REDACT-002", "JM-REDACT-020"),
        _markers_one_short,
    ),
    Broken(
        "header-changes-unseen",
        "a journal's header rewritten with another cwd keeps it in the scopes it was in",
        ("scope",),
        _ids("JM-SCOPE-004"),
        _header_changes_unseen,
    ),
    Broken(
        "unknown-instances-ignored",
        "event, idle and clock for an instance never opened are answered {}, not errored",
        ("protocol",),
        _ids("JM-PROTO-001"),
        server=_UnknownInstancesIgnored,
    ),
    Broken(
        "assignment-value-through-escapes",
        "an assignment's bare value runs on through JSON escapes (an escaped line break does not end it)",
        ("redaction",),
        _ids("JM-REDACT-040"),
        _assignment_value_through_escapes,
    ),
    Broken(
        "sensitive-names-as-written",
        "sensitive path names compare case-sensitively, in read paths and paged operands alike",
        ("extraction",),
        _ids("JM-EXTRACT-005", "JM-EXTRACT-020"),
        _sensitive_names_as_written,
    ),
    Broken(
        "escape-letters-join-words",
        "a tool call's JSON escapes stay in its search terms: the escape's letter joins the next word",
        ("search",),
        _ids("JM-SEARCH-043"),
        _escape_letters_join_words,
    ),
    Broken(
        "discovery-at-any-depth",
        "discovery takes every .jsonl below agent/sessions and the flat dirs, at any depth",
        ("journals",),
        _ids("JM-JOURNAL-001"),
        _discovery_at_any_depth,
    ),
    Broken(
        "temp-dir-by-prefix",
        "gc's temp-dir rule takes any cwd that starts with /tmp's letters (/tmpfoo/app)",
        ("commands",),
        _ids("JM-CMD-007"),
        _temp_dir_by_prefix,
    ),
    Broken(
        "summaries-by-day",
        "summaries sort newest first by UTC day, and within a day by journal path",
        ("summaries",),
        _ids("JM-SUMMARY-002"),
        _summaries_by_day,
    ),
    Broken(
        "around-counts-every-line",
        "around's before and after count every line walked, so a model_change uses up the window",
        ("read",),
        _ids("JM-READ-013"),
        _around_counts_every_line,
    ),
    Broken(
        "skipped-lines-of-the-last-pass",
        "a journal's skipped lines count only what its latest pass skipped",
        ("journals",),
        _ids("JM-JOURNAL-006"),
        _skipped_lines_of_the_last_pass,
    ),
    Broken(
        "edit-kind-unchecked",
        "a context_edit's mark is checked by id and target only, not by replacement or omission",
        ("read-context-edit",),
        _ids("JM-READ-072"),
        _edit_kind_unchecked,
    ),
    Broken(
        "context-ignored",
        "search ignores the leaf: the question just asked and the rest of the context come back",
        ("search",),
        _ids("JM-SEARCH-401", "JM-SEARCH-402", "JM-SEARCH-403", "JM-SEARCH-404", "JM-SEARCH-406"),
        _context_ignored,
    ),
    Broken(
        "context-from-last-line",
        "the context is walked from the current journal's last line, not from the leaf given",
        ("search",),
        _ids("JM-SEARCH-401"),
        _context_from_last_line,
    ),
    Broken(
        "no-leaf-means-last-line",
        "without a leaf the context is walked from the current journal's last line",
        ("search",),
        _ids("JM-SEARCH-400"),
        _no_leaf_means_last_line,
    ),
    Broken(
        "first-kept-ignored",
        "a compaction does not cut the path: every entry from the root is in the context",
        ("search",),
        _ids("JM-SEARCH-401"),
        _first_kept_ignored,
    ),
    Broken(
        "unkept-keeps-the-path",
        "a firstKeptEntryId that is missing, the compaction's own or off the path keeps the whole path",
        ("search",),
        _ids("JM-SEARCH-401"),
        _unkept_keeps_the_path,
    ),
    Broken(
        "every-line-on-the-path-sent",
        "labels, session names and bash commands excluded from the context count as in it",
        ("search",),
        _ids("JM-SEARCH-401"),
        _every_line_on_the_path_sent,
    ),
    Broken(
        "edited-targets-kept-in",
        "context_edits are ignored: replaced and omitted targets stay out of search",
        ("search",),
        _ids("JM-SEARCH-406"),
        _edited_targets_kept_in,
    ),
    Broken(
        "context-set-per-journal",
        "the context of the first leaf is kept for the journal, as if stored in the index",
        ("search",),
        _ids("JM-SEARCH-401"),
        _context_set_per_journal,
    ),
    Broken(
        "copies-by-id-alone",
        "every entry with the id of one in the context is left out, whatever its timestamp",
        ("search",),
        _ids("JM-SEARCH-404"),
        _copies_by_id_alone,
    ),
    Broken(
        "in-context-count-unfiltered",
        "inContext counts the context's matches whatever the kind and date filters",
        ("search",),
        _ids("JM-SEARCH-402"),
        _in_context_count_unfiltered,
    ),
    Broken(
        "in-context-count-unchecked",
        "inContext counts the context's entries holding a term's tokens, in a row or not",
        ("search",),
        _ids("JM-SEARCH-402"),
        _in_context_count_unchecked,
    ),
    Broken(
        "include-context-ignored",
        "includeContext: true is accepted and changes nothing",
        ("search",),
        _ids("JM-SEARCH-405"),
        _include_context_ignored,
    ),
    Broken(
        "no-hint-when-all-in-context",
        "a search whose every match is in the context answers none without a hint",
        ("search",),
        _ids("JM-SEARCH-403"),
        _no_hint_when_all_in_context,
    ),
    Broken(
        "summaries-leave-out-context",
        "summaries leave out the compaction in the model's context",
        ("search",),
        _ids("JM-SEARCH-407"),
        _summaries_leave_out_context,
    ),
    Broken(
        "pages-unchecked",
        "the index pages' CRCs are not checked on open: random bytes in a page are read as data",
        ("damage",),
        _ids("JM-INDEX-320", "JM-INDEX-321"),
        _pages_unchecked,
    ),
    Broken(
        "damage-not-mended",
        "a damaged index found on open is neither rebuilt nor reported: answers come from an empty one",
        ("damage",),
        _ids("JM-INDEX-320", "JM-INDEX-321"),
        _damage_not_mended,
    ),
    Broken(
        "stale-after-damage",
        "a damaged index found on open is replaced by an earlier copy, its journals taken as indexed",
        ("damage",),
        _ids("JM-INDEX-320", "JM-INDEX-321"),
        _stale_after_damage,
    ),
    Broken(
        "damage-left-unavailable",
        "a damaged index found on open is reported as index_unavailable and never rebuilt",
        ("damage",),
        _ids("JM-INDEX-322"),
        _damage_left_unavailable,
    ),
)
