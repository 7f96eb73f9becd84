"""Expectation checks: dotted paths, result ids, every expectation kind."""

from __future__ import annotations

from typing import Any

import pytest
from pimem_conformance import MISSING, check_expectation, load_schemas, resolve_path, result_ids

SEARCH: dict[str, Any] = {
    "content": [{"type": "text", "text": "two results\nsecond line"}],
    "details": {
        "action": "search",
        "results": [{"entryId": "e1", "kind": "user"}, {"entryId": "e2", "kind": "bash"}],
    },
}


def checks(expect: dict[str, Any], response: dict[str, Any] = SEARCH) -> list[str]:
    return [
        m.check for m in check_expectation(expect, response, schemas=load_schemas(), schema_target="details")
    ]


def test_paths_resolve_indices_wildcards_and_missing_keys() -> None:
    assert resolve_path(SEARCH, "details.results[1].kind") == "bash"
    assert resolve_path(SEARCH, "details.results[*].entryId") == ["e1", "e2"]
    assert resolve_path(SEARCH, "details.results[5].kind") is MISSING
    assert resolve_path(SEARCH, "details.nothing") is MISSING
    with pytest.raises(ValueError, match="malformed"):
        resolve_path(SEARCH, "details..results")


@pytest.mark.parametrize(
    ("details", "ids"),
    [
        ({"action": "read", "status": "ok", "entryId": "e1"}, ["e1"]),
        ({"action": "read", "status": "unavailable", "entryId": "e1"}, []),
        (
            {"action": "read", "status": "ambiguous", "entryId": "e1", "candidates": [{"sessionId": "s1"}]},
            ["s1"],
        ),
        ({"action": "around", "entries": [{"entryId": "p"}, {"entryId": "h"}]}, ["p", "h"]),
        ({"action": "summaries", "results": [{"entryId": "c1"}]}, ["c1"]),
    ],
)
def test_result_ids_by_action(details: dict[str, Any], ids: list[str]) -> None:
    assert result_ids({"details": details}) == ids


def test_each_expectation_kind_holds_or_breaks() -> None:
    assert (
        checks(
            {
                "ids": ["e2", "e1"],
                "includes_ids": ["e1"],
                "excludes_ids": ["e3"],
                "order": [["e1", "e2"]],
                "count": {"details.results": 2, "details.results[*].kind": 2},
                "equals": {"details.results[0].entryId": "e1", "details.results[*].kind": ["user", "bash"]},
                "includes_text": ["second line", "two results\\nsecond"],
                "excludes_text": ["secret"],
                "schema": {"required": ["results"]},
            }
        )
        == []
    )
    assert checks(
        {
            "ids": ["e1"],
            "includes_ids": ["e3"],
            "excludes_ids": ["e2"],
            "order": [["e2", "e1"]],
            "count": {"details.results": 3},
            "equals": {"details.action": "read"},
            "includes_text": ["absent"],
            "excludes_text": ["e2"],
            "schema": {"required": ["query"]},
        }
    ) == [
        "equals",
        "count",
        "schema",
        "ids",
        "includes_ids",
        "excludes_ids",
        "order",
        "includes_text",
        "excludes_text",
    ]


def test_an_errored_answer_names_what_it_must_in_its_message_not_its_traceback() -> None:
    # a traceback quotes the implementation's source, which may hold the very word the message lacks
    source = "settings['redact_patterns']"
    quoting = {"errored": True, "context": {"message": "AttributeError: 'get'", "traceback": source}}
    naming = {"errored": True, "context": {"message": "ValueError: redact_patterns: ...", "traceback": ""}}
    expect = {"errored": True, "includes_text": ["redact_patterns"]}
    assert checks(expect, quoting) == ["includes_text"]
    assert checks(expect, naming) == []
    assert checks({"errored": True, "excludes_text": ["redact_patterns"]}, quoting) == ["excludes_text"]


def test_errors_must_be_expected_and_match() -> None:
    error = {"error": {"code": "bad_date", "message": "use 2026-11-29"}}
    assert checks({"error": "bad_date"}, error) == []
    assert checks(
        {"error": "bad_date", "excludes_text": ["2026-11-29"], "equals": {"error.code": "bad_date"}}, error
    ) == ["excludes_text"]
    assert checks({"error": "bad_offset"}, error) == ["error"]
    assert checks({"error": "bad_date"}) == ["error"]
    assert checks({}, error) == ["error"]
    assert checks({"ids": ["x"]}, {"content": [], "details": {"action": "status"}}) == ["ids"]


def test_schema_refs_resolve_to_spec_schemas() -> None:
    response = {"seq": 1, "content": [{"type": "text", "text": "x"}], "details": {}}
    expect = {"schema": {"$ref": "tag:pimem.spec,2026:protocol/tool-response"}}
    assert check_expectation(expect, response, schemas=load_schemas(), schema_target=None) == []


@pytest.mark.parametrize(
    ("expect", "failed"),
    [
        ({"ids": ["e1", "e2"], "order": "as_listed"}, []),
        ({"ids": ["e2", "e1"], "order": "as_listed"}, ["order"]),
        ({"ids": ["e1", "e2", "e2"], "order": "as_listed"}, ["order"]),  # the same set, not the sequence
        ({"includes_ids": ["e1", "e2"], "order": "as_listed"}, []),
        ({"includes_ids": ["e2", "e1"], "order": "as_listed"}, ["order"]),
        ({"includes_ids": ["e2"], "order": "as_listed"}, []),
        ({"ids": ["e2", "e1"], "order": "unspecified", "order_freed_by": 1}, []),
    ],
)
def test_as_listed_checks_the_sequence_and_unspecified_checks_nothing(
    expect: dict[str, Any], failed: list[str]
) -> None:
    assert checks(expect) == failed
