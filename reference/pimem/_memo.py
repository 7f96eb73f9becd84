"""The caching idioms, each owned by the object whose data it caches.

A `Memo` is one value remembered with the key it was computed for (a version counter, a
generation, the arguments that matter); it computes the value again only when that key moves.
A `SizedCache` keeps many values, least recently used out first, within a budget of characters.
A `PureMemo` remembers a pure function's values on a hot path, within a bounded size.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

__all__ = ["Memo", "PureMemo", "SizedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
A = TypeVar("A", str, bytes)
_UNSET = object()  # equal to no key, so the first `get` always computes


class Memo(Generic[V]):
    def __init__(self) -> None:
        self._key: Hashable = _UNSET
        self._value: V | None = None

    def get(self, key: Hashable, compute: Callable[[], V], rekey: Callable[[], Hashable] | None = None) -> V:
        """The value for `key`: the remembered one while the key is the same, else computed now.
        `rekey` reads the key again after computing, for a computation that moves its own key."""
        if key != self._key:
            self._value = compute()
            self._key = key if rekey is None else rekey()
        return cast(V, self._value)


class SizedCache(Generic[K]):
    """Texts by key, the least recently used dropped once their sizes pass `budget` (the newest is
    always kept). The running total makes an insert O(1) plus what it evicts."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._texts: OrderedDict[K, tuple[int, str]] = OrderedDict()
        self._total = 0

    def get(self, key: K, size: int, compute: Callable[[], str]) -> str:
        """The text for `key`, computed (and charged `size`) when it is not held."""
        held = self._texts.get(key)
        if held is not None:
            self._texts.move_to_end(key)
            return held[1]
        text = compute()
        self._texts[key] = (size, text)
        self._total += size
        while self._total > self.budget and len(self._texts) > 1:
            self._total -= self._texts.popitem(last=False)[1][0]
        return text


class PureMemo(dict[A, V]):
    """A pure function's values by argument, for a hot path: a hit is one dict lookup, in C (an
    `lru_cache` hit costs about 2.5 times as much). A miss computes the value and keeps it; all are
    forgotten at once when `size` are kept, and an argument longer than `longest` is computed each
    time, never kept (a blob would hold memory for a value seen once). The sizes change no answer."""

    def __init__(self, compute: Callable[[A], V], size: int = 1 << 14, longest: int = 64) -> None:
        super().__init__()
        self._compute: Callable[[A], V] = compute
        self.size, self.longest = size, longest

    def __missing__(self, key: A) -> V:
        value = self._compute(key)
        if len(key) <= self.longest:
            if len(self) >= self.size:
                self.clear()
            self[key] = value
        return value
