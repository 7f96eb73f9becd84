"""`pimem-conformance lint`: the spec checks itself.

- requirement IDs are well formed and unique across `spec/*.md`;
- every MUST / MUST NOT names at least one case (`Cases: a, b`) or says `Excluded: <reason>`;
- every case file validates, case IDs are unique, and cases cite only existing requirements
  (and appear on those requirements' `Cases:` lines, so traceability holds both ways);
- every `$from` names an earlier step that has a response, and only request steps expect `errored`;
- every must_not case names a positive twin over the same journals (for a manifest case: a
  positive manifest case);
- `requirements-ledger.json` shows no ID removed, renumbered or reused;
- every schema under `spec/schemas/` is valid under its metaschema, and every `$ref` in an
  expected schema names one of them;
- a withdrawn case (`withdrawn: "<version>"`) was withdrawn after the version that introduced it,
  says what replaced it (`replaced_by`, live cases) or why not (`comment`), and is no live
  case's twin; every MUST keeps at least one live case;
- every requirement of a frozen release (`spec/releases/*.json`) is still in the ledger with the
  same keyword level; frozen cases that changed or disappeared since are reported, and a changed
  one says why (`changed: {"<version>": "<why>"}`);
- every number a MUST sentence states (a limit, a length, a period) has a live case tagged
  `boundary` that cites the requirement, or the requirement says why not (`Boundaries: <reason>`);
- a step that expects two or more ids says how they are ordered: `order` pairs, `"as_listed"`, or
  `"unspecified"` with `order_freed_by`, the README's implementation-defined item that frees it;
- answers grow: the answer schemas (details, the tool error, protocol responses) close no object
  (no `additionalProperties`/`unevaluatedProperties` false), so an implementation of a later
  release still validates against an earlier one's; the tool's parameters and every protocol
  request stay closed.
- the redaction rule table (`redaction-rules.json`), its generated document, and every rule ID a
  case or the secrets corpus expects (see `_rule_table`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs in the deps
from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]

from pimem_conformance._cases import Case, case_file_problems, ships_the_corpus
from pimem_conformance._corpus_cases import corpus_cases
from pimem_conformance._expect import CAPTURE_KEY, json_objects, parse_capture
from pimem_conformance._paths import fixtures_dir
from pimem_conformance._releases import FIRST_VERSION, ReleaseChange, check_releases, version_key
from pimem_conformance._rule_table import check_rule_table
from pimem_conformance._workspace import CREATING_OPS

__all__ = ["AREAS", "LintReport", "Requirement", "lint_spec", "parse_requirements", "render_lint"]

AREAS = (
    "JOURNAL",
    "EXTRACT",
    "INDEX",
    "READ",
    "SEARCH",
    "RANK",
    "SUMMARY",
    "SCOPE",
    "REDACT",
    "TOOL",
    "HOOK",
    "CMD",
    "BACKFILL",
    "PROTO",
)
_REQUIREMENT = re.compile(r"^\*\*(JM-[A-Z]+-[0-9]+)\*\*\s*(.*)$")
_WELL_FORMED = re.compile(rf"^JM-({'|'.join(AREAS)})-[0-9]{{3}}$")
_CASES_LINE = re.compile(r"^Cases:\s*(.*)$")
_EXCLUDED_LINE = re.compile(r"^Excluded:\s*(.*)$", re.IGNORECASE)
_BOUNDARIES_LINE = re.compile(r"^Boundaries:\s*(.*)$")
_KEYWORD = re.compile(
    r"\b(MUST NOT|MUST|SHALL NOT|SHALL|REQUIRED|SHOULD NOT|SHOULD|RECOMMENDED|MAY|OPTIONAL)\b"
)
_PENDING = "(pending)"


@dataclass
class Requirement:
    id: str
    document: str
    line: int
    text: str
    cases: list[str] = field(default_factory=list)
    excluded: str | None = None
    boundaries: str | None = None  # why the numbers it states need no boundary case

    def stated_numbers(self) -> list[str]:
        """The numbers of its MUST sentences, leaving out what names rather than limits: IDs,
        versions, code spans, links and README item numbers."""
        numbers: list[str] = []
        for sentence in re.split(r"(?<=[.;])\s+", self.text):
            if not re.search(r"\b(MUST|SHALL|REQUIRED)\b", sentence):
                continue
            plain = re.sub(r"`[^`]*`|\[[^\]]*\]\([^)]*\)|JM-[A-Z]+-\d+|\b\d+\.\d+\.\d+\b", " ", sentence)
            plain = re.sub(r"\bitem \d+", " ", plain)
            numbers += re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w.]\d)", plain)
        return [number.rstrip(",") for number in numbers]

    @property
    def level(self) -> str:
        """`must` for MUST / MUST NOT (and SHALL, REQUIRED), else `should`, `may` or `none`."""
        keywords = set(_KEYWORD.findall(self.text))
        if keywords & {"MUST NOT", "MUST", "SHALL NOT", "SHALL", "REQUIRED"}:
            return "must"
        if keywords & {"SHOULD NOT", "SHOULD", "RECOMMENDED"}:
            return "should"
        return "may" if keywords else "none"


def parse_requirements(document: Path) -> list[Requirement]:
    """Requirements of one document: `**JM-AREA-NNN** sentence…` up to the `Cases:`/`Excluded:` line."""
    requirements: list[Requirement] = []
    current: Requirement | None = None
    for number, line in enumerate(document.read_text(encoding="utf-8").splitlines(), start=1):
        started = _REQUIREMENT.match(line)
        if started:
            current = Requirement(started.group(1), document.name, number, started.group(2))
            requirements.append(current)
            continue
        if current is None:
            continue
        cases, excluded = _CASES_LINE.match(line), _EXCLUDED_LINE.match(line)
        boundaries = _BOUNDARIES_LINE.match(line)
        if boundaries:
            current.boundaries = boundaries.group(1).strip()
        elif cases:
            listed = cases.group(1).strip()
            current.cases = [] if listed in ("", _PENDING) else [item.strip() for item in listed.split(",")]
            current = None
        elif excluded:
            current.excluded = excluded.group(1).strip()
            current = None
        elif not line.strip():
            current = None  # a blank line ends the requirement's block
        else:
            current.text += " " + line.strip()
    return requirements


@dataclass
class LintReport:
    requirements: list[Requirement]
    cases: list[Case]
    problems: list[str]
    release_changes: list[ReleaseChange] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def uncovered(self) -> list[str]:
        return [r.id for r in self.requirements if r.level == "must" and not r.cases and not r.excluded]

    def numbers(self) -> dict[str, Any]:
        must = [r for r in self.requirements if r.level == "must"]
        return {
            "requirements": len(self.requirements),
            "must": len(must),
            "covered": sum(1 for r in must if r.cases),
            "excluded": sum(1 for r in must if r.excluded and not r.cases),
            "uncovered": self.uncovered(),
            "cases": len(self.cases),
            "must_not_cases": sum(1 for case in self.cases if case.polarity == "must_not"),
            "problems": len(self.problems),
            "changed_since_release": [str(change) for change in self.release_changes],
        }


def _is_manifest_case(case: Case) -> bool:
    return any("manifest" in step for step in case.steps)


def _check_requirements(requirements: list[Requirement], problems: list[str]) -> None:
    seen: dict[str, Requirement] = {}
    for requirement in requirements:
        where = f"{requirement.document}:{requirement.line}"
        if not _WELL_FORMED.match(requirement.id):
            problems.append(
                f"{where}: {requirement.id} is not JM-<AREA>-<NNN> with AREA one of {', '.join(AREAS)}"
            )
        if requirement.id in seen:
            first = seen[requirement.id]
            problems.append(f"{where}: {requirement.id} is also defined at {first.document}:{first.line}")
        seen[requirement.id] = requirement
        if requirement.level == "none":
            problems.append(f"{where}: {requirement.id} states no RFC 2119 keyword")
        if requirement.level == "must" and not requirement.cases and not requirement.excluded:
            problems.append(
                f"{where}: {requirement.id} is a MUST without cases and without 'Excluded: <reason>'"
            )


def _live(case: Case) -> bool:
    return "withdrawn" not in case.raw


def _check_withdrawn(cases: list[Case], requirements: list[Requirement], problems: list[str]) -> None:
    by_id = {case.id: case for case in cases}
    for case in cases:
        if _live(case):
            twin = by_id.get(case.twin or "")
            if twin is not None and not _live(twin):
                problems.append(f"case {case.id}: its twin {twin.id} is withdrawn")
            continue
        withdrawn, since = case.raw["withdrawn"], case.raw.get("since", FIRST_VERSION)
        try:
            if version_key(withdrawn) <= version_key(since):
                problems.append(
                    f"case {case.id} is withdrawn in {withdrawn}, not after the version that introduced it "
                    f"({since}): a case never released is changed or removed, not withdrawn"
                )
        except ValueError as exc:
            problems.append(f"case {case.id}: {exc}")
        replacements = case.raw.get("replaced_by", [])
        if not replacements and not case.raw.get("comment"):
            problems.append(
                f"withdrawn case {case.id} names no replacement (replaced_by) and gives no reason (comment)"
            )
        for replacement in replacements:
            if replacement not in by_id or not _live(by_id[replacement]):
                problems.append(f"withdrawn case {case.id} is replaced by {replacement!r}, not a live case")
    for requirement in requirements:
        if requirement.level != "must" or not requirement.cases:
            continue
        if not any(_live(by_id[case_id]) for case_id in requirement.cases if case_id in by_id):
            problems.append(
                f"{requirement.document}:{requirement.line}: {requirement.id} lists only withdrawn cases"
            )


BOUNDARY_TAG = "boundary"


def _check_boundaries(cases: list[Case], requirements: list[Requirement], problems: list[str]) -> None:
    """Each number a MUST states is tested at the limit and a step either side (a live case tagged
    `boundary`), or the requirement says why not."""
    tested = {
        requirement_id
        for case in cases
        if _live(case) and BOUNDARY_TAG in case.raw.get("tags", [])
        for requirement_id in case.requirements
    }
    for requirement in requirements:
        if requirement.level != "must" or not requirement.cases or requirement.id in tested:
            continue
        numbers = requirement.stated_numbers()
        if numbers and not requirement.boundaries:
            problems.append(
                f"{requirement.document}:{requirement.line}: {requirement.id} states "
                f"{', '.join(numbers)} but no live case tagged {BOUNDARY_TAG!r} cites it: test each at "
                "the limit and one step either side, or say why not on a 'Boundaries: <reason>' line"
            )


def _load_all_cases(spec: Path, problems: list[str]) -> list[Case]:
    cases: list[Case] = []
    for path in sorted((spec / "cases").glob("*.json")):
        content, file_problems = case_file_problems(path, spec)
        problems.extend(f"cases/{problem}" for problem in file_problems)
        if content is not None:
            # <area>.json, or <area>-<topic>.json for the cases a topic adds to an area
            area = content["area"]
            if path.stem != area and not path.stem.startswith(f"{area}-"):
                problems.append(f"cases/{path.name}: area {content['area']!r} differs from the file name")
            cases.extend(Case.from_json(raw, area=content["area"], source=path) for raw in content["cases"])
    if ships_the_corpus(spec):
        cases += corpus_cases(spec)
    return cases


def _expand_patterns(cases: list[Case], requirements: list[Requirement]) -> None:
    """A `Cases:` item ending in `*` (`corpus-secret-*`) stands for every case id it prefixes."""
    ids = [case.id for case in cases]
    for requirement in requirements:
        expanded: list[str] = []
        for item in requirement.cases:
            matching = (
                [case_id for case_id in ids if case_id.startswith(item[:-1])] if item.endswith("*") else []
            )
            expanded += matching or [item]
        requirement.cases = list(dict.fromkeys(expanded))


def _check_cases(
    cases: list[Case], requirements: list[Requirement], problems: list[str], freed: set[int] | None = None
) -> None:
    _expand_patterns(cases, requirements)
    by_id: dict[str, Case] = {}
    for case in cases:
        if case.id in by_id:
            problems.append(f"case {case.id} is defined twice")
        by_id[case.id] = case
    listed_by = {r.id: set(r.cases) for r in requirements}
    for requirement in requirements:
        for case_id in requirement.cases:
            if case_id not in by_id:
                problems.append(
                    f"{requirement.document}:{requirement.line}: {requirement.id} lists unknown case "
                    f"{case_id}"
                )
    for case in cases:
        for requirement_id in case.requirements:
            if requirement_id not in listed_by:
                problems.append(f"case {case.id} cites {requirement_id}, which no spec document defines")
            elif case.id not in listed_by[requirement_id] and _live(case):  # Cases: lines list live cases
                problems.append(f"case {case.id} cites {requirement_id}, whose Cases: line does not list it")
        _check_twin(case, by_id, problems)
        if _live(case):
            _check_steps(case, problems, freed)
        else:
            _check_steps(case, problems)  # a withdrawn case is history: it is not annotated again


def _check_twin(case: Case, by_id: dict[str, Case], problems: list[str]) -> None:
    if case.polarity != "must_not":
        return
    twin = by_id.get(case.twin or "")
    if twin is None:
        problems.append(f"must_not case {case.id} names twin {case.twin!r}, which does not exist")
    elif twin.polarity != "must":
        problems.append(f"must_not case {case.id}: its twin {twin.id} is not a positive (must) case")
    elif _is_manifest_case(case):
        if not _is_manifest_case(twin):
            problems.append(f"must_not manifest case {case.id}: its twin {twin.id} is not a manifest case")
    elif twin.journals != case.journals:
        problems.append(f"must_not case {case.id}: its twin {twin.id} runs over other journals")


_ITEM = re.compile(r"^(\d+)\. ")


def implementation_defined_items(spec: Path) -> set[int]:
    """The numbers of the items of spec/README.md's implementation-defined list."""
    readme = spec / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    section = text.split("## Implementation-defined behaviour", 1)[-1].split("\n## ", 1)[0] if text else ""
    return {int(found.group(1)) for line in section.splitlines() if (found := _ITEM.match(line))}


