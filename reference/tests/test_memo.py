"""The caches: a Memo computes again only when its key moves; a SizedCache keeps its texts within a
budget, least recently used out first, and always keeps the newest; a PureMemo keeps a bounded
number of a function's values."""

from __future__ import annotations

from pimem._memo import Memo, PureMemo, SizedCache


def test_a_memo_computes_once_per_key_and_again_when_the_key_moves() -> None:
    memo: Memo[list[int]] = Memo()
    calls: list[int] = []
    assert memo.get(1, lambda: calls.append(1) or [1]) == [1]
    assert memo.get(1, lambda: calls.append(2) or [2]) == [1]
    assert memo.get(2, lambda: calls.append(3) or [3]) == [3]
    assert calls == [1, 3]


def test_rekey_remembers_the_key_as_it_is_after_computing() -> None:
    state = {"version": 0}
    memo: Memo[str] = Memo()

    def compute() -> str:
        state["version"] += 1  # computing moves the key, as indexing on the way does
        return f"v{state['version']}"

    assert memo.get(state["version"], compute, rekey=lambda: state["version"]) == "v1"
    assert memo.get(state["version"], compute, rekey=lambda: state["version"]) == "v1"
    assert memo.get(0, compute) == "v2"  # a plain get remembers the key it was asked with


def test_a_sized_cache_drops_the_least_recently_used_past_its_budget() -> None:
    cache: SizedCache[str] = SizedCache(10)
    computed: list[str] = []

    def text(key: str) -> str:
        return cache.get(key, 4, lambda: computed.append(key) or key.upper())

    assert [text("a"), text("b")] == ["A", "B"]
    assert text("a") == "A"  # a is used again, so b is now the oldest
    text("c")  # 12 > 10: b goes
    assert computed == ["a", "b", "c"]
    text("a")
    assert computed == ["a", "b", "c"]
    text("b")
    assert computed == ["a", "b", "c", "b"]


def test_a_sized_cache_keeps_the_newest_text_even_over_budget() -> None:
    cache: SizedCache[str] = SizedCache(3)
    assert cache.get("big", 100, lambda: "BIG") == "BIG"
    assert cache.get("big", 100, lambda: "again") == "BIG"
    assert cache.get("next", 1, lambda: "NEXT") == "NEXT"
    assert cache.get("big", 100, lambda: "again") == "again"  # it went when next came in


def test_a_pure_memo_computes_a_value_once_and_forgets_all_when_full() -> None:
    calls: list[str] = []
    memo: PureMemo[str, int] = PureMemo(lambda key: calls.append(key) or len(key), size=2)
    assert [memo["ab"], memo["ab"], memo["abc"]] == [2, 2, 3]
    assert calls == ["ab", "abc"]
    assert memo["abcd"] == 4  # the third value: the two kept are forgotten first
    assert dict(memo) == {"abcd": 4}
    assert memo["ab"] == 2
    assert calls == ["ab", "abc", "abcd", "ab"]


def test_a_pure_memo_never_keeps_a_long_argument() -> None:
    calls: list[bytes] = []
    memo: PureMemo[bytes, int] = PureMemo(lambda key: calls.append(key) or len(key), longest=3)
    assert [memo[b"abcd"], memo[b"abcd"], memo[b"abc"], memo[b"abc"]] == [4, 4, 3, 3]
    assert calls == [b"abcd", b"abcd", b"abc"]
    assert dict(memo) == {b"abc": 3}
