"""The viewer's search latency: the same searches through `pimem view`'s HTTP endpoint.

One in-process viewer over the same index and journals as the tool client, one keep-alive
connection, the cookie traded for the token first; each figure is a whole GET (request written,
JSON read and parsed), timed with `perf_counter`. Each query goes to the tool right before it goes
to the viewer, so both lists are measured under the same load (this machine is shared).
"""

from __future__ import annotations

import http.client
import io
import threading
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson

from pimem_tools.bench._latency import time_searches
from pimem_tools.bench._queries import Query
from pimem_tools.bench._reference import ToolClient

__all__ = ["time_viewer_searches"]


def _params(arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's search arguments as the viewer's query string (global is project "all")."""
    params = {"q": arguments["query"], "limit": 10}
    for name in ("kind", "since", "until"):
        if arguments.get(name) is not None:
            params[name] = arguments[name]
    if arguments.get("scope") == "global":
        params["project"] = "all"
    return params


def time_viewer_searches(
    workspace: dict[str, Any], now: str, queries: list[Query], client: ToolClient
) -> tuple[list[float], list[float]]:
    """(viewer samples, tool samples), one of each per query, taken in turn."""
    from pimem._memory import Memory
    from pimem._serve import open_config
    from pimem._view import Viewer, ViewServer

    config = open_config(workspace, {"allow_global": True}, "UTC")
    memory = Memory(config, datetime.fromisoformat(now))
    server = ViewServer(Viewer(memory), log=io.StringIO())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
    samples: list[float] = []
    tool_samples: list[float] = []
    try:
        connection.request("GET", "/?" + urlsplit(server.url).query)
        login = connection.getresponse()
        login.read()
        cookie = str(login.getheader("Set-Cookie", "")).split(";", 1)[0]
        headers = {"Cookie": cookie}
        for query in queries:
            tool_samples += time_searches(client, [query]).samples_ms
            path = "/api/search?" + urlencode(_params(query.arguments))
            started = time.perf_counter()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = orjson.loads(response.read())
            samples.append((time.perf_counter() - started) * 1000)
            if response.status != 200:
                raise RuntimeError(f"the viewer answered {response.status} to {path}: {body}")
    finally:
        connection.close()
        server.shutdown()
        server.server_close()
        memory.close()
    return samples, tool_samples
