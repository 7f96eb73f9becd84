"""rules-coverage.json maps every rule of gitleaks' default config and every detect-secrets 1.5.0
plugin to the redactor's rules that cover it (or says why not), and the secrets corpus has a kind
for every covered format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from pimem._redact import _not_portable
from pimem._redact_rules import RULES
from pimem_conformance import secrets_corpus, spec_dir

COVERAGE = json.loads(
    (Path(__file__).resolve().parents[1] / "rules-coverage.json").read_text(encoding="utf-8")
)
RULE_IDS = {rule.id for rule in RULES}
SOURCES = ("gitleaks", "detect-secrets")


@pytest.mark.parametrize("source", SOURCES)
def test_every_source_rule_is_mapped(source: str) -> None:
    listed = COVERAGE["sources"][source]["ids"]
    count = COVERAGE["sources"][source].get("rules", COVERAGE["sources"][source].get("plugins"))
    assert len(listed) == len(set(listed)) == count
    missing = sorted(set(listed) - set(COVERAGE[source]))
    unknown = sorted(set(COVERAGE[source]) - set(listed))
    assert not missing, f"{source} rules with no entry in rules-coverage.json: {missing}"
    assert not unknown, f"entries for rules {source} does not have: {unknown}"


@pytest.mark.parametrize("source", SOURCES)
def test_each_entry_names_existing_rules_or_a_reason(source: str) -> None:
    for source_id, entry in COVERAGE[source].items():
        if "not_covered" in entry:
            assert len(entry["not_covered"]) > 20 and "rules" not in entry, source_id
        else:
            assert entry["rules"] and set(entry["rules"]) <= RULE_IDS, source_id


def test_gitleaks_is_the_222_rule_config() -> None:
    assert COVERAGE["sources"]["gitleaks"]["rules"] == 222
    covered = [entry for entry in COVERAGE["gitleaks"].values() if "rules" in entry]
    print(
        f"gitleaks: {len(covered)}/222 covered; detect-secrets: "
        f"{sum('rules' in entry for entry in COVERAGE['detect-secrets'].values())}/27"
    )
    assert len(covered) >= 220


def test_every_covered_source_rule_has_a_corpus_kind_and_every_kind_a_mapped_source() -> None:
    corpus = secrets_corpus.load()
    kind_sources = {source for item in corpus.secrets for source in item.rules}
    for source in SOURCES:
        covered = {
            f"{source}:{source_id}" for source_id, entry in COVERAGE[source].items() if "rules" in entry
        }
        assert not sorted(covered - kind_sources), f"covered {source} rules without a corpus kind"
        kinds = {rule for rule in kind_sources if rule.startswith(f"{source}:")}
        assert kinds <= covered, sorted(kinds - covered)


def test_every_marker_the_corpus_expects_is_a_rule_and_every_rule_is_accounted_for() -> None:
    corpus = secrets_corpus.load()
    expected = {name for item in corpus.secrets for name in item.classes}
    assert expected <= RULE_IDS, sorted(expected - RULE_IDS)
    mapped = {
        rule for source in SOURCES for entry in COVERAGE[source].values() for rule in entry.get("rules", [])
    }
    assert not sorted(RULE_IDS - mapped - expected), (
        "rules neither mapped to a source nor expected by the corpus"
    )


def test_rule_ids_are_unique_in_their_table_place() -> None:
    # A rule id may have several table entries (two ways to find an AWS secret), but never apart.
    places = [rule.id for rule in RULES]
    for rule_id, count in Counter(places).items():
        if count > 1:
            first = places.index(rule_id)
            assert places[first : first + count] == [rule_id] * count, rule_id


def test_the_rule_ids_and_their_order_are_the_spec_tables() -> None:
    """The spec's rule table (spec/redaction-rules.json) is the source of truth: the reference has
    exactly its rule IDs, in its order, which decides the class a marker names."""
    table = json.loads((spec_dir() / "redaction-rules.json").read_text(encoding="utf-8"))
    ours = [
        rule_id
        for index, rule_id in enumerate(rule.id for rule in RULES)
        if not index or RULES[index - 1].id != rule_id
    ]
    assert ours == [rule["id"] for rule in table["rules"]]


def test_every_pattern_of_the_spec_table_is_a_user_pattern_the_reference_takes() -> None:
    table = json.loads((spec_dir() / "redaction-rules.json").read_text(encoding="utf-8"))
    patterns = [
        rule[key] for rule in table["rules"] for key in ("pattern", "key_name", "value") if key in rule
    ]
    assert len(patterns) > 300
    assert [pattern for pattern in patterns if _not_portable(pattern)] == []
    for pattern in ("a\\d{4}", "(?i)acme", "(?P<t>acme)", "(?<=x)acme", "acme.", "acme$", "acme{", "a++"):
        assert _not_portable(pattern), pattern
