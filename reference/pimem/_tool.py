"""The `memory_context` tool: its parameters, argument validation, dispatch and the text the model reads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from ._echo import echo, quoted
from ._errors import AGENT_WORDING, IndexUnavailable, ToolError, Wording, protocol_answer
from ._extract import KINDS, MEMORY_TOOL, Kind
from ._memory import Memory
from ._query import around, context_of, read, search, summaries
from ._redact import redact_tree, redaction_policy
from ._results import (
    AroundAnswer,
    AroundEntry,
    Details,
    Indexing,
    ReadAnswer,
    SearchAnswer,
    SearchResult,
    SummariesAnswer,
    Summary,
)
from ._scope import SCOPES, ScopeName
from ._time import epoch_ms

__all__ = [
    "ACTIONS",
    "DESCRIPTION",
    "LABEL",
    "PARAMETERS",
    "TOOL_NAME",
    "Args",
    "indexing_note",
    "parse_bound",
    "result_note",
    "run_tool",
    "validate",
]

TOOL_NAME = MEMORY_TOOL
LABEL = "Memory"
DESCRIPTION = (
    "Search and read this project's earlier Pi sessions: search finds what is no longer in your "
    "context, compacted turns included; read an entry by id, list summaries, or show an entry's "
    "surroundings."
)
ACTIONS = ("search", "read", "summaries", "around")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_EXAMPLE = '{"action": "search", "query": "retry backoff"}'
_DATE_HELP = "a local day like 2026-11-29 or a timestamp with a zone like 2026-11-29T14:00:00Z"


@dataclass(frozen=True)
class _Bounds:
    """An integer parameter's range and its default: the schema, validation and `Args` read them."""

    low: int
    high: int | None  # None: no maximum
    default: int
    advertised: bool = True  # whether the schema shows the default

    def schema(self, **extra: str) -> dict[str, Any]:
        maximum = {} if self.high is None else {"maximum": self.high}
        default = {"default": self.default} if self.advertised else {}
        return {"type": "integer", "minimum": self.low, **maximum, **default, **extra}


_INTEGERS = {
    "offset": _Bounds(0, None, 0, advertised=False),
    "limit": _Bounds(1, 50, 10),
    "before": _Bounds(0, 20, 3),
    "after": _Bounds(0, 20, 3),
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["action"],
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS), "description": "What to do."},
        "query": {
            "type": "string",
            "description": "Words to find (literal text). Omit to list newest first.",
        },
        "entryId": {
            "type": "string",
            "minLength": 1,
            "description": "Entry id from a search result (read, around).",
        },
        "source": {
            "type": "string",
            "minLength": 1,
            "description": "Opaque handle from a result, to pick one of several.",
        },
        "offset": _INTEGERS["offset"].schema(description="read: page start in characters."),
        "scope": {"type": "string", "enum": list(SCOPES), "default": "project"},
        "sessionId": {"type": "string", "minLength": 1, "description": "Only this session."},
        "kind": {
            "anyOf": [
                {"type": "string", "enum": list(KINDS)},
                {"type": "array", "items": {"type": "string", "enum": list(KINDS)}, "minItems": 1},
            ],
            "description": "search: one kind, or a list meaning any of them.",
        },
        "since": {
            "type": "string",
            "minLength": 1,
            "description": "YYYY-MM-DD or ISO-8601 timestamp with zone.",
        },
        "until": {
            "type": "string",
            "minLength": 1,
            "description": "YYYY-MM-DD or ISO-8601 timestamp with zone.",
        },
        "limit": _INTEGERS["limit"].schema(),
        "includeContext": {
            "type": "boolean",
            "default": False,
            "description": "search: also return entries already in your context.",
        },
        "before": _INTEGERS["before"].schema(),
        "after": _INTEGERS["after"].schema(),
    },
}


