"""Frozen spec releases, written by `pimem-conformance lint --freeze`.

A release is two things. Its manifest, `spec/releases/<version>.json`, records every requirement
ID with its keyword level, every case with the SHA-256 of its canonical JSON, every schema file
with the SHA-256 of its bytes, and every fixture a frozen case names with the SHA-256 of its bytes.
Its snapshot, `spec/releases/<version>/`, is a spec folder of its own: the frozen case bodies
(`cases/<area>.json`) and the frozen schemas (`schemas/...`, byte for byte), so `run --as-of`
judges a release by what it froze, not by what the spec says now.

The lint holds both: the snapshot must match the manifest's hashes and the fixtures must not move;
a frozen requirement may be withdrawn but never leave the ledger, nor change its level (a new
meaning needs a new ID); a frozen case that changed or disappeared in the spec now is reported, so
a review sees the goalposts move.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_conformance._cases import Case
from pimem_conformance._paths import fixtures_dir

__all__ = [
    "FIRST_VERSION",
    "ReleaseChange",
    "case_hash",
    "change_reasons",
    "check_releases",
    "freeze_release",
    "is_frozen",
    "release_case_ids",
    "release_notes",
    "release_requirements",
    "release_spec",
    "scored",
    "version_key",
    "write_snapshot",
]

_RELEASES = "releases"
FIRST_VERSION = "0.1.0"  # the version of a case without `since`


# Withdrawing a case, or saying why it changed, is not a change of its content: these keys stay
# out of its hash, so a frozen release keeps scoring the case as it was released. So is a step's
# `"order": "unspecified"` note (with its `order_freed_by`): it asserts nothing.
_NOT_HASHED = ("withdrawn", "withdrawn_because", "replaced_by", "changed")
_UNASSERTED_ORDER = ("order", "order_freed_by")


def version_key(version: str) -> tuple[int, ...]:
    """`0.10.1` -> (0, 10, 1), so versions compare as SemVer cores do (ValueError if malformed)."""
    parts = version.split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        raise ValueError(f"malformed spec version {version!r} (expected MAJOR.MINOR.PATCH)")
    return tuple(int(part) for part in parts)


def scored(case: Case, as_of: str | None) -> bool:
    """Whether a run scores `case`: a case withdrawn in version W counts only as of a version before W.

    Without `as_of` (the spec as it is now) a withdrawn case is never scored."""
    withdrawn = case.raw.get("withdrawn")
    if withdrawn is None:
        return True
    return as_of is not None and version_key(as_of) < version_key(withdrawn)


def case_hash(case: Case | dict[str, Any]) -> str:
    """SHA-256 of the case's canonical JSON (sorted keys, no whitespace, raw UTF-8), without the
    keys that withdraw it; `case` is a Case or a case body as written."""
    raw = case.raw if isinstance(case, Case) else case
    content = {key: value for key, value in raw.items() if key not in _NOT_HASHED}
    content["steps"] = [_without_order_note(step) for step in content.get("steps", [])]
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _without_order_note(step: Any) -> Any:
    expect = step.get("expect") if isinstance(step, dict) else None
    if not isinstance(expect, dict) or expect.get("order") != "unspecified":
        return step
    kept = {key: value for key, value in expect.items() if key not in _UNASSERTED_ORDER}
    return {**step, "expect": kept}


def change_reasons(case: Case, release: str) -> dict[str, str]:
    """The case's `changed` notes of versions after `release`: why it differs from that release."""
    notes = case.raw.get("changed") or {}
    return {
        version: why
        for version, why in notes.items()
        if _is_version(version) and version_key(version) > version_key(release)
    }


