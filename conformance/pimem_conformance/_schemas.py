"""Every JSON Schema under `spec/schemas/`, resolvable by `$id` from one registry.

Schemas refer to each other by their `tag:` ids (the protocol messages share
`protocol/common`, cases may name a details schema), so they are loaded together once.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs in the deps
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from pimem_conformance._paths import spec_dir

__all__ = ["SCHEMA_ID_PREFIX", "SchemaSet", "load_schemas", "protocol_schema_id"]

SCHEMA_ID_PREFIX = "tag:pimem.spec,2026:"


def protocol_schema_id(cmd: str, kind: str) -> str:
    """The `$id` of a protocol message schema; `kind` is "request" or "response"."""
    return f"{SCHEMA_ID_PREFIX}protocol/{cmd}-{kind}"


class SchemaSet:
    """The schemas of one spec folder and a validator for each `$id`."""

    def __init__(self, schemas: dict[str, tuple[Path, dict[str, Any]]]) -> None:
        self._schemas = schemas
        self._registry: Registry[Any] = Registry().with_resources(
            (schema_id, Resource.from_contents(schema, default_specification=DRAFT202012))
            for schema_id, (_, schema) in schemas.items()
        )
        self._validators: dict[str, Draft202012Validator] = {}

    def validator_for(self, schema: dict[str, Any] | bool) -> Draft202012Validator:
        """A validator for an inline schema that may `$ref` any schema of the set."""
        return Draft202012Validator(schema, registry=self._registry)

    def has(self, schema_id: str) -> bool:
        return schema_id in self._schemas

    def schema(self, schema_id: str) -> dict[str, Any]:
        """The schema itself (KeyError when the set has none with this `$id`)."""
        return self._schemas[schema_id][1]

    def validator(self, schema_id: str) -> Draft202012Validator:
        if schema_id not in self._validators:
            if schema_id not in self._schemas:
                raise KeyError(f"no schema with $id {schema_id!r} under spec/schemas/")
            self._validators[schema_id] = self.validator_for(self._schemas[schema_id][1])
        return self._validators[schema_id]

    def errors(self, schema_id: str, instance: object) -> list[str]:
        """Readable messages, one per validation error (empty when the instance is valid)."""
        return [_describe(error) for error in self.validator(schema_id).iter_errors(instance)]


def _describe(error: Any) -> str:
    where = "".join(f"[{part!r}]" for part in error.absolute_path) or "(root)"
    return f"{where}: {error.message}"


@functools.cache
def load_schemas(root: Path | None = None) -> SchemaSet:
    """All `*.schema.json` files under `<spec>/schemas/`, keyed by `$id` (a file without one is an error)."""
    folder = (root or spec_dir()) / "schemas"
    schemas: dict[str, tuple[Path, dict[str, Any]]] = {}
    for path in sorted(folder.rglob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        schema_id = schema.get("$id") if isinstance(schema, dict) else None
        if not isinstance(schema_id, str):
            raise ValueError(f"{path}: a schema needs a string $id")
        if schema_id in schemas:
            raise ValueError(f"{path}: $id {schema_id} is also used by {schemas[schema_id][0]}")
        schemas[schema_id] = (path, schema)
    return SchemaSet(schemas)