def _check_order(
    case: Case, index: int, expect: dict[str, Any], freed: set[int], problems: list[str]
) -> None:
    """Two or more expected ids: the step checks their order or names the README item that frees it."""
    where = f"case {case.id} step {index}"
    order, item = expect.get("order"), expect.get("order_freed_by")
    if order == "unspecified":
        if item not in freed:
            problems.append(
                f"{where}: order unspecified, but order_freed_by {item!r} is no item of the README's "
                f"implementation-defined list ({', '.join(map(str, sorted(freed)))})"
            )
        return
    if item is not None:
        problems.append(f'{where}: order_freed_by goes with "order": "unspecified" only')
    listed = max(len(expect.get("ids", [])), len(expect.get("includes_ids", [])))
    if listed >= 2 and order is None:
        problems.append(
            f"{where} expects {listed} ids and checks no order: add order ([[a, b]] pairs or "
            '"as_listed") where the spec defines one, else "order": "unspecified" with '
            "order_freed_by, the README item that frees it"
        )


_UNSENT_STEPS = ("state_lacks", "damage", "journals_kept")  # steps the runner carries out itself


def _check_damage(case: Case, index: int, problems: list[str]) -> None:
    """A damage step closes and reopens every instance of one adapter: a single-process case of
    the damage profile (a damage made while another process holds the index is no such damage)."""
    if case.processes != 1:
        problems.append(f"case {case.id} step {index}: a damage step in a case of {case.processes} processes")
    if case.profile != "damage":
        problems.append(f"case {case.id} step {index}: a damage step in a case of profile {case.profile}")


