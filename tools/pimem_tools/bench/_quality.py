"""Search quality: the reference against textbook baselines on the generated quality corpus.

Each question of `pimem_tools.fixtures._quality` is asked, in its own project's scope with the
clock just after the last session, of four rankers over the same entries:
- `reference`: the reference through the tool (`memory_context` search, limit 10);
- `bm25`: bm25s (method "lucene", k1 1.2, b 0.75) over unicode61-style tokens (lower-cased, split
  at every character that is not a letter, digit or private-use character);
- `bm25_stem_stop`: the same without bm25s's English stop words, Porter-stemmed (PyStemmer);
- `ripgrep_any`: what `rg -i -F -e t1 -e t2 … --sortr path` prints: every line holding any term,
  the newest journal first, lines in file order.

A question counts at k when one of its labelled answers is among the first k; MRR is over the
first 10 (0 when none is there).

Search is also measured as it is used (`CONDITIONS`), by the reference and both BM25s:
- `clean`: the question is nowhere in the journals (the figures above);
- `typed`: the user has just typed the question: it is the one entry of a new current session, and
  the reference is given it as the leaf (`leafId`), as Pi's extension does;
- `asked_once`, `asked_3`: the question was asked before, in one or three earlier sessions of the
  project that hold it and nothing else, each worded a little differently; the current session is
  the corpus's newest, without a leaf;
- `keywords`: as `typed`, but the model searches with the question's content words only (the
  words that are not NLTK's English stop words), as agents often write queries.
The BM25s rank the same journals, so the typed or earlier questions are in their corpora too. They
have no leaf: leaving out what the model already sees is the memory's own advantage.
"""

from __future__ import annotations

import math
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pimem_tools.fixtures._pi import parse_iso_ms
from pimem_tools.fixtures._quality import (
    CATEGORIES,
    HARD_CATEGORIES,
    QualityCorpus,
    QualityDoc,
    QualityQuestion,
    question_session,
    write_quality_corpus,
)

if TYPE_CHECKING:
    from pimem_tools.bench._reference import ToolClient

__all__ = [
    "CONDITIONS",
    "HARD_NOTE",
    "QUALITY_SEEDS",
    "SYSTEMS",
    "conditions_table",
    "keywords",
    "markdown_table",
    "measure_quality",
    "reworded",
    "sampled",
    "unicode61_tokens",
]

QUALITY_SEEDS = ("A", "B")  # A tunes, B reports
SYSTEMS = ("reference", "bm25", "bm25_stem_stop", "ripgrep_any")
CONDITIONS = ("clean", "typed", "asked_once", "asked_3", "keywords")
IN_USE_SYSTEMS = ("reference", "bm25", "bm25_stem_stop")
CUTOFFS = (1, 5, 10)
Ranker = Callable[[str, str], list[str]]  # (cwd, query) → entry ids, best first
# the typed question's session starts 5 min before the clock (its entry lands at most 94 s later)
_TYPED_BEFORE_MS = 300_000
# the earlier sessions that asked it: 4 h, 3 h 40 and 3 h 20 before the clock, after the newest session
_ASKED_BEFORE_MS = (4 * 3_600_000, 3 * 3_600_000 + 40 * 60_000, 3 * 3_600_000 + 20 * 60_000)


def _token_char(char: str) -> bool:
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"


def unicode61_tokens(text: str) -> list[str]:
    """FTS5 unicode61's tokens (remove_diacritics 2): letter/digit/Co runs, lower-cased, marks off."""
    tokens: list[str] = []
    run: list[str] = []
    for char in text + " ":
        if _token_char(char):
            run.append(char)
        elif run:
            tokens.append("".join(run))
            run = []
    folded = []
    for token in tokens:
        token = token.lower()
        if not token.isascii():
            token = "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c))
        folded.append(token)
    return folded


