"""Caller input shown back in an error message: always a short, printable string, whatever it is.

An error names the value that was wrong, but that value comes from the caller and can be anything a
transport carries: an integer of thousands of digits, NaN, a structure nested ten thousand deep, a
megabyte string, a lone surrogate. Rendering must never raise and never grow with the input.
Strings are redacted before they are cut: a cut could leave a piece of a secret too short to be found.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from itertools import islice

from ._redact import redact

__all__ = ["ECHO_CHARS", "echo", "quoted"]

ECHO_CHARS = 60  # what a message shows of one value at most
_DIGITS_SHOWN = 40  # an integer longer than this is described, not written out
_ITEMS_SHOWN = 3  # of an array or object, before "…"
_DEPTH_SHOWN = 2  # levels of nesting written out
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def echo(value: object) -> str:
    """`value` as JSON-like text of at most ECHO_CHARS characters (cut ones end with "…")."""
    text = _render(value, 0)
    return text if len(text) <= ECHO_CHARS else text[: ECHO_CHARS - 1] + "…"


def _render(value: object, depth: int) -> str:
    if value is None or isinstance(value, bool | float):
        return json.dumps(value)  # a float as repr() writes it, or NaN, Infinity, -Infinity
    if isinstance(value, int):
        return _render_integer(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Mapping):
        if depth >= _DEPTH_SHOWN:
            return "{…}"
        shown = islice(value.items(), _ITEMS_SHOWN)
        items = [f"{_string(str(key))}: {_render(item, depth + 1)}" for key, item in shown]
        return "{" + ", ".join(items) + (", …" if len(value) > _ITEMS_SHOWN else "") + "}"
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        if depth >= _DEPTH_SHOWN:
            return "[…]"
        items = [_render(item, depth + 1) for item in islice(value, _ITEMS_SHOWN)]
        return "[" + ", ".join(items) + (", …" if len(value) > _ITEMS_SHOWN else "") + "]"
    return f"<{type(value).__name__}>"


def _render_integer(value: int) -> str:
    # str() of an integer beyond 4,300 digits raises, and a long one says nothing more than its size.
    digits = math.floor(value.bit_length() * math.log10(2)) + 1
    if digits <= _DIGITS_SHOWN:
        return str(value)
    return f"{'-' if value < 0 else ''}<an integer of about {digits} digits>"


def quoted(text: str) -> str:
    """`text` whole as a JSON string, lone surrogates escaped (a query shown back beside its results)."""
    text = json.dumps(text, ensure_ascii=False)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _string(value: str) -> str:
    return quoted(redact(value)[: ECHO_CHARS * 2])  # redacted whole before the cut: no cut hides a secret