def _is_version(text: str) -> bool:
    try:
        version_key(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ReleaseChange:
    """A frozen case that is no longer as it was released."""

    release: str
    case: str
    change: str  # "changed" or "removed"

    def __str__(self) -> str:
        return f"case {self.case} {self.change} since release {self.release}"


def _release_path(spec: Path, version: str) -> Path:
    return spec / _RELEASES / f"{version}.json"


def release_spec(spec: Path, version: str) -> Path:
    """The snapshot of a release: a spec folder with the frozen `cases/` and `schemas/`."""
    return spec / _RELEASES / version


def is_frozen(spec: Path, version: str) -> bool:
    """Whether `spec` holds a frozen release `version` (its manifest)."""
    return _release_path(spec, version).is_file()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _schema_files(schemas: Path) -> dict[str, bytes]:
    """Every `*.schema.json` under a `schemas/` folder, by its path relative to it, as bytes."""
    return {
        path.relative_to(schemas).as_posix(): path.read_bytes()
        for path in sorted(schemas.rglob("*.schema.json"))
    }


def _fixture_names(bodies: Iterable[dict[str, Any]]) -> list[str]:
    """The fixture files the case bodies name (`journals.<key>.fixture`), each once, sorted."""
    return sorted(
        {
            journal["fixture"]
            for body in bodies
            for journal in body.get("journals", {}).values()
            if isinstance(journal, dict) and isinstance(journal.get("fixture"), str)
        }
    )


def _case_files(bodies: list[tuple[str, dict[str, Any]]]) -> dict[str, bytes]:
    """Case bodies (area, body) as case files `cases/<area>.json`, in the order given, one compact
    body per line (a snapshot of big generated cases stays small, and a diff names the case)."""
    by_area: dict[str, list[dict[str, Any]]] = {}
    for area, body in bodies:
        by_area.setdefault(area, []).append(body)
    files: dict[str, bytes] = {}
    for area, cases in by_area.items():
        lines = ",\n".join(_compact(body) for body in cases)
        files[f"cases/{area}.json"] = f'{{"area": {json.dumps(area)}, "cases": [\n{lines}\n]}}\n'.encode()
    return files


def _compact(body: dict[str, Any]) -> str:
    """One body as one line; readable where it can be, a lone surrogate (a case about one) escaped."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(body, separators=(",", ":"))
    return text


def write_snapshot(
    spec: Path, version: str, bodies: list[tuple[str, dict[str, Any]]], schema_files: dict[str, bytes]
) -> Path:
    """Write the snapshot `releases/<version>/` (case files and schema files); files already there
    must be the same bytes (a snapshot is never rewritten with other content)."""
    folder = release_spec(spec, version)
    files = {**_case_files(bodies), **{f"schemas/{name}": data for name, data in schema_files.items()}}
    for name, data in files.items():
        path = folder / name
        if path.is_file() and path.read_bytes() != data:
            raise ValueError(f"release {version} is frozen already ({_RELEASES}/{version}/{name} differs)")
    stray = sorted(
        path.relative_to(folder).as_posix()
        for path in (folder.rglob("*") if folder.is_dir() else [])
        if path.is_file() and path.relative_to(folder).as_posix() not in files
    )
    if stray:
        raise ValueError(f"release {version} is frozen already: its snapshot also holds {', '.join(stray)}")
    for name, data in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file():
            path.write_bytes(data)
    return folder


def freeze_release(spec: Path, version: str, levels: dict[str, str], cases: list[Case]) -> Path:
    """Write `releases/<version>.json` (the manifest) and `releases/<version>/` (the snapshot of the
    case bodies and schemas it is judged by); an existing release is never rewritten with other
    content."""
    frozen = sorted(cases, key=lambda case: case.id)
    schema_files = _schema_files(spec / "schemas")
    fixtures = _fixture_names(case.raw for case in frozen)
    missing = [name for name in fixtures if not (fixtures_dir() / name).is_file()]
    if missing:
        raise ValueError(f"release {version}: frozen cases name missing fixtures {', '.join(missing)}")
    content = {
        "version": version,
        "requirements": dict(sorted(levels.items())),
        "cases": {case.id: case_hash(case) for case in frozen},
        "schemas": {name: _sha256(data) for name, data in schema_files.items()},
        "fixtures": {name: _sha256((fixtures_dir() / name).read_bytes()) for name in fixtures},
    }
    text = json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    path = _release_path(spec, version)
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        raise ValueError(f"release {version} is frozen already ({path.name}) and differs from the spec now")
    write_snapshot(spec, version, [(case.area, case.raw) for case in cases], schema_files)
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _load(path: Path) -> dict[str, Any]:
    content = json.loads(path.read_text(encoding="utf-8"))
    if (
        not isinstance(content, dict)
        or content.get("version") != path.stem
        or not all(
            isinstance(content.get(key), dict) for key in ("requirements", "cases", "schemas", "fixtures")
        )
    ):
        raise ValueError(
            f'expected {{"version": "{path.stem}", "requirements": {{...}}, "cases": {{...}}, '
            '"schemas": {...}, "fixtures": {...}}'
        )
    return content


def _frozen(spec: Path, version: str) -> dict[str, Any]:
    path = _release_path(spec, version)
    if not path.is_file():
        raise ValueError(f"no frozen release {version} (expected {path})")
    return _load(path)


def release_case_ids(spec: Path, version: str) -> set[str]:
    """The case ids of a frozen release (ValueError when there is no such release)."""
    return set(_frozen(spec, version)["cases"])


def release_requirements(spec: Path, version: str) -> frozenset[str]:
    """The requirement IDs a frozen release holds (ValueError when there is no such release)."""
    return frozenset(_frozen(spec, version)["requirements"])


def _snapshot_problems(spec: Path, release: dict[str, Any]) -> list[str]:
    """How the snapshot of a release differs from its manifest, and which frozen fixture moved."""
    version = release["version"]
    folder = release_spec(spec, version)
    where = f"{_RELEASES}/{version}/"
    if not folder.is_dir():
        return [f"{where} is missing: a frozen release keeps the case bodies and schemas it is judged by"]
    problems: list[str] = []
    bodies: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "cases").glob("*.json")):
        try:
            content = json.loads(path.read_text(encoding="utf-8"))
            for body in content["cases"]:
                bodies[body["id"]] = body
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problems.append(f"{where}cases/{path.name}: not a readable case file: {exc}")
    frozen: dict[str, str] = release["cases"]
    for case_id in sorted(set(frozen) - set(bodies)):
        problems.append(f"{where}: frozen case {case_id} has no body in the snapshot")
    for case_id in sorted(set(bodies) - set(frozen)):
        problems.append(f"{where}: case {case_id} is in the snapshot but not in the release")
    for case_id in sorted(set(bodies) & set(frozen)):
        if case_hash(bodies[case_id]) != frozen[case_id]:
            problems.append(f"{where}: the body of case {case_id} does not hash to its frozen hash")
    held = _schema_files(folder / "schemas")
    schemas: dict[str, str] = release["schemas"]
    for name in sorted(set(schemas) | set(held)):
        if name not in held:
            problems.append(f"{where}: frozen schema {name} is missing from the snapshot")
        elif name not in schemas:
            problems.append(f"{where}: schema {name} is in the snapshot but not in the release")
        elif _sha256(held[name]) != schemas[name]:
            problems.append(f"{where}: schema {name} does not hash to its frozen hash")
    fixtures: dict[str, str] = release["fixtures"]
    for name in _fixture_names(bodies.values()):
        if name not in fixtures:
            problems.append(f"{where}: a frozen case names fixture {name}, which the release does not pin")
    problems += [
        f"{_RELEASES}/{version}.json: fixture {name} moved since it was frozen (a frozen case reads it): "
        "write a new fixture file for new content"
        for name in _moved_fixtures(release)
    ]
    return problems


def _moved_fixtures(release: dict[str, Any]) -> list[str]:
    """The fixtures the release pins whose file is gone or no longer hashes as frozen."""
    moved = []
    for name, digest in sorted(release["fixtures"].items()):
        path = fixtures_dir() / name
        if not path.is_file() or _sha256(path.read_bytes()) != digest:
            moved.append(name)
    return moved


def release_notes(spec: Path, version: str, cases: list[Case]) -> list[str]:
    """What a run `--as-of <version>` scores, said plainly: the release's frozen case bodies against
    its frozen schemas, and each frozen case the spec `cases` (now) no longer holds exactly as
    frozen (changed, with why; withdrawn since, with what replaced it; removed), and any fixture that
    moved."""
    release = _load(_release_path(spec, version))
    frozen = release["cases"]
    by_id = {case.id: case for case in cases}
    changed, withdrawn, removed = [], [], []
    for case_id, digest in sorted(frozen.items()):
        case = by_id.get(case_id)
        if case is None:
            removed.append(case_id)
            continue
        if case_hash(case) != digest:
            reasons = change_reasons(case, version)
            why = "; ".join(f"{v}: {text}" for v, text in sorted(reasons.items())) or "no reason given"
            changed.append(f"  {case_id}: {why}")
        if "withdrawn" in case.raw:
            replaced = ", ".join(case.raw.get("replaced_by", [])) or "nothing"
            withdrawn.append(
                f"  {case_id}: withdrawn in {case.raw['withdrawn']}, replaced by {replaced}: "
                f"{case.raw.get('withdrawn_because', 'no reason given')}"
            )
    notes = [
        f"spec {version} froze {len(frozen)} cases; each is scored as frozen, against the schemas "
        f"frozen with it ({_RELEASES}/{version}/); {len(frozen) - len(changed) - len(removed)} are "
        "unchanged in the spec now"
    ]
    if changed:
        notes.append(f"{len(changed)} frozen case(s) changed in the spec since (scored as frozen here):")
        notes += changed
    if withdrawn:
        notes.append(
            f"{len(withdrawn)} frozen case(s) withdrawn since, scored as frozen here (an implementation "
            "that follows the newer spec fails them):"
        )
        notes += withdrawn
    if removed:
        notes.append(
            f"{len(removed)} frozen case(s) no longer in the spec, scored as frozen here: "
            + ", ".join(removed)
        )
    notes += [
        f"fixture {name} moved since spec {version} froze it: the cases reading it are scored against "
        "the file as it is now"
        for name in _moved_fixtures(release)
    ]
    return notes


def check_releases(
    spec: Path, ledger: dict[str, str], levels: dict[str, str], cases: list[Case], problems: list[str]
) -> list[ReleaseChange]:
    """Check every frozen release: its snapshot against its manifest, and the spec now against it.

    `ledger` maps each ID of requirements-ledger.json to its status, `levels` each requirement a
    document defines to its keyword level. Broken promises (a frozen requirement gone or changed, a
    new case claiming a frozen version) go to `problems`; changed and removed frozen cases are
    returned: they are reported, not errors.
    """
    by_id = {case.id: case for case in cases}
    changes: list[ReleaseChange] = []
    for path in sorted((spec / _RELEASES).glob("*.json")):
        where = f"{_RELEASES}/{path.name}"
        try:
            release = _load(path)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        problems.extend(_snapshot_problems(spec, release))
        for requirement_id, level in sorted(release["requirements"].items()):
            if requirement_id not in ledger:
                problems.append(
                    f"{where}: {requirement_id} is frozen but missing from requirements-ledger.json"
                )
            elif requirement_id in levels and levels[requirement_id] != level:
                problems.append(
                    f"{where}: {requirement_id} was frozen as {level} and is {levels[requirement_id]} now "
                    "(a changed meaning needs a new ID)"
                )
        for case in cases:
            if case.raw.get("since", FIRST_VERSION) == path.stem and case.id not in release["cases"]:
                problems.append(
                    f"{where}: case {case.id} claims spec {path.stem} (since) but is not in its frozen "
                    "release; give it the next version as since"
                )
        for case_id, digest in sorted(release["cases"].items()):
            if case_id not in by_id:
                changes.append(ReleaseChange(path.stem, case_id, "removed"))
            elif case_hash(by_id[case_id]) != digest:
                changes.append(ReleaseChange(path.stem, case_id, "changed"))
                if not change_reasons(by_id[case_id], path.stem) and "withdrawn" not in by_id[case_id].raw:
                    problems.append(
                        f"{where}: case {case_id} changed since it was frozen and does not say why: "
                        'add "changed": {"<version>": "<what it asserts now and why>"}, or withdraw '
                        "it and add a new case if its meaning changed"
                    )
    return changes