class _Bm25:
    """Textbook BM25 as bm25s computes it (method "lucene", k1 1.2, b 0.75), one index per project.

    Written out over numpy so that a few extra documents (a question typed or asked before) can join
    a project's corpus for one question without rebuilding it: they change N, the document
    frequencies and the mean length exactly as indexing them with the rest would. A test checks the
    scores against bm25s's."""

    k1, b = 1.2, 0.75

    def __init__(self, docs: Sequence[QualityDoc], analyse: Callable[[str], list[str]]) -> None:
        import numpy as np

        self.analyse = analyse
        self.by_cwd: dict[str, _Bm25Project] = {}
        for cwd in dict.fromkeys(doc.cwd for doc in docs):
            mine = [doc for doc in docs if doc.cwd == cwd]
            postings: dict[str, tuple[list[int], list[int]]] = {}
            lengths = []
            for number, doc in enumerate(mine):
                counts = Counter(analyse(doc.text) or ["\u0000"])
                lengths.append(sum(counts.values()))
                for token, tf in counts.items():
                    rows, tfs = postings.setdefault(token, ([], []))
                    rows.append(number)
                    tfs.append(tf)
            arrays = {
                t: (np.array(rows), np.array(tfs, dtype=np.float64)) for t, (rows, tfs) in postings.items()
            }
            self.by_cwd[cwd] = _Bm25Project(
                [doc.entry_id for doc in mine], np.array(lengths, dtype=np.float64), arrays
            )

    def scores(self, cwd: str, query: str, extra: Sequence[QualityDoc] = ()) -> dict[str, float]:
        """Every document's score that is above 0, by entry id."""
        import numpy as np

        project = self.by_cwd[cwd]
        tokens = self.analyse(query)
        if not tokens:
            return {}
        extra_counts = [Counter(self.analyse(doc.text) or ["\u0000"]) for doc in extra]
        extra_lengths = [float(sum(counts.values())) for counts in extra_counts]
        count = len(project.ids) + len(extra)
        mean = (float(project.lengths.sum()) + sum(extra_lengths)) / count
        scores = np.zeros(len(project.ids))
        extra_scores = [0.0] * len(extra)
        for token in tokens:
            rows, tfs = project.postings.get(token, (None, None))
            df = (0 if rows is None else len(rows)) + sum(token in counts for counts in extra_counts)
            if df == 0:
                continue
            idf = math.log(1 + (count - df + 0.5) / (df + 0.5))
            if rows is not None and tfs is not None:
                norm = self.k1 * (1 - self.b + self.b * project.lengths[rows] / mean)
                scores[rows] += idf * tfs / (tfs + norm)
            for n, counts in enumerate(extra_counts):
                if counts[token]:
                    tf = counts[token]
                    norm = self.k1 * (1 - self.b + self.b * extra_lengths[n] / mean)
                    extra_scores[n] += idf * tf / (tf + norm)
        ids = [*project.ids, *(doc.entry_id for doc in extra)]
        every = [*scores.tolist(), *extra_scores]
        return {ids[n]: score for n, score in enumerate(every) if score > 0}

    def __call__(self, cwd: str, query: str, extra: Sequence[QualityDoc] = ()) -> list[str]:
        scores = self.scores(cwd, query, extra)
        return sorted(scores, key=lambda entry: -scores[entry])[:10]


@dataclass(frozen=True)
class _Bm25Project:
    ids: list[str]
    lengths: Any  # numpy array: tokens per document
    postings: dict[str, tuple[Any, Any]]  # token → (document rows, term frequencies)


def _stemmed_without_stop_words() -> Callable[[str], list[str]]:
    import Stemmer
    from bm25s.stopwords import STOPWORDS_EN

    stemmer = Stemmer.Stemmer("porter")
    stop = frozenset(STOPWORDS_EN)

    def analyse(text: str) -> list[str]:
        return list(stemmer.stemWords([token for token in unicode61_tokens(text) if token not in stop]))

    return analyse


def _ripgrep_any(docs: Sequence[QualityDoc]) -> Ranker:
    by_cwd: dict[str, list[QualityDoc]] = {}
    for doc in sorted(docs, key=lambda doc: (doc.journal, -doc.line), reverse=True):
        by_cwd.setdefault(doc.cwd, []).append(doc)

    def rank(cwd: str, query: str) -> list[str]:
        terms = list(dict.fromkeys(unicode61_tokens(query)))
        found = []
        for doc in by_cwd[cwd]:
            text = doc.text.lower()
            if any(term in text for term in terms):
                found.append(doc.entry_id)
                if len(found) == 10:
                    break
        return found

    return rank


