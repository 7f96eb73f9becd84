"""Drive a real `pi --mode rpc` process: JSON commands on stdin, responses and events on stdout.

Records are split on "\\n" only (Pi's RPC framing; a JSON string may hold U+2028). A reader
thread keeps every record in `history`; waits look from a given position on and are bounded, so
a stuck Pi fails the test with its stderr.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

__all__ = ["PiProcess", "children_of"]

WAIT_SECONDS = 90


class PiProcess:
    """One Pi in RPC mode, in `cwd`, with the mock provider selected."""

    def __init__(
        self, pi: Path, cwd: Path, env: dict[str, str], stderr_path: Path, extra: list[str] | None = None
    ) -> None:
        self._stderr_path = stderr_path
        self._stderr = stderr_path.open("ab")
        self.process = subprocess.Popen(
            [str(pi), "--mode", "rpc", "--provider", "mock", "--model", "mock-model", *(extra or [])],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.history: list[dict[str, Any]] = []
        self._arrived = threading.Condition()
        self._next_id = 0
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:  # binary readline splits on b"\n" only
            if line.strip():
                with self._arrived:
                    self.history.append(json.loads(line))
                    self._arrived.notify_all()

    def __enter__(self) -> PiProcess:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End of stdin is Pi's quit: it emits session_shutdown and exits."""
        assert self.process.stdin is not None
        if not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._stderr.close()

    def wait_for(self, matches: Callable[[dict[str, Any]], bool], what: str, start: int) -> dict[str, Any]:
        """The first record at or after position `start` of the history that matches."""
        with self._arrived:
            found = self._arrived.wait_for(
                lambda: next((r for r in self.history[start:] if matches(r)), None), timeout=WAIT_SECONDS
            )
        if found is None:
            stderr = self._stderr_path.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise AssertionError(f"Pi never sent {what}; its stderr ends with:\n{stderr}")
        return found

    def command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Sends an RPC command and returns its successful response's `data` (or {})."""
        self._next_id += 1
        request_id = f"t{self._next_id}"
        assert self.process.stdin is not None
        start = len(self.history)
        self.process.stdin.write((json.dumps({**command, "id": request_id}) + "\n").encode())
        self.process.stdin.flush()
        response = self.wait_for(
            lambda record: record.get("type") == "response" and record.get("id") == request_id,
            f"a response to {command['type']}",
            start,
        )
        assert response.get("success"), f"{command['type']} failed: {response}"
        data: dict[str, Any] = response.get("data") or {}
        return data

    def prompt(self, message: str) -> None:
        """A user prompt, answered when the agent run ends."""
        start = len(self.history)
        self.command({"type": "prompt", "message": message})
        self.wait_for(lambda record: record.get("type") == "agent_end", f"agent_end after {message!r}", start)

    def notification_after(self, message: str) -> dict[str, Any]:
        """Sends a slash command and returns the extension's notification (`extension_ui_request`)."""
        start = len(self.history)
        self.command({"type": "prompt", "message": message})
        return self.wait_for(
            lambda record: record.get("type") == "extension_ui_request" and record.get("method") == "notify",
            f"a notification after {message!r}",
            start,
        )

    def session_file(self) -> Path:
        return Path(self.command({"type": "get_state"})["sessionFile"])


def children_of(pid: int, marker: str) -> list[int]:
    """Pids of `pid`'s live child processes whose command line contains `marker` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # the process ended while we looked
        # Fields after the parenthesised command name: state, ppid, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z" and marker in cmdline:
            found.append(int(entry.name))
    return found
