"""Checks on every response, whatever a case expects: details and error schemas, the manifest."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from pimem._serve import manifest
from pimem_conformance import (
    TOOL_PARAMETERS_SCHEMA_ID,
    load_schemas,
    manifest_mismatches,
    parameter_differences,
)
from suite_kit import outcomes, search_case
from test_runner import run


def _spec_parameters() -> dict[str, Any]:
    return copy.deepcopy(load_schemas().schema(TOOL_PARAMETERS_SCHEMA_ID))


def test_the_spec_schema_and_the_reference_manifest_declare_the_same_parameters() -> None:
    assert parameter_differences(_spec_parameters(), _spec_parameters()) == []
    assert manifest_mismatches(manifest(), load_schemas()) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda p: p["properties"]["limit"].pop("maximum"), "limit.maximum: expected 50, got None"),
        (lambda p: p["properties"]["offset"].update(type="number"), "offset.type: expected 'integer'"),
        (lambda p: p["properties"]["scope"]["enum"].remove("global"), "scope.enum: expected"),
        (lambda p: p["properties"]["kind"]["anyOf"][1].pop("minItems"), "kind.anyOf[1].minItems: expected 1"),
        (lambda p: p["properties"]["kind"]["anyOf"].pop(), "kind.anyOf: expected 2 branches"),
        (
            lambda p: p["properties"]["kind"]["anyOf"][1]["items"]["enum"].pop(),
            "kind.anyOf[1].items.enum: expected",
        ),
        (lambda p: p["properties"]["scope"].update(type="integer"), "scope.type: expected 'string'"),
        (lambda p: p["properties"]["entryId"].pop("minLength"), "entryId.minLength: expected 1"),
        (lambda p: p["properties"].pop("after"), "after: missing"),
        (lambda p: p["properties"].update(mode={"type": "string"}), "mode: not a parameter"),
        (lambda p: p.update(required=["action", "query"]), "required: expected ['action']"),
        (lambda p: p.pop("additionalProperties"), "additionalProperties: expected false"),
    ],
)
def test_each_declared_keyword_that_differs_is_named(change: Any, expected: str) -> None:
    parameters = _spec_parameters()
    change(parameters)
    differences = parameter_differences(_spec_parameters(), parameters)
    assert len(differences) == 1 and differences[0].startswith(expected), differences


def test_an_enum_without_a_type_is_a_string_enum() -> None:
    parameters = _spec_parameters()
    parameters["properties"]["action"]["type"] = "string"  # the reference states it, the spec does not
    assert parameter_differences(_spec_parameters(), parameters) == []


def test_a_manifest_without_memory_context_is_left_to_the_manifest_cases() -> None:
    assert manifest_mismatches({"tools": []}, load_schemas()) == []


def test_details_nobody_asked_about_still_fail_their_schema(tmp_path: Path) -> None:
    unasked = search_case("unasked", "alpha", ["alpha"])
    del unasked["steps"][0]["expect"]
    code, lines = run(tmp_path, [unasked], mode="mistyped-details")
    assert (code, outcomes(lines)) == (1, {"unasked": "fail"})
    mismatch = lines[1]["actual"][0]["mismatches"][0]
    assert (
        mismatch["check"] == "details_schema" and "['truncated']: 'no' is not of type" in mismatch["message"]
    )


def test_details_may_carry_a_field_a_later_release_adds(tmp_path: Path) -> None:
    # Answer schemas are open: an implementation of a later release still validates against
    # the schemas of an earlier one (spec/README.md, Versions).
    unasked = search_case("unasked", "alpha", ["alpha"])
    del unasked["steps"][0]["expect"]
    assert run(tmp_path, [unasked], mode="loose-details")[0] == 0


def test_the_same_case_passes_when_the_details_are_valid(tmp_path: Path) -> None:
    unasked = search_case("unasked", "alpha", ["alpha"])
    del unasked["steps"][0]["expect"]
    assert run(tmp_path, [unasked])[0] == 0


def test_an_expected_error_must_still_validate_against_the_error_schema(tmp_path: Path) -> None:
    erring = search_case("erring", "error", [])
    erring["steps"][0]["expect"] = {"error": "bad_argument"}
    assert run(tmp_path / "ok", [erring])[0] == 0
    _, lines = run(tmp_path / "empty", [erring], mode="empty-error-message")
    assert outcomes(lines) == {"erring": "fail"}
    assert lines[1]["actual"][0]["mismatches"][0]["check"] == "error_schema"
