"""The fixed, mixed search query set, derived deterministically from the corpus.

Terms come from a sample of the same extracted, redacted text the index holds, so every query
category hits what it is meant to hit: rare terms (one entry in the sample), common terms (the most
frequent), multi-term queries (terms taken from one entry), any-term fallback (a real term plus a
word that occurs nowhere), date-bounded queries (`since`/`until`), kind-filtered queries, a few
project-scoped ones, words of the corpus's other scripts (CJK and Thai pieces of runs written
without spaces, Devanagari words), and the search-quality benchmark's questions (natural-language questions,
identifiers, error messages, identifier parts, CJK, partly absent terms), asked of the whole corpus.
The same corpus always gives the same queries in the same order.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["CATEGORY_SIZES", "Query", "TermSample", "build_queries"]

# ASCII letter/digit runs (the text is case-folded first); other scripts have their own category.
_TERM = re.compile(r"[a-z0-9]+")
_SCRIPT_RUNS = {
    "cjk": re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{2,}"),
    "thai": re.compile("[\u0e00-\u0e7f]{3,}"),
    "devanagari": re.compile("[\u0900-\u097f]{2,}"),
}
_SCRIPT_QUERIES = {"cjk": 18, "thai": 6, "devanagari": 6}
_KEPT_SNIPPETS = 300  # per script
_TOKENS_PER_ENTRY = 400  # enough vocabulary per entry without letting huge entries dominate
_KEPT_ENTRIES = 5000  # entries whose terms are kept for multi-term queries (bounded memory)
CATEGORY_SIZES = {
    "rare": 60,
    "common": 30,
    "multi": 50,
    "fallback": 30,
    "dated": 20,
    "kind": 20,
    "project": 10,
    "scripts": sum(_SCRIPT_QUERIES.values()),
    "question": 60,
}


@dataclass(frozen=True)
class Query:
    category: str
    arguments: dict[str, Any]

    @property
    def single_term(self) -> str | None:
        """The query's one term when ripgrep can be asked the same question."""
        if self.category in ("rare", "common"):
            return str(self.arguments["query"])
        return None


def _stable_order(term: str) -> bytes:
    # A hash order picks a spread of terms instead of the alphabetically first ones.
    return hashlib.sha256(term.encode()).digest()


def _searchable(term: str, min_length: int) -> bool:
    return len(term) >= min_length and not term.isdigit()


