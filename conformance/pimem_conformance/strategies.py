"""Public Hypothesis strategies for Pi journals (format version 3).

Other implementations can reuse them to property-test their own journal readers:

    from hypothesis import given
    from pimem_conformance.strategies import sessions

    @given(sessions())
    def test_reader_never_crashes(lines): ...

- `journal_lines()`: any single valid line (a header or an entry of any type, role and block);
  `entries(*types)`, `messages(*roles)` and `blocks(*types)` narrow it down.
- `sessions()`: a whole journal as a list of line objects: a header, then entries whose
  `parentId`s point at earlier entries (mostly the previous one, sometimes an older one, which
  makes branches), with unique ids and Pi's key order.
- `journal_histories()`: a session plus a sequence of changes Pi (or a user) makes to the file:
  appends, a partial last line, truncation and in-place rewrites, in the vocabulary of the case
  format's `mutate` step.

They write what Pi 0.73.1 writes and what Pi 1.x adds, mixed: `usage` and `context_edit`
entries, the `system` role, `namespace` on tool calls, `usage` and `nestedCalls` on tool results,
`deferred` answers, compactions with `usage` and `systemMessage` that may keep nothing before
themselves, and `--session-id` session ids.

Every line they produce validates against `pi-journal-line.schema.json`; serialise lines with
`JSON.stringify` semantics (`pimem_conformance._jsjson.dumps_like_js`) to get Pi's bytes.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from pimem_conformance.journals import header_line

__all__ = [
    "BLOCK_TYPES",
    "ENTRY_TYPES",
    "ROLES",
    "assistant_messages",
    "blocks",
    "entries",
    "entry_ids",
    "headers",
    "journal_histories",
    "journal_lines",
    "messages",
    "sessions",
    "timestamps",
]

Line = dict[str, Any]

ENTRY_TYPES = (
    "message",
    "compaction",
    "branch_summary",
    "model_change",
    "thinking_level_change",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "usage",
    "context_edit",
)
ROLES = ("user", "assistant", "toolResult", "bashExecution", "custom", "hookMessage", "system")
BLOCK_TYPES = ("text", "thinking", "image", "toolCall")
# Real journals are mostly messages: weight them so roles and blocks show up often.
_entry_types = st.sampled_from(ENTRY_TYPES + ("message",) * (len(ENTRY_TYPES) - 1))

# Text without lone surrogates (a journal is UTF-8) and with some characters that need escaping.
_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_words = st.text("abcdefghijklmnopqrstuvwxyz0123456789 _-/.", min_size=1, max_size=24)
_epoch_ms = st.integers(min_value=1_600_000_000_000, max_value=1_900_000_000_000)
_json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | _text
_json_values = st.recursive(
    _json_scalars,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_words, children, max_size=3),
    max_leaves=8,
)


def entry_ids() -> st.SearchStrategy[str]:
    """Pi's entry ids: 8 lowercase hex characters."""
    return st.text("0123456789abcdef", min_size=8, max_size=8)


def timestamps() -> st.SearchStrategy[str]:
    """`Date.prototype.toISOString()` values: UTC with milliseconds."""
    return _epoch_ms.map(
        lambda ms: (
            (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.")
            + f"{ms % 1000:03d}Z"
        )
    )


def _session_ids() -> st.SearchStrategy[str]:
    """Mostly UUIDs; sometimes an id given with Pi 1.x's --session-id (dots and underscores)."""
    custom = st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=20)
    return st.uuids(version=4).map(str) | custom.filter(lambda text: text.strip("."))


def _usage() -> st.SearchStrategy[Line]:
    counts = st.fixed_dictionaries(
        {"input": st.integers(0, 9000), "output": st.integers(0, 900), "totalTokens": st.integers(0, 9900)},
        optional={"cacheWrite1h": st.integers(0, 99), "reasoning": st.integers(0, 99)},
    )
    return counts.map(lambda usage: {**usage, "cost": {"total": 0}})


def headers() -> st.SearchStrategy[Line]:
    cwd = st.lists(_words.filter(lambda w: "/" not in w and w.strip(". ")), min_size=0, max_size=4)
    return st.builds(
        lambda session_id, stamp, parts, parent: header_line(
            session_id, "/" + "/".join(parts), stamp, parent_session=parent or None
        ),
        _session_ids(),
        timestamps(),
        cwd,
        st.none() | _words.map(lambda w: f"/home/u/.pi/agent/sessions/--x--/{w}.jsonl"),
    )


