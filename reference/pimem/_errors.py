"""The reference's errors: what can go wrong in a call, each with a stable protocol code.

ToolError is a bad argument or an unknown command (its message may echo the caller's input, so it
is redacted on the way out); IndexUnavailable is an index that cannot be opened or written, with
a plain reason for the user (the SQLite detail goes to stderr only).
"""

from __future__ import annotations

from typing import Any

from ._redact import redact

__all__ = ["IndexUnavailable", "ToolError"]


class ToolError(Exception):
    """A clear error with a stable code; its message may echo the caller's input, so it is redacted."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def response(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": redact(self.message)}}


class IndexUnavailable(Exception):
    """The index cannot be opened or written. The message is for the user: it never holds SQL."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.detail = detail  # for stderr, never for the agent
