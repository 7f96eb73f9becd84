"""The reference's errors, and the one translation of each into a protocol answer.

ToolError is a bad argument or an unknown command (its message may echo the caller's input, so it
is redacted on the way out); IndexUnavailable is an index that cannot be opened or written, with
a plain reason for the user (disk full, read-only; the SQLite detail goes to stderr only);
AdapterError is a protocol request the adapter cannot carry out. `protocol_answer` turns any of
them into what the tool, a `/memory` command, the adapter and the CLI answer; a `Wording` says how
one surface words the advice (the agent's is the default; the command line passes its own).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._redact import redact

__all__ = [
    "AGENT_WORDING",
    "UNAVAILABLE_REMEDY",
    "AdapterError",
    "IndexUnavailable",
    "ToolError",
    "Wording",
    "protocol_answer",
]

UNAVAILABLE_REMEDY = "free space or fix the state folder, then run /memory rebuild if it persists"


class ToolError(Exception):
    """A clear error with a stable code: what was wrong (`problem`), then what to do instead
    (`advice`, worded for the agent: an example call). Both may echo the caller's input, so the
    message is redacted on the way out."""

    def __init__(self, code: str, problem: str, advice: str = "") -> None:
        self.code = code
        self.problem = problem
        self.advice = advice
        self.message = f"{problem}; {advice}" if advice else problem
        super().__init__(self.message)


class IndexUnavailable(Exception):
    """The index cannot be opened or written. The message is for the user: it never holds SQL."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.detail = detail  # for stderr, never for the agent


class AdapterError(Exception):
    """A protocol request the adapter cannot carry out (answered with `errored`)."""


@dataclass(frozen=True)
class Wording:
    """How one surface words an error's advice: what to do about an unavailable index, and, by
    error code, advice that replaces a ToolError's own ("" drops it), shown in parentheses."""

    remedy: str = UNAVAILABLE_REMEDY
    advice: Mapping[str, str] | None = field(default=None)  # None: every error keeps its own


AGENT_WORDING = Wording()  # the tool's and the /memory commands': "problem; advice"


def _tool_message(error: ToolError, wording: Wording) -> str:
    if wording.advice is None:
        return error.message
    advice = wording.advice.get(error.code, "")
    return f"{error.problem} ({advice})" if advice else error.problem


def protocol_answer(error: Exception, wording: Wording = AGENT_WORDING) -> dict[str, Any]:
    """The answer for an error: `{error: {code, message}}` for a ToolError (its message redacted)
    and for IndexUnavailable (its reason, then the wording's remedy); `{errored, context}` for
    anything else, which the protocol reports as the adapter's own failure."""
    if isinstance(error, ToolError):
        return {"error": {"code": error.code, "message": redact(_tool_message(error, wording))}}
    if isinstance(error, IndexUnavailable):
        print(f"pimem: index unavailable: {error.detail}", file=sys.stderr)
        return {"error": {"code": "index_unavailable", "message": f"{error}; {wording.remedy}"}}
    context = {"message": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
    return {"errored": True, "context": context}