def _text_block() -> st.SearchStrategy[Line]:
    return st.builds(
        lambda text, signature: {
            "type": "text",
            "text": text,
            **({"textSignature": signature} if signature else {}),
        },
        _text,
        st.none() | _words,
    )


def _thinking_block() -> st.SearchStrategy[Line]:
    def build(thinking: str, signature: str | None, redacted: bool) -> Line:
        block: Line = {"type": "thinking", "thinking": thinking}
        if signature is not None:
            block["thinkingSignature"] = signature
        if redacted:
            block["redacted"] = True
        return block

    return st.builds(build, _text, st.none() | _words, st.booleans())


def _image_block() -> st.SearchStrategy[Line]:
    return st.builds(
        lambda data, mime: {"type": "image", "data": data, "mimeType": mime},
        st.binary(max_size=24).map(lambda raw: base64.b64encode(raw).decode("ascii")),
        st.sampled_from(["image/png", "image/jpeg"]),
    )


def _tool_call_block() -> st.SearchStrategy[Line]:
    return st.builds(
        lambda call_id, name, arguments, namespace: {
            "type": "toolCall",
            "id": call_id,
            "name": name,
            "arguments": arguments,
            **({"namespace": namespace} if namespace else {}),
        },
        _words.map(lambda w: f"toolu_{w}"),
        st.sampled_from(["read", "bash", "edit", "write", "grep"]),
        st.dictionaries(_words, _json_values, max_size=3),
        st.none() | _words,
    )


def blocks(*types: str) -> st.SearchStrategy[Line]:
    """Content blocks of the given types (default: all of BLOCK_TYPES)."""
    makers = {
        "text": _text_block,
        "thinking": _thinking_block,
        "image": _image_block,
        "toolCall": _tool_call_block,
    }
    return st.one_of(*(makers[name]() for name in types or BLOCK_TYPES))


def _user_message() -> st.SearchStrategy[Line]:
    content = _text | st.lists(blocks("text", "image"), max_size=3)
    return st.builds(lambda c, ms: {"role": "user", "content": c, "timestamp": ms}, content, _epoch_ms)


def assistant_messages() -> st.SearchStrategy[Line]:
    def build(content: list[Line], stop: str, error: str | None, ms: int) -> Line:
        message: Line = {
            "role": "assistant",
            "content": [] if error is not None else content,
            "api": "anthropic-messages",
            "provider": "anthropic",
            "model": "claude-sonnet-4-5",
            "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2},
            "stopReason": "error" if error is not None else stop,
            "timestamp": ms,
        }
        if error is not None:
            message["errorMessage"] = error
        if stop == "deferred":
            message["deferred"] = {
                "provider": "anthropic",
                "modelId": "claude-sonnet-4-5",
                "api": "x",
                "id": "r1",
            }
        return message

    return st.builds(
        build,
        st.lists(blocks(), max_size=4),
        st.sampled_from(["stop", "toolUse", "length", "aborted", "deferred"]),
        st.none() | _text,
        _epoch_ms,
    )


def _tool_result_message() -> st.SearchStrategy[Line]:
    def build(
        call_id: str, name: str, content: list[Line], details: Any, error: bool, ms: int, nested: Any
    ) -> Line:
        message: Line = {"role": "toolResult", "toolCallId": call_id, "toolName": name, "content": content}
        if details is not None:
            message["details"] = details
        if nested is not None:  # Pi 1.x
            usage, calls = nested
            message.update(usage=usage, nestedCalls={"calls": calls, "complete": True})
        message.update({"isError": error, "timestamp": ms})
        return message

    nested_call = st.builds(
        lambda call_id, name, arguments: {
            "id": call_id,
            "name": name,
            "arguments": arguments,
            "status": "ok",
        },
        _words,
        _words,
        st.dictionaries(_words, _json_values, max_size=2),
    )

    return st.builds(
        build,
        _words.map(lambda w: f"toolu_{w}"),
        st.sampled_from(["read", "bash", "edit"]),
        st.lists(blocks("text", "image"), max_size=3),
        st.none() | _json_values,
        st.booleans(),
        _epoch_ms,
        st.none() | st.tuples(_usage(), st.lists(nested_call, max_size=2)),
    )


