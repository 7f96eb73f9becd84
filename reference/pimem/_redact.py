"""Secret redaction: every rule finds spans in the original text, then one pass writes the markers.

Speed matters (every indexed character passes through here), so no pattern is ever tried at every
position of a text. Each rule of the table (`_redact_rules.py`) names keywords, and is tried only
where one occurs. All keywords are found in one pass per text: one RE2 automaton (`google-re2`) of
every keyword, case-insensitive or as written, run over an ASCII image of the text (each other
character becomes `?`, so positions stay those of the text and keywords, all ASCII, match the same);
after each match the search goes on from the next character, so overlapping keywords are all found.
Where `google-re2` has no wheel, `_keyword_trie` finds the same spans, slower. The rules themselves
run in Python's `re`, which has the lookarounds RE2 lacks. A text is scanned whole, however long
(`re` has no limit on its input); many texts are scanned joined by a separator that ends every
rule's context, so each keyword costs one pass for all of them.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from ._keyword_trie import TrieKeywords
from ._redact_rules import RULES, SEPARATOR, Rule

try:
    import re2  # type: ignore[import-untyped,import-not-found,unused-ignore]  # no stubs
except ImportError:  # no wheel for this platform (see _keyword_trie)
    re2 = None

__all__ = [
    "Policy",
    "current_policy",
    "marker_names",
    "redact",
    "redact_many",
    "redact_slices",
    "redact_tree",
    "redaction_policy",
]

# How far a slice's neighbourhood reaches (see _widen): the longest secret, its context included,
# that a slice of a text is redacted for as the whole text is (JM-REDACT-270).
_REACH = 1 << 16
_SLICE_MARGIN = 512  # scanned around a slice: the context a rule reads before or after a value
_RUN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.-"
# Lines that open a block whose secrets run on below them (a Secret's `data:`, a private key's
# BEGIN line), until a key's END line
_OPENINGS = ("data:", "Data:", "-----BEGIN ")
_SEPARATOR = SEPARATOR

Span = tuple[int, int, str]
# (start, end, priority): priority is the rule's place in the table
Found = tuple[int, int, int]
Keyword = tuple[str, bool]  # (keyword, case-sensitive)


def _ascii_image(text: str) -> bytes:
    """The text with every non-ASCII character as `?`: one byte per character, so positions match."""
    return text.encode("ascii", "replace")


def _matches(keyword: Keyword, text: str, position: int) -> bool:
    word, case_sensitive = keyword
    found = text[position : position + len(word)]
    return found == word if case_sensitive else found.lower() == word


class _Keywords:
    """Every keyword of the table, which rules each one starts, and the automaton that finds them."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules: dict[Keyword, tuple[int, ...]] = {}
        for priority, rule in enumerate(rules):
            if not rule.whole:
                for word in rule.keywords:
                    keyword = (word, rule.case_sensitive)
                    self.rules[keyword] = (*self.rules.get(keyword, ()), priority)
        # Longest first: at a position, the automaton matches the longest keyword there.
        ordered = sorted(self.rules, key=lambda keyword: (-len(keyword[0]), keyword))
        pattern = "|".join(
            re.escape(word) if case_sensitive else f"(?i:{re.escape(word)})"
            for word, case_sensitive in ordered
        )
        self.automaton: Any = re2 and re2.compile(pattern.encode("ascii"))
        self.matches: Callable[[bytes], Iterator[tuple[int, int]]] = (
            self._automaton_matches if self.automaton else TrieKeywords(self.rules).matches
        )

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - one instance, the table's, lives forever
    def starting(self, matched: bytes) -> tuple[int, ...]:
        """The rules of every keyword that starts where the automaton matched `matched`: that
        keyword and every shorter one it begins with."""
        text = matched.decode("ascii")
        return tuple(
            sorted(
                {
                    priority
                    for keyword, priorities in self.rules.items()
                    if _matches(keyword, text, 0)
                    for priority in priorities
                }
            )
        )

    def hits(self, text: str) -> list[tuple[int, int]]:
        """(position, rule priority) for every occurrence of a keyword in `text`. Plain loops: a
        text has a hit every few hundred bytes, so a generator per hit costs a tenth of redaction."""
        image = _ascii_image(text)
        hits: list[tuple[int, int]] = []
        add, starting = hits.append, self.starting
        for start, end in self.matches(image):
            for priority in starting(image[start:end]):
                add((start, priority))
        return hits

    def _automaton_matches(self, image: bytes) -> Iterator[tuple[int, int]]:
        """The automaton's own matcher, without the wrapper's per-match objects. The search goes on
        right after each match's start, so keywords inside a match are found too."""
        match, anchor, size, position = self.automaton._regexp.Match, re2._Anchor.UNANCHORED, len(image), 0
        while True:
            [(start, end)] = match(anchor, image, position, size)  # the whole match (no groups)
            if start < 0:
                return
            yield start, end
            position = start + 1


