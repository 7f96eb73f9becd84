"""The portable regular-expression dialect of the spec: what Python's `re` and ECMAScript (with the
`u` flag) both read, with the same meaning.

The spec's redaction rule table (`spec/redaction-rules.json`) writes its patterns in it, and a
user's own secret formats (`redact_patterns`, `redact_allow`) are written in it (JM-REDACT-160), so
that an implementation in either language takes a pattern as it is. Allowed:

- literal characters other than `.`, `$` and the syntax characters; a syntax character, `/` (and,
  inside a class, `-`) escaped with `\\`; the escapes `\\n`, `\\r`, `\\t`, `\\f`, `\\v`, `\\0`,
  `\\xHH` and `\\uHHHH`;
- character classes `[...]` and `[^...]` of those characters and ranges (a `[` inside a class is
  escaped);
- groups `(...)`, `(?:...)`, and the lookaheads `(?=...)` and `(?!...)`;
- alternation `|`, the quantifiers `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each optionally lazy
  (`?` after it), and the anchor `^`.

Not allowed, because the two languages read them differently or only one reads them: `.` (which
characters it excludes differs), `$` (Python also matches before a final newline), `\\d`, `\\w`,
`\\s`, `\\b` and their negations (Unicode in Python, ASCII in ECMAScript), lookbehind, named
groups, inline flags (`(?i)`), backreferences, possessive quantifiers, a `{` that is no
quantifier. Case-insensitive matching is a flag beside the pattern (`i` in both languages).
"""

from __future__ import annotations

import re

__all__ = ["portable_problem"]

_SYNTAX = frozenset("^$\\.*+?()[]{}|/")
_CLASS_ESCAPES = _SYNTAX | {"-"}
_CONTROL_ESCAPES = frozenset("nrtfv0")
_HEX = re.compile(r"x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}")
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")
_GROUP_OPENINGS = ("(?:", "(?=", "(?!")


def _escape(pattern: str, index: int, allowed: frozenset[str]) -> tuple[int, str | None]:
    """(the index after the escape at `index`, a problem or None)."""
    if index + 1 >= len(pattern):
        return index + 1, "a pattern cannot end with a lone \\"
    char = pattern[index + 1]
    if char in allowed or char in _CONTROL_ESCAPES:
        return index + 2, None
    hexadecimal = _HEX.match(pattern, index + 1)
    if hexadecimal:
        return hexadecimal.end(), None
    if char in "dDwWsSbB":
        return index + 2, f"\\{char} means other characters in Python and in JavaScript: write a class"
    return index + 2, f"the escape \\{char} is not portable"


def _class(pattern: str, index: int) -> tuple[int, str | None]:
    """(the index after the class opened at `index`, a problem or None)."""
    index += 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    first = True
    while index < len(pattern):
        char = pattern[index]
        if char == "]" and not first:
            return index + 1, None
        if char == "]":
            return index + 1, "an empty class [] is not portable"
        if char == "[":
            return index, "a [ inside a class is escaped: \\["
        if char == "\\":
            index, problem = _escape(pattern, index, _CLASS_ESCAPES)
            if problem:
                return index, problem
        else:
            index += 1
        first = False
    return index, "a class [ is not closed"


def portable_problem(pattern: str) -> str | None:
    """Why `pattern` is not in the portable dialect, or None when it is (and compiles in Python)."""
    index, quantifiable = 0, False
    groups: list[bool] = []  # for each open group: whether it is a lookahead
    while index < len(pattern):
        char = pattern[index]
        problem: str | None = None
        if char == "\\":
            index, problem = _escape(pattern, index, _SYNTAX)
            quantifiable = True
        elif char == "[":
            index, problem = _class(pattern, index)
            quantifiable = True
        elif char == "(":
            if pattern.startswith("(?", index) and not pattern.startswith(_GROUP_OPENINGS, index):
                opening = pattern[index : index + 4]
                return f"the group {opening!r}… is not portable: use (…), (?:…), (?=…) or (?!…)"
            groups.append(pattern.startswith(("(?=", "(?!"), index))
            index += 3 if pattern.startswith("(?", index) else 1
            quantifiable = False
        elif char == ")":
            if not groups:
                return "a ) closes no group"
            quantifiable = not groups.pop()  # a lookahead is not repeated in JavaScript
            index += 1
        elif char in "*+?{":
            if not quantifiable:
                return f"{char} at {index} follows nothing to repeat"
            if char == "{":
                bounds = _QUANTIFIER.match(pattern, index)
                if bounds is None:
                    return "a { that is no quantifier {n}, {n,} or {n,m} is escaped: \\{"
                index = bounds.end()
            else:
                index += 1
            if index < len(pattern) and pattern[index] == "?":
                index += 1  # lazy
            if index < len(pattern) and pattern[index] in "*+{":
                return "a possessive or doubled quantifier is not portable"
            quantifiable = False
        elif char == ".":
            return ". matches other characters in Python and in JavaScript: write a class such as [^\\n]"
        elif char == "$":
            return "$ also matches before a final newline in Python: leave it out or escape it"
        elif char in "]}":
            return f"a lone {char} is escaped: \\{char}"
        else:
            quantifiable = char not in "|^"
            index += 1
        if problem:
            return problem
    if groups:
        return "a group ( is not closed"
    try:
        re.compile(pattern)
    except re.error as error:
        return f"not a regular expression: {error}"
    return None
