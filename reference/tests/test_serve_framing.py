"""`pimem serve`'s request framing: integers of any size stay exact up to the interpreter's own
digit limit (read, not copied), and a number past it becomes a float instead of an exception."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from pimem._serve import decode_request


@pytest.fixture
def digit_limit() -> Iterator[None]:
    before = sys.get_int_max_str_digits()
    yield
    sys.set_int_max_str_digits(before)


def test_a_number_within_the_digit_limit_stays_an_exact_integer(digit_limit: None) -> None:
    sys.set_int_max_str_digits(5000)
    digits = "9" * 5000
    assert decode_request(f'{{"seq": {digits}}}'.encode()) == {"seq": int(digits)}


def test_a_number_past_the_digit_limit_becomes_a_float(digit_limit: None) -> None:
    sys.set_int_max_str_digits(5000)
    seq = decode_request(('{"seq": ' + "9" * 5001 + "}").encode())["seq"]
    assert isinstance(seq, float) and seq == float("inf")


def test_no_digit_limit_keeps_every_integer_exact(digit_limit: None) -> None:
    sys.set_int_max_str_digits(0)  # 0: the interpreter has no limit
    digits = "7" * 6000
    assert decode_request(f'{{"seq": {digits}}}'.encode()) == {"seq": int(digits)}
