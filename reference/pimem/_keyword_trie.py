"""Redaction's keyword search where `google-re2` cannot be installed: it has no wheel for Python
3.13 and later on Linux and macOS, so the dependency is not asked for there (pyproject).

The keywords become two Python patterns, each a trie of alternatives (so `re` branches on each next
character instead of trying every keyword in turn): one for the case-insensitive keywords, run over
the lower-cased image of the text, and one for the others. It reports the same (start, end) spans
as the automaton, so the output is the same; slower. A test runs the secrets corpus through both.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["TrieKeywords"]


def _trie_pattern(words: list[str]) -> re.Pattern[str]:
    """One pattern matching any of `words`, longest first, as nested alternatives of a trie."""
    trie: dict[str, Any] = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # a word ends here

    def pattern(node: dict[str, Any]) -> str:
        branches = [re.escape(char) + pattern(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        return f"(?:{body})?" if "" in node else body

    return re.compile(pattern(trie))


class TrieKeywords:
    """Finds keywords, each `(word, case_sensitive)`, in the ASCII image of a text."""

    def __init__(self, keywords: Iterable[tuple[str, bool]]) -> None:
        keywords = list(keywords)
        self.searches = [
            (_trie_pattern(words).search, lower)
            for words, lower in (
                ([word for word, case_sensitive in keywords if not case_sensitive], True),
                ([word for word, case_sensitive in keywords if case_sensitive], False),
            )
            if words
        ]

    def matches(self, image: bytes) -> Iterator[tuple[int, int]]:
        """(start, end) of the longest keyword at every position where one starts."""
        plain = image.decode("ascii")
        for search, lower in self.searches:
            haystack, position = plain.lower() if lower else plain, 0
            while (found := search(haystack, position)) is not None:
                yield found.span()
                position = found.start() + 1
