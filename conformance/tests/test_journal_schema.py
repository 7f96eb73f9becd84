"""The Pi journal line schemas: real journals and every fixture validate; the committed bad lines do not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pimem_conformance import fixtures_dir, shared_journals_dir, spec_dir

SCHEMAS = spec_dir() / "schemas"
EXAMPLES = SCHEMAS / "examples"


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((SCHEMAS / name).read_text(encoding="utf-8")))


V3 = _validator("pi-journal-line.schema.json")
LEGACY = _validator("pi-journal-legacy-line.schema.json")


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _errors(validator: Draft202012Validator, path: Path) -> list[str]:
    return [
        f"{path.name} line {number}: {error.message}"
        for number, line in enumerate(_lines(path))
        for error in validator.iter_errors(line)
    ]


@pytest.mark.parametrize(
    "name",
    ["pi-journal-line.schema.json", "pi-journal-legacy-line.schema.json", "fixtures-manifest.schema.json"],
)
def test_schema_is_valid_json_schema(name: str) -> None:
    Draft202012Validator.check_schema(json.loads((SCHEMAS / name).read_text(encoding="utf-8")))


def test_every_real_journal_line_validates(capsys: pytest.CaptureFixture[str]) -> None:
    root = shared_journals_dir()
    if root is None:
        pytest.skip(
            "real Pi journals not found: set PIMEM_SHARED_JOURNALS, "
            "or put shared/pi-journals beside the checkout"
        )
    journals = sorted([*root.glob("sessions/*/*.jsonl"), *root.glob("flat/*.jsonl")])
    assert journals, f"no journals under {root}/sessions or {root}/flat"
    errors = [message for path in journals for message in _errors(V3, path)]
    checked = sum(len(_lines(path)) for path in journals)
    with capsys.disabled():
        print(f"\nreal journals: {checked} lines in {len(journals)} files validated against pi-journal-line")
    assert not errors, "\n".join(errors)


def test_every_fixture_line_validates_against_its_format_schema(capsys: pytest.CaptureFixture[str]) -> None:
    manifest = json.loads((fixtures_dir() / "manifest.json").read_text(encoding="utf-8"))
    errors: list[str] = []
    checked = {"v3": 0, "legacy": 0}
    for journal in manifest["journals"]:
        legacy = journal["format"] < 3
        path = fixtures_dir() / journal["path"]
        errors += _errors(LEGACY if legacy else V3, path)
        checked["legacy" if legacy else "v3"] += len(_lines(path))
    with capsys.disabled():
        print(f"\nfixtures: {checked['v3']} v3 lines and {checked['legacy']} legacy lines validated")
    assert checked["v3"] and checked["legacy"]
    assert not errors, "\n".join(errors)


def test_fixture_manifest_matches_its_schema() -> None:
    manifest = json.loads((fixtures_dir() / "manifest.json").read_text(encoding="utf-8"))
    _validator("fixtures-manifest.schema.json").validate(manifest)


def _examples(name: str) -> list[dict[str, Any]]:
    return _lines(EXAMPLES / name)


@pytest.mark.parametrize("example", _examples("pi-journal-invalid.jsonl"), ids=lambda e: e["reason"])
def test_v3_schema_rejects(example: dict[str, Any]) -> None:
    assert not V3.is_valid(example["line"])


@pytest.mark.parametrize("example", _examples("pi-journal-legacy-invalid.jsonl"), ids=lambda e: e["reason"])
def test_legacy_schema_rejects(example: dict[str, Any]) -> None:
    assert not LEGACY.is_valid(example["line"])


@pytest.mark.parametrize("example", _examples("pi-journal-open.jsonl"), ids=lambda e: e["reason"])
def test_v3_schema_accepts_unknown_types_roles_blocks_and_keys(example: dict[str, Any]) -> None:
    errors = [error.message for error in V3.iter_errors(example["line"])]
    assert not errors, errors
