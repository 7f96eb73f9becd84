"""Rebuild equality, the collector, forget, the lease, and index recovery."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pimem._store import SCHEMA_VERSION, Store
from pimem._store_checks import pretend_newer_schema, table_names

TREE = (
    "agent/sessions/--home-u-treeproj--/2026-11-11T08-00-00-000Z_01a1c99e-f400-7e34-9b5f-2fb303a9d8f3.jsonl"
)
QUERIES = [
    {"action": "search", "query": "gannettokenizer"},
    {"action": "search", "query": "tokenizer state machine"},
    {"action": "search", "query": "tokenizer nowhere"},
    {"action": "search", "kind": "user", "limit": 50},
    {"action": "search", "since": "2026-11-11", "until": "2026-11-11T08:00:20Z"},
    {"action": "summaries"},
    {"action": "read", "entryId": "979a75fe"},
    {"action": "around", "entryId": "74f24808"},
]


def answers(session: Any) -> list[Any]:
    return [session.tool(**query) for query in QUERIES]


def test_rebuild_gives_identical_results(fixture_session: Any) -> None:
    session = fixture_session("/home/u/treeproj", TREE, allow_global=True)
    before = [*answers(session), session.tool(action="search", query="the", scope="global", limit=50)]
    rebuilt = session.command("rebuild")
    assert rebuilt["details"]["journals"] > 0
    after = [*answers(session), session.tool(action="search", query="the", scope="global", limit=50)]
    assert after == before


def test_gc_preview_then_exact_confirm(fixture_session: Any) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    session.call(cmd="clock", instance="a", now="2099-01-01T00:00:00.000Z")  # every copied journal is quiet
    preview = session.command("gc")["details"]["candidates"]
    by_cwd = {candidate["path"].split("/sessions/")[-1].split("/")[0]: candidate for candidate in preview}
    assert "temp-dir" in by_cwd["--tmp-pi-scratch-7f3a--"]["reasons"]
    assert all(not path.startswith("--home-u-treeproj--") for path in by_cwd)  # compacted, and current
    changed = preview[0]["path"]
    with open(changed, "a", encoding="utf-8") as handle:
        handle.write("\n")
    confirmed = session.command("gc confirm")["details"]
    assert changed in [item["path"] for item in confirmed["skipped"]]
    assert sorted(confirmed["deleted"]) == sorted(c["path"] for c in preview[1:])
    assert all(not os.path.exists(path) for path in confirmed["deleted"])
    assert session.command("gc confirm")["details"] == {"deleted": [], "skipped": []}


def test_forget_survives_rebuild(fixture_session: Any) -> None:
    session = fixture_session("/home/u/treeproj", TREE)
    assert session.tool(action="search", query="gannettokenizer")["details"]["results"]
    assert session.command("forget 979a75fe")["details"] == {"forgotten": {"kind": "entry", "id": "979a75fe"}}
    for _ in range(2):
        assert session.tool(action="search", query="gannettokenizer")["details"]["results"] == []
        assert session.tool(action="read", entryId="979a75fe")["details"]["status"] == "not_found"
        session.command("rebuild")
    assert session.command("forget nosuchid")["error"]["code"] == "bad_argument"


def test_lease_log_shows_one_holder_at_a_time(fixture_session: Any) -> None:
    first = fixture_session("/home/u/treeproj", TREE)
    state = first.root / "state"
    for _ in range(3):
        first.call(cmd="event", instance="a", name="session_start", data={"reason": "resume"})
        first.call(cmd="idle", instance="a")
    records = [json.loads(line) for line in (state / "lease-log.jsonl").read_text().splitlines()]
    holder = None
    for record in records:
        if record["event"] == "acquire":
            assert holder is None
            holder = record["owner"]
        elif record["event"] == "release":
            assert holder == record["owner"]
            holder = None
        else:
            assert record["owner"] == holder
    assert holder is None and len(records) >= 6


def test_schema_change_and_corruption_rebuild(tmp_path: Path) -> None:
    path = str(tmp_path / "index.sqlite")
    store = Store(path)
    pretend_newer_schema(store, "pimem-999")
    assert {"future_feature", "future_terms", "future_terms_data"} <= set(table_names(store))
    assert store.meta("schema") == "pimem-999"
    store.close()
    reopened = Store(path)  # a fresh connection: the FTS5 table it drops was never opened by it
    assert not [name for name in table_names(reopened) if name.startswith("future_")]
    assert reopened.meta("schema") == SCHEMA_VERSION
    reopened.close()
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    Path(path).write_bytes(b"this is not a database" * 100)
    recovered = Store(path)
    assert recovered.meta("schema") == SCHEMA_VERSION
    recovered.close()
