"""`pimem-conformance lint` on small synthetic specs: each check fires on exactly its fault."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance import lint_spec, main, spec_dir
from suite_kit import make_spec, search_case

DOC = """# Search

**JM-SEARCH-001** The implementation MUST find entries.
Rationale.
Cases: finds, finds-not

**JM-SEARCH-002** The implementation MUST NOT leak.
Cases: (pending)

**JM-SEARCH-003** The implementation MUST stay fast.
Excluded: not observable through the protocol

**JM-SEARCH-004** The implementation MAY rank.
Cases:
"""
ACTIVE = {"introduced": "0.1.0", "status": "active"}
LEDGER = {"ids": {f"JM-SEARCH-00{n}": ACTIVE for n in range(1, 5)}}


def cases() -> list[dict[str, Any]]:
    negative = search_case("finds-not", "a", ["a"], twin="finds")
    negative["polarity"] = "must_not"
    return [search_case("finds", "a", ["a"]), negative]


def problems(
    tmp_path: Path, cases: list[dict[str, Any]], doc: str = DOC, ledger: dict[str, Any] = LEDGER
) -> list[str]:
    return lint_spec(make_spec(tmp_path, cases, documents={"search.md": doc}, ledger=ledger)).problems


def test_a_consistent_spec_reports_only_the_uncovered_must(tmp_path: Path) -> None:
    assert problems(tmp_path, cases()) == [
        "search.md:7: JM-SEARCH-002 is a MUST without cases and without 'Excluded: <reason>'"
    ]


def test_json_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = make_spec(tmp_path, cases(), documents={"search.md": DOC}, ledger=LEDGER)
    assert main(["lint", "--spec", str(spec), "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {
        "requirements": 4,
        "must": 3,
        "covered": 1,
        "excluded": 1,
        "uncovered": ["JM-SEARCH-002"],
        "cases": 2,
        "must_not_cases": 1,
        "problems": 1,
        "changed_since_release": [],
    }


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        (DOC + "\n**JM-SEARCH-001** The implementation MAY repeat.\nCases:\n", "also defined at search.md:3"),
        (DOC + "\n**JM-SERCH-005** The implementation MAY typo.\nCases:\n", "is not JM-<AREA>-<NNN>"),
        (DOC + "\n**JM-SEARCH-005** The implementation does things.\nCases:\n", "states no RFC 2119 keyword"),
        (
            DOC.replace("Cases: finds, finds-not", "Cases: finds, finds-not, ghost"),
            "lists unknown case ghost",
        ),
        (DOC.replace("Cases: finds, finds-not", "Cases: finds"), "whose Cases: line does not list it"),
    ],
)
def test_requirement_faults(tmp_path: Path, doc: str, expected: str) -> None:
    assert any(expected in problem for problem in problems(tmp_path, cases(), doc))


def test_twin_faults(tmp_path: Path) -> None:
    twinless = cases()
    twinless[1]["twin"] = "nobody"
    assert any("does not exist" in p for p in problems(tmp_path / "a", twinless))
    other_journals = cases()
    other_journals[1]["journals"] = {"flat/x.jsonl": {"lines": []}}
    assert any("runs over other journals" in p for p in problems(tmp_path / "b", other_journals))


def test_case_faults(tmp_path: Path) -> None:
    invalid = cases()
    invalid[0]["description"] = "It should find things."
    assert any("cases/x.json" in p for p in problems(tmp_path / "a", invalid))
    unknown = cases()
    unknown[0]["requirements"] = ["JM-SEARCH-009"]
    assert any("no spec document defines" in p for p in problems(tmp_path / "b", unknown))
    dangling = cases()
    dangling[0]["steps"][0]["expect"]["schema"] = {"$ref": "tag:pimem.spec,2026:details-nothing"}
    assert any("names no schema" in p for p in problems(tmp_path / "d", dangling))
    mutation = cases()
    mutation[0]["steps"].append({"mutate": {"op": "delete", "journal": "flat/none.jsonl"}, "expect": {}})
    found = problems(tmp_path / "c", mutation)
    assert any("never wrote" in p for p in found) and any("no response to expect" in p for p in found)
    state_check = cases()
    state_check[0]["steps"].append({"state_lacks": ["zebracorn"], "expect": {}})
    state_check[0]["steps"].append({"tool": {"action": "read", "entryId": {"$from": "step1.details.id"}}})
    found = problems(tmp_path / "e", state_check)
    assert any("a state_lacks step has no response" in p for p in found)
    assert any("names no earlier step with a response" in p for p in found)
    damaged = cases()
    damaged[0]["processes"] = 2
    damaged[0]["steps"].append({"journals_kept": {}})
    damaged[0]["steps"].append({"damage": {"kind": "delete", "seed": 1}, "expect": {}})
    found = problems(tmp_path / "f", damaged)
    assert any("a damage step in a case of 2 processes" in p for p in found)
    assert any("a damage step in a case of profile" in p for p in found)
    assert any("journals_kept needs an earlier damage step" in p for p in found)
    assert any("a damage step has no response" in p for p in found)


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"tool": {"action": "read", "source": {"$from": "step3.details.source"}}}, "names no earlier step"),
        ({"tool": {"action": "read", "source": {"$from": "details.source"}}}, "expected step<N>.<path>"),
        ({"tool": {"action": "search"}, "expect": {"errored": True}}, "only a request step"),
    ],
)
def test_step_faults(tmp_path: Path, step: dict[str, Any], expected: str) -> None:
    faulty = cases()
    faulty[0]["steps"].append(step)
    assert any(expected in problem for problem in problems(tmp_path, faulty))


def test_from_may_name_any_earlier_step_with_a_response(tmp_path: Path) -> None:
    capturing = cases()
    capturing[0]["steps"].append({"tool": {"action": "read", "source": {"$from": "step0.details.source"}}})
    assert problems(tmp_path, capturing) == problems(tmp_path / "plain", cases())


@pytest.mark.parametrize(
    ("ledger", "expected"),
    [
        (
            {"ids": {**LEDGER["ids"], "JM-SEARCH-009": ACTIVE}},
            "JM-SEARCH-009 is active in the ledger but no document",
        ),
        (
            {"ids": {**LEDGER["ids"], "JM-SEARCH-004": {"introduced": "0.1.0", "status": "withdrawn"}}},
            "never reused",
        ),
        ({"ids": {key: ACTIVE for key in list(LEDGER["ids"])[:3]}}, "JM-SEARCH-004 is defined but missing"),
    ],
)
def test_ledger_faults(tmp_path: Path, ledger: dict[str, Any], expected: str) -> None:
    assert any(expected in problem for problem in problems(tmp_path, cases(), ledger=ledger))


def test_an_invalid_schema_is_reported(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, cases(), documents={"search.md": DOC}, ledger=LEDGER)
    (spec / "schemas").unlink()
    shutil.copytree(spec_dir() / "schemas", spec / "schemas")
    (spec / "schemas" / "bad.schema.json").write_text('{"$id": "tag:x", "type": 12}')
    assert any("bad.schema.json: not a valid JSON Schema" in p for p in lint_spec(spec).problems)


@pytest.mark.parametrize(
    ("name", "edit", "expected"),
    [
        (
            "details-search.schema.json",
            lambda schema: schema["properties"]["results"]["items"].update(additionalProperties=False),
            "schemas/details-search.schema.json: /properties/results/items forbids unnamed properties",
        ),
        (
            "protocol/tool-response.schema.json",
            lambda schema: schema.update(unevaluatedProperties=False),
            "schemas/protocol/tool-response.schema.json: / forbids unnamed properties",
        ),
        (
            "tool-parameters.schema.json",
            lambda schema: schema.pop("additionalProperties"),
            "schemas/tool-parameters.schema.json: must forbid properties it does not name",
        ),
        (
            "protocol/open-request.schema.json",
            lambda schema: schema.pop("unevaluatedProperties"),
            "schemas/protocol/open-request.schema.json: must forbid properties it does not name",
        ),
    ],
)
def test_answer_schemas_stay_open_and_what_is_sent_stays_closed(
    tmp_path: Path, name: str, edit: Any, expected: str
) -> None:
    spec = make_spec(tmp_path, cases(), documents={"search.md": DOC}, ledger=LEDGER)
    assert not any("unnamed properties" in p for p in lint_spec(spec).problems)
    (spec / "schemas").unlink()
    shutil.copytree(spec_dir() / "schemas", spec / "schemas")
    schema = json.loads((spec / "schemas" / name).read_text())
    edit(schema)
    (spec / "schemas" / name).write_text(json.dumps(schema))
    assert any(problem.startswith(expected) for problem in lint_spec(spec).problems), lint_spec(spec).problems


def frozen_spec(tmp_path: Path) -> Path:
    spec = make_spec(tmp_path, cases(), documents={"search.md": DOC}, ledger=LEDGER)
    (spec / "README.md").write_text("**Spec version: 0.1.0.**\n")
    (spec / "search.md").write_text(DOC.replace("Cases: (pending)", "Cases: finds"))
    assert main(["lint", "--spec", str(spec), "--freeze", "0.1.0"]) == 0
    return spec


def test_freeze_writes_requirement_levels_and_case_hashes(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    release = json.loads((spec / "releases" / "0.1.0.json").read_text())
    assert release["requirements"] == {
        "JM-SEARCH-001": "must",
        "JM-SEARCH-002": "must",
        "JM-SEARCH-003": "must",
        "JM-SEARCH-004": "may",
    }
    assert sorted(release["cases"]) == ["finds", "finds-not"]
    assert lint_spec(spec).ok and lint_spec(spec).release_changes == []
    assert main(["lint", "--spec", str(spec), "--freeze", "0.1.0"]) == 0  # the same content again
    assert main(["lint", "--spec", str(spec), "--freeze", "0.2.0"]) == 2  # not the spec's version


def test_freeze_writes_the_snapshot_a_release_is_judged_by(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    release = json.loads((spec / "releases" / "0.1.0.json").read_text())
    schemas = spec_dir() / "schemas"
    shipped = sorted(path.relative_to(schemas).as_posix() for path in schemas.rglob("*.schema.json"))
    assert sorted(release["schemas"]) == shipped and release["fixtures"] == {}
    snapshot = spec / "releases" / "0.1.0"
    assert json.loads((snapshot / "cases" / "x.json").read_text()) == {"area": "x", "cases": cases()}
    frozen_schema = snapshot / "schemas" / "details-search.schema.json"
    assert frozen_schema.read_bytes() == (spec_dir() / "schemas" / "details-search.schema.json").read_bytes()
    assert lint_spec(spec).ok


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (
            lambda snapshot: (snapshot / "schemas" / "error.schema.json").write_text("{}"),
            "releases/0.1.0/: schema error.schema.json does not hash to its frozen hash",
        ),
        (
            lambda snapshot: (snapshot / "schemas" / "error.schema.json").unlink(),
            "releases/0.1.0/: frozen schema error.schema.json is missing from the snapshot",
        ),
        (
            lambda snapshot: (snapshot / "cases" / "x.json").write_text(
                json.dumps({"area": "x", "cases": [{**cases()[0], "description": "Other."}, cases()[1]]})
            ),
            "releases/0.1.0/: the body of case finds does not hash to its frozen hash",
        ),
        (
            lambda snapshot: (snapshot / "cases" / "x.json").write_text(
                json.dumps({"area": "x", "cases": cases()[:1]})
            ),
            "releases/0.1.0/: frozen case finds-not has no body in the snapshot",
        ),
        (
            lambda snapshot: shutil.rmtree(snapshot),
            "releases/0.1.0/ is missing: a frozen release keeps the case bodies and schemas it is judged by",
        ),
    ],
)
def test_a_snapshot_that_differs_from_its_release_is_reported(
    tmp_path: Path, tamper: Any, expected: str
) -> None:
    spec = frozen_spec(tmp_path)
    tamper(spec / "releases" / "0.1.0")
    assert expected in lint_spec(spec).problems


def test_a_fixture_a_frozen_case_reads_is_pinned_and_may_not_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "old.jsonl").write_text("{}\n")
    monkeypatch.setenv("PIMEM_FIXTURES", str(fixtures))
    reads_fixture = [{**case, "journals": {"agent/s.jsonl": {"fixture": "old.jsonl"}}} for case in cases()]
    spec = make_spec(tmp_path, reads_fixture, documents={"search.md": DOC}, ledger=LEDGER)
    (spec / "README.md").write_text("**Spec version: 0.1.0.**\n")
    (spec / "search.md").write_text(DOC.replace("Cases: (pending)", "Cases: finds"))
    assert main(["lint", "--spec", str(spec), "--freeze", "0.1.0"]) == 0
    release = json.loads((spec / "releases" / "0.1.0.json").read_text())
    assert list(release["fixtures"]) == ["old.jsonl"]
    assert lint_spec(spec).ok
    (fixtures / "old.jsonl").write_text("{}\n{}\n")
    assert (
        "releases/0.1.0.json: fixture old.jsonl moved since it was frozen (a frozen case reads it): "
        "write a new fixture file for new content"
    ) in lint_spec(spec).problems


def test_a_changed_or_removed_frozen_case_is_reported(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    changed = cases()[:1]
    changed[0]["description"] = "A search for 'a' finds ['a'] and nothing else."
    changed[0]["changed"] = {"0.2.0": "says that nothing else is found, which it always checked"}
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": changed}))
    (spec / "search.md").write_text(
        DOC.replace("Cases: (pending)", "Cases: finds").replace(", finds-not", "")
    )
    report = lint_spec(spec)
    assert [str(change) for change in report.release_changes] == [
        "case finds changed since release 0.1.0",
        "case finds-not removed since release 0.1.0",
    ]
    assert report.numbers()["changed_since_release"] == [str(c) for c in report.release_changes]
    assert main(["lint", "--spec", str(spec), "--freeze", "0.1.0"]) == 2  # a release is never rewritten


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda doc, ledger: (doc, {"ids": dict(list(ledger["ids"].items())[1:])}), "frozen but missing"),
        (lambda doc, ledger: (doc.replace("MAY rank", "MUST rank"), ledger), "was frozen as may and is must"),
    ],
)
def test_a_frozen_requirement_cannot_leave_the_ledger_or_change_level(
    tmp_path: Path, edit: Any, expected: str
) -> None:
    spec = frozen_spec(tmp_path)
    doc, ledger = edit((spec / "search.md").read_text(), LEDGER)
    (spec / "search.md").write_text(doc)
    (spec / "requirements-ledger.json").write_text(json.dumps(ledger))
    assert any(expected in problem for problem in lint_spec(spec).problems)


def test_a_new_case_cannot_claim_a_frozen_version(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    newer = [*cases(), search_case("finds-more", "b", ["b"])]
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": newer}))
    (spec / "search.md").write_text(
        DOC.replace("Cases: (pending)", "Cases: finds").replace("finds-not", "finds-not, finds-more")
    )
    assert any("finds-more claims spec 0.1.0" in p for p in lint_spec(spec).problems)
    newer[-1]["since"] = "0.2.0"
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": newer}))
    assert lint_spec(spec).ok


def _withdraw(spec: Path, **fields: Any) -> list[dict[str, Any]]:
    """The frozen spec's cases with `finds-not` withdrawn (plus `fields`) and a replacement added."""
    replacement = {**cases()[1], "id": "finds-not-again", "since": "0.2.0"}
    because = {"withdrawn_because": "the spec now says otherwise"}
    withdrawn = {
        key: value
        for key, value in {**cases()[1], "withdrawn": "0.2.0", **because, **fields}.items()
        if value is not None
    }
    changed = [cases()[0], withdrawn, replacement]
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": changed}))
    (spec / "search.md").write_text(
        DOC.replace("Cases: (pending)", "Cases: finds").replace("finds-not", "finds-not, finds-not-again")
    )
    return changed


