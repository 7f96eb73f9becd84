"""One `reference/` tree answering the query set, in a process of its own, one query at a time.

`python -m pimem_tools.bench._search_child SPEC` runs with that tree's `reference/` first on
PYTHONPATH, so `import pimem` is that tree's code. It reads SPEC (JSON: workspace, now, the queries'
arguments and categories), opens one `ToolClient` over the tree's own index (the seam every tree
shares: `pimem._serve.ProtocolServer.handle`, each request and response through orjson as over
`pimem serve`'s pipe), says `{"ready": true}` on stdout, then answers one command per stdin line:

- `{"time": i}`: query i through the tool, timed with `perf_counter` around the call in this
  process (the pipe to the bench is outside the timing), and the CPU time of that thread meanwhile
  (less moved by other processes than wall time): `{"ms", "cpu_ms", "match", "hits"}`;
- `{"count": i}`: query i again, untimed, with `_work.WorkCounter` counting what it does;
- `{"stop": true}`: close the client and end.

The bench drives several such processes (one per tree) in turn, query by query, so each pair of
calls of the same query is measured under the same machine load.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from pimem_tools.bench._reference import ToolClient
from pimem_tools.bench._work import WorkCounter

__all__ = ["serve"]


def _search(client: ToolClient, arguments: dict[str, Any]) -> tuple[float, float, dict[str, Any]]:
    """Wall and CPU milliseconds of one search (the CPU time of this thread, which runs it all)."""
    started, cpu = time.perf_counter(), time.thread_time()
    response = client.tool({**arguments, "limit": 10})
    ended, cpu_ended = time.perf_counter(), time.thread_time()
    return (ended - started) * 1000, (cpu_ended - cpu) * 1000, response["details"]


def serve(spec: dict[str, Any], commands: Any, answers: Any) -> None:
    counter = WorkCounter()  # before the client opens the index, so it sees the connection
    queries = [arguments for _, arguments in spec["queries"]]
    client = ToolClient(spec["workspace"], spec["now"])

    def say(message: dict[str, Any]) -> None:
        answers.write(orjson.dumps(message) + b"\n")
        answers.flush()

    import pimem  # the tree's code, first on PYTHONPATH: said, so the bench can check which ran

    say({"ready": True, "pimem": str(Path(pimem.__file__).resolve().parent)})
    try:
        for line in commands:
            command = orjson.loads(line)
            if "time" in command:
                elapsed, cpu, details = _search(client, queries[command["time"]])
                hits = [[result["entryId"], result["source"]] for result in details["results"]]
                say({"ms": elapsed, "cpu_ms": cpu, "match": details["match"], "hits": hits})
            elif "count" in command:
                with counter.counting() as counts:
                    _search(client, queries[command["count"]])
                say(counts)
            else:
                break
    finally:
        client.close()


def main(argv: list[str]) -> int:
    (spec_path,) = (Path(arg) for arg in argv)
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever the reference might print goes to stderr, never into the answers
    sys.stdout = sys.stderr
    serve(orjson.loads(spec_path.read_bytes()), sys.stdin.buffer, answers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
