"""Serialise JSON exactly as JavaScript's `JSON.stringify(value)` does (no indentation).

Pi writes every journal line with `JSON.stringify`, so byte-exact journals (fixtures, inline
case lines) need the same output: no spaces, key order as given, raw UTF-8 (only `"`, `\\` and
control characters escaped; lone surrogates as `\\udxxx`), and numbers formatted the way
`Number.prototype.toString` formats them (`1e+21`, `1e-7`, `100000000000000000000`, `-0` as `0`,
NaN and infinities as `null`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence

__all__ = ["dumps_like_js", "js_number"]

_MAX_SAFE_INTEGER = 2**53
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# The stdlib's non-ASCII-preserving escaper escapes exactly what JSON.stringify escapes.
_escape_string = json.encoder.encode_basestring


def _quote(text: str) -> str:
    quoted: str = _escape_string(text)
    if _LONE_SURROGATE.search(quoted):
        # Well-formed JSON.stringify (ES2019) escapes unpaired surrogates instead of emitting them.
        quoted = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)
    return quoted


def js_number(value: float | int) -> str:
    """Format a number as JavaScript's `String(number)` does (what JSON.stringify writes)."""
    if isinstance(value, int):
        if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER:
            return str(value)
        try:
            value = float(value)  # what JSON.parse would have made of it
        except OverflowError:
            return "null"
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr() gives the shortest round-tripping digits, the same digits JavaScript picks.
    mantissa, _, exponent_text = repr(abs(value)).partition("e")
    integer_part, _, fraction_part = mantissa.partition(".")
    if fraction_part == "0":
        fraction_part = ""
    all_digits = (integer_part + fraction_part).lstrip("0")
    digits = all_digits.rstrip("0")
    scale = int(exponent_text or "0") - len(fraction_part) + (len(all_digits) - len(digits))
    k = len(digits)
    n = scale + k  # value = 0.digits * 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        exponent = n - 1
        exponent_sign = "+" if exponent >= 0 else "-"
        head = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{head}e{exponent_sign}{abs(exponent)}"
    return sign + text


def _write(value: object, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, int | float):
        out.append(js_number(value))
    elif isinstance(value, Mapping):
        out.append("{")
        first = True
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {type(key).__name__}: {key!r}")
            if not first:
                out.append(",")
            first = False
            out.append(_quote(key))
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot serialise {type(value).__name__} as JSON: {value!r}")


def dumps_like_js(value: object) -> str:
    """`JSON.stringify(value)` for JSON-shaped Python values (dict, list, str, int, float, bool, None)."""
    out: list[str] = []
    _write(value, out)
    return "".join(out)