def test_a_withdrawn_case_keeps_its_release_hash_and_names_its_replacement(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    _withdraw(spec, replaced_by=["finds-not-again"])
    report = lint_spec(spec)
    assert report.ok, report.problems
    assert report.release_changes == []  # withdrawing is no change of content


def test_a_withdrawn_case_need_not_stay_on_its_requirements_cases_lines(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    _withdraw(spec, replaced_by=["finds-not-again"])
    text = (spec / "search.md").read_text()
    (spec / "search.md").write_text(
        text.replace("Cases: finds, finds-not, finds-not-again", "Cases: finds, finds-not-again")
    )
    assert lint_spec(spec).problems == []
    (spec / "search.md").write_text(text.replace("finds-not, finds-not-again", "finds-not"))
    assert lint_spec(spec).problems == [
        "case finds-not-again cites JM-SEARCH-001, whose Cases: line does not list it"
    ]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({}, "names no replacement (replaced_by) and gives no reason (comment)"),
        ({"replaced_by": ["ghost"]}, "is replaced by 'ghost', not a live case"),
        (
            {"replaced_by": ["finds-not-again"], "withdrawn": "0.1.0"},
            "not after the version that introduced it",
        ),
        ({"replaced_by": ["finds-not-again"], "withdrawn": "0.1"}, "does not match"),
        (
            {"replaced_by": ["finds-not-again"], "withdrawn_because": None},
            "'withdrawn_because' is a dependency",
        ),
    ],
)
def test_withdrawn_faults(tmp_path: Path, fields: dict[str, Any], expected: str) -> None:
    spec = frozen_spec(tmp_path)
    _withdraw(spec, **fields)
    assert any(expected in problem for problem in lint_spec(spec).problems), lint_spec(spec).problems


