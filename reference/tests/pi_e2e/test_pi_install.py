"""One command installs the memory in Pi (issue 15), on every pinned Pi.

A fresh agent dir and a PATH with no `pimem` anywhere; `pi install <checkout>` as the README
says; then sessions. The extension installs its Python side itself, in the background, into
`<agentDir>/memory-runtime/`, telling the user once when it starts and once when it is done; the
tool then answers. pip downloads from the package index as a user's would; only its download
cache is kept between runs (`.cache/pip`), so that the matrix does not fetch the same wheels twice.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mock_llm import Again, Text, ToolCall
from pi_rpc import PiProcess
from pi_world import REPO, TOOL, World, journal_lines, pi_versions, tool_results, world_for

pytestmark = pytest.mark.pi_e2e

INSTALL_SECONDS = 900  # a pip install from the package index, on a slow machine
MAX_SEARCHES = 50


@pytest.fixture(params=pi_versions())
def fresh(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    with world_for(request.param, tmp_path, pimem=False) as world:
        world.env["PIP_CACHE_DIR"] = str(REPO / ".cache" / "pip")
        yield world


def _notifications(pi: PiProcess) -> list[str]:
    return [
        str(record["message"])
        for record in pi.history
        if record.get("type") == "extension_ui_request" and record.get("method") == "notify"
    ]


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def test_pi_install_of_the_checkout_gives_a_working_memory(
    fresh: World, capsys: pytest.CaptureFixture[str]
) -> None:
    installed = fresh.pi_command("install", str(REPO))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = fresh.pi_command("list")
    assert str(REPO) in listed.stdout + listed.stderr
    project = fresh.home / "code" / "proj"
    project.mkdir(parents=True)
    word = f"marmot{secrets.token_hex(3)}"
    runtime = fresh.agent_dir / "memory-runtime"

    # Session 1: Pi starts at once (the install runs in the background) and the fact is planted.
    fresh.llm.queue(Text(f"Noted: the codename is {word}."))
    with fresh.run_pi(project) as pi:
        session1 = pi.session_file()
        pi.prompt(f"Remember: the codename is {word}.")
        for _ in range(INSTALL_SECONDS * 10):
            if (runtime / "installed.json").exists() and len(_notifications(pi)) >= 2:
                break
            time.sleep(0.1)
        first = _notifications(pi)
    log = runtime / "install.log"
    assert (runtime / "installed.json").exists(), log.read_text(errors="replace")[-3000:]
    assert (runtime / "venv" / "bin" / "pimem").exists()
    assert not (fresh.agent_dir / "memory" / "venv").exists()
    assert len(first) == 2, first
    assert "installing its Python side in the background" in first[0]
    assert "installed; memory_context works now" in first[1]

    # Session 2: nothing is installed again, nothing is said, and the memory finds session 1.
    searches = 1

    def until_indexed(_request: dict[str, Any]) -> ToolCall | Again | Text:
        nonlocal searches
        latest = tool_results(session2, searches)[-1]
        indexing = latest["details"].get("indexing", {"complete": True})
        if not indexing["complete"] and searches < MAX_SEARCHES:
            searches += 1
            time.sleep(0.2)
            return Again(ToolCall(TOOL, {"action": "search", "query": word}))
        return Text("Found it.")

    fresh.llm.queue(ToolCall(TOOL, {"action": "search", "query": word}), until_indexed)
    with fresh.run_pi(project) as pi:
        session2 = pi.session_file()
        pi.prompt("What was the codename? Check your memory.")
        search = tool_results(session2, searches)[-1]
        again = _notifications(pi)
    assert again == []
    assert not search["isError"], _text(search)
    assert any(
        hit["sessionId"] == journal_lines(session1)[0]["id"] and word in hit["excerpt"]
        for hit in search["details"]["results"]
    ), _text(search)
    assert (fresh.llm.pending(), fresh.llm.errors) == (0, [])
    with capsys.disabled():
        print(f"\nPi {fresh.version()}: pi install {REPO.name}; the extension said: {first}")
        print(f"--- search in the next session:\n{_text(search)[:400]}")
