"""The user's `/memory` commands and the lease-coordinated backfill.

status · index [--verify] · rebuild · gc / gc confirm (the collector) · forget <entryId|sessionId>.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from ._echo import echo
from ._errors import IndexUnavailable, ToolError, protocol_answer
from ._index import Index
from ._journals import Journal
from ._memory import Memory, indexed
from ._query import SUMMARY_KINDS
from ._time import iso_utc
from ._workers import BULK_BYTES, preparing

__all__ = [
    "Lease",
    "backfill",
    "claim_lease",
    "index_all",
    "release_lease",
    "run_command",
]

_QUIET = timedelta(hours=24)
Progress = Callable[[int, int], None]  # (journals done, journals in all)
_USAGE = "use one of: status, index, index --verify, rebuild, gc, gc confirm, forget <entryId|sessionId>"


# -- lease ---------------------------------------------------------------------------------------


class Lease:
    """meta.lease = "owner@expiresAt": one backfilling process at a time, taken over once expired.

    Every change is appended to `<state_dir>/lease-log.jsonl` inside the same write transaction,
    so the log's order is the order the index saw.
    """

    def __init__(self, memory: Memory, index: Index, owner: str) -> None:
        self.memory, self.index, self.owner = memory, index, owner
        self.log = os.path.join(memory.config.state_dir, "lease-log.jsonl")

    def _write(self, event: str, value: str | None, expires: str | None) -> None:
        self.index.store.write_lease(value)
        record = {"at": iso_utc(self.memory.now()), "owner": self.owner, "event": event, "expiresAt": expires}
        with open(self.log, "ab") as handle:
            handle.write(orjson.dumps(record) + b"\n")

    def take(self) -> bool:
        """Take or renew the lease; False while another owner holds an unexpired one."""
        now = self.memory.now()
        expires = iso_utc(now + timedelta(seconds=self.memory.config.lease_seconds))
        with self.index.write():
            holder = current_lease(self.index)
            if holder is not None and holder["owner"] != self.owner and holder["expiresAt"] > iso_utc(now):
                return False
            event = "renew" if holder is not None and holder["owner"] == self.owner else "acquire"
            self._write(event, f"{self.owner}@{expires}", expires)
        return True

    def release(self) -> None:
        with self.index.write():
            holder = current_lease(self.index)
            if holder is not None and holder["owner"] == self.owner:
                self._write("release", None, None)


def current_lease(index: Index) -> dict[str, str] | None:
    value = index.store.read_lease()
    if value is None:
        return None
    owner, _, expires = value.rpartition("@")
    return {"owner": owner, "expiresAt": expires}


# -- indexing passes -----------------------------------------------------------------------------


def index_all(
    memory: Memory, verify: bool = False, progress: Progress = lambda done, total: None
) -> dict[str, Any]:
    """A foreground pass over every discovered journal, oldest first (rowids then mostly append)."""
    found = memory.discover(full=True)
    journals = sorted(found.journals, key=lambda journal: (journal.started, journal.path))
    finished = itertools.count(1)
    unread = _unread(memory.index, journals)
    with preparing(unread) as pool:
        added = memory.index.sync_many(
            journals,
            verify=lambda journal: verify,
            forgotten=memory.forget.now,
            pool=pool,
            done=lambda journal: progress(next(finished), len(journals)),
        )
    memory.drop_missing(found)
    if unread >= BULK_BYTES:
        memory.index.store.compact()
    return {"journals": len(journals), "added": added, "verified": verify}


def _unread(index: Index, journals: list[Journal]) -> int:
    """About how many bytes of these journals the index has not read."""
    known = index.known()
    return sum(max(0, journal.size - known.get(journal.path, (0, 0, 0))[1]) for journal in journals)


def backfill(memory: Memory, owner: str, stop: threading.Event, first: bool) -> None:
    """Index the current journal, then, holding the lease, every other journal newest first.

    The lease is renewed before each batch and the pass stops as soon as it is lost. On the first
    backfill after start-up, journals whose mtime changed get the full prefix check. While the index
    takes no writes (a full disk), `memory.write_error` says so; a backfill that completes clears it.
    """
    index = memory.open_index()
    try:
        current = memory.current_journal()
        if current is not None:
            memory.sync(current, index)
        found = memory.discover(full=True)
        known = index.known()
        pending = [j for j in found.journals if j.path not in memory.failed and not indexed(j, known)]
        if pending:
            _backfill(memory, index, owner, stop, first, pending)
        memory.drop_missing(found, index)
        memory.write_error = None
    except IndexUnavailable as error:
        memory.write_error = error
        raise
    finally:
        index.close()


def claim_lease(memory: Memory, owner: str) -> Lease | None:
    """Take the lease now when other journals wait for backfill; the held lease, else None.

    For `background_on_idle` instances, whose backfill runs only when `idle` is asked: the lease
    is theirs from `session_start` on, as it would be while a background backfill ran.
    """
    index = memory.open_index()
    try:
        known = index.known()
        found = memory.discover(full=True)
        if not any(j.path not in memory.failed and not indexed(j, known) for j in found.journals):
            return None
        lease = Lease(memory, index, owner)
        return lease if lease.take() else None
    finally:
        index.close()


def release_lease(memory: Memory, owner: str) -> None:
    index = memory.open_index()
    try:
        Lease(memory, index, owner).release()
    finally:
        index.close()


def _backfill(
    memory: Memory, index: Index, owner: str, stop: threading.Event, first: bool, pending: list[Journal]
) -> None:
    lease = Lease(memory, index, owner)
    if not lease.take():
        return
    known = index.known()

    def verify(journal: Journal) -> bool:
        seen = known.get(journal.path)
        return first and seen is not None and seen[2] != journal.mtime_ns

    def failed(journal: Journal, error: Exception) -> None:  # one bad journal never stops the others
        memory.failed.add(journal.path)
        print(f"pimem: cannot index {journal.path}: {type(error).__name__}: {error}", file=sys.stderr)

    try:  # in this process: worker processes are for passes the user asked for and waits on
        index.sync_many(
            sorted(pending, key=lambda journal: journal.mtime_ns, reverse=True),
            verify=verify,
            forgotten=memory.forget.now,
            carry_on=lambda: not stop.is_set() and lease.take(),
            failed=failed,
        )
    finally:
        try:
            lease.release()
        except IndexUnavailable as error:  # it expires by itself
            print(f"pimem: cannot release the backfill lease: {error.detail}", file=sys.stderr)


# -- commands ------------------------------------------------------------------------------------


def status(memory: Memory) -> dict[str, Any]:
    found = memory.discover(full=True)
    paths = [journal.path for journal in found.journals]
    store = memory.index.store
    lease = current_lease(memory.index)
    return {
        "journals": len(paths),
        "entries": store.count_entries(paths),
        "summaries": store.count_entries(paths, kinds=SUMMARY_KINDS),
        "skipped": {"files": found.skipped_files + len(memory.failed), "lines": store.skipped_lines(paths)},
        "indexing": memory.indexing(found.journals),
        "lease": lease
        if lease and lease["expiresAt"] > iso_utc(memory.now())
        else None,  # an expired one is none
    }


def rebuild(
    memory: Memory, progress: Callable[[int, int], None] = lambda done, total: None
) -> dict[str, Any]:
    """Drop every row and term, then index all journals again (the forget list still applies)."""
    memory.index.clear()
    return index_all(memory, progress=progress)


def _temp_dirs() -> list[str]:
    dirs = ["/tmp", "/var/tmp"]
    if os.environ.get("TMPDIR"):
        dirs.append(os.environ["TMPDIR"].rstrip("/") or "/")
    return dirs


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _preview_path(memory: Memory) -> str:
    return os.path.join(memory.config.state_dir, "gc-preview.json")


def _junk(memory: Memory, journal: Journal) -> list[str]:
    """Why a journal is junk ([] when it is not): never compacted and temp cwd / no user / ≤ 2 replies."""
    memory.sync(journal)
    kinds = memory.index.store.kind_counts(journal.path)
    if kinds.get("compaction"):
        return []
    reasons = []
    if any(_under(journal.cwd, temp) for temp in _temp_dirs()):
        reasons.append("temp-dir")
    if not kinds.get("user"):
        reasons.append("no-user-message")
    if kinds.get("assistant", 0) <= 2:
        reasons.append("few-replies")
    return reasons


def _current_path(memory: Memory) -> str | None:
    return os.path.abspath(memory.config.session_file) if memory.config.session_file else None


def gc_preview(memory: Memory) -> dict[str, Any]:
    found = memory.discover(full=True)
    now = memory.now()
    candidates = []
    for journal in sorted(found.journals, key=lambda item: item.path):
        modified = datetime.fromtimestamp(journal.mtime_ns / 1e9, UTC)
        if journal.path == _current_path(memory) or now - modified < _QUIET:
            continue
        reasons = _junk(memory, journal)
        if reasons:
            candidates.append(
                {
                    "path": journal.path,
                    "sessionId": journal.session_id,
                    "size": journal.size,
                    "mtime": iso_utc(modified),
                    "reasons": reasons,
                    "mtime_ns": journal.mtime_ns,
                }
            )
    os.makedirs(memory.config.state_dir, exist_ok=True)
    with open(_preview_path(memory), "w", encoding="utf-8") as handle:
        json.dump(
            [{"path": c["path"], "size": c["size"], "mtime_ns": c["mtime_ns"]} for c in candidates], handle
        )
    for candidate in candidates:
        del candidate["mtime_ns"]
    return {"candidates": candidates}


def gc_confirm(memory: Memory) -> dict[str, Any]:
    """Delete exactly the last preview's journals that are unchanged since; nothing else."""
    try:
        with open(_preview_path(memory), encoding="utf-8") as handle:
            preview = json.load(handle)
    except FileNotFoundError:
        preview = []
    journals = {journal.path for journal in memory.discover().journals}
    deleted, skipped = [], []
    for item in preview:
        path = item["path"]
        try:
            info = os.stat(path)
        except OSError:
            skipped.append({"path": path, "reason": "missing"})
            continue
        if path not in journals or path == _current_path(memory):
            skipped.append({"path": path, "reason": "not a collectable journal"})
        elif (info.st_size, info.st_mtime_ns) != (item["size"], item["mtime_ns"]):
            skipped.append({"path": path, "reason": "changed since the preview"})
        else:
            os.remove(path)
            memory.index.forget_path(path)
            deleted.append(path)
    if preview:
        os.remove(_preview_path(memory))  # a confirm acts on one preview, once
    return {"deleted": deleted, "skipped": skipped}