def test_a_withdrawn_twin_or_a_must_with_only_withdrawn_cases_is_reported(tmp_path: Path) -> None:
    spec = frozen_spec(tmp_path)
    changed = _withdraw(spec, comment="asserted an implementation-defined marker width")
    changed[0].update(withdrawn="0.2.0", withdrawn_because="a twin withdrawn with its positive case")
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": changed}))
    found = lint_spec(spec).problems
    assert "case finds-not-again: its twin finds is withdrawn" in found
    assert "withdrawn case finds names no replacement (replaced_by) and gives no reason (comment)" in found
    (spec / "search.md").write_text(DOC.replace("Cases: (pending)", "Cases: finds"))
    assert any("JM-SEARCH-002 lists only withdrawn cases" in problem for problem in lint_spec(spec).problems)


def test_withdrawn_cases_are_scored_only_as_of_an_earlier_release(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from suite_kit import faux_command, read_lines

    spec = frozen_spec(tmp_path)
    _withdraw(spec, replaced_by=["finds-not-again"])

    def scored(*args: str) -> set[str]:
        report = tmp_path / "report.jsonl"
        run = ["run", "--spec", str(spec), "--impl", faux_command(), "--report", str(report), "-q", *args]
        assert main(run) == 0
        return {line["id"] for line in read_lines(report) if line["type"] == "case"}

    assert scored() == {"finds", "finds-not-again"}
    assert "not scored (withdrawn): finds-not" in capsys.readouterr().out
    assert scored("--as-of", "0.1.0") == {"finds", "finds-not"}
    said = capsys.readouterr().out
    assert "spec 0.1.0 froze 2 cases; each is scored as frozen" in said
    assert "2 are unchanged in the spec now" in said
    assert "finds-not: withdrawn in 0.2.0, replaced by finds-not-again: the spec now says otherwise" in said


@pytest.mark.parametrize(("file_name", "reported"), [("x-topic.json", False), ("xy.json", True)])
def test_a_case_file_is_named_after_its_area_or_a_topic_of_it(
    tmp_path: Path, file_name: str, reported: bool
) -> None:
    spec = make_spec(tmp_path, cases()[:1], documents={"search.md": DOC.replace(", finds-not", "")})
    (spec / "cases" / "x.json").rename(spec / "cases" / file_name)
    found = [problem for problem in lint_spec(spec).problems if "differs from the file name" in problem]
    assert bool(found) == reported


def test_a_frozen_case_changed_without_saying_why_is_a_problem_and_an_order_note_is_no_change(
    tmp_path: Path,
) -> None:
    spec = frozen_spec(tmp_path)
    edited = cases()
    edited[0]["steps"][0]["expect"]["ids"] = ["a", "b"]
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": edited}))
    assert any(
        "case finds changed since it was frozen and does not say why" in p for p in lint_spec(spec).problems
    )
    edited[0]["changed"] = {"0.1.0": "a note of the frozen version itself says nothing of a later change"}
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": edited}))
    assert any("does not say why" in problem for problem in lint_spec(spec).problems)
    edited[0]["changed"] = {"0.2.0": "finds b as well, which the spec always required"}
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": edited}))
    report = lint_spec(spec)
    assert not any("does not say why" in problem for problem in report.problems)
    assert [str(change) for change in report.release_changes] == ["case finds changed since release 0.1.0"]
    # A note that the order is free asserts nothing: the case is as it was released.
    noted = cases()
    noted[0]["steps"][0]["expect"].update(order="unspecified", order_freed_by=1)
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": noted}))
    assert lint_spec(spec).release_changes == []


README_ITEMS = "**Spec version: 9.9.9.**\n\n## Implementation-defined behaviour\n\n1. Relevance.\n2. Ties.\n"


@pytest.mark.parametrize(
    ("expect", "expected"),
    [
        ({"ids": ["a", "b"]}, "expects 2 ids and checks no order"),
        ({"includes_ids": ["a", "b", "c"]}, "expects 3 ids and checks no order"),
        ({"ids": ["a", "b"], "order": "unspecified"}, "order_freed_by None is no item"),
        ({"ids": ["a", "b"], "order": "unspecified", "order_freed_by": 3}, "order_freed_by 3 is no item"),
        ({"ids": ["a", "b"], "order": "as_listed", "order_freed_by": 1}, "goes with"),
    ],
)
def test_a_step_of_several_ids_says_how_they_are_ordered(
    tmp_path: Path, expect: dict[str, Any], expected: str
) -> None:
    case = search_case("finds", "a b", ["a", "b"])
    case["steps"][0]["expect"] = expect
    spec = make_spec(tmp_path, [case], documents={"search.md": DOC.replace(", finds-not", "")}, ledger=LEDGER)
    (spec / "README.md").write_text(README_ITEMS)
    found = [problem for problem in lint_spec(spec).problems if "order" in problem]
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    "expect",
    [
        {"ids": ["a"]},
        {"ids": ["a", "b"], "order": "as_listed"},
        {"ids": ["a", "b"], "order": [["a", "b"]]},
        {"includes_ids": ["a", "b"], "order": "unspecified", "order_freed_by": 2},
    ],
)
def test_a_step_that_orders_its_ids_or_names_what_frees_them_passes(
    tmp_path: Path, expect: dict[str, Any]
) -> None:
    case = search_case("finds", "a b", ["a", "b"])
    case["steps"][0]["expect"] = expect
    spec = make_spec(tmp_path, [case], documents={"search.md": DOC.replace(", finds-not", "")}, ledger=LEDGER)
    (spec / "README.md").write_text(README_ITEMS)
    assert [problem for problem in lint_spec(spec).problems if "order" in problem] == []


