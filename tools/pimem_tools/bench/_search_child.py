"""The search measurement, run in a process of its own so that its peak RSS is the search's alone.

`python -m pimem_tools.bench._search_child SPEC OUT` reads SPEC (JSON: workspace, now, the queries'
arguments and categories), opens one `ToolClient` over the index, and for each query in turn:
- times the tool call end to end (`time_searches`), recording the FTS5 expressions the reference's
  search asks its store candidates for;
- right after it, times the store's bare candidate MATCH on exactly those expressions (the floor),
  so each pair is measured under the same machine load.

It writes OUT (JSON): the samples, categories, match kinds, hits, floor samples and the SQL.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson

from pimem_tools.bench._latency import SearchTimes, time_searches
from pimem_tools.bench._queries import Query
from pimem_tools.bench._reference import SearchFloor, ToolClient, recorded_candidate_matches

__all__ = ["measure_searches"]


def measure_searches(spec: dict[str, Any]) -> dict[str, Any]:
    queries = [Query(category, arguments) for category, arguments in spec["queries"]]
    workspace = spec["workspace"]
    client = ToolClient(workspace, spec["now"])
    floor = SearchFloor(Path(workspace["state_dir"]))
    times = SearchTimes()
    floor_ms: list[float] = []
    candidate_queries: list[int] = []
    caps: set[int] = set()
    try:
        for query in queries:
            with recorded_candidate_matches() as matches:
                time_searches(client, [query], into=times)
            floor_ms.append(floor.time_ms(matches))
            candidate_queries.append(len(matches))
            caps.update(cap for _, cap in matches)
    finally:
        floor.close()
        client.close()
    return {
        "samples_ms": times.samples_ms,
        "categories": times.categories,
        "matches": times.matches,
        "hits": [list(hit) for hit in times.hits],
        "floor_ms": floor_ms,
        "candidate_queries": candidate_queries,
        "floor_sql": [floor.sql_of(cap) for cap in sorted(caps)],
    }


def main(argv: list[str]) -> int:
    spec_path, out_path = (Path(arg) for arg in argv)
    result = measure_searches(orjson.loads(spec_path.read_bytes()))
    out_path.write_bytes(orjson.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
