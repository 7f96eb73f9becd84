"""The public strategies produce valid journal lines, well-formed trees, and every type, role and block."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from jsonschema import Draft202012Validator
from pimem_conformance import dumps_like_js, spec_dir
from pimem_conformance.strategies import (
    BLOCK_TYPES,
    ENTRY_TYPES,
    ROLES,
    blocks,
    entries,
    journal_histories,
    journal_lines,
    messages,
    sessions,
)

V3 = Draft202012Validator(
    json.loads((spec_dir() / "schemas" / "pi-journal-line.schema.json").read_text(encoding="utf-8"))
)
SMALL = settings(
    max_examples=60, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _assert_valid(line: dict[str, Any]) -> None:
    errors = [error.message for error in V3.iter_errors(line)]
    assert not errors, (errors, dumps_like_js(line)[:300])


@SMALL
@given(journal_lines())
def test_every_generated_line_validates(line: dict[str, Any]) -> None:
    _assert_valid(line)
    assert json.loads(dumps_like_js(line)) == line


@SMALL
@given(sessions())
def test_sessions_are_a_header_and_a_tree_of_unique_resolvable_ids(lines: list[dict[str, Any]]) -> None:
    for line in lines:
        _assert_valid(line)
    assert lines[0]["type"] == "session"
    seen: set[str] = set()
    for entry in lines[1:]:
        assert entry["id"] not in seen
        assert entry["parentId"] is None or entry["parentId"] in seen
        seen.add(entry["id"])


@SMALL
@given(journal_histories())
def test_histories_only_write_valid_lines(history: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    initial, operations = history
    length = len(initial)
    for operation in operations:
        if operation["op"] == "append":
            for line in operation["lines"]:
                _assert_valid(line)
            length += len(operation["lines"])
        elif operation["op"] == "rewrite":
            _assert_valid(operation["with"])
            assert 1 <= operation["line"] < length
        elif operation["op"] == "truncate":
            assert 0 <= operation["keep_lines"] <= length
            length = operation["keep_lines"]
    assert all(op["op"] != "append_partial" for op in operations[:-1])


def _features(line: dict[str, Any]) -> set[tuple[str, str]]:
    """("type", t), ("role", r) and ("block", b) for everything one line shows."""
    found = {("type", line["type"])}
    message = line.get("message")
    containers = [line]
    if isinstance(message, dict):
        found.add(("role", message["role"]))
        containers.append(message)
    for container in containers:
        content = container.get("content")
        if isinstance(content, list):
            found.update(("block", block["type"]) for block in content)
    return found


EVERYTHING = sorted(
    [("type", name) for name in ENTRY_TYPES]
    + [("role", name) for name in ROLES]
    + [("block", name) for name in BLOCK_TYPES]
)


def _as_line(feature: tuple[str, str], value: dict[str, Any]) -> dict[str, Any]:
    """Wrap a drawn message or block in an entry line, so it can be validated and inspected."""
    kind, _ = feature
    if kind == "type":
        return value
    message = value if kind == "role" else {"role": "assistant", "content": [value], "stopReason": "stop"}
    return {
        "type": "message",
        "id": "0badc0de",
        "parentId": None,
        "timestamp": "2026-11-29T12:00:00.000Z",
        "message": message,
    }


_NARROWED = {"type": entries, "role": messages, "block": blocks}


@pytest.mark.parametrize("feature", EVERYTHING, ids=lambda f: f"{f[0]}={f[1]}")
def test_strategies_produce_every_entry_type_role_and_block(feature: tuple[str, str]) -> None:
    # The unnarrowed strategies sample uniformly from ENTRY_TYPES, ROLES and BLOCK_TYPES, so each
    # narrowed strategy producing its feature (and only valid lines) shows the full ones can too.
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=10, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(_NARROWED[feature[0]](feature[1]))
    def collect(value: dict[str, Any]) -> None:
        drawn.append(_as_line(feature, value))

    collect()
    assert drawn
    for line in drawn:
        assert feature in _features(line)
        _assert_valid(line)
