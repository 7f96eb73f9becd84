"""Time as the index keeps it: milliseconds since 1970, Pi's timestamp rendering, and day rowids.

Entry rowids order by day: the UTC day of the timestamp, shifted left by DAY_SHIFT bits, plus a
sequence number within the day. So "the newest" and date bounds are reverse scans and rowid ranges,
while rowids within a day stay dense (FTS5 stores rowid deltas; millisecond rowids would make its
doclists five times bigger).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

__all__ = [
    "DAY_MS",
    "DAY_SHIFT",
    "MAX_MS",
    "MIN_MS",
    "canonical_timestamp",
    "day_of_rowid",
    "day_rowids",
    "entry_ms",
    "epoch_ms",
    "is_canonical",
    "iso_utc",
    "rowids_of_day",
]

DAY_SHIFT = 24  # up to 16 million lines a day
DAY_MS = 86_400_000
MIN_MS = 0  # timestamps are clamped to 1970..4199
MAX_MS = (1 << 46) - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MS = timedelta(milliseconds=1)


def epoch_ms(timestamp: str) -> int | None:
    """A timestamp with a zone (or UTC without) as milliseconds since 1970, clamped; None if unparsable."""
    try:
        moment = datetime.fromisoformat(timestamp)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return min(max((moment - _EPOCH) // _ONE_MS, MIN_MS), MAX_MS)


# The one form of an entry's timestamp that is read as a time (JM-JOURNAL-020): an extended calendar
# date and time with seconds, an optional fraction and an optional zone. A week or ordinal date, the
# basic format, a space for `T` or a time without seconds is no time (fromisoformat takes them all).
_ENTRY_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?", re.ASCII)


def entry_ms(timestamp: str) -> int:
    """An entry's timestamp as milliseconds since 1970, clamped; 0 (1970) when it is not in the form
    JM-JOURNAL-020 reads."""
    if not _ENTRY_TIMESTAMP.fullmatch(timestamp):
        return 0
    return epoch_ms(timestamp) or 0


def is_canonical(timestamp: str, ms: int) -> bool:
    """Whether `timestamp`, which `epoch_ms` made `ms`, is `canonical_timestamp(ms)`, checked without
    rendering it: the shape Pi writes (2026-11-20T10:00:00.000Z) with a calendar date, not an ISO week
    date (2026-W47-5), and a moment inside the range `ms` is clamped to."""
    return (
        len(timestamp) == 24
        and timestamp[4] == timestamp[7] == "-"
        and timestamp[10] == "T"
        and timestamp[19] == "."
        and timestamp[23] == "Z"
        and MIN_MS < ms < MAX_MS
    )


def canonical_timestamp(ms: int) -> str:
    """Milliseconds as Pi writes timestamps (ISO UTC, milliseconds, `Z`)."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def iso_utc(moment: datetime) -> str:
    """A moment in the same rendering (lease times, gc previews)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def rowids_of_day(day: int) -> tuple[int, int]:
    """The first and last rowid a day (days since 1970) can have."""
    return day << DAY_SHIFT, ((day + 1) << DAY_SHIFT) - 1


def day_of_rowid(rowid: int) -> int:
    return rowid >> DAY_SHIFT


def day_rowids(first_ms: int, last_ms: int) -> tuple[int, int]:
    """The rowids of the days from the one of `first_ms` to the one of `last_ms` (inclusive)."""
    return rowids_of_day(first_ms // DAY_MS)[0], rowids_of_day(last_ms // DAY_MS)[1]
