"""The one narrow seam between the benchmark and the reference implementation.

Three ways in, each the way a user or Pi would meet the code:
- `pimem index` / `pimem rebuild` as subprocesses (timed, with the peak RSS of the process tree);
  the search query set is also run once in a subprocess, for its peak RSS;
- `ToolClient`: the in-process `pimem._serve:ProtocolServer`, driven with the protocol's messages, the
  same code `pimem serve` runs for the Pi extension;
- `extracted_entries` / `redact` / `index_terms`: the reference's own extraction, redaction and term
  maker, called stage by stage for the ceiling and the where-the-time-goes figures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
import orjson

if TYPE_CHECKING:
    from pimem_tools.bench._corpus import Corpus

__all__ = [
    "IndexRun",
    "ToolClient",
    "extracted_entries",
    "fts_options",
    "fts_options_of_schema",
    "index_argv",
    "index_files",
    "index_terms",
    "isolated_env",
    "rebuild_argv",
    "redact",
    "run_measured",
    "run_pimem",
    "sqlite_version",
    "tree_peak_bytes",
]

INDEX_FILE = "index.sqlite"  # the reference keeps its index at <state_dir>/index.sqlite


def _source_argv(corpus: Corpus, state_dir: Path) -> list[str]:
    argv = ["--index", str(state_dir / INDEX_FILE)]
    if corpus.agent_dir is not None:
        argv += ["--agent-dir", str(corpus.agent_dir)]
    for flat in corpus.session_dirs:
        argv += ["--sessions-dir", str(flat)]
    return argv


def index_argv(corpus: Corpus, state_dir: Path) -> list[str]:
    return [*_source_argv(corpus, state_dir), "index"]


def rebuild_argv(corpus: Corpus, state_dir: Path) -> list[str]:
    return [*_source_argv(corpus, state_dir), "rebuild"]


def index_files(state_dir: Path) -> list[Path]:
    """Everything the reference keeps in its state dir: the index and its WAL, if any is left."""
    return [path for path in state_dir.rglob("*") if path.is_file()]


def isolated_env(state_dir: Path) -> dict[str, str]:
    """The environment of a `pimem` subprocess: a private HOME so nothing reads or writes the real ~/.pi."""
    home = state_dir.parent / f"{state_dir.name}-home"
    home.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PI_CODING_AGENT")}
    env["HOME"] = str(home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def sqlite_version() -> str:
    """The SQLite library the reference runs on (apsw's own build)."""
    return str(apsw.sqlite_lib_version())


def fts_options(state_dir: Path) -> str:
    """The arguments of the reference's FTS5 table, so the ceiling uses exactly the same options."""
    connection = apsw.Connection(str(state_dir / INDEX_FILE), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = connection.execute(
            "SELECT sql FROM sqlite_master WHERE type='table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%'"
        ).fetchall()
    finally:
        connection.close()
    if len(rows) != 1:
        raise RuntimeError(f"expected one FTS5 table in the reference's index, found {len(rows)}")
    match = re.search(r"fts5\s*\((.*)\)\s*$", str(rows[0][0]), re.DOTALL | re.IGNORECASE)
    if match is None:
        raise RuntimeError(f"cannot read the FTS5 options of: {rows[0][0]}")
    return " ".join(match.group(1).split())


def fts_options_of_schema() -> str:
    """The FTS5 options of the index the reference makes, read from a fresh empty one of its own."""
    from pimem._store import Store

    with tempfile.TemporaryDirectory(prefix="pimem-bench-schema-") as temp:
        Store(str(Path(temp) / INDEX_FILE)).close()
        return fts_options(Path(temp))


@dataclass(frozen=True)
class IndexRun:
    seconds: float
    peak_rss_bytes: int


def _status_kib(pid: int, field: bytes) -> int:
    with open(f"/proc/{pid}/status", "rb") as handle:
        for line in handle:
            if line.startswith(field):
                return int(line.split()[1])
    return 0  # a process that has released its memory (exiting) has no Vm fields


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.scandir(f"/proc/{pid}/task"):
        with open(f"{task.path}/children", "rb") as handle:
            found.extend(int(child) for child in handle.read().split())
    return found


def tree_peak_bytes(root_pid: int) -> int:
    """The root's own peak (VmHWM) plus what its descendants hold now (VmRSS); 0 once it is gone."""
    try:
        total = _status_kib(root_pid, b"VmHWM:")
        stack = _children(root_pid)
    except OSError:
        return 0
    while stack:
        pid = stack.pop()
        try:
            total += _status_kib(pid, b"VmRSS:")
            stack.extend(_children(pid))
        except OSError:  # it ended between two reads
            continue
    return total * 1024


def run_pimem(argv: list[str], env: dict[str, str]) -> IndexRun:
    """Run `pimem <argv>` to completion; its wall time and peak RSS (see `run_measured`)."""
    return run_measured(["pimem", *argv], env)


def run_measured(argv: list[str], env: dict[str, str]) -> IndexRun:
    """Run a command to completion; its wall time and the peak RSS of its process tree.

    The peak is polled from /proc every 50 ms: the process's own high-water mark plus the memory of
    any worker processes at that moment. (The kernel's `ru_maxrss` of a child cannot be used: it
    inherits the high-water mark of the parent's memory at fork and exec, here the benchmark's own.)
    """
    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def poll() -> None:
        nonlocal peak
        while not done.wait(0.05):
            peak = max(peak, tree_peak_bytes(process.pid))

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    with process:  # closes the stderr pipe
        assert process.stderr is not None
        stderr = process.stderr.read()  # drained while it runs so a full pipe never stalls it
        process.wait()
    seconds = time.perf_counter() - started
    done.set()
    poller.join()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {process.returncode}: {stderr.decode()[-2000:]}")
    return IndexRun(seconds, peak)


_READ_BYTES = 1 << 20  # what extracted_entries reads at a time


def extracted_entries(path: str) -> Iterator[Any]:
    """Every entry of one journal as the reference extracts it (read, parse, extract; no redaction)."""
    from pimem._extract import extract, sensitive_call_ids
    from pimem._journals import DEFAULT_MAX_LINE_BYTES, parse_line, read_chunk

    withheld: set[str] = set()
    offset = 0
    while True:
        chunk = read_chunk(path, offset, DEFAULT_MAX_LINE_BYTES, _READ_BYTES)
        if chunk.end == offset:
            return
        for _, raw in chunk.lines:
            obj = parse_line(raw)
            if not isinstance(obj, dict):
                continue
            withheld.update(sensitive_call_ids(obj))
            if not isinstance(obj.get("id"), str):
                continue  # no entry line (extract takes only those)
            entry = extract(obj, withheld)
            if entry is not None:
                yield entry
        offset = chunk.end


def redact(text: str) -> str:
    from pimem._redact import redact as reference_redact

    return reference_redact(text)


def index_terms(text: str) -> str:
    """What the reference gives FTS5 for an entry's redacted text (its term maker)."""
    from pimem._terms import index_text

    return index_text(text)


class ToolClient:
    """One protocol instance of the reference, answering `memory_context` calls in process.

    Every request and response goes through orjson both ways, as it would through `pimem serve`, so
    a timed call includes the serialisation Pi's extension pays for.
    """

    def __init__(self, workspace: dict[str, Any], now: str, allow_global: bool = True) -> None:
        from pimem._serve import ProtocolServer

        self._server: Any = ProtocolServer()
        self._seq = 0
        self.request({"cmd": "start", "protocol": 1})
        self.request(
            {
                "cmd": "open",
                "instance": "bench",
                "workspace": workspace,
                "clock": {"now": now, "tz": "UTC"},
                "settings": {"allow_global": allow_global},
            }
        )
        self.request(
            {"cmd": "event", "instance": "bench", "name": "session_start", "data": {"reason": "startup"}}
        )
        self.request({"cmd": "idle", "instance": "bench"})

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self._seq += 1
        wire = orjson.dumps({"seq": self._seq, **message})
        response: dict[str, Any] = self._server.handle(orjson.loads(wire))
        orjson.dumps(response)
        if response.get("errored"):
            raise RuntimeError(
                f"the reference could not handle {message.get('cmd')}: {response.get('context')}"
            )
        return response

    def set_clock(self, now: str) -> None:
        """Move the instance's clock (an ISO timestamp), as the conformance cases do."""
        self.request({"cmd": "clock", "instance": "bench", "now": now})

    def tool(self, arguments: dict[str, Any], leaf_id: str | None = None) -> dict[str, Any]:
        """A `memory_context` call; `leaf_id`: the entry the model stands at (the message's `leafId`)."""
        message = {"cmd": "tool", "instance": "bench", "name": "memory_context", "arguments": arguments}
        response = self.request(message if leaf_id is None else {**message, "leafId": leaf_id})
        if "error" in response:
            raise RuntimeError(f"memory_context {arguments} failed: {response['error']}")
        return response

    def close(self) -> None:
        self.request({"cmd": "close", "instance": "bench"})
        self.request({"cmd": "stop"})
