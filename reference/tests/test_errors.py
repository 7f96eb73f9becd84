"""One translation of errors into answers: the tool and the `/memory` commands say the same, and keep
the specific reason an index cannot be written (a full disk is not a read-only folder)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from pimem._cli import CLI_WORDING
from pimem._errors import IndexUnavailable, ToolError, protocol_answer
from pimem._store import Store
from pimem._store_checks import fill_up, refuse_writes

TREE = (
    "agent/sessions/--home-u-treeproj--/2026-11-11T08-00-00-000Z_01a1c99e-f400-7e34-9b5f-2fb303a9d8f3.jsonl"
)
FULL = "the disk holding the memory index is full"
READ_ONLY = "the memory index cannot be written: its state folder is read-only or inaccessible"
REMEDY = "free space or fix the state folder, then run /memory rebuild if it persists"


def _grow(session: Any) -> None:
    """New text in the current journal, more than any free pages of the index hold."""
    words = " ".join(f"growthword{number}" for number in range(40_000))
    line = {
        "type": "message",
        "id": "feedf00d",
        "parentId": None,
        "timestamp": "2026-11-29T11:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": words}]},
    }
    with open(session.root / TREE, "a", encoding="utf-8") as journal:
        journal.write(json.dumps(line) + "\n")


@pytest.mark.parametrize(
    ("damage", "reason"), [(fill_up, FULL), (refuse_writes, READ_ONLY)], ids=["full", "read-only"]
)
def test_commands_and_the_tool_name_the_same_specific_reason(
    fixture_session: Any, damage: Callable[[Store], None], reason: str
) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    damage(session.server.instances["a"].memory.index.store)
    _grow(session)
    expected = {"code": "index_unavailable", "message": f"{reason}; {REMEDY}"}
    assert session.command("index")["error"] == expected
    assert session.tool(action="search", query="growthword7")["error"] == expected


def test_an_undamaged_index_takes_the_same_growth(fixture_session: Any) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    _grow(session)
    assert session.command("index")["details"]["added"] == 1
    assert (
        session.tool(action="search", query="growthword7")["details"]["results"][0]["entryId"] == "feedf00d"
    )


def test_a_surface_words_the_advice_and_the_same_function_translates_it() -> None:
    bad = ToolError(
        "bad_argument", '"limit" must be an integer from 1 to 50, got 0', 'for example {"limit": 10}'
    )
    offset = ToolError("bad_offset", "offset 9 is past the end of entry e1 (3 characters)", "use 0 to 3")
    assert protocol_answer(bad)["error"] == {"code": "bad_argument", "message": bad.message}
    assert bad.message.endswith('; for example {"limit": 10}')
    assert protocol_answer(bad, CLI_WORDING)["error"]["message"] == bad.problem  # no JSON example
    assert protocol_answer(offset, CLI_WORDING)["error"]["message"] == (
        "offset 9 is past the end of entry e1 (3 characters) (example: pimem read ID --offset 0)"
    )
    full = IndexUnavailable(FULL, "SQLITE_FULL")
    assert protocol_answer(full)["error"]["message"] == f"{FULL}; {REMEDY}"
    assert protocol_answer(full, CLI_WORDING)["error"]["message"] == f"{FULL}; {CLI_WORDING.remedy}"
    assert "pimem rebuild" in CLI_WORDING.remedy
