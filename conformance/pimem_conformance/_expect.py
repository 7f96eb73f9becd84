"""Checking one step's response against the step's `expect` block.

Paths are dotted with list indices and wildcards: `details.results[0].entryId`,
`details.results[*].kind`. A path with a wildcard yields the list of everything it matches.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import referencing.exceptions

from pimem_conformance._cases import CaseError
from pimem_conformance._schemas import SchemaSet

__all__ = [
    "CAPTURE_KEY",
    "MISSING",
    "Mismatch",
    "check_expectation",
    "parse_capture",
    "resolve_path",
    "result_ids",
    "strings_in",
]

_TOKEN = re.compile(r"\[(\d+|\*)\]|([^.\[\]]+)")
CAPTURE_KEY = "$from"
_CAPTURE = re.compile(r"step(\d+)\.(.+)")


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Mismatch:
    """One expectation that did not hold."""

    check: str
    expected: Any
    actual: Any
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "expected": self.expected,
            "actual": _jsonable(self.actual),
            "message": self.message,
        }


def _jsonable(value: Any) -> Any:
    """`value` with MISSING (anywhere inside) spelled as the string "<missing>"."""
    if value is MISSING:
        return repr(MISSING)
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    return value


def _tokens(path: str) -> list[str | int | None]:
    """`a.b[2][*]` -> ["a", "b", 2, None] (None is the wildcard)."""
    tokens: list[str | int | None] = []
    position = 0
    for match in _TOKEN.finditer(path):
        separator = path[position : match.start()]
        if separator not in ("", "."):
            raise ValueError(f"malformed path {path!r} near {separator!r}")
        index, key = match.groups()
        tokens.append(key if key is not None else (None if index == "*" else int(index)))
        position = match.end()
    if position != len(path) or not tokens:
        raise ValueError(f"malformed path {path!r}")
    return tokens


def _walk(value: Any, tokens: list[str | int | None]) -> Iterator[Any]:
    if not tokens:
        yield value
        return
    head, rest = tokens[0], tokens[1:]
    if head is None:
        if isinstance(value, list):
            for item in value:
                yield from _walk(item, rest)
    elif isinstance(head, int):
        if isinstance(value, list) and head < len(value):
            yield from _walk(value[head], rest)
    elif isinstance(value, dict) and head in value:
        yield from _walk(value[head], rest)


def resolve_path(value: Any, path: str) -> Any:
    """The value at `path`, MISSING if absent; with wildcards, the list of all matches."""
    tokens = _tokens(path)
    matches = list(_walk(value, tokens))
    if None in tokens:
        return matches
    return matches[0] if matches else MISSING


def parse_capture(reference: str) -> tuple[int, str]:
    """`step2.details.results[0].source` -> (2, "details.results[0].source"); ValueError if malformed."""
    found = _CAPTURE.fullmatch(reference)
    if found is None:
        raise ValueError(f"malformed {CAPTURE_KEY} {reference!r}: expected step<N>.<path>")
    _tokens(found.group(2))  # the path must parse
    return int(found.group(1)), found.group(2)


def result_ids(response: dict[str, Any]) -> list[Any] | None:
    """The entry ids a tool response names, in order; None when it is not a result-bearing response.

    search/summaries: `details.results[*].entryId`; read: `details.entryId` when the status is
    ok, none otherwise; ambiguous reads: the candidates' `sessionId`s (candidates share the entry
    id, and their `source` handles are opaque); around: `details.entries[*].entryId`.
    """
    details = response.get("details")
    if not isinstance(details, dict):
        return None
    action = details.get("action")
    if action == "read":
        status = details.get("status")
        if status == "ok":
            return [details.get("entryId")]
        if status == "ambiguous":
            return [candidate.get("sessionId") for candidate in details.get("candidates", [])]
        return []
    listing = details.get("entries") if action == "around" else details.get("results")
    if not isinstance(listing, list):
        return None
    return [item.get("entryId") for item in listing if isinstance(item, dict)]


def json_objects(value: Any) -> Iterator[dict[str, Any]]:
    """Every object anywhere in a JSON value, outermost first."""
    if isinstance(value, dict):
        yield value
        for item in value.values():
            yield from json_objects(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_objects(item)


def strings_in(value: Any) -> Iterator[str]:
    """Every string anywhere in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def _contains_text(response: dict[str, Any], needle: str) -> bool:
    # Both forms count: a raw string value (what Pi shows) and the JSON text (escapes included).
    return any(needle in text for text in strings_in(response)) or needle in json.dumps(
        response, ensure_ascii=False
    )


def _count(value: Any, path: str) -> int | None:
    found = resolve_path(value, path)
    return len(found) if isinstance(found, list | dict | str) else None


def _schema_problems(schemas: SchemaSet, schema: dict[str, Any] | bool, target: Any) -> list[str]:
    try:
        return [
            f"{'/'.join(map(str, problem.absolute_path)) or '(root)'}: {problem.message}"
            for problem in schemas.validator_for(schema).iter_errors(target)
        ]
    except referencing.exceptions.Unresolvable as exc:
        raise CaseError(
            f"the expected schema refers to {exc.ref!r}, which no schema under spec/ defines"
        ) from None