def forget(memory: Memory, target: str) -> dict[str, Any]:
    found = memory.discover()
    paths = [journal.path for journal in found.journals]
    if any(journal.session_id == target for journal in found.journals):
        kind = "session"
    else:
        current = memory.current_journal()
        if current is not None:
            memory.sync(current)
        kind = "entry"
        if not memory.index.store.count_entries(paths, entry_id=target):
            advice = "for example /memory forget d24d95c5"
            raise ToolError("bad_argument", f'no entry or session "{target}" is indexed', advice)
    memory.forget.add(kind, target)
    memory.index.store.hide_entries(kind, target)
    return {"forgotten": {"kind": kind, "id": target}}


def run_command(memory: Memory, args: str) -> dict[str, Any]:
    """`/memory <args>` → {text, details} or {error: {code, message}}."""
    words = args.split()
    try:
        details = _dispatch(memory, words)
    except (ToolError, IndexUnavailable) as error:  # the reason stays: disk full, read-only
        return protocol_answer(error)
    return {"text": describe(details), "details": details}


def _dispatch(memory: Memory, words: list[str]) -> dict[str, Any]:
    if len(words) == 2 and words[0] == "forget":
        return forget(memory, words[1])
    commands: dict[tuple[str, ...], Callable[[], dict[str, Any]]] = {
        (): lambda: status(memory),
        ("status",): lambda: status(memory),
        ("index",): lambda: index_all(memory),
        ("index", "--verify"): lambda: index_all(memory, verify=True),
        ("rebuild",): lambda: rebuild(memory),
        ("gc",): lambda: gc_preview(memory),
        ("gc", "confirm"): lambda: gc_confirm(memory),
    }
    command = commands.get(tuple(words))
    if command is None:
        raise ToolError("bad_argument", f"unknown /memory command {echo(' '.join(words))}", _USAGE)
    return command()


