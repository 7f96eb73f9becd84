"""The search hint is honest: while indexing is under way it says so first, not "try other words"."""

from __future__ import annotations

import shutil
from pathlib import Path

from pimem._maintenance import index_all
from pimem._memory import Config, Memory
from pimem._tool import run_tool

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "journals"


def _memory(root: Path) -> Memory:
    shutil.copytree(FIXTURES, root / "j")
    config = Config(
        state_dir=str(root / "state"),
        agent_dir=str(root / "j" / "agent"),
        session_dirs=[str(root / "j" / "flat")],
        home="/home/u",
        cwd="/home/u/app",
    )
    return Memory(config)  # wake() does nothing: no background indexing catches up


def test_a_search_during_indexing_says_so_first(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    details = run_tool(memory, {"action": "search", "query": "nosuchwordanywhere"})["details"]
    assert not details["indexing"]["complete"]
    assert details["hint"].startswith("Indexing in progress: 0 of ")
    assert "Try other words" not in details["hint"]
    text = run_tool(memory, {"action": "search", "query": "nosuchwordanywhere"})["content"][0]["text"]
    assert text.splitlines()[1].startswith("Indexing in progress")


def test_a_search_after_indexing_suggests_other_words(tmp_path: Path) -> None:
    memory = _memory(tmp_path)
    index_all(memory)
    details = run_tool(memory, {"action": "search", "query": "nosuchwordanywhere"})["details"]
    assert details["indexing"]["complete"]
    assert details["hint"].startswith("Nothing matched. Try other words")