def _system_message() -> st.SearchStrategy[Line]:
    """Pi 1.x: the session's first system message, or a later patch of its sections and tools."""
    tool = st.builds(lambda name, text: {"name": name, "description": text, "parameters": {}}, _words, _text)
    return st.builds(
        lambda sections, added, removed, ms: {
            "role": "system",
            "content": "",
            "sections": sections,
            **({"toolsAdded": added} if added else {}),
            **({"toolsRemoved": [{"name": name} for name in removed]} if removed else {}),
            "timestamp": ms,
        },
        st.dictionaries(st.sampled_from(["preamble", "tools", "rules", "docs", "cwd"]), st.none() | _text),
        st.lists(tool, max_size=2),
        st.lists(_words, max_size=2),
        _epoch_ms,
    )


def _bash_message() -> st.SearchStrategy[Line]:
    def build(command: str, output: str, code: int | None, excluded: bool, ms: int) -> Line:
        message: Line = {"role": "bashExecution", "command": command, "output": output}
        if code is not None:
            message["exitCode"] = code
        message.update({"cancelled": False, "truncated": False})
        if excluded:
            message["excludeFromContext"] = True
        message["timestamp"] = ms
        return message

    return st.builds(build, _text, _text, st.none() | st.integers(0, 255), st.booleans(), _epoch_ms)


def _custom_role_message(role: str) -> st.SearchStrategy[Line]:
    return st.builds(
        lambda kind, content, display, ms: {
            "role": role,
            "customType": kind,
            "content": content,
            "display": display,
            "timestamp": ms,
        },
        _words,
        _text | st.lists(blocks("text", "image"), max_size=2),
        st.booleans(),
        _epoch_ms,
    )


def messages(*roles: str) -> st.SearchStrategy[Line]:
    """Agent messages of the given roles (default: all of ROLES)."""
    makers: dict[str, Callable[[], st.SearchStrategy[Line]]] = {
        "user": _user_message,
        "assistant": assistant_messages,
        "toolResult": _tool_result_message,
        "bashExecution": _bash_message,
        "custom": lambda: _custom_role_message("custom"),
        "hookMessage": lambda: _custom_role_message("hookMessage"),
        "system": _system_message,
    }
    return st.one_of(*(makers[name]() for name in roles or ROLES))


def _payload(entry_type: str, known_ids: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[Line, bool]]:
    """The type-specific fields of an entry, and whether Pi writes the tree keys last."""
    summary_details: st.SearchStrategy[Line] = st.just({"readFiles": [], "modifiedFiles": []})
    payloads: dict[str, st.SearchStrategy[Line]] = {
        "message": messages().map(lambda m: {"message": m}),
        "compaction": st.builds(
            lambda summary, kept, tokens, details, more: {
                "summary": summary,
                "firstKeptEntryId": kept,
                "tokensBefore": tokens,
                "details": details,
                "fromHook": False,
                **more,
            },
            _text,
            known_ids,
            st.integers(0, 500_000),
            summary_details,
            st.just({})
            | st.builds(lambda u, m: {"usage": u, "systemMessage": m}, _usage(), _system_message()),
        ),
        "branch_summary": st.builds(
            lambda source, summary, details: {
                "fromId": source,
                "summary": summary,
                "details": details,
                "fromHook": False,
            },
            known_ids | st.just("root"),
            _text,
            summary_details,
        ),
        "model_change": st.builds(lambda m: {"provider": "anthropic", "modelId": m}, _words),
        "thinking_level_change": st.sampled_from(["off", "minimal", "low", "medium", "high", "xhigh"]).map(
            lambda level: {"thinkingLevel": level}
        ),
        "custom": st.builds(
            lambda kind, data: {"customType": kind, **({"data": data} if data is not None else {})},
            _words,
            _json_values,
        ),
        "custom_message": st.builds(
            lambda kind, content, display: {"customType": kind, "content": content, "display": display},
            _words,
            _text | st.lists(blocks("text", "image"), max_size=2),
            st.booleans(),
        ),
        "label": st.builds(
            lambda target, label: {"targetId": target, **({"label": label} if label is not None else {})},
            known_ids,
            st.none() | _text,
        ),
        "session_info": st.builds(lambda name: {"name": name}, _text),
        "usage": st.builds(
            lambda kind, usage: {
                "kind": kind,
                "provider": "anthropic",
                "model": "claude-sonnet-4-5",
                "usage": usage,
            },
            st.sampled_from(["cache_warm", "compaction", "other"]),
            _usage(),
        ),
        "context_edit": st.builds(
            lambda target, content: {
                "targetId": target,
                "replacement": None if content is None else {"content": content},
            },
            known_ids,
            st.none() | _text | st.lists(blocks("text", "image"), max_size=2),
        ),
    }
    keys_last = entry_type in ("custom", "custom_message")
    return payloads[entry_type].map(lambda fields: (fields, keys_last))


