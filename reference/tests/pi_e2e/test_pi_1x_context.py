"""Pi 1.x only: what the real Pi did to the model's context, seen through memory_context (issue 15).

Session 1 goes down one branch and back with a branch summary, then has one answer replaced and
one omitted by `context_edit` entries (from the test extension extensions/context-edits.js, the
way extensions shrink results), then is compacted. Session 2 of the same project asks the memory
for each, and the checks read only what Pi wrote into its journals.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mock_llm import Text, ToolCall
from pi_world import (
    HERE,
    REPO,
    TOOL,
    SearchUntilIndexed,
    World,
    journal_lines,
    pi_versions,
    tool_results,
    world_for,
)

pytestmark = pytest.mark.pi_e2e

EXTENSION = REPO / "reference" / "pi-extension"
EDITS = HERE / "extensions" / "context-edits.js"
MAX_SEARCHES = 50
FILLER = " ".join(["This reply is long on purpose so that the compaction keeps only recent turns."] * 8)


@pytest.fixture(params=pi_versions(since="1.0.0"))
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_for(request.param, tmp_path) as world:
        yield world


def _wait_for_line(journal: Path, entry_type: str) -> None:
    for _ in range(200):
        if any(line["type"] == entry_type for line in journal_lines(journal)):
            return
        time.sleep(0.05)
    raise AssertionError(f"{journal.name} never got a {entry_type} line")


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def _assistant(lines: list[dict[str, Any]], word: str) -> dict[str, Any]:
    return next(
        line
        for line in lines
        if line["type"] == "message"
        and line["message"]["role"] == "assistant"
        and any(word in block.get("text", "") for block in line["message"]["content"])
    )


def test_memory_shows_what_pi_1x_edited_compacted_and_summarised(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    assert world.pi_command("install", str(EXTENSION)).returncode == 0
    tag = secrets.token_hex(3)
    narwhal, ibis, lemur, quokka, wombat = (
        f"{name}{tag}" for name in ("narwhal", "ibis", "lemur", "quokka", "wombat")
    )
    project = world.home / "code" / "proj"
    project.mkdir(parents=True)
    llm = world.llm

    # Session 1: a fact, a branch left with a summary, a replaced and an omitted answer, a compaction.
    llm.queue(
        Text(f"The mascot is {narwhal}. {FILLER}"),
        Text(f"Exploring the {ibis} idea."),
        Text(f"EDITME[{quokka}] original answer about {lemur}."),
        Text(f"OMITME answer mentioning {wombat}."),
        Text(FILLER),
    )
    with world.run_pi(project, "-e", str(EDITS)) as pi:
        session1 = pi.session_file()
        pi.prompt("Plant the mascot fact.")
        pi.prompt("Try another idea.")
        back_to = _assistant(journal_lines(session1), narwhal)["id"]
        pi.command({"type": "prompt", "message": f"/branchsum {back_to}"})
        _wait_for_line(session1, "branch_summary")
        pi.prompt("Say something to be edited.")
        pi.prompt("Say something to be omitted.")
        pi.prompt("And something long.")
        compaction = pi.command({"type": "compact"})
    lines1 = journal_lines(session1)
    by_type = {line["type"] for line in lines1}
    assert {"context_edit", "branch_summary", "compaction"} <= by_type, by_type
    edits = [line for line in lines1 if line["type"] == "context_edit"]
    edited, omitted = _assistant(lines1, lemur)["id"], _assistant(lines1, wombat)["id"]
    assert [(edit["targetId"], edit["replacement"] is None) for edit in edits] == [
        (edited, False),
        (omitted, True),
    ]
    summary = next(line for line in lines1 if line["type"] == "branch_summary")
    assert summary["fromId"] != summary["parentId"]  # Pi 1.x: the old leaf

    # Session 2: search until indexed, then ask for each thing Pi changed.
    lemur_search = ToolCall(TOOL, {"action": "search", "query": lemur})
    until_indexed = SearchUntilIndexed(lambda: session2, quokka, lemur_search, MAX_SEARCHES)
    llm.queue(
        ToolCall(TOOL, {"action": "search", "query": quokka}),
        until_indexed,
        ToolCall(TOOL, {"action": "search", "query": wombat}),
        ToolCall(TOOL, {"action": "read", "entryId": omitted}),
        ToolCall(TOOL, {"action": "summaries"}),
        ToolCall(TOOL, {"action": "search", "query": narwhal}),
        ToolCall(TOOL, {"action": "search", "query": ibis}),
        Text("Done."),
    )
    with world.run_pi(project) as pi:
        session2 = pi.session_file()
        pi.prompt("What did the model see? Check your memory.")
        *_, first, replaced, omission, read, summaries, compacted, branch = tool_results(
            session2, until_indexed.searches + 6
        )
    assert (llm.pending(), llm.errors) == (0, [])
    for result in (first, replaced, omission, read, summaries, compacted, branch):
        assert not result["isError"], _text(result)
    session1_id = lines1[0]["id"]

    # The replacement's words are an entry of kind context_edit.
    # (the answer itself also holds the words, in its EDITME[...] marker)
    hits = {hit["entryId"]: hit for hit in first["details"]["results"] if hit["sessionId"] == session1_id}
    assert hits[edits[0]["id"]]["kind"] == "context_edit"
    assert "contextEdit" not in hits[edits[0]["id"]]
    # The replaced answer is found by its original words, marked replaced by that edit.
    (hit,) = [hit for hit in replaced["details"]["results"] if hit["entryId"] == edited]
    assert hit["contextEdit"] == {"state": "replaced", "editEntryId": edits[0]["id"]}
    assert f"replaced in the context by context_edit {edits[0]['id']}" in _text(replaced)
    # The omitted answer is found and read back with its text, marked omitted.
    (hit,) = [hit for hit in omission["details"]["results"] if hit["entryId"] == omitted]
    assert hit["contextEdit"] == {"state": "omitted", "editEntryId": edits[1]["id"]}
    assert read["details"]["status"] == "ok" and wombat in read["details"]["text"]
    assert read["details"]["contextEdit"] == {"state": "omitted", "editEntryId": edits[1]["id"]}
    # The compaction and the branch summary are listed; the compacted-away fact and the left
    # branch are found, with no mark (no context_edit touched them).
    listed = {(item["entryId"], item["kind"]) for item in summaries["details"]["results"]}
    assert {(summary["id"], "branch_summary"), (compaction_id(lines1, compaction), "compaction")} <= listed
    for found, word in ((compacted, narwhal), (branch, ibis)):
        hits = [hit for hit in found["details"]["results"] if hit["sessionId"] == session1_id]
        assert hits and all("contextEdit" not in hit for hit in hits), (word, hits)
    with capsys.disabled():
        print(f"\nPi {world.version()}: context_edit, compaction and branch summary through memory_context:")
        for name, result in (("replaced", replaced), ("omitted", read), ("summaries", summaries)):
            print(f"--- {name}:\n{_text(result)[:400]}")


def compaction_id(lines: list[dict[str, Any]], compaction: dict[str, Any]) -> str:
    """The id of the compaction entry the `compact` command wrote."""
    return next(
        line["id"]
        for line in lines
        if line["type"] == "compaction" and line["firstKeptEntryId"] == compaction["firstKeptEntryId"]
    )