@dataclass(frozen=True)
class Args:
    action: str
    query: str | None = None
    entry_id: str | None = None
    source: str | None = None
    offset: int = _INTEGERS["offset"].default
    scope: ScopeName = "project"
    session_id: str | None = None
    kind: tuple[Kind, ...] | None = None  # any of these
    since: int | None = None
    until: int | None = None
    limit: int = _INTEGERS["limit"].default
    before: int = _INTEGERS["before"].default
    after: int = _INTEGERS["after"].default
    include_context: bool = False


def _bad(message: str, example: str = _EXAMPLE) -> ToolError:
    return ToolError("bad_argument", message, f"for example {example}")


def _integer(name: str, value: Any) -> int:
    bounds = _INTEGERS[name]
    low, high = bounds.low, bounds.high
    number = value if isinstance(value, int) and not isinstance(value, bool) else None
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    if number is None or number < low or (high is not None and number > high):
        span = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise _bad(
            f'"{name}" must be an integer {span}, got {echo(value)}',
            f'{{"action": "search", "query": "retry", "{name}": {bounds.default}}}',
        )
    return number


def parse_bound(name: str, value: str, tz: str, end: bool) -> int:
    """A since/until value in milliseconds since 1970; a bare day is that whole local day."""
    try:
        if _DAY.fullmatch(value):
            day = date.fromisoformat(value) + timedelta(days=1 if end else 0)
            moment = datetime.combine(day, time(), ZoneInfo(tz)) - timedelta(milliseconds=1 if end else 0)
        elif "T" in value.upper():
            moment = datetime.fromisoformat(value)
        else:
            moment = None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ToolError("bad_date", f'"{name}" must be {_DATE_HELP}; got {echo(value)}')
    ms = epoch_ms(moment.isoformat())
    assert ms is not None  # it was just parsed
    return ms


def _kinds(value: Any) -> tuple[Kind, ...] | None:
    """`kind`: one kind, or a non-empty list of kinds meaning any of them."""
    if value is None:
        return None
    kinds = value if isinstance(value, list) else [value]
    example = '{"action": "search", "kind": ["user", "assistant"]}'
    if not kinds or not all(isinstance(kind, str) for kind in kinds):
        raise _bad('"kind" must be a kind or a non-empty list of kinds', example)
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise _bad(f'"kind" must be one of {", ".join(KINDS)}, got {echo(unknown[0])}', example)
    return tuple(dict.fromkeys(kinds))


def validate(arguments: Any, tz: str) -> Args:
    """Arguments → Args, or a ToolError naming what was wrong and showing a correct call."""
    if not isinstance(arguments, dict):
        raise _bad("the arguments must be an object")
    unknown = sorted(set(arguments) - set(PARAMETERS["properties"]))
    if unknown:
        raise _bad(f"unknown parameter {echo(unknown[0])} (known: {', '.join(PARAMETERS['properties'])})")
    action = arguments.get("action")
    if action is None:
        raise _bad('"action" is required')
    if not isinstance(action, str):
        raise _bad('"action" must be a string')
    if action not in ACTIONS:
        raise ToolError(
            "unknown_action",
            f"unknown action {echo(action)}; use one of {', '.join(ACTIONS)}, for example {_EXAMPLE}",
        )
    values: dict[str, Any] = {"action": action}
    for name in ("query", "entryId", "source", "scope", "sessionId", "since", "until"):
        value = arguments.get(name)
        if value is not None and not isinstance(value, str):
            raise _bad(f'"{name}" must be a string')
        values[name] = value
    if values["scope"] is not None and values["scope"] not in SCOPES:
        raise _bad(f'"scope" must be one of {", ".join(SCOPES)}, got {echo(values["scope"])}')
    ints = {
        name: bounds.default if arguments.get(name) is None else _integer(name, arguments[name])
        for name, bounds in _INTEGERS.items()
    }
    include_context = arguments.get("includeContext")
    if include_context is not None and not isinstance(include_context, bool):
        raise _bad('"includeContext" must be true or false')
    if action in ("read", "around") and not values["entryId"] and not values["source"]:
        raise _bad(
            f'{action} needs "entryId" (or "source" from a result)',
            f'{{"action": "{action}", "entryId": "d24d95c5"}}',
        )
    return Args(
        action=action,
        query=values["query"],
        entry_id=values["entryId"],
        source=values["source"],
        offset=ints["offset"],
        scope=values["scope"] or "project",
        session_id=values["sessionId"],
        kind=_kinds(arguments.get("kind")),
        since=parse_bound("since", values["since"], tz, end=False) if values["since"] is not None else None,
        until=parse_bound("until", values["until"], tz, end=True) if values["until"] is not None else None,
        limit=ints["limit"],
        before=ints["before"],
        after=ints["after"],
        include_context=bool(include_context),
    )


