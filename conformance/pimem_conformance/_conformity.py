"""Checks every response of every case gets, whatever the case's own `expect` asks.

- a tool or command result's `details` validates against the details schema of its action or
  subcommand, and a tool or command error against the error schema (JM-TOOL-004, JM-TOOL-021);
- a manifest's `memory_context` parameters declare what `tool-parameters.schema.json` declares:
  the same properties with the same types, enum values, bounds and required keys (JM-TOOL-020).

A violation is an ordinary step mismatch, so it fails the case it happens in. Each check holds
a requirement of spec 0.2.0 (JM-TOOL-021, JM-TOOL-020): a run as of a release without it
(`run --as-of 0.1.0`) leaves it out, as that release's cases were judged without it.
"""

from __future__ import annotations

from typing import Any

from pimem_conformance._expect import Mismatch
from pimem_conformance._schemas import SCHEMA_ID_PREFIX, SchemaSet

__all__ = [
    "PARAMETERS_REQUIREMENT",
    "SCHEMA_REQUIREMENT",
    "TOOL_PARAMETERS_SCHEMA_ID",
    "manifest_mismatches",
    "response_mismatches",
]

SCHEMA_REQUIREMENT = "JM-TOOL-021"  # every details and error validates, whatever a case expects
PARAMETERS_REQUIREMENT = "JM-TOOL-020"  # every manifest declares tool-parameters' parameters