def _check_steps(case: Case, problems: list[str], freed: set[int] | None = None) -> None:
    journals = set(case.journals)
    for index, step in enumerate(case.steps):
        if freed is not None and "expect" in step:
            _check_order(case, index, step["expect"], freed, problems)
        for check in _UNSENT_STEPS:
            if check in step and "expect" in step:
                problems.append(
                    f"case {case.id} step {index}: a {check} step has no response to expect anything of"
                )
        if "damage" in step:
            _check_damage(case, index, problems)
        if "journals_kept" in step and not any("damage" in earlier for earlier in case.steps[:index]):
            problems.append(f"case {case.id} step {index}: journals_kept needs an earlier damage step")
        if "mutate" in step:
            if "expect" in step:
                problems.append(
                    f"case {case.id} step {index}: a mutation has no response to expect anything of"
                )
            key = step["mutate"]["journal"]
            if key not in journals and step["mutate"]["op"] not in CREATING_OPS:
                problems.append(f"case {case.id} step {index}: mutation of {key}, which the case never wrote")
            journals.add(key)
        for reference in _captures(step):
            try:
                source, _ = parse_capture(reference)
            except ValueError as exc:
                problems.append(f"case {case.id} step {index}: {exc}")
                continue
            if source >= index or any(check in case.steps[source] for check in ("mutate", *_UNSENT_STEPS)):
                problems.append(
                    f"case {case.id} step {index}: {CAPTURE_KEY} {reference!r} names no earlier step "
                    "with a response"
                )
        if step.get("expect", {}).get("errored") and "request" not in step:
            problems.append(f"case {case.id} step {index}: only a request step can expect an errored answer")
        if step.get("process", 0) >= case.processes:
            problems.append(f"case {case.id} step {index}: process {step['process']} of {case.processes}")
        instance = step.get("instance")
        if instance is not None and instance not in case.instances:
            problems.append(f"case {case.id} step {index}: instance {instance!r} is not in setup.instances")
    for key, journal in case.journals.items():
        if "fixture" in journal and not (fixtures_dir() / journal["fixture"]).is_file():
            problems.append(f"case {case.id}: journal {key} names a missing fixture {journal['fixture']}")