BOUNDED = """# Search

**JM-SEARCH-001** The implementation MUST return at most 50 results.
Rationale with 7 in it, a sentence that requires nothing.
Cases: finds
"""


@pytest.mark.parametrize(
    ("doc", "tags", "reported"),
    [
        (BOUNDED, [], True),
        (BOUNDED, ["boundary"], False),
        (BOUNDED.replace("Cases: finds", "Boundaries: 50 is a name here.\nCases: finds"), [], False),
        (
            BOUNDED.replace("at most 50 results", "results like JM-TOOL-020, `limit: 5` and spec 0.2.0"),
            [],
            False,
        ),
    ],
)
def test_a_number_a_must_states_has_a_boundary_case_or_says_why_not(
    tmp_path: Path, doc: str, tags: list[str], reported: bool
) -> None:
    case = search_case("finds", "a", ["a"], tags=tags) if tags else search_case("finds", "a", ["a"])
    ledger = {"ids": {"JM-SEARCH-001": ACTIVE}}
    found = [p for p in problems(tmp_path, [case], doc=doc, ledger=ledger) if "boundary" in p]
    assert bool(found) == reported, found
    if reported:
        assert found == [
            "search.md:3: JM-SEARCH-001 states 50 but no live case tagged 'boundary' cites it: test each at "
            "the limit and one step either side, or say why not on a 'Boundaries: <reason>' line"
        ]


