"""Issue 8.7: with 20 projects of 20 sessions each, nothing of one project reaches another.

Project folders are named so that naive prefix matching fails (`/home/u/p1` is a string prefix
of `/home/u/p10` ... `/home/u/p19`), and one entry id is shared by two sessions of every project
(as `/fork` copies ids), so reads by that id are ambiguous inside each project. For every ordered
pair (P, Q) of distinct projects, P's instance asks one search that ORs every planted term of Q;
it also reads one of Q's entry ids and searches with Q's session id (for one Q per P at CI size,
for every Q under PIMEM_SLOW=1). P also lists its own summaries, its newest entries and its
ambiguity candidates. No response may carry an entry id, a session id or a planted term of any
other project, except as the echo of the caller's own argument; and a response about Q's id must
equal the response about an id that exists nowhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from .reliability_kit import (
    SLOW,
    JournalWriter,
    Memory,
    entry_line,
    header_line,
    record_figure,
    strings_in,
    tally,
)

pytestmark = pytest.mark.reliability

PROJECTS = 20
SESSIONS = 20
ENTRIES = 3
SHARED_ID = "5ca1ab1e"  # present in sessions 0 and 1 of every project
NOWHERE_ENTRY = "e9999999"
NOWHERE_SESSION = "0193ffff-ffff-7fff-8fff-ffffffffffff"


def cwd_of(project: int) -> str:
    return f"/home/u/p{project}"


def session_id(project: int, session: int) -> str:
    return f"0193aa{project:02d}-{session:04d}-7000-8000-{project:04d}{session:04d}0000"


def entry_id(project: int, session: int, entry: int) -> str:
    return f"e{project:02d}{session:02d}{entry:03d}"


def term(project: int, session: int, entry: int) -> str:
    return f"scopeterm{project:02d}x{session:02d}x{entry}"


@dataclass
class Project:
    number: int
    entry_ids: list[str] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)


def write_projects(writer: JournalWriter) -> list[Project]:
    projects = []
    for number in range(PROJECTS):
        project = Project(number)
        for session in range(SESSIONS):
            sid = session_id(number, session)
            lines: list[dict[str, Any]] = [header_line(sid, cwd_of(number))]
            parent = None
            for entry in range(ENTRIES):
                eid = entry_id(number, session, entry)
                word = term(number, session, entry)
                lines.append(
                    entry_line(
                        eid,
                        parent,
                        f"project note {word} about the build",
                        timestamp=f"2026-11-{1 + session % 27:02d}T10:00:0{entry}.000Z",
                    )
                )
                project.entry_ids.append(eid)
                project.terms.append(word)
                parent = eid
            if session < 2:
                lines.append(entry_line(SHARED_ID, parent, f"forked note {term(number, session, 9)}"))
                project.terms.append(term(number, session, 9))
            summary_word = term(number, session, 8)
            lines.append(
                {
                    "type": "compaction",
                    "id": entry_id(number, session, 8),
                    "parentId": parent,
                    "timestamp": "2026-11-28T10:00:00.000Z",
                    "summary": f"summary {summary_word}",
                    "firstKeptEntryId": entry_id(number, session, 0),
                    "tokensBefore": 1000,
                }
            )
            project.entry_ids.append(entry_id(number, session, 8))
            project.terms.append(summary_word)
            project.session_ids.append(sid)
            writer.write(writer.path_for(cwd_of(number), f"s{session:02d}"), lines)
        projects.append(project)
    return projects


def scrub(response: Any, arguments: dict[str, Any]) -> list[str]:
    """The response's strings with the caller's own argument values blanked out (echoes are no leak)."""
    echoes = sorted(
        (value for value in arguments.values() if isinstance(value, str) and value), key=len, reverse=True
    )
    cleaned = []
    for text in strings_in(response):
        for echo in echoes:
            text = text.replace(echo, "\x00")
        cleaned.append(text)
    return cleaned


def foreign_pattern(projects: list[Project], own: Project) -> re.Pattern[str]:
    names = [
        name
        for other in projects
        if other is not own
        for name in (*other.entry_ids, *other.session_ids, *other.terms)
    ]
    return re.compile("|".join(map(re.escape, sorted(names, key=len, reverse=True))))


def without(response: dict[str, Any], value: str) -> str:
    """The response as text with `value` replaced by a placeholder, to compare with a twin."""
    return repr(response).replace(value, "\x00")


def test_no_project_sees_another(shared_tmp: Any, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    projects = write_projects(writer)
    memory = Memory.connect(impl)
    pairs = checks = 0
    leaks: list[str] = []

    def check(
        own: Project, pattern: re.Pattern[str], response: dict[str, Any], arguments: dict[str, Any]
    ) -> None:
        nonlocal checks
        checks += 1
        for text in scrub(response, arguments):
            if found := pattern.search(text):
                leaks.append(f"p{own.number} {arguments} showed {found.group()!r} in {text[:160]!r}")

    try:
        for project in projects:
            instance = f"p{project.number}"
            # The current session is a new one that has not been written yet.
            memory.open(
                instance,
                writer.workspace(cwd_of(project.number), writer.path_for(cwd_of(project.number), "current")),
            )
        for project in projects:
            instance = f"p{project.number}"
            pattern = foreign_pattern(projects, project)

            def ask(
                arguments: dict[str, Any],
                own: Project = project,
                pattern: re.Pattern[str] = pattern,
                instance: str = instance,
            ) -> dict[str, Any]:
                response = memory.tool(instance, **arguments)
                check(own, pattern, response, arguments)
                return response

            listed = ask({"action": "search", "limit": 50})
            assert listed["details"]["indexing"]["totalJournals"] == SESSIONS, listed["details"]["indexing"]
            summaries = ask({"action": "summaries", "limit": 50})
            assert {item["sessionId"] for item in summaries["details"]["results"]} <= set(project.session_ids)
            ambiguous = ask({"action": "read", "entryId": SHARED_ID})
            assert ambiguous["details"]["status"] == "ambiguous", ambiguous["details"]
            candidates = ambiguous["details"]["candidates"]
            assert {candidate["sessionId"] for candidate in candidates} == set(project.session_ids[:2])
            nowhere_read = memory.tool(instance, action="read", entryId=NOWHERE_ENTRY)
            nowhere_session = memory.tool(
                instance, action="search", query="project", sessionId=NOWHERE_SESSION
            )
            for other in projects:
                if other is project:
                    continue
                pairs += 1
                ored = ask({"action": "search", "query": " ".join(other.terms), "limit": 50})
                assert ored["details"]["results"] == [], ored["details"]
                if not SLOW and other.number != (project.number + 1) % PROJECTS:
                    continue  # CI reads by foreign ids from one neighbour; PIMEM_SLOW=1 from every project
                foreign_id = other.entry_ids[project.number % len(other.entry_ids)]
                read = ask({"action": "read", "entryId": foreign_id})
                assert without(read, foreign_id) == without(nowhere_read, NOWHERE_ENTRY)
                foreign_session = other.session_ids[project.number % SESSIONS]
                narrowed = ask({"action": "search", "query": "project", "sessionId": foreign_session})
                assert without(narrowed, foreign_session) == without(nowhere_session, NOWHERE_SESSION)
    finally:
        memory.stop()
    record_figure(
        "scope: project pairs checked",
        f"{pairs} ordered pairs, {checks} responses, {PROJECTS * SESSIONS * (ENTRIES + 1)} entries",
    )
    tally("entries checked", PROJECTS * SESSIONS * (ENTRIES + 1), "entries of 20 projects")
    assert not leaks, f"{len(leaks)} foreign ids or terms seen:\n" + "\n".join(leaks[:30])
    assert pairs == PROJECTS * (PROJECTS - 1)