class _Reference:
    """The reference through the tool: one protocol instance per project over the corpus's journals."""

    def __init__(self, corpus: QualityCorpus, state_dir: Path) -> None:
        self.corpus = corpus
        self.state_dir = state_dir
        self.clients: dict[str, ToolClient] = {}

    def client(self, cwd: str) -> ToolClient:
        from pimem_tools.bench._reference import ToolClient

        if cwd not in self.clients:
            workspace = {
                "home": "/home/u",
                "cwd": cwd,
                "agent_dir": str(self.corpus.agent_dir),
                "session_dirs": [],
                "state_dir": str(self.state_dir),
                "session_file": str(self.corpus.latest_session[cwd]),
            }
            self.clients[cwd] = ToolClient(workspace, self.corpus.now, allow_global=False)
        return self.clients[cwd]

    def switch(self, cwd: str, session_file: Path) -> None:
        """Journals were written or deleted: start the session `session_file` (as Pi's `/new` does)
        and wait until the instance has indexed what changed."""
        client = self.client(cwd)
        data = {"reason": "new", "session_file": str(session_file)}
        client.request({"cmd": "event", "instance": "bench", "name": "session_start", "data": data})
        client.request({"cmd": "idle", "instance": "bench"})

    def __call__(self, cwd: str, query: str, leaf: str | None = None) -> list[str]:
        arguments = {"action": "search", "query": query, "limit": 10}
        details = self.client(cwd).tool(arguments, leaf_id=leaf)["details"]
        return [str(result["entryId"]) for result in details["results"]]

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def _word_char(char: str) -> bool:
    """A letter, digit, private-use character or mark: a combining mark (a Thai tone mark, a
    virama) belongs to the word it ends, so trimming punctuation never takes it."""
    return _token_char(char) or unicodedata.category(char)[0] == "M"


