"""Real journals written by Pi 0.73.1 and Pi 1.6.0 read back, entry by entry, with the text
journals.md defines (issue 15).

The expected text comes from a literal reading of the extraction table below, written apart from
the reference's extractor; the expected `contextEdit` from the rule "the last context_edit of the
target on the journal's current branch". Every line of every journal is asked for.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pimem._redact import redact
from pimem._serve import ProtocolServer
from pimem_conformance import shared_journals_1x_dir, shared_journals_dir

NOW = "2026-12-02T12:00:00.000Z"


def _journals(root: Path | None) -> list[Path]:
    if root is None:
        return []
    return sorted([*root.glob("sessions/*/*.jsonl"), *root.glob("flat/*.jsonl")])


REAL = {"0.73.1": _journals(shared_journals_dir()), "1.6.0": _journals(shared_journals_1x_dir())}


def _texts(content: Any, images: bool = True) -> list[str]:
    if isinstance(content, str):
        return [content]
    parts = []
    for block in content if isinstance(content, list) else []:
        if block.get("type") == "text":
            parts.append(block["text"])
        elif block.get("type") == "image" and images:
            parts.append("[image]")
    return parts


def _call(block: dict[str, Any]) -> str:
    arguments = json.dumps(block["arguments"], ensure_ascii=False, separators=(",", ":"))
    return f"[tool call] {block['name']} {arguments}"


def expected(line: dict[str, Any]) -> tuple[str, str] | None:
    """(kind, text) of a line as journals.md's table says, or None when it is no entry."""
    kind = line["type"]
    if kind == "message":
        message = line["message"]
        role = message["role"]
        if role == "user":
            text, kind = "\n".join(_texts(message["content"])), "user"
        elif role == "assistant":
            parts = [
                _call(block) if block["type"] == "toolCall" else part
                for block in message["content"]
                if block["type"] in ("text", "image", "toolCall")
                for part in (_texts([block]) or [""])
            ]
            if message.get("errorMessage"):
                parts.append(f"[error] {message['errorMessage']}")
            text, kind = "\n".join(parts), "assistant"
        elif role == "toolResult":
            text, kind = "\n".join(_texts(message["content"])), "tool_result"
        elif role == "bashExecution":
            output = message["output"]
            text, kind = f"$ {message['command']}" + (f"\n{output}" if output else ""), "bash"
        elif role in ("custom", "hookMessage"):
            text, kind = "\n".join(_texts(message["content"], images=False)), "custom"
        else:  # system (Pi 1.x) and roles the spec does not know
            return None
    elif kind == "custom_message":
        text = "\n".join(_texts(line["content"]))
    elif kind == "context_edit":
        replacement = line["replacement"]
        text = "" if replacement is None else "\n".join(_texts(replacement["content"]))
    elif kind in ("compaction", "branch_summary"):
        text = line["summary"]
    elif kind == "session_info":
        text = line.get("name") or ""
    elif kind == "label":
        text = line.get("label") or ""
    else:  # model_change, thinking_level_change, custom, usage, unknown types
        return None
    return (kind, text) if text else None


def expected_edits(lines: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """target id → contextEdit, from the last context_edit of each target on the current branch."""
    by_id = {line["id"]: line for line in lines[1:]}
    branch: list[dict[str, Any]] = []
    node: dict[str, Any] | None = lines[-1] if len(lines) > 1 else None
    while node is not None and node not in branch:
        branch.append(node)
        node = by_id.get(node["parentId"]) if node["parentId"] else None
    edits: dict[str, dict[str, str]] = {}
    for line in reversed(branch):  # root first: a later edit wins
        if line["type"] == "context_edit":
            state = "omitted" if line["replacement"] is None else "replaced"
            edits[line["targetId"]] = {"state": state, "editEntryId": line["id"]}
    return edits


def _open(root: Path, journal: Path, header: dict[str, Any]) -> ProtocolServer:
    """A reference instance whose current session is a copy of the journal."""
    copy = root / "agent" / "sessions" / "--real--" / journal.name
    copy.parent.mkdir(parents=True)
    shutil.copyfile(journal, copy)
    server = ProtocolServer()
    workspace = {
        "home": "/home/dev",
        "agent_dir": str(root / "agent"),
        "session_dirs": [],
        "state_dir": str(root / "state"),
        "cwd": header["cwd"],
        "session_file": str(copy),
    }
    for request in (
        {"cmd": "open", "workspace": workspace, "clock": {"now": NOW, "tz": "UTC"}, "settings": {}},
        {"cmd": "event", "name": "session_start", "data": {"reason": "startup"}},
        {"cmd": "idle"},
    ):
        assert "errored" not in server.handle({"seq": 1, "instance": "a", **request})
    return server


@pytest.mark.parametrize(
    "journal",
    [pytest.param(path, id=f"{version}/{path.name}") for version, paths in REAL.items() for path in paths]
    or [pytest.param(None, id="no-real-journals")],
)
def test_every_real_journal_reads_back_entry_by_entry(journal: Path | None, tmp_path: Path) -> None:
    if journal is None:
        pytest.skip("real Pi journals not found: set PIMEM_SHARED_JOURNALS(_1X) or put shared/ beside")
    lines = [json.loads(raw) for raw in journal.read_text(encoding="utf-8").splitlines()]
    edits = expected_edits(lines)
    server = _open(tmp_path, journal, lines[0])
    checked = 0
    for line in lines[1:]:
        answer = server.handle(
            {
                "seq": 1,
                "instance": "a",
                "cmd": "tool",
                "name": "memory_context",
                "arguments": {"action": "read", "entryId": line["id"], "scope": "session"},
            }
        )
        details = answer["details"]
        want = expected(line)
        if want is None:
            assert details["status"] == "not_found", (line["id"], line["type"], details)
            continue
        kind, text = want
        assert details["status"] == "ok", (line["id"], details)
        assert (details["kind"], details["text"]) == (kind, redact(text)[:16_000]), line["id"]
        assert details.get("contextEdit") == edits.get(line["id"]), line["id"]
        checked += 1
    server.handle({"seq": 1, "cmd": "stop"})
    assert checked, f"{journal.name}: no line is an entry"


def test_pi_1x_journals_are_there_with_what_the_spec_decides() -> None:
    """The 1.x folder holds the shapes the decisions are about (a guard against an empty folder)."""
    paths = REAL["1.6.0"]
    if not paths:
        pytest.skip("real Pi 1.6.0 journals not found: set PIMEM_SHARED_JOURNALS_1X")
    lines = [json.loads(raw) for path in paths for raw in path.read_text(encoding="utf-8").splitlines()]
    types = {line["type"] for line in lines}
    roles = {line["message"]["role"] for line in lines if line["type"] == "message"}
    assert {"context_edit", "usage", "compaction"} <= types
    assert "system" in roles
    assert any(line["type"] == "context_edit" and line["replacement"] is None for line in lines)
