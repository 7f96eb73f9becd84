"""The secrets corpus runs as cases in every run, and the report gives recall and false positives per kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from broken_implementations import BROKEN
from pimem_conformance import corpus_cases, corpus_tally, load_cases, main, secrets_corpus, spec_dir
from suite_kit import make_spec, read_lines, search_case


def test_every_kind_of_the_corpus_is_a_case_of_the_shipped_spec() -> None:
    corpus = secrets_corpus.load()
    ids = {case.id for case in load_cases()}
    kinds = {item.kind for item in corpus.secrets} | {item.kind for item in corpus.lookalikes}
    generated = {case.id for case in corpus_cases()}
    assert generated <= ids and len(generated) == len(kinds)
    assert {case.id for case in load_cases(spec_dir())} >= generated


def test_a_spec_of_its_own_has_no_corpus_cases(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, [search_case("finds", "a", ["a"])])
    assert [case.id for case in load_cases(spec)] == ["finds"]


def test_a_spec_with_a_corpus_of_its_own_plants_that_corpus(tmp_path: Path) -> None:
    spec = make_spec(tmp_path, [search_case("finds", "a", ["a"])])
    secret = secrets_corpus.load().secrets[0]
    item = {"id": "secret-0001", "kind": "own-kind", "rule": "pimem-spec:x", "class": secret.redaction_class}
    item |= {"secret": secret.secret, "context": secret.context}
    (spec / secrets_corpus.CORPUS_FILE).write_text(
        json.dumps({"seed": 1, "secrets": [item], "lookalikes": []})
    )
    assert [case.id for case in load_cases(spec)] == ["finds", "corpus-secret-own-kind"]


def test_every_secret_is_checked_by_steps_of_its_own() -> None:
    secret_cases = [case for case in corpus_cases() if case.id.startswith("corpus-secret-")]
    planted = sum(len(case.journals[next(iter(case.journals))]["lines"]) - 1 for case in secret_cases)
    assert planted == len(secrets_corpus.load().secrets)
    for case in secret_cases:
        reads = [step for step in case.steps if step["tool"]["action"] == "read"]
        assert reads and all(step["expect"]["excludes_text"] for step in reads), case.id


def test_the_tally_counts_a_failing_step_against_its_item_and_a_case_that_did_not_run_as_missed() -> None:
    cases = corpus_cases()
    jwt = next(case for case in cases if case.id == "corpus-secret-jwt")
    uuid = next(case for case in cases if case.id == "corpus-lookalike-uuid-v4")
    others = [(case.id, True, []) for case in cases if case not in (jwt, uuid)]
    tally = corpus_tally([(jwt.id, True, [0, 1]), (uuid.id, False, []), *others])
    assert tally is not None
    assert tally["secret_kinds"]["jwt"]["caught"] == tally["secret_kinds"]["jwt"]["planted"] - 1
    uuids = sum(item.kind == "uuid-v4" for item in secrets_corpus.load().lookalikes)
    assert uuids > 0 and tally["lookalike_kinds"]["uuid-v4"]["false_positives"] == uuids
    assert tally["secrets"]["caught"] == tally["secrets"]["planted"] - 1
    assert corpus_tally([("finds", True, [])]) is None


def test_a_redactor_missing_one_kind_does_not_conform_and_the_summary_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = next(each for each in BROKEN if each.name == "redactor-missing-one-corpus-kind")
    report = tmp_path / "report.jsonl"
    with pytest.MonkeyPatch.context() as monkeypatch:
        broken.patch(monkeypatch)
        # the jwt kind and its neighbours by name: the other kinds are the same with or without the fault
        code = main(["run", "--impl", "reference", "-k", "corpus-secret-j*", "--report", str(report), "-q"])
    assert code == 1
    corpus = read_lines(report)[-1]["corpus"]
    jwt = corpus["secret_kinds"]["jwt"]  # some are still caught by other classes (an assignment)
    assert jwt["caught"] < jwt["planted"] and corpus["secrets"]["recall"] < 1.0
    assert all(t["recall"] == 1.0 for kind, t in corpus["secret_kinds"].items() if kind != "jwt")
    assert "jwt" in capsys.readouterr().out.split("secrets corpus: recall")[1]
