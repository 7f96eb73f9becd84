"""The real Pi uses the reference as its memory, end to end (issue 6), on every pinned Pi (issue 15);
a question the user has just typed never hides the answer (issue 29).

Each Pi of the version matrix (`pi-<version>/` beside this file: 0.73.1 on the system Node 20,
1.6.0 on the Node 22 its lockfile brings) is installed by `pi_world.installed_pi`, the extension
with `pi install <path>` as the README says, and every Pi runs in RPC mode under a throwaway HOME
against the scripted mock LLM in mock_llm.py, with PIMEM_COMMAND pointing at this venv's
`pimem`. Only what Pi itself wrote into its journals is checked.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from mock_llm import Again, Text, ToolCall
from pi_rpc import PiProcess, children_of
from pi_world import (
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
JOURNAL_SCHEMA = REPO / "spec" / "schemas" / "pi-journal-line.schema.json"
# How often the scripted model searches again while the tool reports indexing in progress.
MAX_SEARCHES = 50
# Enough words that keeping only ~60 recent tokens pushes the first turn out of the context.
FILLER = " ".join(["This reply is long on purpose so that the compaction keeps only recent turns."] * 8)
QUESTION = "Where does staging run?"


@pytest.fixture(params=pi_versions())
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_for(request.param, tmp_path) as world:
        yield world


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def _search(query: str, **more: Any) -> ToolCall:
    return ToolCall(TOOL, {"action": "search", "query": query, **more})


def _serve_pids(pi: PiProcess, expected: int) -> list[int]:
    """The `pimem serve` children of a Pi once there are `expected` (a stopped one takes a moment)."""
    for _ in range(100):
        pids = children_of(pi.process.pid, "serve")
        if len(pids) == expected:
            return pids
        time.sleep(0.1)
    raise AssertionError(f"expected {expected} pimem serve process(es) under Pi, found {pids}")


def test_real_pi_recovers_compacted_text_through_the_memory_tool(
    world: World, capsys: pytest.CaptureFixture[str]
) -> None:
    checked: list[str] = []

    def show(step: str, result: dict[str, Any]) -> None:
        checked.append(f"--- {step} (isError={result['isError']}):\n{_text(result)[:600]}")

    version = world.version()
    assert version == world.installed.version
    installed = world.pi_command("install", str(EXTENSION))
    assert installed.returncode == 0, installed.stderr

    host = f"orbitfalcon{secrets.token_hex(4)}"
    secret = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    project_a = world.home / "code" / "proj-a"
    project_b = world.home / "code" / "proj-b"
    (project_a / "notes").mkdir(parents=True)
    project_b.mkdir(parents=True)
    (project_a / "notes" / "deploy.txt").write_text(f"staging host: {host}\nGITHUB_TOKEN={secret}\n")
    llm = world.llm

    # (1) Session 1 in project A: the fact, and the secret in a tool result; (2) compaction.
    llm.queue(
        ToolCall("read", {"path": "notes/deploy.txt"}),
        Text(f"Noted: staging runs on {host}."),
        Text(FILLER),
        Text(FILLER),
    )
    with world.run_pi(project_a) as pi:
        session1 = pi.session_file()
        pi.prompt(f"Remember that staging runs on {host}, and read notes/deploy.txt.")
        pi.prompt("Unrelated: describe three colours at length.")
        pi.prompt("And three animals, also at length.")
        compaction = pi.command({"type": "compact"})
    lines1 = journal_lines(session1)
    assert secret in session1.read_text(), "the planted secret never reached session 1's journal"
    ids1 = [line.get("id") for line in lines1]
    kept_from = ids1.index(compaction["firstKeptEntryId"])
    compacted_away = set(ids1[1:kept_from])
    assert host not in compaction["summary"]

    # (3) Session 2 in project A: search, then read the hit in session 1's tool result. While the
    # tool reports indexing in progress (session 2's server indexes in the background), the
    # scripted model searches again, as a model told "results may be incomplete" would.
    session1_id = lines1[0]["id"]
    searches = 1

    def read_session1_tool_result(_request: dict[str, Any]) -> Text | ToolCall | Again:
        nonlocal searches
        search = tool_results(session2, searches)[-1]
        if not search["details"]["indexing"]["complete"] and searches < MAX_SEARCHES:
            searches += 1
            time.sleep(0.2)  # the model's thinking time, during which indexing goes on
            return Again(_search(host))
        hits = [
            hit
            for hit in search["details"]["results"]
            if hit["sessionId"] == session1_id and hit["kind"] == "tool_result"
        ]
        if not hits:
            return Text("the search found no tool result of session 1")
        return ToolCall(TOOL, {"action": "read", "entryId": hits[0]["entryId"], "source": hits[0]["source"]})

    llm.queue(_search(host), read_session1_tool_result, Text(f"Staging runs on {host}."))
    with world.run_pi(project_a) as pi:
        session2 = pi.session_file()
        pi.prompt("Where does staging run? Check your memory.")
        *_, search, read = tool_results(session2, searches + 1)
        show(f"session 2: search (number {searches})", search)
        show("session 2: read", read)
        assert not search["isError"]
        assert host in _text(search)
        assert compacted_away & {hit["entryId"] for hit in search["details"]["results"]}
        assert not read["isError"]
        assert read["details"]["status"] == "ok"
        assert read["details"]["entryId"] in compacted_away
        assert host in read["details"]["text"]
        assert host in _text(read)
        assert "[REDACTED:" in _text(read)
        assert secret not in session2.read_text(), "the secret reached session 2's journal"

        # (4) /memory status answers through RPC.
        status = pi.notification_after("/memory status")
        checked.append(f"--- /memory status ({status['notifyType']}): {status['message']}")
        assert status["notifyType"] == "info"
        assert status["message"]

        # (5) A fork of session 2 (its extension sees session_start twice) still answers, with one server.
        fork_from = pi.command({"type": "get_fork_messages"})["messages"][0]["entryId"]
        assert pi.command({"type": "fork", "entryId": fork_from})["cancelled"] is False
        fork = pi.session_file()
        assert fork != session2
        llm.queue(_search(host), Text("Found it again."))
        pi.prompt("After the fork: where does staging run?")
        (after_fork,) = tool_results(fork, 1)
        show("fork of session 2: search", after_fork)
        assert not after_fork["isError"]
        assert host in _text(after_fork)
        (killed,) = _serve_pids(pi, expected=1)

        # (6) Kill pimem serve mid-session: the next tool call still answers.
        os.kill(killed, signal.SIGKILL)
        llm.queue(_search(host), Text("Still there."))
        pi.prompt("Once more: where does staging run?")
        after_kill = tool_results(fork, 2)[-1]
        show("after killing pimem serve: search", after_kill)
        assert not after_kill["isError"], _text(after_kill)
        assert host in _text(after_kill)
        assert killed not in _serve_pids(pi, expected=1)
    assert (llm.pending(), llm.errors) == (0, [])

    # (7) Project B finds nothing of project A; global scope needs the user's opt-in.
    llm.queue(_search(host), _search(host, scope="global"), Text("Nothing here."))
    with world.run_pi(project_b) as pi:
        session3 = pi.session_file()
        pi.prompt("Where does staging run?")
    in_project, denied = tool_results(session3, 2)
    show("session 3 in project B: search", in_project)
    show("session 3 in project B: global search without opt-in", denied)
    assert not in_project["isError"]
    # The only hit allowed is session 3's own tool call, which names the host in its arguments.
    assert {hit["cwd"] for hit in in_project["details"]["results"]} <= {str(project_b)}
    assert {hit["sessionId"] for hit in in_project["details"]["results"]} <= {
        journal_lines(session3)[0]["id"]
    }
    assert denied["isError"]
    assert "scope_denied" in _text(denied)

    world.update_settings(memory={"allowGlobal": True})
    llm.queue(_search(host, scope="global"), Text("Found it in project A."))
    with world.run_pi(project_b) as pi:
        session4 = pi.session_file()
        pi.prompt("Where does staging run? Look everywhere.")
    (everywhere,) = tool_results(session4, 1)
    show("project B with allowGlobal: global search", everywhere)
    assert not everywhere["isError"]
    assert any(
        hit["cwd"] == str(project_a) and host in hit["excerpt"] for hit in everywhere["details"]["results"]
    )
    assert (llm.pending(), llm.errors) == (0, [])

    journals = sorted((world.agent_dir / "sessions").glob("*/*.jsonl"))
    assert {session1, session2, fork, session3, session4} <= set(journals)
    _validate_journals(journals)
    with capsys.disabled():
        print(f"\nPi {version}: {len(journals)} journals; memory_context results checked:")
        print("\n".join(checked))


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


# Issue 29, point 7: in an earlier session of a project the assistant said where staging runs. In a
# new session the user asks "Where does staging run?", Pi writes the question into the current
# journal, and the scripted model searches with those same words. The earlier answer must be among
# the results and the user's question must not: the model already sees it.
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
    until_indexed = SearchUntilIndexed(
        lambda: session2, QUESTION, Text("That is what the memory says."), MAX_SEARCHES
    )
    llm.queue(_search(QUESTION), until_indexed)
    with world.run_pi(project) as pi:
        session2 = pi.session_file()
        pi.prompt(QUESTION)
        search = tool_results(session2, until_indexed.searches)[-1]
    question = _entry_of(session2, "user", QUESTION)
    found = [hit["entryId"] for hit in search["details"]["results"]]
    with capsys.disabled():
        calls = until_indexed.searches
        print(f"\nPi {world.installed.version}: search {QUESTION!r} after {calls} call(s): {found}")
        print(f"  answer {answer} (session 1), question {question} (session 2)")
    assert not search["isError"]
    assert search["details"]["indexing"]["complete"]
    assert answer in found, f"the answer {answer} is hidden: {search['details']}"
    assert question not in found, f"the user's own question {question} came back: {search['details']}"
    assert (llm.pending(), llm.errors) == (0, [])


def _validate_journals(journals: list[Path]) -> None:
    validator = Draft202012Validator(json.loads(JOURNAL_SCHEMA.read_text(encoding="utf-8")))
    errors = [
        f"{journal.name} line {number}: {error.message}"
        for journal in journals
        for number, line in enumerate(journal_lines(journal))
        for error in validator.iter_errors(line)
    ]
    assert errors == []
