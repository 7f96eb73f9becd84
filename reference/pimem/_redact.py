"""Secret redaction: every class finds spans in the original text, then one pass writes the markers.

Speed matters (every indexed character passes through here), so no regex is ever tried at every
position of a text. A rule either runs a pattern that starts with a literal (which `re` finds as
fast as a substring test) or tries its pattern only where one of its keywords occurs; each
keyword's positions are found once per text and shared by the rules. Text longer than one slice is
scanned in line-aligned windows that overlap, so a secret straddling a window boundary is still
found whole.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["redact", "redact_many", "redact_slices", "redact_tree"]

_SLICE_CHARS = 1 << 20
_OVERLAP_CHARS = 1 << 16
_SLICE_MARGIN = 512  # scanned around a slice (see _widen)
_RUN_REACH = 1 << 14  # how far a token-shaped run crossing a slice's edge is followed
_KEY_REACH = 1 << 16  # how far back a private key's BEGIN line is looked for
_RUN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.-"
_BATCH_CHARS = 1 << 18  # short texts are redacted this many characters at a time
# Between texts redacted together: no rule matches across it (none lets \s or a value run over
# both a newline and NUL), a private key ends at it and AWS context stops at it.
_SEPARATOR = "\n\x00\n"
_AWS_CONTEXT_CHARS = 200
_NOT_SECRETS = {
    "enabled",
    "disabled",
    "true",
    "false",
    "none",
    "null",
    "nil",
    "undefined",
    "yes",
    "no",
    "on",
    "off",
    "required",
    "optional",
    "redacted",
}
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")

Span = tuple[int, int, str]


class _Scan:
    """One text being redacted, with its lower-cased form and where each keyword occurs in it
    (found once, shared by every rule that anchors on that keyword)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[str, list[int]] = {}

    @functools.cached_property
    def lower(self) -> str:
        """Lower case, position for position with the text (keyword positions index both): a
        character whose lower case is longer, like "İ", stays as it is."""
        lower = self.text.lower()
        if len(lower) == len(self.text):  # lower-casing only ever lengthens
            return lower
        return "".join(low if len(low := char.lower()) == 1 else char for char in self.text)

    def at(self, keyword: str) -> list[int]:
        if keyword not in self._found:
            positions = []
            position = self.lower.find(keyword)
            while position >= 0:
                positions.append(position)
                position = self.lower.find(keyword, position + 1)
            self._found[keyword] = positions
        return self._found[keyword]


Finder = Callable[[_Scan], Iterator[tuple[int, int]]]


def _last_group(match: re.Match[str]) -> tuple[int, int]:
    return match.span(match.lastindex or 0)


_ESCAPE_BEFORE = re.compile(r"\\(?:[bfnrt\"\\/]|u[0-9A-Fa-f]{4})")


def _escape_ends_at(text: str, position: int) -> bool:
    """Whether a JSON escape (`\\n`, `\\t`, `\\u001b` ...) ends right before `position`."""
    return any(
        position >= width
        and text[position - width] == "\\"
        and _ESCAPE_BEFORE.fullmatch(text, position - width, position) is not None
        for width in (2, 6)
    )


def _starts_token(text: str, start: int) -> bool:
    """Whether a token may start at `start`: not in the middle of another token. Tool-call
    arguments arrive JSON-escaped, and an escape right before a token stands for the character
    it escapes, so its letter or hex digit does not continue a token."""
    return start == 0 or text[start - 1] not in _TOKEN_CHARS or _escape_ends_at(text, start)


def _prefixed(pattern: re.Pattern[str], prefixes: tuple[str, ...] = ("",)) -> Finder:
    """Token-shaped matches of a pattern that starts with a literal (`re` finds those as fast as a
    substring test). `prefixes`: the alternatives' text before the match, in order ("?" is any one
    character), which belongs to the token. The token must not continue another one: checked here,
    since a look-behind at the start would hide the literal from `re`."""

    def find(scan: _Scan) -> Iterator[tuple[int, int]]:
        text = scan.text
        for match in pattern.finditer(text):
            start = match.start() - len(prefixes[(match.lastindex or 1) - 1])
            if _starts_token(text, start):
                yield start, match.end()

    return find


def _at(*keywords: str) -> Callable[[_Scan], set[int]]:
    return lambda scan: {start for keyword in keywords for start in scan.at(keyword)}


