"""What the model has in its context right now, as Pi builds it from the current leaf.

Search leaves these entries out: they are already in front of the model. The set is computed per
call from the current journal's tree as the index holds it (its lines' ids, parents, kinds and
pointers) and is never stored, so several Pi processes on one project, each at its own leaf, all
stay correct. Pi's `buildSessionContext`: walk `parentId` from the leaf (the last line of a
repeated id); the last compaction C on that path keeps itself, the path after it, and the path
before it from its `firstKeptEntryId` on (nothing before it when that id is C's own, missing or not
on the path); the last `context_edit` of a target in that range decides the target's fate. An entry
counts as the pair (entry id, timestamp), so the copies /fork, /clone and /export make in other
journals are left out with it.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._journals import parse_line, read_line_at
from ._memo import Memo
from ._store import EntryRow, Store

__all__ = ["InContext", "in_context"]

InContext = frozenset[tuple[str, int]]  # (entry id, timestamp in ms) of each entry in the context

# kinds of entries Pi sends to the model (a compaction only when it is C, a bash entry unless it is
# excluded from the context, a context_edit only as the replacement that decides its target)
_SENT = frozenset({"user", "assistant", "tool_result", "bash", "custom", "custom_message", "branch_summary"})

_LAST: Memo[InContext] = Memo()


def in_context(store: Store, file_id: int | None, leaf_id: str | None, generation: object) -> InContext:
    """The entries in the model's context at `leaf_id` in the journal `file_id` (none without a leaf
    or a journal), remembered while the index and the leaf stay the same."""
    if file_id is None or leaf_id is None:
        return frozenset()
    key = (id(store), generation, file_id, leaf_id)
    return _LAST.get(key, lambda: _compute(store, file_id, leaf_id))


def _path(lines: list[EntryRow], leaf_id: str) -> list[EntryRow]:
    """The lines from the root to the leaf: each id's last line, stopping at null, an unknown id or a
    cycle."""
    by_id = {line.entry_id: line for line in lines}  # in file order: the last line of an id wins
    path: list[EntryRow] = []
    seen: set[str] = set()
    key: str | None = leaf_id
    while key is not None and key in by_id and key not in seen:
        seen.add(key)
        line = by_id[key]
        path.append(line)
        key = line.parent_id
    path.reverse()
    return path


def _line(row: EntryRow) -> dict[str, object]:
    raw = read_line_at(row.path, row.offset, row.length)
    obj = parse_line(raw) if raw is not None else None
    return obj if isinstance(obj, dict) and obj.get("id") == row.entry_id else {}


def _kept(path: list[EntryRow]) -> list[EntryRow]:
    """The part of the path in the context: all of it, or from the last compaction's kept range on."""
    at = next((n for n in range(len(path) - 1, -1, -1) if path[n].kind == "compaction"), None)
    if at is None:
        return path
    first = _line(path[at]).get("firstKeptEntryId")
    start = next((n for n in range(at) if path[n].entry_id == first), at)
    return [path[at], *path[start:at], *path[at + 1 :]]


def _sent(row: EntryRow) -> bool:
    if row.kind not in _SENT:
        return False
    if row.kind == "bash":
        message = _line(row).get("message")
        return not (isinstance(message, dict) and message.get("excludeFromContext") is True)
    return True


def _compute(store: Store, file_id: int, leaf_id: str) -> InContext:
    kept = _kept(_path(store.lines(file_id), leaf_id))
    if not kept:
        return frozenset()
    compaction = kept[0] if kept[0].kind == "compaction" else None
    offsets = {row.offset for row in kept}
    decided: dict[str, tuple[str, bool]] = {}  # target → (the deciding edit's id, replaced)
    for edit in store.context_edits(file_id, sorted({row.entry_id for row in kept})):
        if edit.offset in offsets and edit.target_id not in decided:  # the last on the path first
            decided[edit.target_id] = (edit.edit_id, edit.replaced)
    replacements = {edit_id for edit_id, replaced in decided.values() if replaced}
    shown: Iterable[EntryRow] = (
        row
        for row in kept
        if row.entry_id not in decided
        and (row is compaction or _sent(row) or (row.kind == "context_edit" and row.entry_id in replacements))
    )
    return frozenset((row.entry_id, row.ms) for row in shown)
