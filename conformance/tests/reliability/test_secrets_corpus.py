"""The shipped secrets corpus is what the issue promises: big, labeled, external kinds, stable bytes."""

from __future__ import annotations

from collections import Counter

import pytest
from pimem_conformance import secrets_corpus
from pimem_conformance.secrets_corpus.__main__ import render

pytestmark = pytest.mark.reliability

CORPUS = secrets_corpus.load()


def test_the_committed_corpus_is_exactly_what_the_generator_makes() -> None:
    assert secrets_corpus.CORPUS_PATH.read_text(encoding="utf-8") == render()


def test_at_least_300_secrets_of_at_least_20_gitleaks_kinds() -> None:
    gitleaks_kinds = Counter(item.kind for item in CORPUS.secrets if item.rule == f"gitleaks:{item.kind}")
    print(f"secrets: {len(CORPUS.secrets)} items, {len(gitleaks_kinds)} gitleaks kinds")
    assert len(CORPUS.secrets) >= 300
    assert len(gitleaks_kinds) >= 20


def test_at_least_300_lookalikes() -> None:
    print(f"look-alikes: {len(CORPUS.lookalikes)} items, {len({i.kind for i in CORPUS.lookalikes})} kinds")
    assert len(CORPUS.lookalikes) >= 300


def test_every_value_occurs_once_in_its_context_and_ids_are_unique() -> None:
    for secret in CORPUS.secrets:
        assert secret.context.count(secret.secret) == 1, secret.id
    for lookalike in CORPUS.lookalikes:
        assert lookalike.context.count(lookalike.value) == 1, lookalike.id
    ids = [secret.id for secret in CORPUS.secrets] + [lookalike.id for lookalike in CORPUS.lookalikes]
    assert len(ids) == len(set(ids))
    assert len({secret.secret for secret in CORPUS.secrets}) == len(CORPUS.secrets)
