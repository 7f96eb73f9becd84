"""The exact text the model reads for each action, over the committed fixtures (syrupy snapshots)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

TREE = (
    "agent/sessions/--home-u-treeproj--/2026-11-11T08-00-00-000Z_01a1c99e-f400-7e34-9b5f-2fb303a9d8f3.jsonl"
)
CALLS = [
    ("search", {"action": "search", "query": "gannettokenizer"}),
    ("search-any", {"action": "search", "query": "gannettokenizer nowhereword"}),
    ("search-none", {"action": "search", "query": "nowhereword"}),
    ("list", {"action": "search", "limit": 3}),
    ("summaries", {"action": "summaries"}),
    ("read", {"action": "read", "entryId": "979a75fe"}),
    ("read-missing", {"action": "read", "entryId": "ffffffff"}),
    ("around", {"action": "around", "entryId": "74f24808", "before": 1, "after": 2}),
    ("bad-argument", {"action": "search", "limit": 0}),
    ("unknown-action", {"action": "find"}),
    ("bad-date", {"action": "search", "since": "last week"}),
    ("scope-denied", {"action": "search", "scope": "global"}),
]


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.with_defaults(extension_class=JSONSnapshotExtension)


def test_model_text_for_each_action(fixture_session: Any, snapshot_json: SnapshotAssertion) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    seen: dict[str, Any] = {}
    for name, arguments in CALLS:
        answer = session.tool(**arguments)
        # source handles are opaque and derive from the (temporary) journal path
        seen[name] = (
            answer["error"]
            if "error" in answer
            else re.sub(r"source \w+:", "source <handle>:", answer["content"][0]["text"])
        )
    assert seen == snapshot_json


def test_text_and_details_show_the_same_results(fixture_session: Any) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    answer = session.tool(action="search", query="puffinbranchsum skuacompact")
    text = answer["content"][0]["text"]
    assert answer["details"]["results"]
    for result in answer["details"]["results"]:
        assert result["entryId"] in text and result["source"] in text