def check_expectation(
    expect: dict[str, Any], response: dict[str, Any], *, schemas: SchemaSet, schema_target: str | None
) -> list[Mismatch]:
    """Every expectation of `expect` that `response` violates (empty: the step passed).

    `schema_target` names the part of the response `schema` applies to (`details` for tool and
    command steps, None for the whole response).
    """
    mismatches: list[Mismatch] = []
    error = response.get("error")
    actual_code = error.get("code") if isinstance(error, dict) else None
    if "or_error" in expect and actual_code == expect["or_error"]:
        return []  # the answer a damaged state dir allows instead of the result (JM-INDEX-320)
    if expect.get("errored", False) and response.get("errored") is not True:
        return [Mismatch("errored", True, response, "expected an errored response, got an ordinary one")]
    if "error" in expect:
        if actual_code != expect["error"]:
            mismatches.append(
                Mismatch(
                    "error",
                    expect["error"],
                    error if error is not None else MISSING,
                    f"expected error {expect['error']!r}, got "
                    + (f"error {actual_code!r}" if error is not None else "a result"),
                )
            )
            return mismatches  # the other checks were written for the error response
    elif error is not None:
        return [Mismatch("error", None, error, f"unexpected error {actual_code!r}: {error}")]

    for path, expected in expect.get("equals", {}).items():
        actual = resolve_path(response, path)
        if actual is MISSING or actual != expected:
            mismatches.append(
                Mismatch(
                    "equals",
                    {path: expected},
                    {path: actual},
                    f"{path}: expected {expected!r}, got {actual!r}",
                )
            )

    for path, expected in expect.get("count", {}).items():
        actual_count = _count(response, path)
        if actual_count != expected:
            mismatches.append(
                Mismatch(
                    "count",
                    {path: expected},
                    {path: actual_count},
                    f"{path}: expected {expected} items, found {actual_count}",
                )
            )

    if "schema" in expect:
        target = response if schema_target is None else response.get(schema_target, MISSING)
        problems = ["(missing)"] if target is MISSING else _schema_problems(schemas, expect["schema"], target)
        if problems:
            mismatches.append(
                Mismatch(
                    "schema",
                    expect["schema"],
                    problems,
                    f"{schema_target or 'response'} does not validate: {problems[0]}",
                )
            )

    mismatches.extend(_check_ids(expect, response))

    # an errored answer's traceback may quote the implementation's source: only its message counts
    # for what it must name (JM-PROTO-001); excludes_text still looks at all of it
    named = response
    if expect.get("errored", False):
        context = response.get("context")
        named = {"message": context.get("message") if isinstance(context, dict) else None}
    for needle in expect.get("includes_text", []):
        if not _contains_text(named, needle):
            mismatches.append(
                Mismatch("includes_text", needle, MISSING, f"text {needle!r} not in the response")
            )
    for needle in expect.get("excludes_text", []):
        if _contains_text(response, needle):
            mismatches.append(
                Mismatch("excludes_text", needle, needle, f"text {needle!r} is in the response")
            )
    return mismatches


def _check_ids(expect: dict[str, Any], response: dict[str, Any]) -> list[Mismatch]:
    if not any(key in expect for key in ("ids", "includes_ids", "excludes_ids", "order")):
        return []
    ids = result_ids(response)
    if ids is None:
        return [
            Mismatch(
                "ids",
                "a response with results",
                response.get("details", MISSING),
                "the response carries no result ids",
            )
        ]
    mismatches = []
    if "ids" in expect and sorted(set(ids)) != sorted(set(expect["ids"])):
        missing = sorted(set(expect["ids"]) - set(ids))
        extra = sorted(set(ids) - set(expect["ids"]))
        said = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unexpected {', '.join(extra)}" if extra else "",
        ]
        message = f"result ids differ: {'; '.join(part for part in said if part)}"
        mismatches.append(Mismatch("ids", sorted(set(expect["ids"])), ids, message))
    missing = [entry for entry in expect.get("includes_ids", []) if entry not in ids]
    if missing:
        mismatches.append(Mismatch("includes_ids", expect["includes_ids"], ids, f"missing ids {missing}"))
    present = [entry for entry in expect.get("excludes_ids", []) if entry in ids]
    if present:
        mismatches.append(
            Mismatch("excludes_ids", expect["excludes_ids"], ids, f"excluded ids present {present}")
        )
    order = expect.get("order", [])
    if order == "as_listed":
        mismatches.extend(_as_listed(expect, ids))
    elif isinstance(order, list):
        for first, second in order:
            if first not in ids or second not in ids or ids.index(first) > ids.index(second):
                mismatches.append(
                    Mismatch("order", [first, second], ids, f"{first!r} does not come before {second!r}")
                )
    return mismatches


def _as_listed(expect: dict[str, Any], ids: list[Any]) -> list[Mismatch]:
    """`order: "as_listed"`: the response names `ids` in exactly their listed order, or the listed
    `includes_ids` in their listed order among its other ids (`unspecified` checks nothing)."""
    if "ids" in expect:
        listed, shown = list(expect["ids"]), ids
    else:
        listed = list(expect.get("includes_ids", []))
        shown = [entry for entry in ids if entry in listed]
    if shown == listed:
        return []
    return [
        Mismatch("order", listed, ids, f"results are not in the listed order: {shown} instead of {listed}")
    ]