GITHUB_RULE: dict[str, Any] = {
    "id": "github-pat",
    "family": "GitHub",
    "kind": "token",
    "pattern": "ghp_[0-9A-Za-z]{30,}",
    "format": {
        "prefixes": ["ghp_"],
        "alphabet": "A-Z a-z 0-9",
        "length": {"min": 34, "max": None},
        "context": "x",
    },
    "example": {"text": "token ghp_" + "a1" * 18 + " done", "secret": "ghp_" + "a1" * 18},
    "sources": ["gitleaks:github-pat"],
}


def rule_table(*rules: dict[str, Any]) -> dict[str, Any]:
    words = ["about", "token_start", "assignment", "kept_values", "credential_word_rules", "qualifier_rule"]
    return {
        **dict.fromkeys(words, "x"),
        "looks_generated": "x",
        "dialect": "portable",
        "families": ["GitHub", "Assignments"],
        "credential_words": ["token"],
        "qualifiers": ["name"],
        "rules": list(rules),
    }


def marker_case(*markers: str) -> dict[str, Any]:
    case = search_case("finds", "a", ["a"])
    case["setup"]["settings"] = {"redact_patterns": [{"name": "acme-token", "pattern": "acme_[a-z]{8}"}]}
    case["steps"][0]["expect"] = {"includes_text": list(markers), "excludes_text": ["[REDACTED:gone-rule]"]}
    return case