_MARKER_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


@dataclass(frozen=True)
class Policy:
    """What a user adds to the table: their own formats to mask (`memory.redact.patterns`, from the
    user's or a project's settings) and values never to mask (`memory.redact.allow`, from the
    user's own settings only: a project file must not weaken redaction). Plain strings, so it
    travels to worker processes."""

    patterns: tuple[tuple[str, str], ...] = ()  # (marker name, regular expression)
    allow: tuple[str, ...] = ()  # literal values
    allow_patterns: tuple[str, ...] = ()  # regular expressions a value must match whole

    @classmethod
    def from_settings(cls, patterns: Any, allow: Any) -> Policy:
        """The policy of the protocol's `redact_patterns` and `redact_allow` settings; ValueError
        says what was wrong and what is right."""
        example = '[{"name": "acme-token", "pattern": "acme_[A-Za-z0-9]{32}"}]'
        found: list[tuple[str, str]] = []
        for item in patterns or []:
            if not isinstance(item, dict) or not isinstance(item.get("pattern"), str):
                raise ValueError(f"redact_patterns: each item is an object with a pattern, e.g. {example}")
            name = item.get("name", "user-pattern")
            if not isinstance(name, str) or not _MARKER_NAME.fullmatch(name):
                raise ValueError(
                    f"redact_patterns: a name is lower-case letters, digits and '-', e.g. {example}"
                )
            _check_user(item["pattern"], "redact_patterns")
            found.append((name, item["pattern"]))
        literals: list[str] = []
        regexes: list[str] = []
        for item in allow or []:
            if isinstance(item, str):
                literals.append(item)
            elif isinstance(item, dict) and isinstance(item.get("pattern"), str):
                _check_user(item["pattern"], "redact_allow")
                regexes.append(item["pattern"])
            else:
                raise ValueError('redact_allow: each item is a literal string or {"pattern": "..."}')
        return cls(tuple(found), tuple(literals), tuple(regexes))


# The spec's portable dialect (spec/schemas/redaction-rules.schema.json), read as a sequence of
# pieces: every piece of a portable pattern is one of these, and a class is read by _CLASS_PIECE.
_PORTABLE_PIECE = re.compile(
    r"""\\[\^$\\.*+?()\[\]{}|/nrtfv0]|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}"""  # escapes
    r"""|\((?:\?[:=!])?|\)|\||\^"""  # groups, lookaheads, alternation, start
    r"""|(?:[*+?]|\{\d+(?:,\d*)?\})\??"""  # quantifiers, lazy or not
    r"""|\[\^?(?:\\[\^$\\.*+?()\[\]{}|/\-nrtfv0]|\\x[0-9A-Fa-f]{2}|\\u[0-9A-Fa-f]{4}|[^\\\[\]])+\]"""  # class
    r"""|[^\\^$.*+?()\[\]{}|]"""  # a literal
)
_QUANTIFIER = re.compile(r"(?:[*+?]|\{\d+(?:,\d*)?\})\??")


def _not_portable(pattern: str) -> str | None:
    """Where `pattern` (one `re` compiles, so its groups are balanced) leaves the portable dialect,
    or None. A group's kind is kept until its `)`: a lookahead is not repeated."""
    position, previous, lookahead = 0, "", False
    opened: list[bool] = []  # for each group open here: whether it is a lookahead
    while position < len(pattern):
        piece = _PORTABLE_PIECE.match(pattern, position)
        if piece is None:
            return f"at {pattern[position : position + 6]!r}"
        text = piece.group()
        if _QUANTIFIER.fullmatch(text) and (
            not previous
            or previous in ("|", "^")
            or previous.startswith("(")
            or _QUANTIFIER.fullmatch(previous)
        ):
            return f"at {text!r}: nothing to repeat, or a repeated lookahead or quantifier"
        if lookahead and _QUANTIFIER.fullmatch(text):
            return f"at {text!r}: a lookahead is not repeated"
        if text.startswith("("):
            opened.append(text in ("(?=", "(?!"))
        lookahead = text == ")" and opened.pop()
        previous, position = text, piece.end()
    return None


