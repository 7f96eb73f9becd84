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
"""

from __future__ import annotations

import tempfile
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_tools.fixtures._quality import CATEGORIES, QualityCorpus, QualityDoc, write_quality_corpus

__all__ = ["QUALITY_SEEDS", "SYSTEMS", "markdown_table", "measure_quality", "unicode61_tokens"]

QUALITY_SEEDS = ("A", "B")  # A tunes, B reports
SYSTEMS = ("reference", "bm25", "bm25_stem_stop", "ripgrep_any")
CUTOFFS = (1, 5, 10)
Ranker = Callable[[str, str], list[str]]  # (cwd, query) → entry ids, best first


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
    """One bm25s index per project, over the docs' tokens."""

    def __init__(self, docs: Sequence[QualityDoc], analyse: Callable[[str], list[str]]) -> None:
        import bm25s

        self.analyse = analyse
        self.by_cwd: dict[str, tuple[Any, list[str]]] = {}
        for cwd in dict.fromkeys(doc.cwd for doc in docs):
            mine = [doc for doc in docs if doc.cwd == cwd]
            retriever = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
            retriever.index([analyse(doc.text) or ["\u0000"] for doc in mine], show_progress=False)
            self.by_cwd[cwd] = (retriever, [doc.entry_id for doc in mine])

    def __call__(self, cwd: str, query: str) -> list[str]:
        retriever, ids = self.by_cwd[cwd]
        tokens = self.analyse(query)
        if not tokens:
            return []
        found, scores = retriever.retrieve([tokens], k=10, show_progress=False)
        return [ids[int(n)] for n, score in zip(found[0], scores[0], strict=True) if score > 0]


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


def _reference(corpus: QualityCorpus, state_dir: Path) -> Ranker:
    from pimem_tools.bench._reference import ToolClient

    clients: dict[str, ToolClient] = {}

    def rank(cwd: str, query: str) -> list[str]:
        if cwd not in clients:
            workspace = {
                "home": "/home/u",
                "cwd": cwd,
                "agent_dir": str(corpus.agent_dir),
                "session_dirs": [],
                "state_dir": str(state_dir),
                "session_file": str(corpus.latest_session[cwd]),
            }
            clients[cwd] = ToolClient(workspace, corpus.now, allow_global=False)
        details = clients[cwd].tool({"action": "search", "query": query, "limit": 10})["details"]
        return [str(result["entryId"]) for result in details["results"]]

    return rank


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


def _measure_seed(seed: str, work: Path) -> dict[str, dict[str, dict[str, float | int]]]:
    corpus = write_quality_corpus(work / f"corpus-{seed}", seed)
    rankers: dict[str, Ranker] = {
        "reference": _reference(corpus, work / f"state-{seed}"),
        "bm25": _Bm25(corpus.docs, unicode61_tokens),
        "bm25_stem_stop": _Bm25(corpus.docs, _stemmed_without_stop_words()),
        "ripgrep_any": _ripgrep_any(corpus.docs),
    }
    tallies = {system: {c: _Tally() for c in (*CATEGORIES, "overall")} for system in SYSTEMS}
    for question in corpus.questions:
        for system, ranker in rankers.items():
            ranked = ranker(question.cwd, question.query)
            tallies[system][question.category].add(ranked, question.answers)
            tallies[system]["overall"].add(ranked, question.answers)
    return {system: {c: t.figures() for c, t in by.items()} for system, by in tallies.items()}


def measure_quality(seeds: Sequence[str] = QUALITY_SEEDS) -> dict[str, Any]:
    """{"seeds": {seed: {system: {category: figures}}}, "questions": count per seed}."""
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="pimem-quality-") as temp:
        for seed in seeds:
            results[seed] = _measure_seed(seed, Path(temp))
    questions = {seed: by["reference"]["overall"]["questions"] for seed, by in results.items()}
    return {
        "seeds": results,
        "questions": questions,
        "systems": list(SYSTEMS),
        "categories": list(CATEGORIES),
    }


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