def table_spec(tmp_path: Path, table: dict[str, Any], *markers: str, write: bool = True) -> Path:
    doc = DOC.replace("Cases: finds, finds-not", "Cases: finds")
    spec = make_spec(tmp_path, [marker_case(*markers)], documents={"search.md": doc}, ledger=LEDGER)
    (spec / "redaction-rules.json").write_text(json.dumps(table))
    if write:
        assert main(["lint", "--spec", str(spec), "--write"]) == 1  # JM-SEARCH-002 stays uncovered
    return spec


def table_problems(spec: Path) -> list[str]:
    uncovered = "search.md:7: JM-SEARCH-002 is a MUST without cases and without 'Excluded: <reason>'"
    return [problem for problem in lint_spec(spec).problems if problem != uncovered]


def test_a_case_expecting_a_rule_the_table_lacks_is_reported(tmp_path: Path) -> None:
    spec = table_spec(tmp_path, rule_table(GITHUB_RULE), "[REDACTED:github-pat]", "[REDACTED:acme-token]")
    assert table_problems(spec) == []  # the user's own pattern names no rule; excluded text expects none
    other = table_spec(tmp_path / "b", rule_table(GITHUB_RULE), "x [REDACTED:new-relic-*] [REDACTED:token]")
    assert table_problems(other) == [
        "case finds expects [REDACTED:token], but redaction-rules.json has no rule token",
    ]
    (other / "redaction-rules.json").unlink()
    assert table_problems(other) == [
        "case finds expects [REDACTED:token], but redaction-rules.json has no rule token",
    ]