@dataclass
class TermSample:
    """Term statistics over every `stride`-th entry of each kind, gathered while the corpus is extracted."""

    stride: int = 20
    # Counted per kind: entries alternate kinds, so one global stride would only ever sample one kind.
    seen: Counter[str] = field(default_factory=Counter)
    document_frequency: Counter[str] = field(default_factory=Counter)
    entry_terms: list[list[str]] = field(default_factory=list)
    kind_terms: dict[str, list[str]] = field(default_factory=dict)
    snippets: dict[str, list[str]] = field(default_factory=dict)  # script → pieces of its text
    first_timestamp: str | None = None
    last_timestamp: str | None = None

    def add(self, kind: str, timestamp: str, text: str) -> None:
        self.seen[kind] += 1
        if self.seen[kind] % self.stride != 1:
            return
        if timestamp:
            self.first_timestamp = min(self.first_timestamp or timestamp, timestamp)
            self.last_timestamp = max(self.last_timestamp or timestamp, timestamp)
        terms = list(dict.fromkeys(_TERM.findall(text.casefold())))[:_TOKENS_PER_ENTRY]
        self.document_frequency.update(terms)
        usable = [term for term in terms if _searchable(term, 4)]
        if len(usable) >= 3 and len(self.entry_terms) < _KEPT_ENTRIES:
            self.entry_terms.append(usable)
        if usable:
            self.kind_terms.setdefault(kind, []).append(usable[len(usable) // 2])
        if not text.isascii():
            self._add_snippets(text)

    def _add_snippets(self, text: str) -> None:
        """One piece of each other script the text has: 2-4 characters from inside a CJK run, 3-6
        from a Thai run (never starting on a mark), a whole Devanagari word."""
        for script, pattern in _SCRIPT_RUNS.items():
            kept = self.snippets.setdefault(script, [])
            found = pattern.search(text)
            if found is None or len(kept) >= _KEPT_SNIPPETS:
                continue
            run = found.group()
            if script == "devanagari":
                kept.append(run)
                continue
            length = 2 + len(run) % 3 if script == "cjk" else 3 + len(run) % 4
            start = len(run) // 3
            while start < len(run) and unicodedata.category(run[start]).startswith("M"):
                start += 1
            if len(run) - start >= length:
                kept.append(run[start : start + length])


def _pick(candidates: list[str], count: int) -> list[str]:
    return sorted(candidates, key=_stable_order)[:count]


def _absent_word(sample: TermSample, index: int) -> str:
    word = f"qzxjv{index:03d}wkq"
    while word in sample.document_frequency:
        word += "x"
    return word


def quality_questions(count: int = CATEGORY_SIZES["question"]) -> list[str]:
    """`count` questions of the quality benchmark's seed A, spread evenly over its categories."""
    import tempfile
    from pathlib import Path

    from pimem_tools.fixtures._quality import write_quality_corpus

    with tempfile.TemporaryDirectory(prefix="pimem-bench-questions-") as temp:
        questions = write_quality_corpus(Path(temp), "A").questions
    stride = max(1, len(questions) // count)
    return [question.query for question in questions[::stride]][:count]


def build_queries(sample: TermSample, questions: list[str] | None = None) -> list[Query]:
    frequency = sample.document_frequency
    rare = _pick([t for t, n in frequency.items() if n == 1 and _searchable(t, 6)], CATEGORY_SIZES["rare"])
    common_pool = [t for t, _ in frequency.most_common(400) if _searchable(t, 4)]
    common = common_pool[: CATEGORY_SIZES["common"]]
    queries = [Query("rare", {"action": "search", "query": t, "scope": "global"}) for t in rare]
    queries += [Query("common", {"action": "search", "query": t, "scope": "global"}) for t in common]

    entries = sorted(sample.entry_terms, key=lambda terms: _stable_order(" ".join(terms)))
    for position, terms in enumerate(entries[: CATEGORY_SIZES["multi"]]):
        chosen = terms[position % len(terms)], terms[-1 - position % len(terms)], terms[len(terms) // 2]
        text = " ".join(dict.fromkeys(chosen))
        queries.append(Query("multi", {"action": "search", "query": text, "scope": "global"}))

    pool = rare + common
    for index in range(CATEGORY_SIZES["fallback"]):
        text = f"{pool[index % len(pool)]} {_absent_word(sample, index)}"
        queries.append(Query("fallback", {"action": "search", "query": text, "scope": "global"}))

    queries += _dated(sample, common)
    kinds = sorted(sample.kind_terms)
    for index in range(CATEGORY_SIZES["kind"] if kinds else 0):
        kind = kinds[index % len(kinds)]
        terms = sample.kind_terms[kind]
        arguments = {
            "action": "search",
            "query": terms[(index * 7919) % len(terms)],
            "kind": kind,
            "scope": "global",
        }
        queries.append(Query("kind", arguments))

    for script, count in _SCRIPT_QUERIES.items():
        for snippet in _pick(list(dict.fromkeys(sample.snippets.get(script, []))), count):
            queries.append(Query("scripts", {"action": "search", "query": snippet, "scope": "global"}))
    # Scope project (the default) filters by the current session's project root.
    for term in common_pool[: CATEGORY_SIZES["project"]]:
        queries.append(Query("project", {"action": "search", "query": term}))
    for question in questions or []:
        queries.append(Query("question", {"action": "search", "query": question, "scope": "global"}))
    return queries


def _dated(sample: TermSample, common: list[str]) -> list[Query]:
    first, last = sample.first_timestamp, sample.last_timestamp
    if not (first and last and common):
        return []
    middle_day = _midpoint_day(first, last)
    queries = []
    for index in range(CATEGORY_SIZES["dated"]):
        term = common[index % len(common)]
        bounds: dict[str, str]
        if index % 3 == 0:
            bounds = {"since": middle_day}
        elif index % 3 == 1:
            bounds = {"until": middle_day}
        else:  # a timestamp with a zone, the other accepted form
            bounds = {"since": f"{first[:10]}T00:00:00Z", "until": f"{middle_day}T23:59:59Z"}
        queries.append(Query("dated", {"action": "search", "query": term, "scope": "global", **bounds}))
    return queries


def _midpoint_day(first: str, last: str) -> str:
    start = datetime.fromisoformat(first.replace("Z", "+00:00"))
    end = datetime.fromisoformat(last.replace("Z", "+00:00"))
    return (start + (end - start) / 2).date().isoformat()