TOOL_PARAMETERS_SCHEMA_ID = f"{SCHEMA_ID_PREFIX}tool-parameters"
ERROR_SCHEMA_ID = f"{SCHEMA_ID_PREFIX}error"
_TOOL_ACTIONS = ("search", "read", "summaries", "around")
# The first word of a /memory command's args -> the schemas of its details (commands.md's table),
# the first that the judging schema set defines: spec 0.1.0 had no details-index (index and
# rebuild answered "as status"), so a run as of 0.1.0 judges them by its details-status.
_COMMAND_SCHEMAS = {
    "status": ("details-status",),
    "index": ("details-index", "details-status"),
    "rebuild": ("details-index", "details-status"),
    "gc": ("details-gc",),
    "forget": ("details-forget",),
}
# The keywords of a parameter that the manifest must state as the spec's schema does.
_DECLARED = ("type", "enum", "const", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems")


def _details_schema(kind: str, request: dict[str, Any], details: Any, schemas: SchemaSet) -> str | None:
    """The `$id` of the schema `details` must satisfy, or None when the spec names none."""
    if kind == "tool":
        action = details.get("action") if isinstance(details, dict) else None
        return f"{SCHEMA_ID_PREFIX}details-{action}" if action in _TOOL_ACTIONS else None
    words = str(request.get("args", "")).split()
    names = _COMMAND_SCHEMAS.get(words[0], ()) if words else ()
    return next((f"{SCHEMA_ID_PREFIX}{n}" for n in names if schemas.has(f"{SCHEMA_ID_PREFIX}{n}")), None)


def response_mismatches(
    kind: str, request: dict[str, Any], response: dict[str, Any], schemas: SchemaSet
) -> list[Mismatch]:
    """Schema violations of one `tool` or `command` response (`kind`), never an errored one."""
    if response.get("errored") is True:
        return []
    if "error" in response:
        problems = schemas.errors(ERROR_SCHEMA_ID, {"error": response["error"]})
        return [_schema_mismatch("error", ERROR_SCHEMA_ID, problems)] if problems else []
    details = response.get("details")
    schema_id = _details_schema(kind, request, details, schemas)
    if schema_id is None:
        if kind == "tool":
            return [
                Mismatch(
                    "details_schema",
                    f"details.action, one of {list(_TOOL_ACTIONS)}",
                    details,
                    "a tool result needs details with an action the spec defines",
                )
            ]
        return []
    problems = schemas.errors(schema_id, details)
    return [_schema_mismatch("details", schema_id, problems)] if problems else []


def _schema_mismatch(part: str, schema_id: str, problems: list[str]) -> Mismatch:
    name = schema_id.removeprefix(SCHEMA_ID_PREFIX)
    return Mismatch(
        "details_schema" if part == "details" else "error_schema",
        {"$ref": schema_id},
        problems,
        f"{part} does not validate against {name}: {problems[0]}",
    )


def manifest_mismatches(response: dict[str, Any], schemas: SchemaSet) -> list[Mismatch]:
    """How the manifest's `memory_context` parameters differ from tool-parameters.schema.json."""
    tools = response.get("tools")
    tool = (
        next((t for t in tools if isinstance(t, dict) and t.get("name") == "memory_context"), None)
        if isinstance(tools, list)
        else None
    )
    if tool is None:
        return []  # JM-TOOL-001's cases say so; nothing to compare
    expected = schemas.schema(TOOL_PARAMETERS_SCHEMA_ID)
    differences = parameter_differences(expected, tool.get("parameters"))
    if not differences:
        return []
    return [
        Mismatch(
            "tool_parameters",
            {"$ref": TOOL_PARAMETERS_SCHEMA_ID},
            differences,
            f"memory_context parameters differ from tool-parameters: {differences[0]}",
        )
    ]


def _json_type(values: list[Any]) -> str | None:
    types = {"string" if isinstance(v, str) else "integer" if isinstance(v, int) else "other" for v in values}
    return types.pop() if len(types) == 1 else None


def _node_differences(where: str, declared: dict[str, Any], given: Any) -> list[str]:
    """How one parameter (or one branch or items of it) states the declared keywords otherwise."""
    if not isinstance(given, dict):
        return [f"{where}: expected a schema object, got {given!r}"]
    differences: list[str] = []
    for keyword in _DECLARED:
        want, got = declared.get(keyword), given.get(keyword)
        if keyword == "type" and want is None and "enum" in declared:
            want = _json_type(declared["enum"])  # an enum of strings is a string
            got = got if got is not None else want
        if keyword == "enum" and want is not None and isinstance(got, list):
            want, got = sorted(want), sorted(got)
        if want != got:
            differences.append(f"{where}.{keyword}: expected {want!r}, got {got!r}")
    if "items" in declared:
        differences += _node_differences(f"{where}.items", declared["items"], given.get("items"))
    branches = declared.get("anyOf")
    if branches is not None or "anyOf" in given:
        theirs = given.get("anyOf")
        if not isinstance(theirs, list) or len(theirs) != len(branches or []):
            differences.append(f"{where}.anyOf: expected {len(branches or [])} branches, got {theirs!r}")
        else:
            for number, (branch, their) in enumerate(zip(branches or [], theirs, strict=True)):
                differences += _node_differences(f"{where}.anyOf[{number}]", branch, their)
    return differences


def parameter_differences(expected: dict[str, Any], actual: Any) -> list[str]:
    """Every declared keyword of `expected`'s properties that `actual` states otherwise."""
    if not isinstance(actual, dict):
        return [f"parameters is {type(actual).__name__}, not a JSON Schema object"]
    differences: list[str] = []
    if actual.get("type") != "object":
        differences.append(f"type: expected 'object', got {actual.get('type')!r}")
    if actual.get("additionalProperties") is not False:
        differences.append("additionalProperties: expected false")
    if sorted(actual.get("required") or []) != sorted(expected.get("required", [])):
        differences.append(f"required: expected {expected.get('required')}, got {actual.get('required')}")
    properties = actual.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    for name in sorted(set(properties) - set(expected["properties"])):
        differences.append(f"{name}: not a parameter of tool-parameters")
    for name, declared in expected["properties"].items():
        given = properties.get(name)
        if not isinstance(given, dict):
            differences.append(f"{name}: missing")
            continue
        differences.extend(_node_differences(name, declared, given))
    return differences
