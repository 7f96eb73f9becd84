"""The real Pi asks its memory a question the user has just typed (issue 29, point 7).

In an earlier session of a project the assistant said where staging runs. In a new session the
user asks "Where does staging run?", Pi writes that question into the current journal, and the
scripted model searches the memory with those same words. The answer from the earlier session must
be among the results and the user's question must not: the model already sees it. On every pinned
Pi (0.73.1 and 1.6.0), with the extension installed as the README says; only what Pi wrote into
its journals is checked.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mock_llm import Again, Text, ToolCall
from pi_world import REPO, TOOL, World, journal_lines, pi_versions, tool_results, world_for

pytestmark = pytest.mark.pi_e2e

EXTENSION = REPO / "reference" / "pi-extension"
# How often the scripted model searches again while the tool reports indexing in progress.
MAX_SEARCHES = 50
QUESTION = "Where does staging run?"


@pytest.fixture(params=pi_versions())
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_for(request.param, tmp_path) as world:
        yield world


def _search() -> ToolCall:
    return ToolCall(TOOL, {"action": "search", "query": QUESTION})


def _entry_of(journal: Path, role: str, text: str) -> str:
    """The id of the journal's message of `role` whose text holds `text`."""
    for line in journal_lines(journal):
        message = line.get("message") if line["type"] == "message" else None
        if message and message["role"] == role:
            content = message["content"]
            texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
            if any(text in part for part in texts):
                return str(line["id"])
    raise AssertionError(f"{journal.name} holds no {role} message with {text!r}")


def test_the_question_just_typed_never_hides_the_earlier_answer(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = world.pi_command("install", str(EXTENSION))
    assert installed.returncode == 0, installed.stderr
    project = world.home / "code" / "app"
    project.mkdir(parents=True)
    host = f"orbitfalcon{secrets.token_hex(3)}"
    answer_text = f"Done. Staging runs on {host}, behind the VPN; deploys go through the staging pipeline."
    llm = world.llm

    # Session 1: the answer.
    llm.queue(Text(answer_text))
    with world.run_pi(project) as pi:
        session1 = pi.session_file()
        pi.prompt("We need a staging environment for the payments service.")
    answer = _entry_of(session1, "assistant", host)

    # Session 2: the user types the question and the model searches with those words. While the
    # tool reports indexing in progress, the model searches again.
    searches = 1

    def until_indexed(_request: dict[str, Any]) -> Text | Again:
        nonlocal searches
        search = tool_results(session2, searches)[-1]
        if not search["details"]["indexing"]["complete"] and searches < MAX_SEARCHES:
            searches += 1
            time.sleep(0.2)
            return Again(_search())
        return Text("That is what the memory says.")

    llm.queue(_search(), until_indexed)
    with world.run_pi(project) as pi:
        session2 = pi.session_file()
        pi.prompt(QUESTION)
        search = tool_results(session2, searches)[-1]
    question = _entry_of(session2, "user", QUESTION)
    found = [hit["entryId"] for hit in search["details"]["results"]]
    with capsys.disabled():
        print(f"\nPi {world.installed.version}: search {QUESTION!r} after {searches} call(s): {found}")
        print(f"  answer {answer} (session 1), question {question} (session 2)")
    assert not search["isError"]
    assert search["details"]["indexing"]["complete"]
    assert answer in found, f"the answer {answer} is hidden: {search['details']}"
    assert question not in found, f"the user's own question {question} came back: {search['details']}"
    assert (llm.pending(), llm.errors) == (0, [])
