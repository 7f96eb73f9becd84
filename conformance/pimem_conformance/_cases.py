"""The executable cases: `spec/cases/*.json`, each file validated by `case.schema.json`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pimem_conformance._paths import spec_dir
from pimem_conformance._schemas import SCHEMA_ID_PREFIX, load_schemas

__all__ = [
    "CASE_FILE_SCHEMA_ID",
    "Case",
    "CaseError",
    "CaseFileError",
    "case_file_problems",
    "load_cases",
    "ships_the_corpus",
]

CASE_FILE_SCHEMA_ID = f"{SCHEMA_ID_PREFIX}case-file"


class CaseError(ValueError):
    """The case itself cannot be carried out (a bad mutation, a missing fixture, an unknown
    schema): a bug in the suite, never the implementation's fault."""


class CaseFileError(ValueError):
    """A case file that is not valid JSON or not valid under the case schema."""


@dataclass(frozen=True)
class Case:
    """One case, as written in its file (plus the file it came from)."""

    id: str
    area: str
    description: str
    requirements: tuple[str, ...]
    profile: str
    polarity: str
    journals: dict[str, Any]
    setup: dict[str, Any]
    steps: tuple[dict[str, Any], ...]
    twin: str | None = None
    source: Path | None = field(default=None, compare=False)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def instances(self) -> tuple[str, ...]:
        return tuple(self.setup.get("instances", ["a"]))

    @property
    def processes(self) -> int:
        """How many adapter processes the case runs (each opens every instance on one workspace)."""
        return int(self.raw.get("processes", 1))

    @staticmethod
    def from_json(raw: dict[str, Any], *, area: str, source: Path | None = None) -> Case:
        return Case(
            id=raw["id"],
            area=area,
            description=raw["description"],
            requirements=tuple(raw["requirements"]),
            profile=raw["profile"],
            polarity=raw["polarity"],
            journals=raw["journals"],
            setup=raw["setup"],
            steps=tuple(raw["steps"]),
            twin=raw.get("twin"),
            source=source,
            raw=raw,
        )


def case_file_problems(path: Path, spec: Path | None = None) -> tuple[dict[str, Any] | None, list[str]]:
    """Parse and validate one case file: (its content or None, readable problems)."""
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return None, [f"{path.name}: not readable JSON: {exc}"]
    problems = [
        f"{path.name} {message}" for message in load_schemas(spec).errors(CASE_FILE_SCHEMA_ID, content)
    ]
    return (None, problems) if problems else (content, [])


def ships_the_corpus(spec: Path | None) -> bool:
    """Whether `spec` (None: the shipped spec) holds a secrets corpus, whose items are cases too."""
    from pimem_conformance.secrets_corpus import CORPUS_FILE  # the package imports this module

    return ((spec or spec_dir()) / CORPUS_FILE).is_file()


def load_cases(spec: Path | None = None) -> list[Case]:
    """Every case in `<spec>/cases/*.json`, in file and then in-file order, then (for the shipped
    spec) the cases built from the secrets corpus; ids must be unique."""
    folder = (spec or spec_dir()) / "cases"
    cases: list[Case] = []
    seen: dict[str, Path] = {}
    for path in sorted(folder.glob("*.json")):
        content, problems = case_file_problems(path, spec)
        if content is None:
            raise CaseFileError("\n".join(problems))
        for raw in content["cases"]:
            if raw["id"] in seen:
                raise CaseFileError(
                    f"{path.name}: case id {raw['id']!r} is also used in {seen[raw['id']].name}"
                )
            seen[raw["id"]] = path
            cases.append(Case.from_json(raw, area=content["area"], source=path))
    if ships_the_corpus(spec):
        from pimem_conformance._corpus_cases import corpus_cases  # it builds Case objects itself

        cases += corpus_cases(spec)
    return cases