def _entry(
    entry_type: str, fields: Line, keys_last: bool, entry_id: str, parent: str | None, stamp: str
) -> Line:
    tree = {"id": entry_id, "parentId": parent, "timestamp": stamp}
    return {"type": entry_type, **fields, **tree} if keys_last else {"type": entry_type, **tree, **fields}


@st.composite
def entries(draw: st.DrawFn, *types: str) -> Line:
    """One entry line of the given types (default: all of ENTRY_TYPES); ids need not resolve."""
    entry_type = draw(st.sampled_from(types) if types else _entry_types)
    fields, keys_last = draw(_payload(entry_type, entry_ids()))
    return _entry(
        entry_type, fields, keys_last, draw(entry_ids()), draw(st.none() | entry_ids()), draw(timestamps())
    )


@st.composite
def journal_lines(draw: st.DrawFn) -> Line:
    """Any single valid journal line: a header (about one time in four), or an entry of any type."""
    return draw(headers() if draw(st.integers(0, 3)) == 0 else entries())


@st.composite
def _entries(draw: st.DrawFn, used: set[str], leaf: str | None, count: int) -> list[Line]:
    """`count` entries continuing a tree whose ids are `used` and whose last entry is `leaf`."""
    lines: list[Line] = []
    ordered = sorted(used)  # a set's order varies between runs; Hypothesis needs a stable one
    for _ in range(count):
        entry_id = draw(entry_ids().filter(lambda candidate: candidate not in used))
        if leaf is None or not ordered:
            parent = None
        elif draw(st.integers(0, 4)) == 0:
            parent = draw(st.sampled_from(ordered))  # a branch from an older entry
        else:
            parent = leaf
        entry_type = draw(_entry_types)
        known = st.sampled_from(ordered) if ordered else st.just(entry_id)
        fields, keys_last = draw(_payload(entry_type, known))
        lines.append(_entry(entry_type, fields, keys_last, entry_id, parent, draw(timestamps())))
        used.add(entry_id)
        ordered.append(entry_id)
        leaf = entry_id
    return lines


@st.composite
def sessions(draw: st.DrawFn, max_entries: int = 12) -> list[Line]:
    """A whole journal: a header, then a tree of entries with unique ids and resolvable parentIds."""
    used: set[str] = set()
    count = draw(st.integers(0, max_entries))
    return [draw(headers()), *draw(_entries(used, None, count))]


@st.composite
def journal_histories(draw: st.DrawFn, max_steps: int = 5) -> tuple[list[Line], list[dict[str, Any]]]:
    """A session and the on-disk changes that follow it, as case-format `mutate` operations.

    `append` adds valid entries chained to the current last line; `truncate` keeps the first
    `keep_lines` lines; `rewrite` replaces one entry in place with another of the same id, parent
    and timestamp but new content (what an editor or a migration does), usually changing its length;
    `append_partial` leaves an unterminated tail and, when drawn, is always the last operation.
    """
    initial = draw(sessions())
    file_lines = list(initial)  # what the file holds after each operation
    operations: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, max_steps))):
        op = draw(st.sampled_from(["append", "truncate", "rewrite", "append_partial"]))
        entries = file_lines[1:]
        if op == "append":
            leaf = str(entries[-1]["id"]) if entries else None
            new = draw(_entries({str(line["id"]) for line in entries}, leaf, draw(st.integers(1, 3))))
            file_lines = [*file_lines, *new]
            operations.append({"op": "append", "lines": new})
        elif op == "truncate":
            keep = draw(st.integers(0, len(file_lines)))
            file_lines = file_lines[:keep]
            operations.append({"op": "truncate", "keep_lines": keep})
        elif op == "rewrite" and entries:
            index = draw(st.integers(1, len(entries)))
            old = file_lines[index]
            entry_type = draw(_entry_types)
            fields, keys_last = draw(_payload(entry_type, st.just(str(old["id"]))))
            new_line = _entry(entry_type, fields, keys_last, old["id"], old["parentId"], old["timestamp"])
            file_lines = [*file_lines[:index], new_line, *file_lines[index + 1 :]]
            operations.append({"op": "rewrite", "line": index, "with": new_line, "length": "longer"})
        elif op == "append_partial":
            operations.append({"op": "append_partial", "text": '{"type":"message","id":"'})
            break
    return initial, operations
