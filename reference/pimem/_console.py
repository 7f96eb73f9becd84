"""What a person reads in a terminal: the `pimem` command line's text for each answer.

The model reads `_tool.render`; a person gets shorter hit headers (date, kind, project, id), the
matched words highlighted on a colour terminal, and the `pimem …` command that goes further.
"""

from __future__ import annotations

import os
import re
from typing import Any

from ._tool import indexing_note, result_note

__all__ = ["Style", "render_answer", "render_status"]

_BOLD_YELLOW, _DIM, _RESET = "\x1b[1;33m", "\x1b[2m", "\x1b[0m"


class Style:
    """Colour only on a terminal, and never with NO_COLOR set (https://no-color.org)."""

    def __init__(self, tty: bool) -> None:
        self.color = tty and not os.environ.get("NO_COLOR")

    def dim(self, text: str) -> str:
        return f"{_DIM}{text}{_RESET}" if self.color else text

    def marked(self, text: str, terms: list[str]) -> str:
        """`text` with every occurrence of a query term (case-insensitively) highlighted."""
        words = sorted({term for term in terms if term}, key=len, reverse=True)
        if not self.color or not words:
            return text
        pattern = re.compile("|".join(re.escape(word) for word in words), re.IGNORECASE)
        return pattern.sub(lambda found: f"{_BOLD_YELLOW}{found.group(0)}{_RESET}", text)


def _when(timestamp: str) -> str:
    """`2026-11-20T10:01:00.000Z` → `2026-11-20 10:01`: minutes are enough to tell hits apart."""
    return timestamp[:16].replace("T", " ") if len(timestamp) >= 16 else timestamp


def _project(cwd: str) -> str:
    return os.path.basename(cwd.rstrip("/")) or cwd


def _head(item: dict[str, Any]) -> str:
    project = f" · {_project(item['cwd'])}" if item.get("cwd") else ""  # around's entries share one
    return f"{_when(item['timestamp'])} · {item['kind']}{project} · {item['entryId']}"


def _scope_flags(details: dict[str, Any]) -> str:
    return "" if details.get("scope", "project") == "project" else f" --scope {details['scope']}"


def _search(details: dict[str, Any], style: Style, terms: list[str]) -> list[str]:
    results = details["results"]
    what = "newest entries" if details["match"] == "list" else f"{len(results)} result(s)"
    lines = [style.dim(f"{what} · {details['scope']} scope · match {details['match']}")]
    lines += indexing_note(details["indexing"], details["hint"])
    if details["hint"]:
        lines.append(details["hint"].replace("includeContext: true", "--include-context"))
    for item in results:
        lines.append(_head(item) + result_note(item, details["match"]))
        lines.append(f"  {style.marked(item['excerpt'], terms)}")
    if details["truncated"]:
        lines.append(f"More results exist beyond --limit {details['limit']} (at most 50); narrow the query.")
    if details.get("inContext") and results:
        lines.append(
            f"{details['inContext']} more match(es) are in the context at the leaf (the session's last "
            "entry unless --leaf ID) and left out; --include-context shows them."
        )
    if results:
        lines.append(style.dim(f"Read one: pimem read ID{_scope_flags(details)}"))
    return lines


def _not_ok(details: dict[str, Any], command: str) -> list[str]:
    wanted = details.get("entryId") or "the requested source"
    if details["status"] == "not_found":
        return [
            f"No entry {wanted} in this scope. Ids from `pimem search --scope global` need "
            f"`pimem {command} ID --scope global`."
        ]
    if details["status"] == "unavailable":
        return [f"Entry {wanted} is unavailable: its journal changed and is being reindexed. Search again."]
    lines = [f"Entry id {wanted} is in several sessions; pick one with --source:"]
    for item in details["candidates"]:
        lines.append(
            f"  pimem {command} --source {item['source']}   "
            f"# {_when(item['timestamp'])} · {item['kind']} · {_project(item['cwd'])}"
        )
    return lines


def _read(details: dict[str, Any], style: Style) -> list[str]:
    if details["status"] != "ok":
        return _not_ok(details, "read")
    end = details["offset"] + len(details["text"])
    place = f"characters {details['offset']}-{end} of {details['totalChars']}"
    if details["nextOffset"] is not None:
        place += f"; next page: pimem read {details['entryId']} --offset {details['nextOffset']}"
    head = f"{_head(details)} · session {details['sessionId']}"
    return [style.dim(head), style.dim(place), "", details["text"]]


def _summaries(details: dict[str, Any], style: Style) -> list[str]:
    lines = [style.dim(f"{len(details['results'])} summary(ies) · {details['scope']} scope, newest first")]
    lines += indexing_note(details["indexing"])
    for item in details["results"]:
        tokens = f" · {item['tokensBefore']} tokens before" if item["tokensBefore"] is not None else ""
        lines.append(f"{_head(item)}{tokens}")
        lines.append(item["summary"])
    return lines


def _around(details: dict[str, Any], style: Style) -> list[str]:
    if details["status"] != "ok":
        return _not_ok(details, "around")
    lines = [style.dim(f"Around {details['entryId']}, oldest first:")]
    for item in details["entries"]:
        mark = ">" if item["position"] == "hit" else " "
        lines.append(style.dim(f"{mark} {_head(item)}"))
        lines.append(item["text"])
    return lines


def render_answer(details: dict[str, Any], style: Style, terms: list[str]) -> str:
    action = details["action"]
    if action == "search":
        return "\n".join(_search(details, style, terms))
    if action == "read":
        return "\n".join(_read(details, style))
    if action == "around":
        return "\n".join(_around(details, style))
    return "\n".join(_summaries(details, style))


def _size(count: int) -> str:
    size = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def render_status(details: dict[str, Any]) -> str:
    state = details["indexing"]
    index = details["index"]
    lease = details["lease"]
    lines = [
        f"index    {index['path']} ({_size(index['bytes']) if index['exists'] else 'not created yet'})",
        f"journals {details['journals']} · entries {details['entries']} · summaries {details['summaries']}",
        f"indexed  {state['indexedJournals']} of {state['totalJournals']} journals"
        + ("" if state["complete"] else " (run `pimem index` to finish)"),
        "folders scanned:",
    ]
    for folder in details["folders"]:
        found = f"{folder['journals']} journal(s)" if folder["exists"] else "missing"
        lines.append(f"  {folder['path']} ({found})")
    skipped = details["skipped"]
    lines.append(f"skipped  {skipped['files']} file(s), {skipped['lines']} line(s)")
    for item in details["skippedLines"]:
        lines.append(f"  {item['path']}:{item['line']} ({item['reason']})")
    if skipped["lines"] > len(details["skippedLines"]):
        lines.append(f"  … the first {len(details['skippedLines'])} shown")
    if lease:
        lines.append(f"backfill lease held by {lease['owner']} until {lease['expiresAt']}")
    else:
        lines.append("no backfill running")
    return "\n".join(lines)
