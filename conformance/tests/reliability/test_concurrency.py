"""Issue 8.2: several `pimem serve` processes share one sessions folder and one state folder.

First a lease takeover: a process is killed (SIGKILL) while it holds the backfill lease; a second
process cannot take the lease before it expires and takes it once its clock (the protocol's
`clock` message) passes the expiry. Then four processes, each with its own current session, append
to their journals, search and read while backfill runs over a backlog. Every call must answer
without an error (no "database is locked" may reach a caller), each process must find what it has
just written, and in the end every process must give the same results as a single process that
indexed the same journals alone. The lease log must show one holder at a time throughout.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from .reliability_kit import (
    JournalWriter,
    Memory,
    entry_line,
    header_line,
    line_bytes,
    linear_session,
    pimem_command,
    record_figure,
    result_ids,
    scaled,
    strings_in,
    tally,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"
LEASE_SECONDS = 30
T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
WORKERS = 4
QUERIES = ["backlog", "concurrent", "worker", *(f"backlogword{number}" for number in range(0, 200, 17))]


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def write_backlog(writer: JournalWriter, first: int, count: int) -> None:
    filler = " ".join(["backlog entry with words to index"] * 8)
    for journal in range(first, first + count):
        entries = [
            (
                f"b{journal:03x}{entry:04x}",
                f"backlogword{journal} {filler}",
                f"2026-10-{1 + journal % 28:02d}T08:{entry:02d}:00.000Z",
            )
            for entry in range(20)
        ]
        session = f"0193eeee-{journal:04d}-7000-8000-000000000000"
        writer.write(writer.path_for(CWD, f"backlog-{journal:04d}"), linear_session(session, CWD, entries))


def lease_events(state: Path) -> list[dict[str, Any]]:
    log = state / "lease-log.jsonl"
    if not log.exists():
        return []
    # The last line may be half-written while a process appends to the log: it is not read yet.
    complete = log.read_text().split("\n")[:-1]
    return [json.loads(line) for line in complete if line.strip()]


def overlapping_holders(events: list[dict[str, Any]]) -> list[str]:
    """Replay the lease log: an acquire while another owner holds an unexpired lease is an overlap."""
    problems, holder = [], None
    for number, event in enumerate(events):
        owner, kind = event["owner"], event["event"]
        if kind == "acquire":
            if holder is not None and holder["owner"] != owner and holder["expiresAt"] > event["at"]:
                problems.append(f"event {number}: {owner} acquired while {holder} held the lease")
            holder = {"owner": owner, "expiresAt": event["expiresAt"]}
        elif kind == "renew":
            if holder is None or holder["owner"] != owner:
                problems.append(f"event {number}: {owner} renewed a lease held by {holder}")
            holder = {"owner": owner, "expiresAt": event["expiresAt"]}
        elif kind == "release":
            if holder is None or holder["owner"] != owner:
                problems.append(f"event {number}: {owner} released a lease held by {holder}")
            holder = None
    return problems


def serve() -> Memory:
    return Memory.serve([*pimem_command(), "serve"], timeout=180)


def wait_for_acquire(state: Path, owner_prefix: str, deadline: float) -> dict[str, Any] | None:
    while time.monotonic() < deadline:
        for event in lease_events(state):
            if event["owner"].startswith(owner_prefix) and event["event"] == "acquire":
                return event
        time.sleep(0.005)
    return None


def answers(memory: Memory, instance: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for query in QUERIES:
        details = memory.tool(instance, action="search", query=query, limit=50)["details"]
        seen[query] = (details["match"], sorted(result_ids({"details": details})))
    seen["newest"] = result_ids(memory.tool(instance, action="search", limit=50))
    return seen


def test_killed_lease_holder_is_replaced_after_expiry(shared_tmp: Path) -> None:
    writer = JournalWriter(shared_tmp)
    write_backlog(writer, 0, 150)
    settings = {"lease_seconds": LEASE_SECONDS}
    holder = serve()
    try:
        holder.open(
            "doomed",
            writer.workspace(CWD, writer.path_for(CWD, "doomed")),
            now=iso(T0),
            settings=settings,
            index=False,
        )
        holder.event("doomed", "session_start", {"reason": "startup"})
        acquired = wait_for_acquire(writer.state_dir, "doomed", time.monotonic() + 60)
        assert acquired is not None, "the first process never took the backfill lease"
    finally:
        holder.adapter.connector.close()  # SIGKILL, mid-backfill
    last = [event for event in lease_events(writer.state_dir) if event["owner"] == acquired["owner"]][-1]
    assert last["event"] != "release", "the backfill ended before the kill; make the backlog bigger"

    successor = serve()
    try:
        successor.open(
            "heir",
            writer.workspace(CWD, writer.path_for(CWD, "heir")),
            now=iso(T0 + timedelta(seconds=LEASE_SECONDS // 2)),
            settings=settings,
        )
        early = [
            event
            for event in lease_events(writer.state_dir)
            if event["owner"].startswith("heir") and event["event"] == "acquire"
        ]
        assert early == [], f"took a lease that had not expired: {early}"
        successor.clock("heir", iso(T0 + timedelta(seconds=LEASE_SECONDS + 1)))
        successor.event("heir", "session_start", {"reason": "startup"})
        successor.idle("heir")
        taken = [
            event
            for event in lease_events(writer.state_dir)
            if event["owner"].startswith("heir") and event["event"] == "acquire"
        ]
        assert taken and taken[0]["at"] >= last["expiresAt"], taken
        status = successor.command("heir", "status")["details"]
        assert status["indexing"]["complete"] is True, status
    finally:
        successor.stop()
    problems = overlapping_holders(lease_events(writer.state_dir))
    assert not problems, problems
    record_figure("concurrency: lease taken over after expiry", f"{acquired['owner']} -> {taken[0]['owner']}")


def test_four_processes_index_and_search_one_folder_consistently(shared_tmp: Path) -> None:
    writer = JournalWriter(shared_tmp)
    write_backlog(writer, 0, 200)
    rounds = scaled(15, 150)
    processes = [serve() for _ in range(WORKERS)]
    calls, failures = [0] * WORKERS, []

    def work(number: int) -> None:
        memory, instance = processes[number], f"w{number}"
        journal = writer.path_for(CWD, f"worker-{number}")
        journal.write_bytes(line_bytes(header_line(f"0193ffff-{number:04d}-7000-8000-000000000000", CWD)))
        memory.open(
            instance,
            writer.workspace(CWD, journal),
            now=iso(T0),
            settings={"lease_seconds": LEASE_SECONDS},
            index=False,
        )
        memory.event(instance, "session_start", {"reason": "startup"})
        parent = None
        for step in range(rounds):
            entry_id, word = f"w{number}{step:06x}", f"workerword{number}x{step}"
            with journal.open("ab") as handle:  # as Pi appends: one whole line at a time
                handle.write(
                    line_bytes(
                        entry_line(
                            entry_id,
                            parent,
                            f"concurrent worker {word}",
                            timestamp=f"2026-11-20T1{number}:{step // 60 % 60:02d}:{step % 60:02d}.000Z",
                        )
                    )
                )
            parent = entry_id
            own = memory.tool(instance, action="search", query=word)
            shared = memory.tool(instance, action="search", query="backlog concurrent", limit=20)
            read = memory.tool(instance, action="read", entryId=entry_id)
            calls[number] += 3
            for response in (own, shared, read):
                if "error" in response or any("locked" in text for text in strings_in(response)):
                    failures.append(f"w{number} step {step}: {str(response)[:300]}")
            if result_ids(own) != [entry_id]:
                failures.append(f"w{number} step {step}: its own new entry was not found: {result_ids(own)}")
        memory.idle(instance)

    try:
        threads = [threading.Thread(target=work, args=(number,)) for number in range(WORKERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not failures, "\n".join(failures[:20])
        seen = [answers(memory, f"w{number}") for number, memory in enumerate(processes)]
    finally:
        for memory in processes:
            memory.stop()

    alone = serve()  # a single process over the same journals, with a state folder of its own
    try:
        workspace = {
            **writer.workspace(CWD, writer.path_for(CWD, "alone")),
            "state_dir": str(shared_tmp / "alone"),
        }
        alone.open("alone", workspace, now=iso(T0))
        expected = answers(alone, "alone")
    finally:
        alone.stop()
    for number, answer in enumerate(seen):
        differing = {
            query: (answer[query], wanted) for query, wanted in expected.items() if answer[query] != wanted
        }
        assert not differing, f"w{number} differs from a single process: {str(differing)[:1000]}"
    problems = overlapping_holders(lease_events(writer.state_dir))
    assert not problems, problems
    holders = {event["owner"] for event in lease_events(writer.state_dir) if event["event"] == "acquire"}
    tally("trials run", sum(calls), "calls from concurrent processes")
    record_figure(
        "concurrency: processes / calls / lease holders",
        f"{WORKERS} / {sum(calls)} without an error / {len(holders)} holder(s), never two at once",
    )
