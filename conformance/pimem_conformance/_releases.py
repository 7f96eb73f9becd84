"""Frozen spec releases: `spec/releases/<version>.json`, written by `pimem-conformance lint --freeze`.

A release records every requirement ID with its keyword level and every case with the SHA-256 of
its canonical JSON. The lint then holds later edits to it: a frozen requirement may be withdrawn
but never leave the ledger, nor change its level (a new meaning needs a new ID); a frozen case
that changed or disappeared is reported, so a review sees the goalposts move.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_conformance._cases import Case

__all__ = [
    "FIRST_VERSION",
    "ReleaseChange",
    "case_hash",
    "change_reasons",
    "check_releases",
    "freeze_release",
    "release_case_ids",
    "release_notes",
    "scored",
    "version_key",
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


def case_hash(case: Case) -> str:
    """SHA-256 of the case's canonical JSON (sorted keys, no whitespace, raw UTF-8), without the
    keys that withdraw it."""
    content = {key: value for key, value in case.raw.items() if key not in _NOT_HASHED}
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


def freeze_release(spec: Path, version: str, levels: dict[str, str], cases: list[Case]) -> Path:
    """Write `releases/<version>.json`; an existing release is never rewritten with other content."""
    content = {
        "version": version,
        "requirements": dict(sorted(levels.items())),
        "cases": {case.id: case_hash(case) for case in sorted(cases, key=lambda case: case.id)},
    }
    text = json.dumps(content, indent=2, ensure_ascii=False) + "\n"
    path = _release_path(spec, version)
    if path.is_file() and path.read_text(encoding="utf-8") != text:
        raise ValueError(f"release {version} is frozen already ({path.name}) and differs from the spec now")
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _load(path: Path) -> dict[str, Any]:
    content = json.loads(path.read_text(encoding="utf-8"))
    if (
        not isinstance(content, dict)
        or content.get("version") != path.stem
        or not isinstance(content.get("requirements"), dict)
        or not isinstance(content.get("cases"), dict)
    ):
        raise ValueError(f'expected {{"version": "{path.stem}", "requirements": {{...}}, "cases": {{...}}}}')
    return content


def release_case_ids(spec: Path, version: str) -> set[str]:
    """The case ids of a frozen release (ValueError when there is no such release)."""
    path = _release_path(spec, version)
    if not path.is_file():
        raise ValueError(f"no frozen release {version} (expected {path})")
    return set(_load(path)["cases"])


def release_notes(spec: Path, version: str, cases: list[Case]) -> list[str]:
    """What a run `--as-of <version>` scores, said plainly: how many cases the release froze, and
    each frozen case that is no longer exactly as frozen (changed, with why; withdrawn since, with
    what replaced it; removed)."""
    frozen = _load(_release_path(spec, version))["cases"]
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
            changed.append(f"  {case_id}: scored as it is now, not as frozen ({why})")
        if "withdrawn" in case.raw:
            replaced = ", ".join(case.raw.get("replaced_by", [])) or "nothing"
            withdrawn.append(
                f"  {case_id}: withdrawn in {case.raw['withdrawn']}, replaced by {replaced}: "
                f"{case.raw.get('withdrawn_because', 'no reason given')}"
            )
    kept = len(frozen) - len(changed) - len(removed)
    notes = [f"spec {version} froze {len(frozen)} cases: {kept} are scored exactly as frozen"]
    if changed:
        notes.append(f"{len(changed)} frozen case(s) changed since, scored as they are now:")
        notes += changed
    if withdrawn:
        notes.append(
            f"{len(withdrawn)} frozen case(s) withdrawn since, scored as frozen here (an implementation "
            "that follows the newer spec fails them):"
        )
        notes += withdrawn
    if removed:
        notes.append(f"{len(removed)} frozen case(s) no longer in the spec, not scored: {', '.join(removed)}")
    return notes


def check_releases(
    spec: Path, ledger: dict[str, str], levels: dict[str, str], cases: list[Case], problems: list[str]
) -> list[ReleaseChange]:
    """Check every frozen release against the spec now.

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
