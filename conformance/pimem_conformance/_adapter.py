"""A protocol session over a connector: handshake, sequence numbers, response checks.

Everything above this module talks in commands (`adapter.send("tool", ...)`); everything below
is the transport. Protocol faults surface as an AdapterError of their kind (a wrong `seq`:
framing; an `errored` answer: crash; a failed handshake: handshake; with `validate`, a response
outside its schema: schema), so the runner can record the case as `error`, restart the adapter
and go on.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from pimem_conformance._connector import (
    AdapterCrashed,
    AdapterError,
    Connector,
    FramingError,
    HandshakeFailed,
    SchemaViolation,
)
from pimem_conformance._schemas import SchemaSet, protocol_schema_id

__all__ = ["PROTOCOL_VERSION", "Adapter", "Implementation"]

PROTOCOL_VERSION = 1


@dataclass(frozen=True)
class Implementation:
    """What an adapter declared in its `start` response."""

    name: str
    version: str
    language: str
    homepage: str | None
    profiles: tuple[str, ...]

    def as_json(self) -> dict[str, Any]:
        described: dict[str, Any] = {"name": self.name, "version": self.version, "language": self.language}
        if self.homepage is not None:
            described["homepage"] = self.homepage
        return described


class Adapter:
    """One implementation under test, reached through `connector`.

    `validate` checks every response (and, as a self-check, every request) against the
    protocol schemas in `schemas`.
    """

    def __init__(self, connector: Connector, schemas: SchemaSet, *, validate: bool = False) -> None:
        self.connector = connector
        self._schemas = schemas
        self._validate = validate
        self._seq = itertools.count(1)
        self.implementation: Implementation | None = None  # None: the next case starts it again
        self.declared: Implementation | None = None  # what the last successful start declared

    def start(self) -> Implementation:
        response = self._exchange({"cmd": "start", "protocol": PROTOCOL_VERSION}, validate=False)
        if response.get("protocol") != PROTOCOL_VERSION:
            raise HandshakeFailed(
                f"the adapter speaks protocol {response.get('protocol')!r}, "
                f"this runner speaks {PROTOCOL_VERSION}"
            )
        # The handshake is always validated: nothing else works without its fields.
        problems = self._schemas.errors(protocol_schema_id("start", "response"), response)
        if problems:
            raise HandshakeFailed("invalid start response: " + "; ".join(problems))
        described = response["implementation"]
        self.implementation = self.declared = Implementation(
            name=described["name"],
            version=described["version"],
            language=described["language"],
            homepage=described.get("homepage"),
            profiles=tuple(response["profiles"]),
        )
        return self.implementation

    def peer(self) -> Adapter:
        """A started adapter of the same implementation in another process (ValueError if none)."""
        other = Adapter(self.connector.peer(), self._schemas, validate=self._validate)
        other.start()
        return other

    def restart(self) -> Implementation:
        self.connector.close()
        return self.start()

    def send(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """Send one request; return its response without `seq`."""
        response = self._exchange({"cmd": cmd, **fields}, validate=self._validate)
        return {key: value for key, value in response.items() if key != "seq"}

    def send_raw(self, message: dict[str, Any], *, errored_ok: bool) -> dict[str, Any]:
        """Send a case's own message as written (it may be malformed on purpose) and return the
        response without `seq`. With `errored_ok`, an `errored` answer is returned instead of
        raised: the case expects it, so the adapter is not broken."""
        response = self._exchange(message, validate=False, errored_ok=errored_ok)
        errored = response.get("errored") is True
        # An ordinary answer where an errored one was expected fails the step; its shape is moot.
        if self._validate and (errored or not errored_ok):
            kind = "errored" if errored else str(message.get("cmd"))
            schema_id = protocol_schema_id(kind, "response")
            problems = self._schemas.errors(schema_id, response) if self._schemas.has(schema_id) else []
            if problems:
                raise SchemaViolation(f"{kind} response violates the protocol schema: " + "; ".join(problems))
        return {key: value for key, value in response.items() if key != "seq"}

    def _exchange(
        self, fields: dict[str, Any], *, validate: bool, errored_ok: bool = False
    ) -> dict[str, Any]:
        seq = next(self._seq)
        message = {"seq": seq, **fields}
        cmd = fields.get("cmd")
        if validate:
            problems = self._schemas.errors(protocol_schema_id(str(cmd), "request"), message)
            if problems:
                raise ValueError(f"the runner built an invalid {cmd} request: " + "; ".join(problems))
        try:
            response = self.connector.request(message)
        except AdapterError as exc:
            exc.request = message  # what the adapter was left holding
            raise
        if response.get("seq") != seq:
            raise FramingError(
                f"response to {cmd!r} carries seq {response.get('seq')!r}, expected {seq!r}", request=message
            )
        if response.get("errored") is True:
            if errored_ok:
                return response
            context = response.get("context")
            detail = context if isinstance(context, dict) else {}
            raise AdapterCrashed(
                f"the adapter reported an error on {cmd!r}: {detail.get('message', context)!r}",
                traceback=str(detail.get("traceback", "")),
                request=message,
            )
        if validate:
            problems = self._schemas.errors(protocol_schema_id(str(cmd), "response"), response)
            if problems:
                raise SchemaViolation(
                    f"{cmd} response violates the protocol schema: " + "; ".join(problems), request=message
                )
        return response

    def stop(self) -> None:
        """Ask the adapter to exit, then release it whatever it answered."""
        try:
            self.send("stop")
        except AdapterError:
            pass  # an adapter that cannot even stop is released below all the same
        finally:
            self.connector.close()