def _key_names(scan: _Scan) -> set[int]:
    """Where api_key, apikey, api-key, access_key, private_key ... start: found from the "key"s."""
    lower, starts = scan.lower, set()
    for end in scan.at("key"):
        for name in ("api", "access", "private"):
            for joint in ("", "_", "-"):
                start = end - len(name) - len(joint)
                if start >= 0 and lower.startswith(name + joint, start):
                    starts.add(start)
    return starts


def _anchored(
    pattern: re.Pattern[str], starts: Callable[[_Scan], set[int]], accept: Callable[[str], bool] = bool
) -> Finder:
    """A pattern that starts with a keyword (any case), tried only where `starts` says one occurs."""

    def find(scan: _Scan) -> Iterator[tuple[int, int]]:
        for match in (pattern.match(scan.text, start) for start in sorted(starts(scan))):
            if match and accept(match.group(match.lastindex or 0)):
                yield _last_group(match)

    return find


def _private_keys(scan: _Scan) -> Iterator[tuple[int, int]]:
    """PEM private-key blocks; an unterminated block runs to the end of the text."""
    text = scan.text
    pos = 0
    while (begin := text.find("-----BEGIN ", pos)) >= 0:
        header_end = text.find("-----", begin + 11)
        label = text[begin + 11 : header_end] if header_end >= 0 else ""
        if header_end < 0 or "\n" in label or not label.endswith("PRIVATE KEY"):
            pos = begin + 11
            continue
        limit = text.find(_SEPARATOR, header_end)  # a text's block ends with the text
        limit = len(text) if limit < 0 else limit
        footer = text.find(f"-----END {label}-----", header_end, limit)
        end = limit if footer < 0 else footer + len(label) + 14
        yield begin, end
        pos = end


def _secret_value(value: str) -> bool:
    bare = value.strip()
    return (
        len(bare) >= 8
        and not bare.replace(".", "", 1).replace("_", "").isdigit()
        and bare.lower() not in _NOT_SECRETS
        and not bare.startswith(("$", "[REDACTED", "{{", "<"))
        and not _CODE_REFERENCE.fullmatch(bare)
    )


def _aws_with_key_id(scan: _Scan) -> Iterator[tuple[int, int]]:
    """40-character base64-ish strings only near an AKIA/ASIA key id (git SHAs are plain hex)."""
    text = scan.text
    for key_id in _AWS_KEY_ID.finditer(text):
        if not _starts_token(text, key_id.start()):
            continue
        # the context ends where a text ends (see redact_many)
        low = max(key_id.start() - _AWS_CONTEXT_CHARS, text.rfind(_SEPARATOR, 0, key_id.start()) + 1, 0)
        high = key_id.end() + _AWS_CONTEXT_CHARS
        if (joint := text.find(_SEPARATOR, key_id.end(), high)) >= 0:
            high = joint
        for match in _AWS_SECRET_SHAPE.finditer(text, low, high):
            if re.search(r"[A-Z/+]", match.group()) and re.search(r"[a-z0-9]", match.group()):
                yield match.span()


def _scheme_start(text: str, position: int) -> int:
    """Where the URI scheme ending at `position` starts (`position` itself when there is none)."""
    start = position
    while start and text[start - 1] in _SCHEME_CHARS and not _escape_ends_at(text, start):
        start -= 1
    while start < position and not text[start].isalpha():
        start += 1
    return start


def _uri_credentials(connection: bool) -> Finder:
    """`scheme://user:password@`, tried only where `://` occurs, the scheme read backwards from there."""

    def find(scan: _Scan) -> Iterator[tuple[int, int]]:
        text = scan.text
        for position in scan.at("://"):
            start = _scheme_start(text, position)
            match = _URI_USERINFO.match(text, position)
            is_connection = bool(_CONNECTION_SCHEMES.fullmatch(text[start:position]))
            if match and start < position and is_connection == connection:
                yield match.span(1)

    return find


