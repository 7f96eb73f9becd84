"""dumps_like_js writes what JSON.stringify writes (expected strings are Node 20's output)."""

from __future__ import annotations

import math

import pytest
from pimem_conformance import dumps_like_js, js_number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (-3.5, "-3.5"),
        (0.1, "0.1"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001234, "0.000001234"),
        (2.0**60, "1152921504606847000"),
        (2**53, "9007199254740992"),
        (12345678901234567890, "12345678901234567000"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (math.nan, "null"),
        (math.inf, "null"),
        (10**400, "null"),
    ],
)
def test_numbers_format_like_javascript(value: float, expected: str) -> None:
    assert js_number(value) == expected


def test_strings_escape_only_what_json_stringify_escapes() -> None:
    text = 'q"b\\s\n\t\x00\x1f\x7f\u2028é😀/\ud800'
    assert dumps_like_js(text) == '"q\\"b\\\\s\\n\\t\\u0000\\u001f\x7f\u2028é😀/\\ud800"'


def test_objects_are_compact_and_keep_key_order() -> None:
    value = {"z": [1, True, None, {"a": "x"}], "a": False}
    assert dumps_like_js(value) == '{"z":[1,true,null,{"a":"x"}],"a":false}'


def test_non_json_values_are_refused_with_their_type() -> None:
    with pytest.raises(TypeError, match="set"):
        dumps_like_js({"a": {1, 2}})
    with pytest.raises(TypeError, match="keys must be strings"):
        dumps_like_js({1: "a"})
