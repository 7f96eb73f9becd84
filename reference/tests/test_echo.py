"""Caller values echoed in error messages: short, printable and redacted, whatever they are (issue 19)."""

from __future__ import annotations

from typing import Any

import pytest
from pimem._echo import ECHO_CHARS, echo
from pimem._query import ToolError
from pimem._tool import validate

TOKEN = "ghp_" + "Zq7" * 12  # a GitHub token shape the redactor knows


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2**63, "9223372036854775808"),
        (-(2**64) - 1, "-18446744073709551617"),
        pytest.param(10**5000, "<an integer of about 5001 digits>", id="10**5000"),
        (-(10**80), "-<an integer of about 81 digits>"),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (0.5, "0.5"),
        (None, "null"),
        (True, "true"),
        ("gizmo", '"gizmo"'),
        ("\ud800x", '"\\ud800x"'),
        (_nested(10_000), "[[[…]]]"),
        ({"a": {"b": {"c": 1}}}, '{"a": {"b": {…}}}'),
        (list(range(100)), "[0, 1, 2, …]"),
    ],
)
def test_every_value_renders_short_and_without_raising(value: Any, shown: str) -> None:
    assert echo(value) == shown


def test_a_long_string_is_cut_and_a_secret_in_it_redacted_before_the_cut() -> None:
    assert echo("x" * 1_000_000) == '"' + "x" * (ECHO_CHARS - 2) + "…"
    # the token straddles the cut: redacted whole first, so not one window of it is shown
    shown = echo("y" * 50 + " " + TOKEN)
    assert len(shown) == ECHO_CHARS and shown.endswith(" [REDACT…") and "ghp_" not in shown


@pytest.mark.parametrize("name", ["offset", "limit", "before", "after"])
@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), float("-inf"), 2**64, -(2**63) - 1, pytest.param(10**5000, id="10**5000")],
)
def test_every_integer_parameter_refuses_hostile_numbers_with_a_capped_message(name: str, value: Any) -> None:
    arguments = {"action": "around", "entryId": "a1b2c3d4", name: value}
    if name == "offset" and isinstance(value, int) and value > 0:
        assert validate(arguments, "UTC").offset == value  # in range: read answers bad_offset later
        return
    with pytest.raises(ToolError) as raised:
        validate(arguments, "UTC")
    assert raised.value.code == "bad_argument"
    assert f'"{name}"' in raised.value.message
    assert len(raised.value.message) < 300