# Tool-call arguments are indexed as JSON text, where a quote arrives as \" and a line break as \n:
# an escaped quote opens and closes a value like a quote, and \n, \r, \t and \" end a bare value.
_QUOTE = r"(?:\\?[\"'])"
_ESCAPED_VALUE = r'\\"((?:[^"\\\n]|\\(?![nrt"]))*)\\"'
_BARE_VALUE = r"((?:[^\s\"',;(){}\[\]\\]|\\(?![nrt\"]))+)"
_SCHEME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-")
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # os.environ, process.env.TOKEN
_AWS_KEY_ID = re.compile(r"A[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_SHAPE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# Token families, in patterns that start with a literal (see _prefixed). Most prefixes end in "_"
# or "-": one pattern each finds those, starting at the separator and looking back at the prefix
# (one capturing group per alternative tells which prefix it was).
_TOKENS = (
    _prefixed(
        re.compile(
            r"_(?:(?<=gh[pousr]_)([A-Za-z0-9]{30,})|(?<=github_pat_)([A-Za-z0-9_]{30,})"
            r"|(?<=npm_)([A-Za-z0-9]{36})|(?<=hf_)([A-Za-z0-9]{30,})|(?<=shpat_)([a-fA-F0-9]{32})"
            r"|(?<=[rsp]k_live_)([A-Za-z0-9]{20,}))"
        ),
        ("gh?", "github_pat", "npm", "hf", "shpat", "?k_live"),
    ),
    _prefixed(
        re.compile(
            r"-(?:(?<=sk-)((?:ant-|proj-)?[A-Za-z0-9_-]{20,})|(?<=xox[abposr]-)([A-Za-z0-9-]{10,})"
            r"|(?<=glpat-)([A-Za-z0-9_-]{20,})|(?<=pypi-)([A-Za-z0-9_-]{50,}))"
        ),
        ("sk", "xox?", "glpat", "pypi"),
    ),
    _prefixed(re.compile(r"A(?:[KS]IA[A-Z0-9]{16}(?![A-Za-z0-9])|Iza[A-Za-z0-9_-]{35})")),
    _prefixed(re.compile(r"S(?:K[0-9a-f]{32}(?![A-Za-z0-9])|G\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,})")),
)
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}")
_URI_USERINFO = re.compile(r"://[^\s/:@\"'<>]+:([^\s/\"'<>]+)@")
_CONNECTION_SCHEMES = re.compile(r"(?i)postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?")
_ADO_PASSWORD = re.compile(r"(?i)(?<![A-Za-z0-9_])(?:password|pwd)\s*=\s*([^;\r\n\"']+);")
_CURL_USER = re.compile(rf"(?i)\bcurl\b[^\n]*?\s(?:-u\s*|--user(?:\s+|=)){_QUOTE}?[^\s\"':\\]*:([^\s\"'\\]+)")
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})")
_AUTHORIZATION = re.compile(
    rf"(?i)\bauthorization{_QUOTE}?\s*[:=]\s*{_QUOTE}?(?:[A-Za-z0-9-]+\s+)?([^\s\"',;\\]{{8,}})"
)
_AWS_NAMED = re.compile(
    rf"(?i)(?:secret_access_key|(?<=aws_)secret_key){_QUOTE}?\s*[:=]?\s*{_QUOTE}?"
    r"([A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth(?!or)|credential)"
    rf"[A-Za-z0-9_.-]*{_QUOTE}?\s*(?::|=)\s*(?:{_ESCAPED_VALUE}|\"([^\"\n]*)\"|'([^'\n]*)'|{_BARE_VALUE})"
)
_uri_connections = _uri_credentials(connection=True)
_ado_passwords = _anchored(_ADO_PASSWORD, _at("passw", "pwd"))


def _assignment_starts(scan: _Scan) -> set[int]:
    return _at("passw", "pwd", "secret", "token", "auth", "credential")(scan) | _key_names(scan)


def _tokens(scan: _Scan) -> Iterator[tuple[int, int]]:
    for family in _TOKENS:
        yield from family(scan)


def _connection_strings(scan: _Scan) -> Iterator[tuple[int, int]]:
    yield from _uri_connections(scan)
    yield from _ado_passwords(scan)


@dataclass(frozen=True)
class _Rule:
    name: str
    find: Finder
    whole: bool = False  # unbounded (a private key): scanned over the whole text, never per window


# Order breaks ties between spans that start together: the most specific class names the secret.
_RULES = (
    _Rule("private-key", _private_keys, whole=True),
    _Rule("jwt", _prefixed(_JWT)),
    _Rule("token", _tokens),
    _Rule("aws-secret", _anchored(_AWS_NAMED, _at("secret"))),
    _Rule("aws-secret", _aws_with_key_id),
    _Rule("connection-string", _connection_strings),
    _Rule("url-userinfo", _uri_credentials(connection=False)),
    _Rule("curl-user", _anchored(_CURL_USER, _at("curl"))),
    _Rule("auth-header", _anchored(_BEARER, _at("bearer"))),
    _Rule("auth-header", _anchored(_AUTHORIZATION, _at("auth"))),
    _Rule("assignment", _anchored(_ASSIGNMENT, _assignment_starts, _secret_value)),
)


