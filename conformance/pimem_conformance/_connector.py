"""The one seam between the runner and an implementation: `request(message) -> response`.

Two connectors satisfy it. `SubprocessConnector` speaks the adapter protocol over a child
process's stdin/stdout (any language). `InProcessConnector` hands each message to a Python
object's `handle`, but only after a JSON round trip each way, so an in-process implementation
sees exactly the bytes a subprocess would and can share no objects with the runner.
"""

from __future__ import annotations

import collections
import contextlib
import io
import json
import queue
import shlex
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from pimem_conformance._jsjson import dumps_like_js

__all__ = [
    "IMPLEMENTATIONS_GROUP",
    "AdapterCrashed",
    "AdapterError",
    "AdapterErrorKind",
    "AdapterTimedOut",
    "Connector",
    "FramingError",
    "HandshakeFailed",
    "InProcessConnector",
    "ProtocolHandler",
    "SchemaViolation",
    "SubprocessConnector",
    "connector_for",
    "in_process_entry_point",
]

IMPLEMENTATIONS_GROUP = "pimem_conformance.implementations"
_STDERR_TAIL_LINES = 40


AdapterErrorKind = Literal["crash", "timeout", "framing", "schema", "handshake"]


class AdapterError(Exception):
    """The adapter crashed, hung, or answered with something that is not a protocol response.

    Each way gets its own subclass with a `kind`, so reports can group errors: AdapterCrashed,
    AdapterTimedOut, FramingError, SchemaViolation, HandshakeFailed."""

    kind: ClassVar[AdapterErrorKind]

    def __init__(
        self,
        message: str,
        *,
        stderr: str = "",
        traceback: str = "",
        request: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.stderr = stderr
        self.traceback = traceback
        self.request = request  # the request left without an answer, once the adapter layer knows it

    def as_context(self) -> dict[str, Any]:
        context: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.traceback:
            context["traceback"] = self.traceback
        if self.stderr:
            context["stderr"] = self.stderr
        if self.request is not None:
            context["request"] = self.request
        return context


class AdapterCrashed(AdapterError):
    """It exited, closed a pipe, raised, or answered `errored` (its own report of a crash)."""

    kind = "crash"


class AdapterTimedOut(AdapterError):
    """No response within the timeout."""

    kind = "timeout"


class FramingError(AdapterError):
    """A response line that is not one UTF-8 JSON object, or that answers another request (seq)."""

    kind = "framing"


class SchemaViolation(AdapterError):
    """A response outside the protocol schema."""

    kind = "schema"


class HandshakeFailed(AdapterError):
    """The adapter cannot be started, or its `start` answer is not one this runner can work with."""

    kind = "handshake"


@runtime_checkable
class Connector(Protocol):
    """Carries one protocol message to the implementation and returns its one response."""

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send `message`, return the parsed response; raise AdapterError if there is none."""
        ...

    def close(self) -> None:
        """Release the implementation; a later `request` starts a fresh one."""
        ...

    def peer(self) -> Connector:
        """A connector to the same implementation in another operating-system process (for the
        further processes of a `processes: N` case); ValueError when it cannot have one."""
        ...


class ProtocolHandler(Protocol):
    """What an in-process implementation exposes (the reference's `ProtocolServer`)."""

    def handle(self, message: dict[str, Any]) -> dict[str, Any]: ...


def _encode(message: object) -> str:
    # JSON.stringify's output, so lone surrogates become escapes and the line is valid UTF-8.
    return dumps_like_js(message)


def _decode_response(text: str) -> dict[str, Any]:
    try:
        response = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FramingError(f"invalid JSON from the adapter ({exc}): {text[:200]!r}") from None
    if not isinstance(response, dict):
        raise FramingError(
            f"the adapter answered a JSON {type(response).__name__}, not an object: {text[:200]!r}"
        )
    return response


class _StderrTail(io.TextIOBase):
    """Stands in for sys.stderr while an in-process implementation runs, keeping its last lines,
    so that it is as quiet as a subprocess adapter whose stderr the runner reads."""

    def __init__(self) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._partial = ""
        self._lock = threading.Lock()  # the implementation's background threads write too

    def write(self, text: str) -> int:
        with self._lock:
            *complete, self._partial = (self._partial + text).split("\n")
            self._lines.extend(line + "\n" for line in complete)
        return len(text)

    def text(self) -> str:
        with self._lock:
            return "".join(self._lines) + self._partial


class InProcessConnector:
    """Drives a Python object with `handle(dict) -> dict`, created by `factory` on first use.

    While it lives, sys.stderr is a tail buffer: what the implementation prints is shown only
    when it breaks (as the stderr of an AdapterError), not in the middle of a passing run.

    Its peers are subprocesses of `python -m pimem_conformance.host <target>`, where `target`
    names the same factory (an entry point, or the factory's `module:qualname`)."""

    def __init__(self, factory: Callable[[], ProtocolHandler], *, target: str | None = None) -> None:
        self._factory = factory
        self._handler: ProtocolHandler | None = None
        self._target = target or f"{factory.__module__}:{getattr(factory, '__qualname__', '')}"
        self.timeout = 30.0
        self._stderr: _StderrTail | None = None
        self._real_stderr: Any = None

    def peer(self) -> Connector:
        name = self._target.partition(":")[2]
        if name and ("<" in name or "." in name):
            raise ValueError(f"the in-process implementation {self._target} cannot run in another process")
        return SubprocessConnector(
            [sys.executable, "-m", "pimem_conformance.host", self._target], timeout=self.timeout
        )

    def stderr_tail(self) -> str:
        return self._stderr.text() if self._stderr is not None else ""

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._handler is None:
            self._real_stderr, self._stderr = sys.stderr, _StderrTail()
            sys.stderr = self._stderr
            self._handler = self._factory()
        try:
            response = self._handler.handle(json.loads(_encode(message)))
        except Exception as exc:
            # An exception escaping `handle` is the in-process form of a crashed adapter.
            stderr = self.stderr_tail()
            self.close()
            raise AdapterCrashed(
                f"handle() raised {type(exc).__name__}: {exc}",
                traceback=traceback.format_exc(),
                stderr=stderr,
            ) from None
        try:
            text = json.dumps(response, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise FramingError(f"handle() returned something that is not JSON: {exc}") from None
        return _decode_response(text)

    def close(self) -> None:
        self._handler = None
        if self._stderr is not None:
            sys.stderr, self._stderr = self._real_stderr, None


class SubprocessConnector:
    """Runs `argv` as a child process and exchanges JSON lines with it.

    A request waits at most `timeout` seconds for its response line; a child that exits, stops
    answering, or prints a non-JSON line is killed and reported as an AdapterError carrying the
    tail of its stderr. The next request starts a new child.
    """

    def __init__(self, argv: list[str], *, timeout: float = 30.0, cwd: str | None = None) -> None:
        if not argv:
            raise ValueError("an adapter command cannot be empty")
        self.argv = argv
        self.timeout = timeout
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._readers: list[threading.Thread] = []

    def stderr_tail(self) -> str:
        return "".join(self._stderr_tail)

    def peer(self) -> Connector:
        return SubprocessConnector(self.argv, timeout=self.timeout, cwd=self._cwd)

    def _spawn(self) -> subprocess.Popen[bytes]:
        try:
            process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._cwd,
            )
        except OSError as exc:
            raise HandshakeFailed(f"cannot start adapter {shlex.join(self.argv)}: {exc}") from None
        self._lines = queue.Queue()
        self._stderr_tail.clear()
        # Reader threads: stdout lines go to a queue (so reads can time out), stderr to a tail
        # buffer (so a chatty adapter can never block on a full pipe).
        self._readers = [
            threading.Thread(target=self._pump_stdout, args=(process, self._lines), daemon=True),
            threading.Thread(target=self._pump_stderr, args=(process,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self._process = process
        return process

    @staticmethod
    def _pump_stdout(process: subprocess.Popen[bytes], lines: queue.Queue[bytes | None]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)  # end of stream: the adapter closed stdout or exited

    def _pump_stderr(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self._stderr_tail.append(line.decode("utf-8", "replace"))

    def _fail(self, error: type[AdapterError], message: str) -> AdapterError:
        status = self._process.poll() if self._process is not None else None
        self.close()
        if status is not None:
            message += f" (the adapter exited with status {status})"
        return error(message, stderr=self.stderr_tail())

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        process = self._process if self._process is not None and self._process.poll() is None else None
        if process is None:
            self.close()
            process = self._spawn()
        assert process.stdin is not None
        try:
            process.stdin.write(_encode(message).encode("utf-8") + b"\n")
            process.stdin.flush()
        except OSError:
            raise self._fail(AdapterCrashed, "the adapter closed its stdin (crashed?)") from None
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            raise self._fail(
                AdapterTimedOut, f"no response within {self.timeout:g} s to {message.get('cmd')!r}"
            ) from None
        if line is None:
            process.wait()
            raise self._fail(
                AdapterCrashed, f"the adapter closed stdout before answering {message.get('cmd')!r}"
            )
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise self._fail(
                FramingError, f"the adapter wrote bytes that are not UTF-8: {line[:200]!r}"
            ) from None
        try:
            return _decode_response(text)
        except AdapterError as exc:
            raise self._fail(type(exc), exc.message) from None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        if process.stdin is not None:
            with contextlib.suppress(OSError):  # a broken pipe has nothing left to flush
                process.stdin.close()
        # The readers end at EOF; a grandchild still holding the pipes must not stall the runner.
        for reader in self._readers:
            reader.join(timeout=1.0)
        for stream in (process.stdout, process.stderr):
            if stream is not None and not any(reader.is_alive() for reader in self._readers):
                stream.close()


def in_process_entry_point(impl: str) -> EntryPoint | None:
    """The entry point of `pimem_conformance.implementations` named `impl`, if there is one."""
    found = tuple(entry_points(group=IMPLEMENTATIONS_GROUP, name=impl))
    return found[0] if found else None


def connector_for(impl: str, *, timeout: float) -> Connector:
    """`impl` names an entry point of `pimem_conformance.implementations` or is a shell-style command."""
    entry_point = in_process_entry_point(impl)
    if entry_point is not None:
        connector = InProcessConnector(entry_point.load(), target=impl)
        connector.timeout = timeout
        return connector
    argv = shlex.split(impl)
    if not argv:
        raise ValueError("--impl needs an entry-point name (e.g. 'reference') or an adapter command")
    return SubprocessConnector(argv, timeout=timeout)