def _check_user(pattern: str, setting: str) -> None:
    """ValueError unless `pattern` is a regular expression of the spec's portable dialect (what
    Python and JavaScript read alike) that cannot match the empty string."""
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        raise ValueError(f"{setting}: {pattern!r} is not a regular expression ({error})") from None
    where = _not_portable(pattern)
    if where is not None:
        raise ValueError(
            f"{setting}: {pattern!r} is not in the spec's portable dialect ({where}): no ., $, \\d, \\w, "
            "\\s, \\b, lookbehind, named groups or inline flags; write classes such as [0-9]"
        )
    if compiled.match(""):
        raise ValueError(f"{setting}: {pattern!r} matches the empty string")


_NO_POLICY = Policy()
_POLICY: ContextVar[Policy] = ContextVar("redaction_policy", default=_NO_POLICY)


def current_policy() -> Policy:
    return _POLICY.get()


@contextmanager
def redaction_policy(policy: Policy) -> Iterator[None]:
    """Redact with `policy` within the block (a tool call, a batch being prepared)."""
    token = _POLICY.set(policy)
    try:
        yield
    finally:
        _POLICY.reset(token)


@functools.lru_cache(maxsize=32)
def _compiled(
    policy: Policy,
) -> tuple[tuple[re.Pattern[str], ...], frozenset[str], tuple[re.Pattern[str], ...]]:
    return (
        tuple(re.compile(pattern) for _, pattern in policy.patterns),
        frozenset(policy.allow),
        tuple(re.compile(pattern) for pattern in policy.allow_patterns),
    )


def _apply_policy(text: str, found: list[Found]) -> list[Found]:
    """The user's own patterns added to the spans, and the spans the user allows taken out."""
    policy = _POLICY.get()
    if policy == _NO_POLICY:
        return found
    patterns, allow, allow_patterns = _compiled(policy)
    for index, pattern in enumerate(patterns):
        found.extend(
            (m.start(), m.end(), len(RULES) + index) for m in pattern.finditer(text) if m.end() > m.start()
        )
    if allow or allow_patterns:
        found = [
            (start, end, priority)
            for start, end, priority in found
            if text[start:end] not in allow and not any(p.fullmatch(text, start, end) for p in allow_patterns)
        ]
    return found


def _names() -> tuple[str, ...]:
    policy = _POLICY.get()
    return _NAMES + tuple(name for name, _ in policy.patterns) if policy.patterns else _NAMES


def marker_names() -> tuple[str, ...]:
    """Every name a marker `[REDACTED:<name>]` can carry now: the rules', then the user's."""
    return _names()


_KEYWORDS = _Keywords(RULES)
_WHOLE = tuple((priority, rule) for priority, rule in enumerate(RULES) if rule.whole)
_FINDERS = tuple(rule.find for rule in RULES)
_NAMES = tuple(rule.id for rule in RULES)


def _rule_spans(text: str) -> list[Found]:
    """(start, end, priority) of every rule's spans in `text`: the whole-text rules (key blocks) at
    each occurrence of a keyword, the others where the automaton finds theirs."""
    found: list[Found] = []
    for priority, rule in _WHOLE:
        for keyword in rule.keywords:
            position = text.find(keyword)
            while position >= 0:
                found.extend((start, end, priority) for start, end in rule.find(text, position))
                position = text.find(keyword, position + len(keyword))  # no keyword overlaps itself
    add, finders = found.append, _FINDERS
    for position, priority in _KEYWORDS.hits(text):
        for start, end in finders[priority](text, position):
            add((start, end, priority))
    return found


_MARKER = re.compile(r"\[REDACTED:[a-z0-9:-]+\]")


def _outside_markers(text: str, found: list[Found]) -> list[Found]:
    """The spans that are not inside a marker already in the text, so that redacting a redacted
    text changes nothing (outputs are redacted again: `token [REDACTED:github-pat]` stays)."""
    if "[REDACTED:" not in text:
        return found
    markers = [match.span() for match in _MARKER.finditer(text)]
    starts = [start for start, _ in markers]
    kept = []
    for start, end, priority in found:
        index = bisect.bisect_right(starts, start) - 1
        if index < 0 or markers[index][1] < end:
            kept.append((start, end, priority))
    return kept


