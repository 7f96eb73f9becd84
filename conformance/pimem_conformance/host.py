"""Serve an in-process implementation on stdin/stdout, as an adapter process of its own.

`python -m pimem_conformance.host <entry-point name | module:attribute>` loads the object (an
entry point of `pimem_conformance.implementations`, or any importable factory) and answers one
JSON request per line with `handle`. The runner starts one of these for every further process of
a multi-process case (`processes: N`), so the instances of an in-process implementation run in
separate operating-system processes exactly as a subprocess adapter's would, and share nothing
but the state dir.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

from pimem_conformance._connector import ProtocolHandler, in_process_entry_point

__all__ = ["load_factory", "serve"]


def load_factory(target: str) -> Callable[[], ProtocolHandler]:
    """The factory an entry-point name or a `module:attribute` spec names."""
    entry_point = in_process_entry_point(target)
    if entry_point is not None:
        factory: Callable[[], ProtocolHandler] = entry_point.load()
        return factory
    module, _, attribute = target.partition(":")
    if not attribute:
        raise ValueError(f"{target!r} is neither an implementation entry point nor module:attribute")
    loaded: Callable[[], ProtocolHandler] = getattr(importlib.import_module(module), attribute)
    return loaded


def serve(handler: ProtocolHandler) -> None:
    """Answer requests from stdin until `stop` or the end of input."""
    for line in sys.stdin:
        if not line.strip():
            continue
        request: Any = json.loads(line)
        try:
            response = handler.handle(request)
        except Exception as error:  # a crash is an errored answer, as the protocol wants
            seq = request.get("seq") if isinstance(request, dict) else None
            context = {"message": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
            response = {"seq": seq, "errored": True, "context": context}
        sys.stdout.write(json.dumps(response, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if isinstance(request, dict) and request.get("cmd") == "stop":
            break


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m pimem_conformance.host <entry-point | module:attribute>", file=sys.stderr)
        return 2
    serve(load_factory(argv[0])())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