def _captures(value: Any) -> Iterator[str]:
    """Every `$from` reference inside a step."""
    for item in json_objects(value):
        if isinstance(item.get(CAPTURE_KEY), str):
            yield item[CAPTURE_KEY]


def _refs(value: Any) -> Iterator[str]:
    for item in json_objects(value):
        if isinstance(item.get("$ref"), str):
            yield item["$ref"]


def _check_schema_refs(spec: Path, cases: list[Case], problems: list[str]) -> None:
    """Every `$ref` of an expected schema names a schema under spec/schemas/ (or the schema itself)."""
    known = {schema_id for schema_id, _ in _schema_ids(spec)}
    for case in cases:
        for index, step in enumerate(case.steps):
            for ref in _refs(step.get("expect", {}).get("schema", {})):
                target = ref.split("#", 1)[0]
                if target and target not in known:
                    problems.append(
                        f"case {case.id} step {index}: schema $ref {ref} names no schema under spec/"
                    )


def _schema_ids(spec: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted((spec / "schemas").rglob("*.schema.json")):
        try:
            schema_id = json.loads(path.read_text(encoding="utf-8")).get("$id")
        except (ValueError, AttributeError):
            continue  # reported by the metaschema check
        if isinstance(schema_id, str):
            yield schema_id, path


def _check_ledger(spec: Path, requirements: list[Requirement], problems: list[str]) -> dict[str, str]:
    """Check the ledger against the documents; its IDs with their status."""
    path = spec / "requirements-ledger.json"
    if not path.is_file():
        if requirements:
            problems.append("requirements-ledger.json is missing: every issued ID must be recorded")
        return {}
    try:
        ids = json.loads(path.read_text(encoding="utf-8"))["ids"]
        statuses = {key: value["status"] for key, value in ids.items()}
    except (ValueError, KeyError, TypeError) as exc:
        problems.append(
            f"requirements-ledger.json: expected {{'ids': {{ID: {{introduced, status}}}}}}: {exc!r}"
        )
        return {}
    defined = {r.id for r in requirements}
    for requirement_id, status in sorted(statuses.items()):
        if status == "active" and requirement_id not in defined:
            problems.append(
                f"{requirement_id} is active in the ledger but no document defines it "
                "(removed or renumbered? mark it withdrawn instead)"
            )
        elif status == "withdrawn" and requirement_id in defined:
            problems.append(f"{requirement_id} was withdrawn and is defined again (IDs are never reused)")
        elif status not in ("active", "withdrawn"):
            problems.append(f"{requirement_id}: unknown ledger status {status!r}")
    for requirement_id in sorted(defined - set(statuses)):
        problems.append(f"{requirement_id} is defined but missing from requirements-ledger.json")
    return statuses


@functools.lru_cache(maxsize=256)
def _metaschema_problem(text: str) -> str | None:
    """Why a schema's text is not a valid JSON Schema, or None (cached: metaschema checks are slow)."""
    try:
        Draft202012Validator.check_schema(json.loads(text))
    except SchemaError as exc:
        return str(exc.message)
    except ValueError as exc:
        return str(exc)
    return None


def _check_schemas(spec: Path, problems: list[str]) -> None:
    for path in sorted((spec / "schemas").rglob("*.schema.json")):
        problem = _metaschema_problem(path.read_text(encoding="utf-8"))
        if problem is not None:
            problems.append(f"{path.relative_to(spec)}: not a valid JSON Schema: {problem}")


# Answers: a later release adds fields to them, so they close no object. What the model or the
# runner sends (the tool's parameters, protocol requests) stays closed.
_ANSWER_SCHEMAS = (
    "details-*.schema.json",
    "error.schema.json",
    "protocol/*-response.schema.json",
    "protocol/common.schema.json",
)
_CLOSED_SCHEMAS = ("tool-parameters.schema.json", "protocol/*-request.schema.json")
_CLOSERS = ("additionalProperties", "unevaluatedProperties")


def _closed_at(value: Any, where: str = "") -> Iterator[str]:
    """The JSON pointer of every object schema that forbids properties it does not name."""
    if isinstance(value, dict):
        if any(value.get(key) is False for key in _CLOSERS):
            yield where or "/"
        for key, item in value.items():
            yield from _closed_at(item, f"{where}/{key}")
    elif isinstance(value, list):
        for number, item in enumerate(value):
            yield from _closed_at(item, f"{where}/{number}")


def _check_answers_open(spec: Path, problems: list[str]) -> None:
    """Answer schemas stay open; the tool's parameters and the protocol requests stay closed."""
    folder = spec / "schemas"
    for pattern in _ANSWER_SCHEMAS:
        for path in sorted(folder.glob(pattern)):
            try:
                schema = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue  # reported by the metaschema check
            for where in _closed_at(schema):
                problems.append(
                    f"{path.relative_to(spec)}: {where} forbids unnamed properties; answer schemas stay "
                    "open, so that a later release can add fields (spec/README.md, Versions)"
                )
    for pattern in _CLOSED_SCHEMAS:
        for path in sorted(folder.glob(pattern)):
            try:
                schema = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                continue
            if not isinstance(schema, dict) or not any(schema.get(key) is False for key in _CLOSERS):
                problems.append(
                    f"{path.relative_to(spec)}: must forbid properties it does not name "
                    '("additionalProperties": false): what the model or the runner sends stays closed'
                )


def lint_spec(spec: Path) -> LintReport:
    requirements = [r for document in sorted(spec.glob("*.md")) for r in parse_requirements(document)]
    problems: list[str] = []
    _check_requirements(requirements, problems)
    cases = _load_all_cases(spec, problems)
    _check_cases(cases, requirements, problems, implementation_defined_items(spec))
    _check_withdrawn(cases, requirements, problems)
    _check_boundaries(cases, requirements, problems)
    _check_schema_refs(spec, cases, problems)
    check_rule_table(spec, cases, problems)
    ledger = _check_ledger(spec, requirements, problems)
    _check_schemas(spec, problems)
    _check_answers_open(spec, problems)
    levels = {requirement.id: requirement.level for requirement in requirements}
    changes = check_releases(spec, ledger, levels, cases, problems)
    return LintReport(requirements, cases, problems, changes)


def render_lint(report: LintReport) -> str:
    numbers = report.numbers()
    lines = [
        f"{numbers['requirements']} requirements ({numbers['must']} MUST: {numbers['covered']} with cases, "
        f"{numbers['excluded']} excluded, {len(numbers['uncovered'])} uncovered); "
        f"{numbers['cases']} cases ({numbers['must_not_cases']} must_not)"
    ]
    lines += [f"  {problem}" for problem in report.problems]
    lines += [f"  note: {change}" for change in report.release_changes]
    lines.append("lint: ok" if report.ok else f"lint: {len(report.problems)} problems")
    return "\n".join(lines)
