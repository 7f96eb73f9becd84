"""The search-quality corpus and its scoring: deterministic, labelled, and scored as documented."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from pimem._store_checks import fts5_tokens
from pimem_tools.bench._quality import (
    _Bm25,
    _Tally,
    keywords,
    markdown_table,
    reworded,
    sampled,
    unicode61_tokens,
)
from pimem_tools.fixtures._quality import (
    CATEGORIES,
    HARD_CATEGORIES,
    QualityCorpus,
    QualityDoc,
    question_session,
    write_quality_corpus,
)


@pytest.fixture(scope="module")
def seed_a(tmp_path_factory: pytest.TempPathFactory) -> QualityCorpus:
    return write_quality_corpus(tmp_path_factory.mktemp("quality-a"), "A")


def test_at_least_800_questions_in_six_categories_each_labelled(seed_a: QualityCorpus) -> None:
    counts = Counter(question.category for question in seed_a.questions)
    assert sum(counts.values()) >= 800
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 100
    entries = {(doc.cwd, doc.entry_id) for doc in seed_a.docs}
    for question in seed_a.questions:
        assert question.answers, question
        # every answer is an entry of the project the question is asked in
        assert all((question.cwd, answer) in entries for answer in question.answers), question


def test_answers_are_lines_of_the_written_journals(seed_a: QualityCorpus) -> None:
    on_disk = {}
    for journal in seed_a.agent_dir.rglob("*.jsonl"):
        for line in journal.read_text(encoding="utf-8").splitlines()[1:]:
            obj = json.loads(line)
            on_disk[obj["id"]] = obj["message"]["content"][0]["text"]
    assert {doc.entry_id: doc.text for doc in seed_a.docs} == on_disk


def test_same_seed_same_corpus_other_seed_other_corpus(seed_a: QualityCorpus, tmp_path: Path) -> None:
    again = write_quality_corpus(tmp_path / "again", "A")
    assert again.questions == seed_a.questions and again.docs == seed_a.docs
    other = write_quality_corpus(tmp_path / "b", "B")
    assert {q.query for q in other.questions} != {q.query for q in seed_a.questions}


def test_old_answers_are_months_old_and_their_distractors_recent(seed_a: QualityCorpus) -> None:
    by_id = {doc.entry_id: doc for doc in seed_a.docs}
    newest = max(doc.ms for doc in seed_a.docs)
    for question in (q for q in seed_a.questions if q.category == "old"):
        assert all(newest - by_id[a].ms >= 120 * 86_400_000 for a in question.answers), question


def test_tokens_are_the_ones_textbook_fts5_unicode61_makes() -> None:
    texts = ["exponentialBackoff test_loqua.py", "Ünïcode Straße 数据库迁移失败了\uff0c因为", "हिन्दी भाषा x²"]
    for text, fts5 in zip(texts, fts5_tokens(texts, "unicode61 remove_diacritics 2"), strict=True):
        assert unicode61_tokens(text) == fts5, text


def test_tally_counts_a_hit_at_each_cutoff_and_its_reciprocal_rank() -> None:
    tally = _Tally()
    tally.add(["x", "y", "answer"], ("answer",))
    tally.add(["x"] * 10 + ["answer"], ("answer",))  # rank 11: beyond every cutoff
    assert tally.figures() == {
        "questions": 2,
        "recall_at_1": 0.0,
        "recall_at_5": 0.5,
        "recall_at_10": 0.5,
        "mrr": round(1 / 3 / 2, 4),
    }
    table = markdown_table(
        {
            "seeds": {"A": {"s": {c: tally.figures() for c in (*CATEGORIES, "overall")}}},
            "systems": ["s"],
            "categories": list(CATEGORIES),
        }
    )
    assert "| overall | 0.500 |" in table


def test_a_typed_question_is_the_last_user_line_and_the_leaf_of_its_own_session(
    seed_a: QualityCorpus, tmp_path: Path
) -> None:
    question = seed_a.questions[0]
    before = set(seed_a.agent_dir.rglob("*.jsonl"))
    path, doc = question_session(seed_a, question.cwd, question.query, 1_795_968_000_000)
    try:
        assert set(seed_a.agent_dir.rglob("*.jsonl")) == before | {path}
        header, *entries = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert header["type"] == "session" and header["cwd"] == question.cwd
        assert path.parent == seed_a.latest_session[question.cwd].parent  # a session of the same project
        # the question is the session's one entry: its last user message, and the leaf given
        assert [(e["id"], e["message"]["role"], e["message"]["content"][0]["text"]) for e in entries] == [
            (doc.entry_id, "user", question.query)
        ]
        assert entries[0]["parentId"] is None and doc.text == question.query
    finally:
        path.unlink()


def test_earlier_askings_hold_the_question_and_nothing_else() -> None:
    asked = reworded("where does staging run?", 3)
    assert asked[0] == "where does staging run?" and len(set(asked)) == 3
    assert all("where does staging run?" in text for text in asked)  # reworded around it, never cut


def test_keywords_are_the_content_words_in_order() -> None:
    assert keywords("What did we set the retry budget for kafka to?") == "set retry budget kafka"
    assert keywords("why is the fooBar/queue_worker.py slow?") == "fooBar/queue_worker.py slow"
    assert keywords("TimeoutError: timed out after 5 seconds") == "TimeoutError timed 5 seconds"
    assert keywords("the of and") == "the of and"  # nothing left: asked as it is
    # a word that ends in a combining mark (a Thai tone mark) keeps it; only punctuation is trimmed
    assert keywords("การตั้งค่าผู้ใช้?") == "การตั้งค่าผู้ใช้"


def test_bm25_is_bm25s_lucene_and_extra_documents_join_the_corpus(seed_a: QualityCorpus) -> None:
    import bm25s

    cwd = seed_a.questions[0].cwd
    mine = [doc for doc in seed_a.docs if doc.cwd == cwd]
    ours = _Bm25(mine, unicode61_tokens)
    compared = 0
    for question in [q for q in seed_a.questions if q.cwd == cwd][:40:4]:
        typed = QualityDoc("typed", cwd, "z.jsonl", 2, 0, question.query)
        for extra in ([], [typed]):
            corpus = [*mine, *extra]
            retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
            retriever.index([unicode61_tokens(doc.text) or ["\u0000"] for doc in corpus], show_progress=False)
            found, scores = retriever.retrieve([unicode61_tokens(question.query)], k=10, show_progress=False)
            theirs = {
                corpus[int(n)].entry_id: float(s) for n, s in zip(found[0], scores[0], strict=True) if s > 0
            }
            scores = ours.scores(cwd, question.query, extra)
            assert all(scores[entry] == pytest.approx(s, rel=1e-5) for entry, s in theirs.items())
            compared += len(theirs)
            assert ("typed" in ours(cwd, question.query, extra)) == bool(extra and theirs)
    assert compared >= 50


def test_the_harder_set_is_its_own_seeded_labelled_corpus(seed_a: QualityCorpus, tmp_path: Path) -> None:
    hard = write_quality_corpus(tmp_path / "hard", "A", hard=True)
    assert Counter(q.category for q in hard.questions) == dict.fromkeys(HARD_CATEGORIES, 150)
    entries = {(doc.cwd, doc.entry_id) for doc in hard.docs}
    assert all(q.answers and all((q.cwd, a) in entries for a in q.answers) for q in hard.questions)
    assert {q.query for q in hard.questions}.isdisjoint({q.query for q in seed_a.questions})
    again = write_quality_corpus(tmp_path / "again", "A", hard=True)
    assert again.questions == hard.questions and again.docs == hard.docs
    by_id = {doc.entry_id: doc for doc in hard.docs}
    newest = max(doc.ms for doc in hard.docs)
    for question in hard.questions:
        (answer,) = question.answers
        words = set(unicode61_tokens(question.query))
        # the answer holds at most two of the question's words; ten recent lines hold two or more
        assert len(words & set(unicode61_tokens(by_id[answer].text))) <= 2, question
        if question.category == "old_partial":
            assert newest - by_id[answer].ms >= 120 * 86_400_000, question


def test_a_sample_takes_every_nth_question_of_each_category(seed_a: QualityCorpus) -> None:
    sample = sampled(seed_a.questions, 20)
    per_category = Counter(q.category for q in seed_a.questions)
    assert Counter(q.category for q in sample) == {c: len(range(0, n, 20)) for c, n in per_category.items()}
    assert sampled(seed_a.questions, 1) == seed_a.questions
