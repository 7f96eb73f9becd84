"""The adapter protocol (spec/protocol.md) served in-process: `ProtocolServer().handle(request)`.

`pimem serve` wraps the same object in a stdin/stdout loop, so the suite judges one code path.
Each instance is one Pi process: its own clock, its own current session, its own backfill thread.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
import uuid
from datetime import datetime
from typing import Any

import orjson

from . import __version__
from ._echo import echo
from ._errors import AdapterError, IndexUnavailable, protocol_answer
from ._journals import DEFAULT_MAX_LINE_BYTES
from ._maintenance import backfill, claim_lease, release_lease, run_command
from ._memory import Config, Memory
from ._redact import Policy, redaction_policy
from ._tool import DESCRIPTION, LABEL, PARAMETERS, TOOL_NAME, run_tool

__all__ = ["PROFILES", "ProtocolServer", "decode_request", "encode_response", "manifest", "open_config"]

PROTOCOL = 1
PROFILES = ["core", "collector", "backfill", "forget", "context", "ranking", "damage"]
EVENTS = ["session_start", "message_end", "session_compact", "session_tree", "session_shutdown"]
COMMAND_DESCRIPTION = (
    "Memory index: status, index [--verify], rebuild, gc [confirm], forget <entryId|sessionId>; "
    "view (browse it in a local page)"
)


def manifest() -> dict[str, Any]:
    """Everything the Pi integration registers; it calls no other Pi API."""
    return {
        "tools": [{"name": TOOL_NAME, "label": LABEL, "description": DESCRIPTION, "parameters": PARAMETERS}],
        "commands": [{"name": "memory", "description": COMMAND_DESCRIPTION}],
        "events": list(EVENTS),
        "calls": [],
    }


def decode_request(line: bytes) -> Any:
    """One request line as a value; ValueError when it is not JSON at all.

    Python's own parser, not orjson: it keeps integers of any size exact (orjson turns those beyond
    64 bits into floats, so an echoed `seq` would change) and takes what JSON-like writers send
    (NaN, Infinity, lone surrogates), so such a value reaches validation and gets a tool error.
    """
    try:
        return json.loads(line, parse_int=_parse_int)
    except RecursionError as error:
        raise ValueError("nested too deeply") from error


def _parse_int(digits: str) -> int | float:
    # int() refuses more digits than the interpreter's limit (0: none); such a number is out of
    # every range, as a float is
    limit = sys.get_int_max_str_digits()
    return int(digits) if limit == 0 or len(digits) <= limit else float(digits)


def encode_response(response: dict[str, Any]) -> bytes:
    """One response line. An echoed `seq` may be what orjson cannot write (NaN, a lone surrogate,
    an integer beyond 64 bits): then the standard library writes it, with NaN as null."""
    try:
        return orjson.dumps(response) + b"\n"
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        pass
    try:
        # written, read back with every non-finite number as null, and written again
        finite = json.loads(json.dumps(response), parse_constant=lambda constant: None)
        return json.dumps(finite, ensure_ascii=True).encode() + b"\n"
    except (ValueError, RecursionError):
        failed = {"seq": None, "errored": True, "context": {"message": "the response could not be written"}}
        return orjson.dumps(failed) + b"\n"


def _moment(value: Any) -> datetime:
    try:
        if isinstance(value, str):
            return datetime.fromisoformat(value)
    except ValueError:
        pass
    raise AdapterError(f"clock must be an ISO-8601 timestamp string, got {echo(value)}")


class _Instance:
    """One memory as one Pi process runs it. With `on_idle` (the protocol's `background_on_idle`
    setting) its backfill runs only while `idle` is answered, never in a thread of its own."""

    def __init__(self, name: str, memory: Memory, *, on_idle: bool = False) -> None:
        self.memory = memory
        self.owner = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.thread: threading.Thread | None = None
        self.stop = threading.Event()
        self.first = True
        self.on_idle = on_idle
        self.due: bool | None = None  # on_idle: a backfill waits for idle (its `first`), else None
        memory.wake = self.wake

    def _run(self, first: bool) -> None:
        try:
            backfill(self.memory, self.owner, self.stop, first)
        except IndexUnavailable as error:
            print(f"pimem: backfill stopped, index unavailable: {error.detail}", file=sys.stderr)
        except Exception:  # a background thread must never die silently
            print(f"pimem: backfill stopped:\n{traceback.format_exc()}", file=sys.stderr)

    def _defer(self, first: bool) -> None:
        self.due = first if self.due is None else self.due or first
        try:
            claim_lease(self.memory, self.owner)
        except IndexUnavailable as error:
            print(f"pimem: cannot take the backfill lease: {error.detail}", file=sys.stderr)

    def start_backfill(self) -> None:
        self.halt()
        if self.on_idle:
            self._defer(self.first)
            self.first = False
            return
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, args=(self.first,), daemon=True)
        self.first = False
        self.thread.start()

    def wake(self) -> None:
        """Catch up in the background, unless a backfill is running already."""
        if self.on_idle:
            if self.due is None:
                self._defer(False)
        elif self.thread is None or not self.thread.is_alive():
            self.start_backfill()

    def wait(self) -> None:
        if self.due is not None:
            first, self.due = self.due, None
            self.stop = threading.Event()
            self._run(first)
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def halt(self) -> None:
        self.stop.set()
        if self.due is not None:  # a deferred backfill that never ran gives its lease back
            self.due = None
            try:
                release_lease(self.memory, self.owner)
            except IndexUnavailable as error:
                print(f"pimem: cannot release the backfill lease: {error.detail}", file=sys.stderr)
        self.wait()

    def index_current(self) -> None:
        current = self.memory.current_journal()
        if current is not None:
            try:
                self.memory.sync(current)
            except IndexUnavailable as error:  # an event handler never throws into Pi
                print(f"pimem: index unavailable: {error}", file=sys.stderr)


def _redaction(settings: dict[str, Any]) -> Policy:
    """The user's redaction additions from `open`'s settings (the host read them from the user's and
    the project's files; only the user's allowlist)."""
    try:
        return Policy.from_settings(settings.get("redact_patterns"), settings.get("redact_allow"))
    except ValueError as error:
        raise AdapterError(str(error)) from None


def open_config(workspace: dict[str, Any], settings: dict[str, Any], tz: str) -> Config:
    """The Config of an `open` request's workspace and settings (spec/protocol.md)."""
    return Config(
        state_dir=workspace["state_dir"],
        agent_dir=workspace["agent_dir"],
        session_dirs=list(workspace["session_dirs"]),
        home=workspace["home"],
        cwd=workspace["cwd"],
        session_file=workspace["session_file"],
        allow_global=settings.get("allow_global") is True,
        lease_seconds=int(settings.get("lease_seconds", 120)),
        max_line_bytes=int(settings.get("max_line_bytes", DEFAULT_MAX_LINE_BYTES)),
        tz=tz,
        redaction=_redaction(settings),
    )


