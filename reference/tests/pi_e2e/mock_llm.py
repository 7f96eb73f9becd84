"""A scripted OpenAI-compatible chat-completions server for driving the real Pi (stdlib only).

Pi streams every request (`stream: true`); the answer is server-sent events in the shape
pi-ai's openai-completions provider reads: text in `delta.content`, a tool call as
`delta.tool_calls` (name first, then the arguments), a finish reason, a usage chunk, `[DONE]`.

The test queues the replies of the agent turns in order. A reply may be a function of the
request (to use what an earlier tool returned); a function that returns `Again(reply)` answers
`reply` and stays first in the queue for the next turn. Summarisation requests (compaction,
branch summaries) carry no `tools`; they get SUMMARY and consume nothing from the queue.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["SUMMARY", "Again", "MockLLM", "Reply", "Text", "ToolCall"]

SUMMARY = "## Goal\nMock summary of the earlier conversation.\n\n## Progress\n- Work went on."


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Again:
    reply: Text | ToolCall


Reply = Text | ToolCall | Callable[[dict[str, Any]], Text | ToolCall | Again]


class MockLLM:
    """Serves on 127.0.0.1 at a free port; `requests` keeps every request body, in order, and
    `errors` every scripted reply function that raised (Pi then gets a text naming the error)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.errors: list[str] = []
        self._replies: deque[Reply] = deque()
        self._calls = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> MockLLM:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._replies)

    def answer(self, request: dict[str, Any]) -> Text | ToolCall:
        with self._lock:
            self.requests.append(request)
            if not request.get("tools"):
                return Text(SUMMARY)
            if not self._replies:
                return Text("MOCK SCRIPT EXHAUSTED")
            reply = self._replies.popleft()
        if isinstance(reply, Text | ToolCall):
            return reply
        try:
            answer = reply(request)
        except Exception as error:  # a broken script must fail the test, not leave Pi hanging
            self.errors.append(repr(error))
            return Text(f"mock reply failed: {error!r}")
        if isinstance(answer, Again):
            with self._lock:
                self._replies.appendleft(reply)
            return answer.reply
        return answer

    def next_call_id(self) -> str:
        with self._lock:
            self._calls += 1
            return f"call_mock{self._calls:04d}"


def _handler_for(llm: MockLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            reply = llm.answer(body)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            model = body.get("model", "mock-model")
            for delta, finish in _deltas(reply, llm):
                self._event({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}, model)
            usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
            self._event({"choices": [], "usage": usage}, model)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _event(self, fields: dict[str, Any], model: str) -> None:
            chunk = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": model, **fields}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test prints what it checks."""

    return Handler


def _deltas(reply: Text | ToolCall, llm: MockLLM) -> list[tuple[dict[str, Any], str | None]]:
    if isinstance(reply, Text):
        return [({"role": "assistant", "content": reply.text}, None), ({}, "stop")]
    call = {"index": 0, "id": llm.next_call_id(), "type": "function"}
    return [
        (
            {
                "role": "assistant",
                "tool_calls": [{**call, "function": {"name": reply.name, "arguments": ""}}],
            },
            None,
        ),
        ({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(reply.arguments)}}]}, None),
        ({}, "tool_calls"),
    ]
