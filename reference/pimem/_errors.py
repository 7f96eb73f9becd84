"""The reference's errors, and the one translation of each into a protocol answer.

ToolError is a bad argument or an unknown command (its message may echo the caller's input, so it
is redacted on the way out); IndexUnavailable is an index that cannot be opened or written, with
a plain reason for the user (disk full, read-only; the SQLite detail goes to stderr only);
AdapterError is a protocol request the adapter cannot carry out. `protocol_answer` turns any of
them into what the tool, a `/memory` command, the adapter and the CLI answer.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from ._redact import redact

__all__ = ["UNAVAILABLE_REMEDY", "AdapterError", "IndexUnavailable", "ToolError", "protocol_answer"]

UNAVAILABLE_REMEDY = "free space or fix the state folder, then run /memory rebuild if it persists"


class ToolError(Exception):
    """A clear error with a stable code; its message may echo the caller's input, so it is redacted."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class IndexUnavailable(Exception):
    """The index cannot be opened or written. The message is for the user: it never holds SQL."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.detail = detail  # for stderr, never for the agent


class AdapterError(Exception):
    """A protocol request the adapter cannot carry out (answered with `errored`)."""


def protocol_answer(error: Exception, remedy: str = UNAVAILABLE_REMEDY) -> dict[str, Any]:
    """The answer for an error: `{error: {code, message}}` for a ToolError (its message redacted)
    and for IndexUnavailable (its reason, then `remedy`); `{errored, context}` for anything else,
    which the protocol reports as the adapter's own failure."""
    if isinstance(error, ToolError):
        return {"error": {"code": error.code, "message": redact(error.message)}}
    if isinstance(error, IndexUnavailable):
        print(f"pimem: index unavailable: {error.detail}", file=sys.stderr)
        return {"error": {"code": "index_unavailable", "message": f"{error}; {remedy}"}}
    context = {"message": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    return {"errored": True, "context": context}