class ProtocolServer:
    """One adapter: any number of named instances, each with its own clock and backfill."""

    def __init__(self) -> None:
        self.instances: dict[str, _Instance] = {}

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        seq = request.get("seq") if isinstance(request, dict) else None
        try:
            body = self._dispatch(request)
        except Exception as error:  # the protocol reports every crash as `errored`, never as silence
            return {"seq": seq, **protocol_answer(error)}
        return {"seq": seq, **body}

    def _instance(self, request: dict[str, Any]) -> _Instance:
        name = request.get("instance")
        if not isinstance(name, str) or name not in self.instances:
            raise AdapterError(f"unknown instance {echo(name)}")
        return self.instances[name]

    def _dispatch(self, request: dict[str, Any]) -> dict[str, Any]:
        command = request.get("cmd")
        if command == "start":
            if request.get("protocol") != PROTOCOL:
                raise AdapterError(
                    f"protocol {echo(request.get('protocol'))} is not spoken; this adapter speaks 1"
                )
            implementation = {"name": "pimem", "version": __version__, "language": "python"}
            return {"protocol": PROTOCOL, "implementation": implementation, "profiles": list(PROFILES)}
        if command == "open":
            return self._open(request)
        if command == "manifest":
            return manifest()
        if command == "stop":
            for name in list(self.instances):
                self._close(name)
            return {}
        instance = self._instance(request)
        if command == "event":
            self._event(instance, request.get("name"), request.get("data") or {})
            return {}
        if command == "tool":
            if request.get("name") != TOOL_NAME:
                raise AdapterError(f"unknown tool {echo(request.get('name'))}")
            leaf = request.get("leafId")
            if leaf is not None and not isinstance(leaf, str):
                raise AdapterError(f"leafId must be a string or null, got {echo(leaf)}")
            return run_tool(instance.memory, request.get("arguments"), leaf_id=leaf)
        if command == "command":
            if request.get("name") != "memory":
                raise AdapterError(f"unknown command {echo(request.get('name'))}")
            with redaction_policy(instance.memory.config.redaction):
                return run_command(instance.memory, str(request.get("args") or ""))
        if command == "idle":
            instance.wait()
            return {}
        if command == "clock":
            instance.memory.clock = _moment(request.get("now"))
            return {}
        if command == "close":
            self._close(str(request.get("instance")))
            return {}
        raise AdapterError(f"unknown cmd {echo(command)}")

    def _open(self, request: dict[str, Any]) -> dict[str, Any]:
        name = request.get("instance")
        if not isinstance(name, str):
            raise AdapterError("open needs an instance name")
        if name in self.instances:
            self._close(name)
        clock, settings = request["clock"], request["settings"]
        config = open_config(request["workspace"], settings, clock["tz"])
        memory = Memory(config, _moment(clock["now"]))
        self.instances[name] = _Instance(name, memory, on_idle=settings.get("background_on_idle") is True)
        return {"instance": name}

    def _event(self, instance: _Instance, name: Any, data: dict[str, Any]) -> None:
        if name == "session_start":
            instance.halt()  # the running pass belongs to the previous session
            config = instance.memory.config
            config.session_file = data.get("session_file", config.session_file)
            config.cwd = data.get("cwd", config.cwd)
            instance.start_backfill()
        elif name == "session_shutdown":
            instance.halt()
        elif name in ("message_end", "session_compact", "session_tree"):
            instance.index_current()

    def _close(self, name: str) -> None:
        instance = self.instances.pop(name)
        instance.halt()
        instance.memory.close()