def test_a_corpus_class_the_table_lacks_is_reported(tmp_path: Path) -> None:
    spec = table_spec(tmp_path, rule_table(GITHUB_RULE))
    secret: dict[str, Any] = {"id": "secret-0001", "kind": "github-pat", "rule": "gitleaks:github-pat"}
    secret["class"] = "github-pat"
    secret |= {"classes": ["github-pat", "assignment"], "secret": "ghp_" + "a1" * 18, "context": "x"}
    secret["context"] = f"token {secret['secret']}"
    (spec / "secrets-corpus.json").write_text(json.dumps({"seed": 1, "secrets": [secret], "lookalikes": []}))
    assert [problem for problem in table_problems(spec) if "secrets-corpus.json" in problem] == [
        "secrets-corpus.json expects the class assignment, but redaction-rules.json has no rule assignment"
    ]


def test_the_rule_document_is_written_from_the_table_and_a_stale_one_is_reported(tmp_path: Path) -> None:
    spec = table_spec(tmp_path, rule_table(GITHUB_RULE))
    assert "| 1 | `github-pat` | GitHub | token | `ghp_` |" in (spec / "redaction-rules.md").read_text()
    (spec / "redaction-rules.json").write_text(
        json.dumps(rule_table({**GITHUB_RULE, "family": "Assignments"}))
    )
    assert table_problems(spec) == [
        "redaction-rules.md is not what redaction-rules.json gives: run pimem-conformance lint --write"
    ]