def keywords(query: str) -> str:
    """The query's content words: its words (split at white space, punctuation trimmed from both
    ends) that are not stop words (bm25s's longer English list, NLTK's), in order, each once. Paths
    and identifiers stay whole. A query of stop words only is left as it is."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    stop = frozenset(STOPWORDS_EN_PLUS)
    words = []
    for word in query.split():
        start, end = 0, len(word)
        while start < end and not _word_char(word[start]):
            start += 1
        while end > start and not _word_char(word[end - 1]):
            end -= 1
        if start < end and word[start:end].lower() not in stop:
            words.append(word[start:end])
    return " ".join(dict.fromkeys(words)) or query


# How an earlier session words the question: the first asking as typed, the others a little apart.
REWORDINGS = ("{q}", "Remind me: {q}", "{q} I asked this before, I think.")


def reworded(query: str, times: int) -> list[str]:
    return [REWORDINGS[n % len(REWORDINGS)].format(q=query) for n in range(times)]


@dataclass
class _Tally:
    questions: int = 0
    hits: tuple[int, ...] = (0, 0, 0)
    reciprocal: float = 0.0

    def add(self, ranked: list[str], answers: tuple[str, ...]) -> None:
        rank = next((n for n, entry in enumerate(ranked[:10], start=1) if entry in answers), None)
        self.questions += 1
        self.hits = tuple(
            hit + (rank is not None and rank <= k) for hit, k in zip(self.hits, CUTOFFS, strict=True)
        )
        self.reciprocal += 0.0 if rank is None else 1 / rank

    def figures(self) -> dict[str, float | int]:
        count = max(1, self.questions)
        figures: dict[str, float | int] = {"questions": self.questions}
        for k, hit in zip(CUTOFFS, self.hits, strict=True):
            figures[f"recall_at_{k}"] = round(hit / count, 4)
        figures["mrr"] = round(self.reciprocal / count, 4)
        return figures


Figures = dict[str, dict[str, dict[str, float | int]]]  # system → category → figures


def _tallies(systems: Sequence[str], categories: Sequence[str]) -> dict[str, dict[str, _Tally]]:
    return {system: {c: _Tally() for c in (*categories, "overall")} for system in systems}


def _add(
    tallies: dict[str, dict[str, _Tally]], question: QualityQuestion, system: str, ranked: list[str]
) -> None:
    tallies[system][question.category].add(ranked, question.answers)
    tallies[system]["overall"].add(ranked, question.answers)


def _figures(tallies: dict[str, dict[str, _Tally]]) -> Figures:
    return {system: {c: t.figures() for c, t in by.items()} for system, by in tallies.items()}


def _measure_seed(
    corpus: QualityCorpus, categories: Sequence[str], state_dir: Path, every: int = 1
) -> dict[str, Figures]:
    """condition → system → category → figures for one corpus (`clean` for every system and every
    question, the other conditions for `IN_USE_SYSTEMS` and every `every`th question)."""
    reference = _Reference(corpus, state_dir)
    bm25s: dict[str, _Bm25] = {
        "bm25": _Bm25(corpus.docs, unicode61_tokens),
        "bm25_stem_stop": _Bm25(corpus.docs, _stemmed_without_stop_words()),
    }
    ripgrep = _ripgrep_any(corpus.docs)
    tallies = {
        condition: _tallies(SYSTEMS if condition == "clean" else IN_USE_SYSTEMS, categories)
        for condition in CONDITIONS
    }

    def ask(
        condition: str, question: QualityQuestion, query: str, leaf: str | None, extra: list[QualityDoc]
    ) -> None:
        _add(tallies[condition], question, "reference", reference(question.cwd, query, leaf))
        for system, bm25 in bm25s.items():
            _add(tallies[condition], question, system, bm25(question.cwd, query, extra))

    try:
        for question in corpus.questions:  # every question from a clean slate first
            ask("clean", question, question.query, None, [])
            _add(tallies["clean"], question, "ripgrep_any", ripgrep(question.cwd, question.query))
        now_ms = parse_iso_ms(corpus.now)
        for question in sampled(corpus.questions, every):
            cwd, latest = question.cwd, corpus.latest_session[question.cwd]
            typed, typed_doc = question_session(corpus, cwd, question.query, now_ms - _TYPED_BEFORE_MS)
            reference.switch(cwd, typed)
            ask("typed", question, question.query, typed_doc.entry_id, [typed_doc])
            ask("keywords", question, keywords(question.query), typed_doc.entry_id, [typed_doc])
            typed.unlink()
            earlier: list[tuple[Path, QualityDoc]] = []
            for text, before_ms in zip(reworded(question.query, 3), _ASKED_BEFORE_MS, strict=True):
                earlier.append(question_session(corpus, cwd, text, now_ms - before_ms))
                if len(earlier) == 1:
                    reference.switch(cwd, latest)
                    ask("asked_once", question, question.query, None, [doc for _, doc in earlier])
            reference.switch(cwd, latest)
            ask("asked_3", question, question.query, None, [doc for _, doc in earlier])
            for path, _ in earlier:
                path.unlink()
    finally:
        reference.close()
    return {condition: _figures(by) for condition, by in tallies.items()}


def sampled(questions: Sequence[QualityQuestion], every: int) -> list[QualityQuestion]:
    """Every `every`th question of each category, in order (a smoke run's sample of every category)."""
    seen: Counter[str] = Counter()
    chosen = []
    for question in questions:
        if seen[question.category] % every == 0:
            chosen.append(question)
        seen[question.category] += 1
    return chosen


def measure_quality(seeds: Sequence[str] = QUALITY_SEEDS, every: int = 1) -> dict[str, Any]:
    """{"seeds": {seed: {system: {category: figures}}} (clean), "conditions": {seed: {condition:
    {system: {category: figures}}}}, "questions": count per seed, the names of each axis, and "hard":
    the same for the harder question set}. `every` > 1 asks only every Nth question in use and of
    the harder set (smoke runs); it is recorded as `in_use_every`."""
    conditions: dict[str, dict[str, Figures]] = {}
    hard: dict[str, dict[str, Figures]] = {}
    with tempfile.TemporaryDirectory(prefix="pimem-quality-") as temp:
        work = Path(temp)
        for seed in seeds:
            corpus = write_quality_corpus(work / f"corpus-{seed}", seed)
            conditions[seed] = _measure_seed(corpus, CATEGORIES, work / f"state-{seed}", every)
            corpus = write_quality_corpus(work / f"hard-{seed}", seed, hard=True)
            corpus.questions = sampled(corpus.questions, every)
            hard[seed] = _measure_seed(corpus, HARD_CATEGORIES, work / f"hard-state-{seed}")
    results = {seed: by["clean"] for seed, by in conditions.items()}
    return {
        "seeds": results,
        "questions": _questions(conditions),
        "systems": list(SYSTEMS),
        "categories": list(CATEGORIES),
        "conditions": conditions,
        "condition_names": list(CONDITIONS),
        "in_use_systems": list(IN_USE_SYSTEMS),
        "in_use_every": every,
        "hard": {
            "seeds": {seed: by["clean"] for seed, by in hard.items()},
            "questions": _questions(hard),
            "systems": list(SYSTEMS),
            "categories": list(HARD_CATEGORIES),
            "conditions": hard,
            "in_use_systems": list(IN_USE_SYSTEMS),
        },
    }


def _questions(conditions: dict[str, dict[str, Figures]]) -> dict[str, int]:
    return {seed: int(by["clean"]["reference"]["overall"]["questions"]) for seed, by in conditions.items()}


def markdown_table(quality: dict[str, Any], figure: str = "recall_at_10") -> str:
    """One table per seed: categories down, systems across, `figure` in each cell."""
    lines: list[str] = []
    for seed, by_system in quality["seeds"].items():
        lines += [f"Seed {seed}, {figure.replace('_', ' ')}:", ""]
        lines.append("| category | " + " | ".join(quality["systems"]) + " |")
        lines.append("|---" * (1 + len(quality["systems"])) + "|")
        for category in (*quality["categories"], "overall"):
            cells = [f"{by_system[system][category][figure]:.3f}" for system in quality["systems"]]
            lines.append(f"| {category} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


IN_USE_NOTE = (
    "Search as it is used: every question again, typed as the one user message of a new current"
    " session (the reference is given it as the leaf), asked before in one or three earlier sessions"
    " that hold only the question (worded a little differently each time), and typed but searched"
    " with its content words only (`keywords`). The BM25s rank the same journals, so the typed or"
    " earlier questions are in their corpora too. They have no leaf: leaving out the entries the"
    " model already sees is the memory's own advantage, not something BM25 could do."
)


def _cell(figures: dict[str, float | int]) -> str:
    return " / ".join(
        f"{figures[name]:.3f}" for name in ("recall_at_1", "recall_at_5", "recall_at_10", "mrr")
    )


HARD_NOTE = (
    "The harder question set (its own corpus, seeded and labelled like the rest): the answer shares"
    " one of the question's words in another inflection and one of its names (`crowded_lemma`), or is"
    " months old and holds two of its four terms (`old_partial`), while a dozen recent lines hold two"
    " of the question's terms each. It is asked under the same conditions."
)


def conditions_table(quality: dict[str, Any], note: str = IN_USE_NOTE) -> str:
    """Per seed: one table with a row per condition (overall), then one per condition with a row per
    category; each cell is recall@1 / @5 / @10 / MRR of a system."""
    if "conditions" not in quality:
        return ""
    systems = quality["in_use_systems"]
    head = ["| {} | " + " | ".join(systems) + " |", "|---" * (1 + len(systems)) + "|"]
    lines = [note, "", "Each cell: recall@1 / recall@5 / recall@10 / MRR.", ""]
    for seed, by_condition in quality["conditions"].items():
        lines += [f"Seed {seed}, every category:", "", head[0].format("condition"), head[1]]
        for condition, by_system in by_condition.items():
            lines.append(
                f"| {condition} | " + " | ".join(_cell(by_system[s]["overall"]) for s in systems) + " |"
            )
        lines.append("")
        for condition, by_system in by_condition.items():
            lines += [f"Seed {seed}, {condition}, per category:", "", head[0].format("category"), head[1]]
            for category in (*quality["categories"], "overall"):
                lines.append(
                    f"| {category} | " + " | ".join(_cell(by_system[s][category]) for s in systems) + " |"
                )
            lines.append("")
    return "\n".join(lines)
