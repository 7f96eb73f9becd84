"""`pimem search` leaves out the entries in the model's context (issue #29, point 2): by default it
stands at the current journal's last entry, `--leaf ID` stands elsewhere, `--include-context`
brings the context back. The journals are the issue's reproduction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_cli import run

PROJECT = "agent/sessions/--home-u-app--/"
YESTERDAY = PROJECT + "2026-12-03T09-00-00-000Z_aaaa1111.jsonl"
TODAY = PROJECT + "2026-12-05T09-00-00-000Z_bbbb2222.jsonl"


def _message(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": role,
        "content": [{"type": "text", "text": text}],
        "timestamp": 1795600000000,
    }
    if role == "assistant":
        message.update(api="openai-responses", provider="openai", model="gpt-5", stopReason="stop")
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-12-03T09:00:00.000Z",
        "message": message,
    }


def _write(path: Path, session: str, *lines: dict[str, Any]) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": session,
        "timestamp": "2026-12-03T09:00:00.000Z",
        "cwd": "/home/u/app",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in (header, *lines)), encoding="utf-8")


def _search(tmp_path: Path, *argv: str) -> set[str]:
    _write(
        tmp_path / YESTERDAY,
        "aaaa1111",
        _message("aaaa0000", None, "user", "We need a staging environment for the payments service."),
        _message(
            "aaaa0001", "aaaa0000", "assistant", "Done. Staging runs on orbitfalcon3ed3b5, behind the VPN."
        ),
    )
    _write(
        tmp_path / TODAY,
        "bbbb2222",
        _message("bbbb0000", None, "user", "Where does staging run? Check your memory."),
    )
    details = search_details(tmp_path, *argv, session=tmp_path / TODAY)
    return {result["entryId"] for result in details["results"]}


def search_details(tmp_path: Path, *argv: str, session: Path | None = None) -> dict[str, Any]:
    """`pimem --json search ARGV` in /home/u/app over the journals under `tmp_path / "agent"`."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    where = [
        "--agent-dir",
        str(tmp_path / "agent"),
        "--index",
        str(tmp_path / "i.sqlite"),
        "--cwd",
        "/home/u/app",
        *(["--session", str(session)] if session is not None else []),
    ]
    done = run(*where, "--json", "search", *argv, home=home)
    assert done.returncode in (0, 1), done.stderr
    details: dict[str, Any] = json.loads(done.stdout)
    return details


def test_the_question_just_asked_is_left_out_and_the_answer_found(tmp_path: Path) -> None:
    found = _search(tmp_path, "where does staging run")
    assert "aaaa0001" in found and "bbbb0000" not in found


def test_include_context_and_another_leaf_bring_the_question_back(tmp_path: Path) -> None:
    assert "bbbb0000" in _search(tmp_path, "staging", "--include-context")
    assert "bbbb0000" in _search(tmp_path, "staging", "--leaf", "ffffffff")
    assert "bbbb0000" not in _search(tmp_path, "staging", "--leaf", "bbbb0000")