def test_the_family_table_names_only_rules_of_the_table_in_their_family(tmp_path: Path) -> None:
    spec = table_spec(tmp_path, rule_table(GITHUB_RULE))
    rows = "| GitHub | `github-pat`, `github-*` | x |\n| Assignments | `github-pat` | y |\n"
    (spec / "redaction.md").write_text(
        f"# Redaction\n\n| family | rules | what |\n|---|---|---|\n{rows}\ntext\n"
    )
    assert table_problems(spec) == [
        "redaction.md: the family table names github-*, which redaction-rules.json lacks",
        "redaction.md: the family table names github-pat in 'Assignments'; "
        "redaction-rules.json puts it in 'GitHub'",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            {"pattern": "ghp_\\w{30,}"},
            "rule github-pat: its pattern is not in the portable dialect: "
            "\\w means other characters in Python and in JavaScript: write a class",
        ),
        ({"pattern": "ghp_[0-9]{30,}"}, "rule github-pat: its pattern does not take its example's secret"),
        (
            {"example": {"text": "x ghp_" + "a1" * 18, "secret": "a1a1"}},
            "rule github-pat: its example's secret occurs 9 times in its text, not once",
        ),
        (
            {"format": {**GITHUB_RULE["format"], "length": {"min": 41, "max": None}}},
            "rule github-pat: its example's secret has 40 characters, outside its format's length",
        ),
        ({"kind": "vendor-name"}, "rules/0: 'key_name' is a required property"),
    ],
)
def test_table_faults(tmp_path: Path, change: dict[str, Any], expected: str) -> None:
    spec = table_spec(tmp_path, rule_table({**GITHUB_RULE, **change}), write=False)
    found = table_problems(spec)
    assert any(expected in problem for problem in found), found


def test_an_example_an_earlier_rule_takes_or_a_second_entry_is_reported(tmp_path: Path) -> None:
    generic = {**GITHUB_RULE, "id": "assignment", "family": "Assignments", "kind": "assignment"}
    generic["pattern"] = "token ([A-Za-z0-9_]{8,})"
    spec = table_spec(tmp_path, rule_table(generic, GITHUB_RULE), write=True)
    assert table_problems(spec) == [
        "redaction-rules.json: rule github-pat: the earlier rule assignment takes part of its example, "
        "so the marker would name assignment: move the rule before it or choose another example"
    ]
    again = table_spec(tmp_path / "b", rule_table(GITHUB_RULE, GITHUB_RULE), write=True)
    assert table_problems(again) == [
        "redaction-rules.json: rule github-pat is listed twice (one entry per rule ID)"
    ]
