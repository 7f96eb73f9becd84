"""A case's workspace on disk: the journals before the first step and every change between steps.

Layout of a workspace root: `agent/` (Pi's agent dir; default-layout journals under
`agent/sessions/<dir>/`), `flat*/` (flat session dirs named in `setup.flat`), `state/` (the only
folder the implementation may write). Journal keys in cases are paths relative to the root.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

from pimem_conformance._cases import CaseError
from pimem_conformance._jsjson import dumps_like_js
from pimem_conformance._paths import fixtures_dir
from pimem_conformance.journals import encoded_cwd

__all__ = [
    "CREATING_OPS",
    "REPEAT_KEY",
    "Workspace",
    "epoch_ns",
    "expand_repeats",
    "scratch_dir",
    "substitute_workspace",
]

WORKSPACE_MARK = "{ws}"
REPEAT_KEY = "$repeat"
CREATING_OPS = ("write", "symlink", "fifo")  # mutations that may name a journal the case never wrote


def scratch_dir() -> str | None:
    """Where throwaway workspaces go: a RAM-backed /dev/shm when there is one, else the temp dir.

    Workspaces and indexes die with their case; on disk, the fsyncs of SQLite-backed
    implementations would cost most of a run's time.
    """
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK) else None


def substitute_workspace(value: Any, root: str) -> Any:
    """`value` with every `{ws}` in every string (keys included) replaced by the workspace root."""
    if isinstance(value, str):
        return value.replace(WORKSPACE_MARK, root)
    if isinstance(value, list):
        return [substitute_workspace(item, root) for item in value]
    if isinstance(value, dict):
        return {
            substitute_workspace(key, root): substitute_workspace(item, root) for key, item in value.items()
        }
    return value


def epoch_ns(timestamp: str) -> int:
    """An ISO-8601 timestamp with a zone, as nanoseconds since the epoch (for file mtimes)."""
    moment = datetime.fromisoformat(timestamp)
    if moment.tzinfo is None:
        raise CaseError(f"timestamp {timestamp!r} needs a zone, e.g. 2026-11-29T12:00:00Z")
    return int(moment.timestamp() * 1_000_000) * 1000


def expand_repeats(value: Any) -> Any:
    """`value` with every `{"$repeat": text, "times": n}` replaced by the text n times over.

    Journal lines of megabytes (text over the 1 MB redaction slice, lines over max_line_bytes) stay
    a few bytes in the case file.
    """
    if isinstance(value, dict):
        if set(value) == {REPEAT_KEY, "times"}:
            text, times = value[REPEAT_KEY], value["times"]
            if not isinstance(text, str) or not isinstance(times, int) or times < 0:
                raise CaseError(f'{REPEAT_KEY} needs a string and a "times" count ≥ 0, got {value!r}')
            return text * times
        return {key: expand_repeats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [expand_repeats(item) for item in value]
    return value


def _serialise(line: object) -> bytes:
    text = line if isinstance(line, str) else dumps_like_js(expand_repeats(line))
    return text.encode("utf-8", "surrogatepass")


def _lines_bytes(lines: list[Any]) -> bytes:
    return b"".join(_serialise(line) + b"\n" for line in lines)


class Workspace:
    """The files of one case, rooted at `root` (which must exist and be empty)."""

    def __init__(self, root: Path, setup: dict[str, Any]) -> None:
        self.root = root
        self.setup = setup

    @property
    def agent_dir(self) -> Path:
        return self.root / "agent"

    @property
    def state_dir(self) -> Path:
        """`state/`, or the path `setup.state` names (a file: a state dir that cannot be used; nothing:
        one that does not exist yet)."""
        return self.path(self.setup.get("state", "state"))

    def path(self, key: str) -> Path:
        """The file behind a journal key; keys never leave the workspace."""
        if key.startswith("/") or ".." in Path(key).parts:
            raise CaseError(f"journal key {key!r} must be a path relative to the workspace")
        return self.root / key

    @property
    def session_file(self) -> Path | None:
        """The current session's journal; None when `setup.session` is null (Pi's --no-session)."""
        if "session" not in self.setup:
            # Pi names its session file before creating it lazily: name one that does not exist.
            return self.agent_dir / "sessions" / encoded_cwd(self.setup["cwd"]) / "current.jsonl"
        session = self.setup["session"]
        return None if session is None else self.path(session)

    def state_holding(self, texts: list[str]) -> dict[str, list[str]]:
        """Which of these texts (their UTF-8 bytes) a file under the state dir holds: text -> the
        files, relative to the workspace. Read by the runner, never asked of the implementation."""
        found: dict[str, list[str]] = {}
        files = sorted(path for path in self.state_dir.rglob("*") if path.is_file() and not path.is_symlink())
        for path in files:
            content = path.read_bytes()
            for text in texts:
                if text.encode("utf-8") in content:
                    found.setdefault(text, []).append(str(path.relative_to(self.root)))
        return found

    def open_workspace(self) -> dict[str, Any]:
        """The `workspace` object of an `open` request."""
        return {
            "home": self.setup.get("home", "/home/u"),
            "agent_dir": str(self.agent_dir),
            "session_dirs": [str(self.root / flat) for flat in self.setup.get("flat", [])],
            "state_dir": str(self.state_dir),
            "cwd": self.setup["cwd"],
            "session_file": None if self.session_file is None else str(self.session_file),
        }

    def prepare(self, journals: dict[str, Any]) -> None:
        """Create the folders and write every journal, with its initial mtime."""
        for folder in (
            self.agent_dir / "sessions",
            *(self.root / flat for flat in self.setup.get("flat", [])),
        ):
            folder.mkdir(parents=True, exist_ok=True)
        # Without an explicit mtime a journal was last written "now" by the instance clock, so
        # rules such as "quiet for 24 h" never depend on when the suite happens to run.
        default_mtime = self.setup["now"]
        for key, journal in journals.items():
            target = self.path(key)
            target.parent.mkdir(parents=True, exist_ok=True)
            if "fixture" in journal:
                source = fixtures_dir() / journal["fixture"]
                if not source.is_file():
                    raise CaseError(
                        f"journal {key}: fixture {journal['fixture']!r} not found under fixtures/"
                    )
                shutil.copyfile(source, target)
            else:
                content = _lines_bytes(journal["lines"]) + journal.get("partial", "").encode("utf-8")
                target.write_bytes(content)
            self._set_mtime(target, epoch_ns(journal.get("mtime", default_mtime)))
        if "state" not in self.setup:  # a case's own path is left as it is: a journal file, or nothing
            self.state_dir.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _set_mtime(target: Path, mtime_ns: int) -> None:
        os.utime(target, ns=(mtime_ns, mtime_ns))

    def mutate(self, mutation: dict[str, Any]) -> None:
        """Change a journal on disk as Pi or a user would (semantics: the brief's mutation table)."""
        target = self.path(mutation["journal"])
        op = mutation["op"]
        key = mutation["journal"]
        if op in CREATING_OPS and not target.exists():
            self._create(target, mutation)
            return
        if op in ("symlink", "fifo"):
            raise CaseError(f"mutation {op}: {key} exists already")
        if not target.exists():
            raise CaseError(f"mutation {op}: journal {key} does not exist")
        before = target.stat()
        if op == "delete":
            target.unlink()
            return
        if op == "touch":
            if "mtime" not in mutation:
                raise CaseError("mutation touch needs an mtime")
            self._set_mtime(target, epoch_ns(mutation["mtime"]))
            return
        if op == "write":
            target.write_bytes(_lines_bytes(mutation.get("lines", [])))
        elif op == "append":
            with target.open("ab") as handle:
                handle.write(_lines_bytes(mutation.get("lines", [])))
        elif op == "append_partial":
            with target.open("ab") as handle:
                handle.write(mutation.get("text", "").encode("utf-8"))
        else:
            target.write_bytes(self._edited_lines(target.read_bytes(), mutation))
        if mutation.get("keep_mtime", False):
            self._set_mtime(target, before.st_mtime_ns)
        elif target.stat().st_mtime_ns == before.st_mtime_ns:
            # A coarse clock can leave the mtime unchanged; Pi's write would have moved it.
            self._set_mtime(target, before.st_mtime_ns + 1_000_000)

    def _create(self, target: Path, mutation: dict[str, Any]) -> None:
        """A new file: write (its content), symlink (a link to `target`, a workspace key) or fifo."""
        target.parent.mkdir(parents=True, exist_ok=True)
        op = mutation["op"]
        if op == "write":
            target.write_bytes(_lines_bytes(mutation.get("lines", [])))
        elif op == "symlink":
            if "target" not in mutation:
                raise CaseError("mutation symlink needs a target (a path relative to the workspace)")
            target.symlink_to(self.path(mutation["target"]))
        else:
            os.mkfifo(target)

    @staticmethod
    def _edited_lines(content: bytes, mutation: dict[str, Any]) -> bytes:
        op = mutation["op"]
        lines = content.split(b"\n")
        tail = lines.pop()  # b"" after a final newline, else an unterminated partial line
        if op == "truncate":
            keep = mutation.get("keep_lines")
            if keep is None:
                raise CaseError("mutation truncate needs keep_lines")
            return b"".join(line + b"\n" for line in lines[:keep])
        if op == "rewrite":
            index = mutation.get("line")
            if index is None or "with" not in mutation or not 0 <= index < len(lines):
                raise CaseError(f"mutation rewrite needs a line within 0..{len(lines) - 1} and a 'with'")
            new = _serialise(mutation["with"])
            if mutation.get("length") == "same":
                if len(new) > len(lines[index]):
                    raise CaseError(
                        f"rewrite of line {index} with length 'same': the new line has "
                        f"{len(new)} bytes, the old one {len(lines[index])}"
                    )
                new = new + b" " * (len(lines[index]) - len(new))
            lines[index] = new
        elif op == "swap":
            a, b = mutation.get("a"), mutation.get("b")
            if a is None or b is None or not (0 <= a < len(lines) and 0 <= b < len(lines)):
                raise CaseError(f"mutation swap needs lines a and b within 0..{len(lines) - 1}")
            if len(lines[a]) != len(lines[b]):
                raise CaseError(
                    f"swap of lines {a} and {b}: their byte lengths differ "
                    f"({len(lines[a])} and {len(lines[b])})"
                )
            lines[a], lines[b] = lines[b], lines[a]
        else:
            raise CaseError(f"unknown mutation op {op!r}")
        return b"".join(line + b"\n" for line in lines) + tail