def _windows(text: str) -> Iterator[tuple[int, str]]:
    """(offset, window) pairs covering the text; windows start at line starts and overlap."""
    start = 0
    while (end := start + _SLICE_CHARS) < len(text):
        yield start, text[start : end + _OVERLAP_CHARS]
        newline = text.rfind("\n", start + 1, end)
        start = newline + 1 if newline > start else end
    yield start, text[start:]


def _rule_spans(text: str, offset: int, whole: bool) -> Iterator[tuple[int, int, int, str]]:
    """(start, -end, priority, class) of the windowed rules (or of the whole-text ones) in `text`."""
    scan = _Scan(text)
    for priority, rule in enumerate(_RULES):
        if rule.whole == whole:
            for start, end in rule.find(scan):
                yield offset + start, -(offset + end), priority, rule.name


def _merge(found: list[tuple[int, int, int, str]]) -> list[Span]:
    found.sort()
    merged: list[Span] = []
    for start, neg_end, _, name in found:
        end = -neg_end
        if merged and start < merged[-1][1]:
            last = merged[-1]
            merged[-1] = (last[0], max(last[1], end), last[2])
        else:
            merged.append((start, end, name))
    return merged


def _spans(text: str) -> list[Span]:
    found: list[tuple[int, int, int, str]] = []
    for offset, window in _windows(text):
        found.extend(_rule_spans(window, offset, whole=False))
    found.extend(_rule_spans(text, 0, whole=True))
    return _merge(found)


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
    """`redact` of each text. Short texts are scanned joined by _SEPARATOR, a batch at a time, so
    each keyword costs one substring search per batch instead of one per text."""
    done = [""] * len(texts)
    batch: list[int] = []
    size = 0
    for number, text in enumerate(texts):
        if len(text) >= _BATCH_CHARS:
            done[number] = redact(text)
            continue
        batch.append(number)
        size += len(text) + len(_SEPARATOR)
        if size >= _BATCH_CHARS:
            _redact_joined(texts, batch, done)
            batch, size = [], 0
    _redact_joined(texts, batch, done)
    return done


def _redact_joined(texts: list[str], batch: list[int], done: list[str]) -> None:
    joined = _SEPARATOR.join(texts[number] for number in batch)
    spans = _spans(joined)
    start = 0
    for number in batch:
        end = start + len(texts[number])
        done[number] = _render(joined, spans, start, end) if spans else texts[number]
        start = end + len(_SEPARATOR)


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The part of `text` to scan for the secrets that may reach into text[start:end]: a margin
    around it, widened to the whole of a token-shaped run (a JWT, a key) crossing either edge, and
    back to a private key's BEGIN line whose block is still open at the start."""
    low, high = max(0, start - _SLICE_MARGIN), min(len(text), end + _SLICE_MARGIN)
    head, tail = text[max(0, low - _RUN_REACH) : low], text[high : high + _RUN_REACH]
    low, high = (
        low - len(head) + len(head.rstrip(_RUN_CHARS)),
        high + len(tail) - len(tail.lstrip(_RUN_CHARS)),
    )
    begin = text.rfind("-----BEGIN ", max(0, low - _KEY_REACH), low)
    if begin >= 0 and text.find("-----END ", begin, low) < 0:
        low = begin
    return low, high


def redact_slices(pieces: list[tuple[str, int, int]]) -> list[str]:
    """For each (text, start, end), the redacted form of text[start:end]: what `redact(text)` shows
    there, a secret cut by either edge shown as its marker. Only the neighbourhood of each slice is
    scanned (see _widen), all of them joined as in `redact_many`, so long texts cost no more than
    short ones."""
    windows = [_widen(text, start, end) for text, start, end in pieces]
    joined = _SEPARATOR.join(
        text[low:high] for (text, _, _), (low, high) in zip(pieces, windows, strict=True)
    )
    spans = _merge([*_rule_spans(joined, 0, whole=False), *_rule_spans(joined, 0, whole=True)])
    done = []
    offset = 0
    for (text, start, end), (low, high) in zip(pieces, windows, strict=True):
        own = [
            (s - offset + low, e - offset + low, name)
            for s, e, name in spans
            if offset <= s < offset + high - low
        ]
        done.append(_render(text, own, max(0, start), min(len(text), end)))
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
