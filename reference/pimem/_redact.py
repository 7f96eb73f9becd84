"""Secret redaction: every class finds spans in the original text, then one pass writes the markers.

Each rule has cheap literal prefilters (plain substring tests) so text without a hint of a secret
never reaches a regex. Text longer than one slice is scanned in line-aligned windows that overlap,
so a secret straddling a window boundary is still found whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["redact", "redact_tree"]

_SLICE_CHARS = 1 << 20
_OVERLAP_CHARS = 1 << 16
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

Span = tuple[int, int, str]


@dataclass(frozen=True)
class _Rule:
    name: str
    folded: tuple[str, ...]  # literals searched in the lower-cased text
    exact: tuple[str, ...]  # literals searched case-sensitively
    find: Callable[[str], Iterator[tuple[int, int]]]
    whole: bool = False  # scanned over the whole text (a linear str.find scan), never per window

    def spans(self, text: str, lower: str) -> Iterator[Span]:
        if any(lit in lower for lit in self.folded) or any(lit in text for lit in self.exact):
            for start, end in self.find(text):
                if end > start:
                    yield start, end, self.name


def _groups(
    pattern: re.Pattern[str], accept: Callable[[str], bool] = bool
) -> Callable[[str], Iterator[tuple[int, int]]]:
    """Spans of the last participating group of every match whose value passes `accept`."""

    def find(text: str) -> Iterator[tuple[int, int]]:
        for match in pattern.finditer(text):
            group = match.lastindex or 0
            if accept(match.group(group)):
                yield match.span(group)

    return find


def _anchored(
    pattern: re.Pattern[str], keywords: tuple[str, ...], accept: Callable[[str], bool]
) -> Callable[[str], Iterator[tuple[int, int]]]:
    """Like _groups for a pattern that starts with one of `keywords`: the regex is tried only where a
    keyword occurs (found by str.find), never at every position of the text."""
    scan = _groups(pattern, accept)

    def find(text: str) -> Iterator[tuple[int, int]]:
        lower = text.lower()
        if len(lower) != len(text):  # rare case-mappings change lengths; positions would not line up
            yield from scan(text)
            return
        starts = set()
        for keyword in keywords:
            position = lower.find(keyword)
            while position >= 0:
                starts.add(position)
                position = lower.find(keyword, position + 1)
        for start in sorted(starts):
            match = pattern.match(text, start)
            if match is not None and accept(match.group(match.lastindex or 0)):
                yield match.span(match.lastindex or 0)

    return find


def _private_keys(text: str) -> Iterator[tuple[int, int]]:
    """PEM private-key blocks; an unterminated block runs to the end of the text."""
    pos = 0
    while (begin := text.find("-----BEGIN ", pos)) >= 0:
        header_end = text.find("-----", begin + 11)
        label = text[begin + 11 : header_end] if header_end >= 0 else ""
        if header_end < 0 or "\n" in label or not label.endswith("PRIVATE KEY"):
            pos = begin + 11
            continue
        footer = text.find(f"-----END {label}-----", header_end)
        end = len(text) if footer < 0 else footer + len(label) + 14
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


def _aws_with_key_id(text: str) -> Iterator[tuple[int, int]]:
    """40-character base64-ish strings only near an AKIA/ASIA key id (git SHAs are plain hex)."""
    for key_id in _AWS_KEY_ID.finditer(text):
        low = max(0, key_id.start() - _AWS_CONTEXT_CHARS)
        for match in _AWS_SECRET_SHAPE.finditer(text, low, key_id.end() + _AWS_CONTEXT_CHARS):
            if re.search(r"[A-Z/+]", match.group()) and re.search(r"[a-z0-9]", match.group()):
                yield match.span()


# Tool-call arguments are indexed as JSON text, where a quote arrives as \" and a line break as \n:
# an escaped quote opens and closes a value like a quote, and \n, \r, \t and \" end a bare value.
_QUOTE = r"(?:\\?[\"'])"
_ESCAPED_VALUE = r'\\"((?:[^"\\\n]|\\(?![nrt"]))*)\\"'
_BARE_VALUE = r"((?:[^\s\"',;(){}\[\]\\]|\\(?![nrt\"]))+)"
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # os.environ, process.env.TOKEN
_AWS_KEY_ID = re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_SHAPE = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:sk-ant-[A-Za-z0-9_-]{20,}|sk-proj-[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])|AIza[A-Za-z0-9_-]{35}|glpat-[A-Za-z0-9_-]{20,}"
    r"|npm_[A-Za-z0-9]{36}|pypi-[A-Za-z0-9_-]{50,}|hf_[A-Za-z0-9]{30,}"
    r"|SK[0-9a-f]{32}(?![A-Za-z0-9])|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}|shpat_[a-fA-F0-9]{32}|(?:rk|sk|pk)_live_[A-Za-z0-9]{20,})"
)
_JWT = re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{8,}")
_URI_CREDENTIALS = re.compile(r"\b([a-zA-Z][a-zA-Z0-9+.-]*)://[^\s/:@\"'<>]+:([^\s/\"'<>]+)@")
_CONNECTION_SCHEMES = re.compile(r"(?i)postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?")
_ADO_PASSWORD = re.compile(r"(?i)(?<![A-Za-z0-9_])(?:password|pwd)\s*=\s*([^;\r\n\"']+);")
_CURL_USER = re.compile(rf"\bcurl\b[^\n]*?\s(?:-u\s*|--user(?:\s+|=)){_QUOTE}?[^\s\"':\\]*:([^\s\"'\\]+)")
_BEARER = re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})")
_AUTHORIZATION = re.compile(
    rf"(?i)\bauthorization{_QUOTE}?\s*[:=]\s*{_QUOTE}?(?:[A-Za-z0-9-]+\s+)?([^\s\"',;\\]{{8,}})"
)
_AWS_NAMED = re.compile(
    r"(?i)(?:aws_secret_access_key|secret_access_key|aws_secret_key)"
    rf"{_QUOTE}?\s*[:=]?\s*{_QUOTE}?([A-Za-z0-9/+=]{{40}})(?![A-Za-z0-9/+=])"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|auth(?!or)|credential)"
    rf"[A-Za-z0-9_.-]*{_QUOTE}?\s*(?::|=)\s*(?:{_ESCAPED_VALUE}|\"([^\"\n]*)\"|'([^'\n]*)'|{_BARE_VALUE})"
)


def _uri_credentials(connection: bool) -> Callable[[str], Iterator[tuple[int, int]]]:
    def find(text: str) -> Iterator[tuple[int, int]]:
        for match in _URI_CREDENTIALS.finditer(text):
            if bool(_CONNECTION_SCHEMES.fullmatch(match.group(1))) == connection:
                yield match.span(2)

    return find


def _connection_strings(text: str) -> Iterator[tuple[int, int]]:
    yield from _uri_credentials(connection=True)(text)
    for match in _ADO_PASSWORD.finditer(text):
        yield match.span(1)


_ASSIGNMENT_KEYS = (
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "api",
    "access",
    "private",
    "auth",
    "credential",
)

# Order breaks ties between spans that start together: the most specific class names the secret.
_RULES = (
    _Rule("private-key", ("private key",), (), _private_keys, whole=True),
    _Rule("jwt", (), ("eyJ",), _groups(_JWT)),
    _Rule(
        "token",
        (),
        (
            "sk-",
            "ghp_",
            "gho_",
            "ghu_",
            "ghs_",
            "ghr_",
            "github_pat_",
            "xox",
            "AKIA",
            "ASIA",
            "AIza",
            "glpat-",
            "npm_",
            "pypi-",
            "hf_",
            "SK",
            "SG.",
            "shpat_",
            "_live_",
        ),
        _groups(_TOKEN),
    ),
    _Rule("aws-secret", ("secret_access_key", "aws_secret_key"), (), _groups(_AWS_NAMED)),
    _Rule("aws-secret", (), ("AKIA", "ASIA"), _aws_with_key_id),
    _Rule("connection-string", ("://", "password", "pwd"), (), _connection_strings),
    _Rule("url-userinfo", ("://",), (), _uri_credentials(connection=False)),
    _Rule("curl-user", ("curl",), (), _groups(_CURL_USER)),
    _Rule("auth-header", ("bearer",), (), _groups(_BEARER)),
    _Rule("auth-header", ("authorization",), (), _groups(_AUTHORIZATION)),
    _Rule("assignment", _ASSIGNMENT_KEYS, (), _anchored(_ASSIGNMENT, _ASSIGNMENT_KEYS, _secret_value)),
)


def _windows(text: str) -> Iterator[tuple[int, str]]:
    """(offset, window) pairs covering the text; windows start at line starts and overlap."""
    if len(text) <= _SLICE_CHARS:
        yield 0, text
        return
    start = 0
    while start < len(text):
        end = start + _SLICE_CHARS
        if end >= len(text):
            yield start, text[start:]
            return
        yield start, text[start : end + _OVERLAP_CHARS]
        newline = text.rfind("\n", start + 1, end)
        start = newline + 1 if newline > start else end


def _spans(text: str) -> list[Span]:
    found: list[tuple[int, int, int, str]] = []
    windows = list(_windows(text))
    for offset, window in windows:
        lower = window.lower()
        for priority, rule in enumerate(_RULES):
            if rule.whole and len(windows) > 1:
                continue
            found.extend(
                (offset + s, -(offset + e), priority, name) for s, e, name in rule.spans(window, lower)
            )
    if len(windows) > 1:
        whole = [(priority, rule) for priority, rule in enumerate(_RULES) if rule.whole]
        lower = text.lower()
        for priority, rule in whole:
            found.extend((s, -e, priority, name) for s, e, name in rule.spans(text, lower))
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


def redact(text: str) -> str:
    """The text with every secret replaced by `[REDACTED:<class>]`."""
    spans = _spans(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end, name in spans:
        out.append(text[pos:start])
        out.append(f"[REDACTED:{name}]")
        pos = end
    out.append(text[pos:])
    return "".join(out)


def redact_tree(value: Any) -> Any:
    """Redact every string inside a JSON-like value (the last step before anything is returned)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [redact_tree(item) for item in value]
    if isinstance(value, dict):
        return {key: redact_tree(item) for key, item in value.items()}
    return value