def _answer(memory: Memory, args: Args, leaf_id: str | None = None) -> Details:
    if args.scope == "global" and not memory.config.allow_global:
        raise ToolError(
            "scope_denied",
            'scope "global" is off: the user has not allowed it (setting '
            'memory.allowGlobal); use "project" or "session"',
        )
    view = memory.before_answer(args.scope, args.session_id)
    if args.action == "read":
        return read(view, args.entry_id, args.source, args.offset)
    if args.action == "around":
        return around(view, args.entry_id, args.source, args.before, args.after)
    if args.action == "search":
        hidden = frozenset() if args.include_context else context_of(view, leaf_id)
        details = search(
            view,
            args.query,
            kind=args.kind,
            since=args.since,
            until=args.until,
            limit=args.limit,
            hidden=hidden,
        )
        answer: SearchAnswer = {"action": "search", "scope": args.scope, **details, "indexing": view.indexing}
        answer["hint"] = _honest_hint(answer)
        return answer
    found = summaries(view, since=args.since, until=args.until, limit=args.limit)
    return {"action": "summaries", "scope": args.scope, **found, "indexing": view.indexing}


def run_tool(
    memory: Memory, arguments: Any, wording: Wording = AGENT_WORDING, leaf_id: str | None = None
) -> dict[str, Any]:
    """What the tool returns to Pi: {content, details}, or {error: {code, message}} (its advice
    worded for the agent unless another surface, the command line, passes its own). `leaf_id`: the
    current session's leaf, where the model stands (None: nothing counts as in its context)."""
    with redaction_policy(memory.config.redaction):  # the user's own patterns on every output
        try:
            args = validate(arguments, memory.config.tz)
            details: Details = redact_tree(_answer(memory, args, leaf_id))
        except (ToolError, IndexUnavailable) as error:
            return protocol_answer(error, wording)
    return {"content": [{"type": "text", "text": render(details)}], "details": details}


# -- the text the model reads --------------------------------------------------------------------


def _head(item: SearchResult | ReadAnswer | Summary | AroundEntry) -> str:
    head = f"{item['entryId']} · {item['kind']} · {item['timestamp']} · session {item['sessionId']}"
    edit = item.get("contextEdit")
    if edit is None:
        return head
    what = "replaced in the context" if edit["state"] == "replaced" else "omitted from the context"
    return f"{head} · {what} by context_edit {edit['editEntryId']}"


def _indexing_text(state: Indexing) -> str:
    return (
        f"Indexing in progress: {state['indexedJournals']} of {state['totalJournals']} journals indexed; "
        "results may be incomplete."
    )


def indexing_note(indexing: Indexing, hint: str | None = None) -> list[str]:
    """The indexing state, unless complete or already said by the hint."""
    if indexing["complete"] or hint:
        return []
    return [_indexing_text(indexing)]


def _honest_hint(details: SearchAnswer) -> str | None:
    """While indexing is under way, that is the first thing to say about a thin answer."""
    hint: str | None = details["hint"]
    if hint is None or details["indexing"]["complete"]:
        return hint
    if details["match"] == "none":
        return f"{_indexing_text(details['indexing'])} Search again when it finishes."
    return f"{_indexing_text(details['indexing'])} {hint}"


