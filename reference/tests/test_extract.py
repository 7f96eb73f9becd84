"""The extraction table, row by row."""

from __future__ import annotations

from typing import Any

import pytest
from pimem._extract import WITHHELD, extract, is_sensitive_path, read_call_escapes, sensitive_call_ids


def msg(role: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "e1",
        "parentId": "p0",
        "timestamp": "2026-11-20T10:00:00.000Z",
        "message": {"role": role, **fields},
    }


def text_of(obj: dict[str, Any], withheld: set[str] | None = None) -> tuple[str, str] | None:
    entry = extract(obj, withheld or set())
    return None if entry is None else (entry.kind, entry.text)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (msg("user", content="plain string"), ("user", "plain string")),
        (
            msg("user", content=[{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA"}]),
            ("user", "look\n[image]"),
        ),
        (
            msg(
                "assistant",
                content=[
                    {"type": "thinking", "thinking": "secret thoughts", "thinkingSignature": "sig"},
                    {"type": "text", "text": "answer", "textSignature": "ts"},
                    {"type": "toolCall", "id": "c1", "name": "grep", "arguments": {"pattern": "é", "n": 2}},
                ],
            ),
            ("assistant", 'answer\n[tool call] grep {"pattern":"é","n":2}'),
        ),
        (msg("assistant", content=[], errorMessage="500 boom"), ("assistant", "[error] 500 boom")),
        (msg("assistant", content=[{"type": "thinking", "thinking": "only"}]), None),
        (
            msg(
                "toolResult",
                toolCallId="c1",
                toolName="grep",
                content=[{"type": "text", "text": "hit"}],
                details={"hidden": "never"},
            ),
            ("tool_result", "hit"),
        ),
        (msg("bashExecution", command="ls", output="a\nb\n"), ("bash", "$ ls\na\nb\n")),
        (msg("bashExecution", command="true", output=""), ("bash", "$ true")),
        (msg("bashExecution", command="cat -n ~/.ssh/id_rsa", output="KEY"), ("bash", WITHHELD)),
        (msg("custom", content="from an extension"), ("custom", "from an extension")),
        (msg("hookMessage", content=[{"type": "text", "text": "legacy"}]), ("custom", "legacy")),
        (msg("system", content="unknown role"), None),
        (
            {
                "type": "custom_message",
                "customType": "x",
                "content": [{"type": "image"}, {"type": "text", "text": "hi"}],
                "id": "cm",
                "parentId": None,
                "timestamp": "t",
            },
            ("custom_message", "[image]\nhi"),
        ),
        (
            {"type": "compaction", "id": "c", "summary": "## Goal", "tokensBefore": 5},
            ("compaction", "## Goal"),
        ),
        (
            {"type": "branch_summary", "id": "b", "summary": "went elsewhere"},
            ("branch_summary", "went elsewhere"),
        ),
        ({"type": "session_info", "id": "i", "name": "My session"}, ("session_info", "My session")),
        ({"type": "session_info", "id": "i"}, None),
        ({"type": "label", "id": "l", "targetId": "x", "label": ""}, None),
        ({"type": "label", "id": "l", "targetId": "x", "label": "checkpoint"}, ("label", "checkpoint")),
        ({"type": "custom", "id": "s", "customType": "state", "data": {"text": "no"}}, None),
        ({"type": "model_change", "id": "m", "modelId": "x"}, None),
        ({"type": "session", "id": "header", "cwd": "/x"}, None),
    ],
)
def test_extraction_table(line: dict[str, Any], expected: tuple[str, str] | None) -> None:
    assert text_of(line) == expected


def test_entry_fields() -> None:
    entry = extract(
        {
            "type": "compaction",
            "id": "c",
            "parentId": "p",
            "timestamp": "T",
            "summary": "s",
            "tokensBefore": 792,
        },
        set(),
    )
    assert entry is not None
    assert (entry.kind, entry.timestamp, entry.tokens_before, entry.text) == ("compaction", "T", 792, "s")
    result = extract(
        msg("toolResult", toolCallId="c9", toolName="read", content=[{"type": "text", "text": "x"}]), set()
    )
    assert result is not None and (result.role, result.tool_name) == ("toolResult", "read")


def test_sensitive_results_are_withheld_through_call_ids() -> None:
    call = msg(
        "assistant",
        content=[
            {"type": "toolCall", "id": "r1", "name": "read", "arguments": {"path": "/app/.env.local"}},
            {"type": "toolCall", "id": "r2", "name": "read", "arguments": {"file_path": "src/main.py"}},
            {
                "type": "toolCall",
                "id": "r3",
                "name": "bash",
                "arguments": {"command": "tail -n 5 certs/server.pem"},
            },
            {"type": "toolCall", "id": "r4", "name": "bash", "arguments": {"command": "cat a.env b.txt"}},
        ],
    )
    calls = set(sensitive_call_ids(call))
    assert calls == {"r1", "r3"}
    secret = msg("toolResult", toolCallId="r1", toolName="read", content=[{"type": "text", "text": "API=x"}])
    assert text_of(secret, calls) == ("tool_result", WITHHELD)
    assert text_of(secret, set()) == ("tool_result", "API=x")


@pytest.mark.parametrize(
    ("path", "sensitive"),
    [
        (".env", True),
        ("/a/.env.production", True),
        ("k/server.key", True),
        ("c.p12", True),
        ("x.pfx", True),
        ("/h/.ssh/config", True),
        ("~/.ssh/id_ed25519", True),
        ("id_rsa", True),
        ("id_rsa.pub", False),
        ("/h/.ssh/id_ed25519.pub", True),  # the whole .ssh folder is withheld
        ("/h/.aws/credentials", True),
        ("/h/.netrc", True),
        (".npmrc", True),
        (".pypirc", True),
        (".pgpass", True),
        (".git-credentials", True),
        ("/h/.docker/config.json", True),
        ("gcp/credentials.json", True),
        ("src/env.py", False),
        ("docs/.envrc.md", False),
        ("config.json", False),
        ("aws/credentials", False),
    ],
)
def test_sensitive_path_patterns(path: str, sensitive: bool) -> None:
    assert is_sensitive_path(path) is sensitive


def test_the_memorys_own_calls_and_results_give_no_search_words() -> None:
    call = {"type": "toolCall", "id": "c1", "name": "memory_context", "arguments": {"query": "staging"}}
    other = {"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls"}}
    said = {"type": "text", "text": "Looking it up."}
    entry = extract(msg("assistant", content=[said, call, other]), set())
    assert entry is not None
    assert "memory_context" in entry.text  # the read text keeps the call (JM-EXTRACT-001)
    assert entry.terms_text == 'Looking it up.\n[tool call] bash {"command":"ls"}'
    plain = extract(msg("assistant", content=[said, other]), set())
    assert plain is not None and plain.search_text is None and plain.terms_text == plain.text
    result = msg("toolResult", toolCallId="c1", toolName="memory_context", content=[said])
    found = extract(result, set())
    assert found is not None and found.text == "Looking it up." and found.terms_text == ""


def test_a_tool_calls_json_escapes_are_read_for_its_search_terms() -> None:
    text = 'said C:\\new\n[tool call] write {"content":"a\\npelican\\tzebu \\"q\\" \\\\n \\u0007x"}'
    assert (
        read_call_escapes(text)
        == 'said C:\\new\n[tool call] write {"content":"a\npelican\tzebu "q" \\n \x07x"}'
    )
    assert read_call_escapes("no call here: a\\nb") == "no call here: a\\nb"
