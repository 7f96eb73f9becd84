"""One value remembered with the key it was computed for: the caching idiom of the instance.

A memo is asked with the key its value depends on (a version counter, a generation, the
arguments that matter) and computes the value again only when that key moves.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar, cast

__all__ = ["Memo"]

V = TypeVar("V")
_UNSET = object()  # equal to no key, so the first `get` always computes


class Memo(Generic[V]):
    def __init__(self) -> None:
        self._key: Hashable = _UNSET
        self._value: V | None = None

    @property
    def last(self) -> V | None:
        """The value computed last, None before the first."""
        return self._value

    def get(self, key: Hashable, compute: Callable[[], V], rekey: Callable[[], Hashable] | None = None) -> V:
        """The value for `key`: the remembered one while the key is the same, else computed now.
        `rekey` reads the key again after computing, for a computation that moves its own key."""
        if key != self._key:
            self._value = compute()
            self._key = key if rekey is None else rekey()
        return cast(V, self._value)