def describe(details: dict[str, Any]) -> str:
    """One short human summary per command."""
    if "candidates" in details:
        lines = [
            f"{len(details['candidates'])} journal(s) look like junk; `/memory gc confirm` deletes them:"
        ]
        lines += [
            f"- {c['path']} ({c['size']} bytes, {', '.join(c['reasons'])})" for c in details["candidates"]
        ]
        return "\n".join(lines)
    if "deleted" in details:
        return f"Deleted {len(details['deleted'])} journal(s); skipped {len(details['skipped'])}."
    if "forgotten" in details:
        forgotten = details["forgotten"]
        return f"Forgot {forgotten['kind']} {forgotten['id']}; it no longer appears anywhere."
    if "added" in details:
        verb = "Verified and indexed" if details["verified"] else "Indexed"
        return f"{verb} {details['journals']} journal(s); {details['added']} new entries."
    state = details["indexing"]
    lease = details["lease"]
    return (
        f"{details['journals']} journals, {details['entries']} entries, {details['summaries']} summaries; "
        f"indexed {state['indexedJournals']}/{state['totalJournals']}; skipped {details['skipped']['files']} "
        f"file(s), {details['skipped']['lines']} line(s); "
        + (
            f"backfill lease held by {lease['owner']} until {lease['expiresAt']}."
            if lease
            else "no backfill running."
        )
    )
