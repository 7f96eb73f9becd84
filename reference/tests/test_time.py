"""Time as the index keeps it: `is_canonical` says what rendering the milliseconds would say."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from pimem._time import MAX_MS, MIN_MS, canonical_timestamp, epoch_ms, is_canonical

_INSIDE = st.integers(MIN_MS + 1, MAX_MS - 1)


def _week_date(ms: int) -> str:
    """The same moment with an ISO week date: Pi's shape, which Python parses to the same instant."""
    moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    year, week, day = moment.isocalendar()
    return f"{year:04d}-W{week:02d}-{day}" + canonical_timestamp(ms)[10:]


@given(_INSIDE)
def test_pi_s_rendering_of_a_moment_inside_the_range_is_canonical(ms: int) -> None:
    stamp = canonical_timestamp(ms)
    assert epoch_ms(stamp) == ms and is_canonical(stamp, ms)


@given(_INSIDE)
def test_an_iso_week_date_is_not_canonical_although_it_parses_to_the_moment(ms: int) -> None:
    stamp = _week_date(ms)
    assert epoch_ms(stamp) == ms and not is_canonical(stamp, ms)


@given(_INSIDE, st.integers(0, 23), st.sampled_from("0123456789-:.TWZ+ "))
def test_whatever_is_called_canonical_is_the_rendering_of_its_milliseconds(
    ms: int, position: int, character: str
) -> None:
    rendered = canonical_timestamp(ms)
    stamp = rendered[:position] + character + rendered[position + 1 :]  # one character changed
    parsed = epoch_ms(stamp) or 0
    inside = MIN_MS < parsed < MAX_MS  # at the range's ends a rendering may stand for a clamped moment
    assert is_canonical(stamp, parsed) == (inside and canonical_timestamp(parsed) == stamp)


def test_moments_clamped_to_the_range_are_not_canonical() -> None:
    for stamp in ("1969-12-31T23:59:59.999Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"):
        assert not is_canonical(stamp, epoch_ms(stamp) or 0)
