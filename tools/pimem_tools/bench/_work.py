"""What a search does, counted: measures that no machine load can move.

While a `WorkCounter` counts (in the searching process, around one tool call, never around a timed
one):
- `sql`: SQL statements the reference started on its connections (`trace_v2` STMT events that are
  no trigger), `match` those whose text holds `MATCH` (FTS5 lookups), and `inner_sql` the
  statements SQLite ran inside them (FTS5 reading its shadow tables: doclist and segment reads);
- `rows`: rows the reference's statements stepped out (ROW events, by statement id), and
  `match_rows` the rows of MATCH statements;
- `lines`: journal lines read at a pointer (calls of `pimem._journals.read_line_at`, the one
  function both the old and new trees read a line with);
- `calls`: Python function calls made in the reference's own modules (`sys.setprofile` `call`
  events whose code lives in a `pimem/` folder), and `calls_by_function` the same by
  `module:function`.

Connections are found through `apsw.connection_hooks` (installed before the tool client opens its
index), so the reference's code is not touched.
"""

from __future__ import annotations

import sys
import weakref
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import PurePath
from types import FrameType
from typing import Any

import apsw

__all__ = ["COUNTS", "WorkCounter"]

COUNTS = ("sql", "match", "inner_sql", "rows", "match_rows", "lines", "calls")
_TRACE_MASK = apsw.SQLITE_TRACE_STMT | apsw.SQLITE_TRACE_ROW


class WorkCounter:
    def __init__(self) -> None:
        self._connections: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
        apsw.connection_hooks.append(self._connections.add)
        self._counts: Counter[str] = Counter()
        self._by_function: Counter[str] = Counter()
        self._kind: dict[int, str] = {}  # statement id -> what its last start was

    def _trace(self, event: dict[str, Any]) -> None:
        statement = event["id"]
        if event["code"] == apsw.SQLITE_TRACE_STMT:
            if event.get("trigger"):  # SQLite's own statements inside one (FTS5's shadow tables)
                self._kind[statement] = "inner"
                self._counts["inner_sql"] += 1
                return
            match = "MATCH" in str(event.get("sql") or "").upper()
            self._kind[statement] = "match" if match else "sql"
            self._counts["sql"] += 1
            self._counts["match"] += match
            return
        kind = self._kind.get(statement)
        if kind != "inner":
            self._counts["rows"] += 1
            self._counts["match_rows"] += kind == "match"

    def _profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        path = PurePath(code.co_filename)
        if path.parent.name != "pimem":
            return
        self._counts["calls"] += 1
        self._by_function[f"{path.stem}:{code.co_name}"] += 1
        if code.co_name == "read_line_at" and path.stem == "_journals":
            self._counts["lines"] += 1

    def _set_traces(self, mask: int) -> None:
        for connection in list(self._connections):
            try:
                connection.trace_v2(mask, self._trace if mask else None)
            except apsw.ConnectionClosedError:
                self._connections.discard(connection)

    @contextmanager
    def counting(self) -> Iterator[dict[str, Any]]:
        """Counts of what runs inside, filled in when it ends."""
        self._counts.clear()
        self._by_function.clear()
        found: dict[str, Any] = {}
        self._set_traces(_TRACE_MASK)
        sys.setprofile(self._profile)
        try:
            yield found
        finally:
            sys.setprofile(None)
            self._set_traces(0)
            found.update({name: self._counts[name] for name in COUNTS})
            found["calls_by_function"] = dict(self._by_function)
