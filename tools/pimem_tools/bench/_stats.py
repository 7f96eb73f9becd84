"""Percentiles and throughputs, the only arithmetic the report needs."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MB", "mb_per_s", "percentile"]

MB = 1_000_000  # throughputs and sizes are decimal megabytes, as the MB/s figures are


def percentile(samples: Sequence[float], fraction: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), for 0 <= fraction <= 1."""
    if not samples:
        raise ValueError("percentile of no samples")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * fraction
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def mb_per_s(byte_count: int, seconds: float) -> float:
    return byte_count / MB / seconds