def _merge(found: list[Found]) -> list[Span]:
    """Overlapping spans become one, whose marker names the first rule of the table among them."""
    found.sort()
    merged: list[list[int]] = []
    for start, end, priority in found:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] = min(last[2], priority)
        else:
            merged.append([start, end, priority])
    names = _names()
    return [(start, end, names[priority]) for start, end, priority in merged]


def _spans(text: str) -> list[Span]:
    return _merge(_outside_markers(text, _apply_policy(text, _rule_spans(text))))


def _render(text: str, spans: list[Span], start: int, end: int) -> str:
    """text[start:end] with every span that reaches into it replaced by its marker."""
    out: list[str] = []
    pos = start
    for span_start, span_end, name in spans[bisect.bisect_right(spans, start, key=lambda span: span[1]) :]:
        if span_start >= end:
            break
        out.append(text[pos : max(pos, span_start)])
        out.append(f"[REDACTED:{name}]")
        pos = max(pos, min(span_end, end))
    out.append(text[pos:end])
    return "".join(out)


def redact(text: str) -> str:
    """The text with every secret replaced by `[REDACTED:<class>]`."""
    spans = _spans(text)
    return _render(text, spans, 0, len(text)) if spans else text


def redact_many(texts: list[str]) -> list[str]:
    """`redact` of each text. The texts are scanned joined by _SEPARATOR, so each keyword costs one
    search for all of them instead of one per text."""
    joined = _SEPARATOR.join(texts)
    spans = _spans(joined)
    done = []
    start = 0
    for text in texts:
        end = start + len(text)
        done.append(_render(joined, spans, start, end) if spans else text)
        start = end + len(_SEPARATOR)
    return done


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The part of `text` to scan for the secrets that may reach into text[start:end]: the whole of
    a token-shaped run (a JWT, a long value) crossing either edge, with a margin for the context
    around it (a key name, `Bearer`), and back to a block opened above it (a private key's BEGIN
    line whose block is still open at the start, a Secret's `data:`), all within _REACH."""
    head, tail = text[max(0, start - _REACH) : start], text[end : end + _REACH]
    low = max(0, start - len(head) + len(head.rstrip(_RUN_CHARS)) - _SLICE_MARGIN)
    high = min(len(text), end + len(tail) - len(tail.lstrip(_RUN_CHARS)) + _SLICE_MARGIN)
    base = max(0, low - _REACH)
    above = text[base:low]
    for opening in _OPENINGS:
        before, found, after = above.rpartition(opening)
        if not found:
            continue
        if "-----END " not in after:  # the block is still open where the scan starts
            low = min(low, max(0, base + len(before) - _SLICE_MARGIN))
    return low, high


def redact_slices(pieces: list[tuple[str, int, int]]) -> list[str]:
    """For each (text, start, end), with 0 <= start, the redacted form of text[start:end]: what
    `redact(text)` shows there, a secret cut by either edge shown as its marker. Only the
    neighbourhood of each slice is scanned (see _widen), all of them joined as in `redact_many`, so
    long texts cost no more than short ones."""
    placed = [(text, start, end, *_widen(text, start, end)) for text, start, end in pieces]
    joined = _SEPARATOR.join(text[low:high] for text, _, _, low, high in placed)
    spans = _spans(joined)
    done = []
    offset = 0
    for text, start, end, low, high in placed:
        own = [
            (s - offset + low, e - offset + low, name)
            for s, e, name in spans
            if offset <= s < offset + high - low
        ]
        done.append(_render(text, own, start, end))
        offset += high - low + len(_SEPARATOR)
    return done


def redact_tree(value: Any) -> Any:
    """Redact every string inside a JSON-like value (the last step before anything is returned),
    all strings in one `redact_many`."""
    strings: list[str] = []

    def collect(item: Any) -> None:
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, list):
            for element in item:
                collect(element)
        elif isinstance(item, dict):
            for element in item.values():
                collect(element)

    def rebuild(item: Any) -> Any:
        if isinstance(item, str):
            return next(redacted)
        if isinstance(item, list):
            return [rebuild(element) for element in item]
        if isinstance(item, dict):
            return {key: rebuild(element) for key, element in item.items()}
        return item

    collect(value)
    redacted = iter(redact_many(strings))
    return rebuild(value)