def _render_search(details: SearchAnswer) -> list[str]:
    query = details["query"]
    what = "newest entries" if query is None else f"search {quoted(query)}"  # no query: match list
    results = details["results"]
    lines = [f"{what} · {details['scope']} scope · {len(results)} result(s), match {details['match']}"]
    lines += indexing_note(details["indexing"], details["hint"])
    if details["hint"]:
        lines.append(details["hint"])
    partly = sum(item.get("match") == "any" for item in results)
    if details["match"] == "all" and partly:  # a filled page (JM-SEARCH-350)
        lines.append(f"The last {partly} result(s) have only some of the terms.")
    for number, item in enumerate(results, 1):
        lines.append(
            f"{number}. {_head(item)} · source {item['source']}{result_note(item, details['match'])}"
        )
        lines.append(f"   {item['excerpt']}")
    if details["truncated"]:
        lines.append(f"More results exist beyond limit {details['limit']}; narrow the query or raise limit.")
    if details["inContext"] and details["results"]:
        lines.append(
            f"{details['inContext']} matching entries in your context are left out "
            "(includeContext: true shows them)."
        )
    return lines


def result_note(item: Mapping[str, object], match: str) -> str:
    """How one result matched, where the page says otherwise, and the restatements it stands for."""
    how = " · some terms" if match == "all" and item.get("match") == "any" else ""
    repeats = item.get("repeats")
    return how + (f" · the query restated, also {repeats} more time(s)" if repeats else "")


def _not_ok(details: ReadAnswer | AroundAnswer) -> list[str]:
    """A read or around whose entry was not found, is unavailable, or is ambiguous."""
    status = details["status"]
    wanted = details["entryId"] or "the requested source"
    if status == "not_found":
        return [f"No entry {wanted} in this scope."]
    if status == "unavailable":
        return [f"Entry {wanted} is unavailable: its journal changed and is being reindexed. Search again."]
    lines = [f"Entry id {wanted} exists in several sessions; read again with one source:"]
    for item in details["candidates"]:
        lines.append(
            f"- source {item['source']} · {item['kind']} · {item['timestamp']} · "
            f"session {item['sessionId']} · {item['cwd']}"
        )
    return lines


def _render_read(details: ReadAnswer) -> list[str]:
    if details["status"] != "ok":
        return _not_ok(details)
    end = details["offset"] + len(details["text"])
    lines = [
        f"{_head(details)} · {details['cwd']}",
        f"characters {details['offset']}-{end} of {details['totalChars']}",
    ]
    if details["nextOffset"] is not None:
        lines[-1] += f"; continue with offset {details['nextOffset']}"
    return [*lines, "", details["text"]]


def _render_summaries(details: SummariesAnswer) -> list[str]:
    lines = [f"{len(details['results'])} summary(ies) · {details['scope']} scope, newest first"]
    for number, item in enumerate(details["results"], 1):
        tokens = f" · tokensBefore {item['tokensBefore']}" if item["tokensBefore"] is not None else ""
        lines.append(f"{number}. {_head(item)}{tokens} · source {item['source']}")
        lines.append(item["summary"])
    return lines + indexing_note(details["indexing"])


def _render_around(details: AroundAnswer) -> list[str]:
    if details["status"] != "ok":
        return _not_ok(details)
    lines = [f"Context around {details['entryId']}, oldest first:"]
    for item in details["entries"]:
        lines.append(f"[{item['position']}] {_head(item)}")
        lines.append(item["text"])
    return lines


def render(details: Details) -> str:
    if details["action"] == "search":
        lines = _render_search(details)
    elif details["action"] == "read":
        lines = _render_read(details)
    elif details["action"] == "summaries":
        lines = _render_summaries(details)
    else:
        lines = _render_around(details)
    return "\n".join(lines)
