#!/usr/bin/env python3
"""A complete adapter for the pi-memory conformance suite (protocol 1) that implements almost
nothing: it claims the core profile, keeps no index and answers a search by reading the project's
journals from start to end, matching user and assistant text word by word. It is the starting
point for an implementation in Python: replace the bodies of `tool` and `command` with calls into
your memory.

    pimem-conformance run --impl "python3 adapter.py" --report report.jsonl

Protocol: one JSON request per stdin line, exactly one JSON response per stdout line, in order,
each echoing the request's `seq`. Diagnostics go to stderr. Only the standard library is needed.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from datetime import UTC, datetime
from glob import glob
from typing import Any

PROTOCOL = 1
TOOL = "memory_context"
COMMAND = "memory"
ACTIONS = ("search", "read", "summaries", "around")
EVENTS = ("session_start", "message_end", "session_compact", "session_tree", "session_shutdown")
PARAMETERS = {
    "type": "object",
    "additionalProperties": False,
    "required": ["action"],
    "properties": {"action": {"type": "string", "enum": list(ACTIONS)}},
}


class ProtocolError(Exception):
    """A request the adapter cannot carry out: answered `errored`, and the adapter goes on serving."""


instances: dict[str, dict[str, Any]] = {}  # instance name -> {workspace, clock, settings}


def tool_result(details: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": json.dumps(details)}], "details": details}


def tool_error(code: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message}}


def project_journals(workspace: dict[str, Any]) -> list[str]:
    """The journals whose header names the current project folder (a real memory also walks up
    to the project root; see spec/scope.md)."""
    paths = glob(os.path.join(workspace["agent_dir"], "sessions", "*", "*.jsonl"))
    for folder in workspace.get("session_dirs", []):
        paths += glob(os.path.join(folder, "*.jsonl"))
    chosen = []
    for path in sorted(path for path in paths if os.path.isfile(path)):  # never open a FIFO
        with open(path, encoding="utf-8", errors="replace") as handle:
            header = _parse(handle.readline())
        if (
            isinstance(header, dict)
            and header.get("type") == "session"
            and header.get("cwd") == workspace["cwd"]
        ):
            chosen.append(path)
    return chosen


def _parse(raw: str) -> Any:
    """A journal line, or None for one that is not JSON (journals may hold such lines)."""
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "\n".join(part["text"] for part in parts if isinstance(part, dict) and part.get("type") == "text")


def search(journals: list[str], query: str) -> list[dict[str, Any]]:
    """Entries of user and assistant messages holding every word of `query`, newest first."""
    words = query.lower().split()
    found = []
    for path in journals:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [parsed for raw in handle if isinstance(parsed := _parse(raw), dict)]
        header, entries = (lines[0], lines[1:]) if lines else ({}, [])
        for line in entries:
            message = line.get("message") if line.get("type") == "message" else None
            if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
                continue
            if not isinstance(line.get("id"), str) or not isinstance(line.get("timestamp"), str):
                continue  # not an entry a result can point at
            text = _text(message)
            if all(word in text.lower() for word in words):
                found.append(
                    {
                        "entryId": line["id"],
                        "source": f"{os.path.basename(path)}:{line['id']}",
                        "sessionId": str(header.get("id", "")),
                        "timestamp": line["timestamp"],
                        "kind": message["role"],
                        "role": message["role"],
                        "toolName": None,
                        "cwd": str(header.get("cwd", "")),
                        "excerpt": text[:240],
                        "match": "all",  # every word is in it (spec 0.3.0, JM-SEARCH-351)
                    }
                )
    return sorted(found, key=lambda result: result["timestamp"], reverse=True)


def checked_at(instance: dict[str, Any]) -> str:
    """The instance's clock in UTC with milliseconds, as `indexing.checkedAt` is written."""
    moment = datetime.fromisoformat(instance["clock"]["now"].replace("Z", "+00:00"))
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def tool(instance: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """What the memory_context tool returns: a real implementation searches its index here."""
    action = arguments.get("action")
    if action not in ACTIONS:
        example = '{"action": "search", "query": "retry"}'
        return tool_error("unknown_action", f"unknown action {json.dumps(action)}; for example {example}")
    scope = arguments.get("scope", "project")
    if scope == "global" and not instance["settings"].get("allow_global", False):
        return tool_error("scope_denied", 'scope "global" is off: the user has not allowed it')
    journals = project_journals(instance["workspace"])
    indexing = {
        "complete": True,
        "indexedJournals": len(journals),
        "totalJournals": len(journals),
        "checkedAt": checked_at(instance),  # every call reads the journals themselves
    }
    if action == "search":
        query = arguments.get("query")
        found = search(journals, query) if isinstance(query, str) and query.strip() else []
        match = ("all" if found else "none") if isinstance(query, str) and query.strip() else "list"
        return tool_result(
            {
                "action": "search",
                "scope": scope,
                "query": query if match != "list" else None,
                "match": match,
                "hint": "Nothing matched. Try other words." if match == "none" else None,
                "limit": arguments.get("limit", 10),
                "truncated": False,
                "results": found[:10],
                "inContext": 0,  # this example ignores leafId: it leaves nothing out (JM-SEARCH-401)
                "indexing": indexing,
            }
        )
    if action in ("read", "around"):
        return tool_result({"action": action, "status": "not_found", "entryId": arguments.get("entryId")})
    return tool_result({"action": "summaries", "scope": scope, "results": [], "indexing": indexing})


def command(instance: dict[str, Any], args: str) -> dict[str, Any]:
    """What the user's /memory command prints."""
    if args.strip() in ("", "status"):
        details = {
            "journals": 0,
            "entries": 0,
            "summaries": 0,
            "skipped": {"files": 0, "lines": 0},
            "indexing": {
                "complete": True,
                "indexedJournals": 0,
                "totalJournals": 0,
                "checkedAt": checked_at(instance),
            },
            "lease": None,
        }
        return {"text": "memory: nothing indexed", "details": details}
    return tool_error("bad_argument", f'unknown /memory arguments {json.dumps(args)}; for example "status"')


def _instance(request: dict[str, Any]) -> dict[str, Any]:
    name = request.get("instance")
    if not isinstance(name, str) or name not in instances:
        raise ProtocolError(f"unknown instance {json.dumps(name)}")
    return instances[name]


def handle(request: dict[str, Any]) -> dict[str, Any]:
    cmd = request.get("cmd")
    if cmd == "start":
        if request.get("protocol") != PROTOCOL:
            raise ProtocolError(
                f"protocol {json.dumps(request.get('protocol'))} is not spoken; this adapter speaks 1"
            )
        implementation = {"name": "minimal-adapter", "version": "0.0.1", "language": "python"}
        return {"protocol": PROTOCOL, "implementation": implementation, "profiles": ["core"]}
    if cmd == "manifest":
        return {
            "tools": [
                {
                    "name": TOOL,
                    "label": "Memory",
                    "description": "Search and read earlier Pi sessions.",
                    "parameters": PARAMETERS,
                }
            ],
            "commands": [{"name": COMMAND, "description": "Memory index: status"}],
            "events": list(EVENTS),
            "calls": [],
        }
    if cmd == "stop":
        instances.clear()
        return {}
    if cmd == "open":
        name = request.get("instance")
        if not isinstance(name, str) or not name:
            raise ProtocolError("open needs an instance name (a non-empty string)")
        instances[name] = {  # an open for a name in use replaces that instance
            "workspace": request.get("workspace", {}),
            "clock": request.get("clock", {}),
            "settings": request.get("settings") or {},
        }
        return {"instance": name}
    instance = _instance(request)
    if cmd in ("event", "idle"):
        return {}  # events this adapter does not subscribe to are ignored
    if cmd == "clock":
        if not isinstance(request.get("now"), str):
            raise ProtocolError(
                f"clock needs now as an ISO-8601 string, got {json.dumps(request.get('now'))}"
            )
        instance["clock"]["now"] = request["now"]
        return {}
    if cmd == "tool":
        if request.get("name") != TOOL:
            raise ProtocolError(
                f"unknown tool {json.dumps(request.get('name'))}; this adapter has one: {TOOL}"
            )
        if not isinstance(request.get("arguments"), dict):
            return tool_error(
                "bad_argument", 'the arguments must be an object, for example {"action": "search"}'
            )
        return tool(instance, request["arguments"])
    if cmd == "command":
        if request.get("name") != COMMAND:
            raise ProtocolError(
                f"unknown command {json.dumps(request.get('name'))}; this adapter has {COMMAND}"
            )
        return command(instance, str(request.get("args", "")))
    if cmd == "close":
        del instances[request["instance"]]
        return {}
    raise ProtocolError(f"unknown cmd {json.dumps(cmd)}")


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            response = {"seq": request.get("seq"), **handle(request)}
        except Exception as error:  # an adapter-level failure: answered `errored`, never silence
            context = {"message": str(error), "traceback": traceback.format_exc()}
            response = {"seq": request.get("seq"), "errored": True, "context": context}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
        if request.get("cmd") == "stop":
            break


if __name__ == "__main__":
    main()
