"""A scriptable fake implementation ("fauxmplementation") for testing the runner itself.

It keeps no index: a `search` answers one result per word of its query (entry id = the word),
so a test case can be written to pass or to fail at will. A `mode` makes it misbehave the way
real adapters do. Run as `python fauxmplementation.py MODE` it speaks the protocol on stdio;
`FakeServer(mode)` is the in-process form.

It answers `errored` to a cmd the protocol does not define and to a tool call for an instance it
never opened (so a restart, which forgets the instances, shows up in the next tool call).

Modes: ok, crash (exit on the first tool call), crash-on-WORD (exit when a query contains WORD),
hang, garbage (non-JSON on stdout), invalid-json (a truncated object), wrong-protocol,
errored (answers every tool call with `errored`), bad-seq, bad-shape (tool responses without
`content`, caught only by --validate-adapter), profiles-PROFILE+PROFILE (claims these profiles),
loose-details (search details with a field details-search does not have: a later release's
field, which answers may carry), mistyped-details (search details whose `truncated` is a string),
empty-error-message (a tool error whose message is empty).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

# Printed to stdout instead of a response by the garbage and invalid-json modes.
GARBAGE = "Traceback (most recent call last): something went wrong"
TRUNCATED = '{"seq": 1, "content": ['


class Misbehaviour(Exception):
    """Raised in-process where the subprocess form would write `text` (or exit when None)."""

    def __init__(self, text: str | None) -> None:
        super().__init__(text or "exit")
        self.text = text


class FakeServer:
    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.instances: set[str] = set()

    def profiles(self) -> list[str]:
        if self.mode.startswith("profiles-"):
            return self.mode.removeprefix("profiles-").split("+")
        return ["core"]

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        cmd, seq = message["cmd"], message["seq"]
        if cmd == "start":
            protocol = 2 if self.mode == "wrong-protocol" else 1
            return {
                "seq": seq,
                "protocol": protocol,
                "profiles": self.profiles(),
                "implementation": {"name": "fake", "version": "0", "language": "python"},
            }
        if cmd == "open":
            self.instances.add(message["instance"])
            return {"seq": seq, "instance": message["instance"]}
        if cmd == "tool":
            return self._tool(message)
        if cmd == "command":
            return {"seq": seq, "text": message["args"], "details": {"args": message["args"]}}
        if cmd == "manifest":
            return {"seq": seq, "tools": [], "commands": [], "events": [], "calls": []}
        if cmd not in ("event", "idle", "clock", "close", "stop"):
            return {"seq": seq, "errored": True, "context": {"message": f"unknown cmd {cmd!r}"}}
        return {"seq": seq}

    def _tool(self, message: dict[str, Any]) -> dict[str, Any]:
        seq = message["seq"]
        query = str(message["arguments"].get("query", ""))
        words = query.split()
        if self.mode == "crash" or any(self.mode == f"crash-on-{word}" for word in words):
            raise Misbehaviour(None)
        if self.mode == "hang":
            time.sleep(3600)
        if self.mode == "garbage":
            raise Misbehaviour(GARBAGE)
        if self.mode == "invalid-json":
            raise Misbehaviour(TRUNCATED)
        if self.mode == "errored":
            return {"seq": seq, "errored": True, "context": {"message": "not implemented"}}
        if message.get("instance") not in self.instances:
            return {"seq": seq, "errored": True, "context": {"message": "unknown instance"}}
        if self.mode == "bad-seq":
            seq = [seq]
        if "error" in words:
            said = "" if self.mode == "empty-error-message" else "query asked for an error"
            return {"seq": seq, "error": {"code": "bad_argument", "message": said}}
        details = _search_details(query, words)
        if self.mode == "loose-details":
            details["rank"] = 1.0
        if self.mode == "mistyped-details":
            details["truncated"] = "no"
        if self.mode == "bad-shape":
            return {"seq": seq, "details": details}
        return {"seq": seq, "content": [{"type": "text", "text": query}], "details": details}


def _search_details(query: str, words: list[str]) -> dict[str, Any]:
    """Search details that validate against details-search: one result per word of the query."""
    results = [
        {
            "entryId": word,
            "source": f"s-{word}",
            "sessionId": "s1",
            "timestamp": "2026-11-20T09:00:00.000Z",
            "kind": "user",
            "role": "user",
            "toolName": None,
            "cwd": "/home/u/app",
            "excerpt": word,
            "match": "all",  # since spec 0.3.0 (JM-SEARCH-351)
        }
        for word in words
    ]
    return {
        "action": "search",
        "scope": "project",
        "query": query,
        "match": "all",
        "hint": None,
        "limit": 10,
        "truncated": False,
        "results": results,
        "inContext": 0,
        "indexing": {
            "complete": True,
            "indexedJournals": 1,
            "totalJournals": 1,
            "checkedAt": "2026-11-29T12:00:00.000Z",
        },
    }


def main(mode: str) -> None:
    server = FakeServer(mode)
    for line in sys.stdin:
        try:
            response = server.handle(json.loads(line))
        except Misbehaviour as fault:
            if fault.text is None:
                sys.stderr.write("fake adapter: crashing on purpose\n")
                sys.exit(70)
            sys.stdout.write(fault.text + "\n")
            sys.stdout.flush()
            continue
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
        if json.loads(line)["cmd"] == "stop":
            return


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ok")
