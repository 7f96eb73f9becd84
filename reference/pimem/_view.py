"""`pimem view`: the memory in a browser, read-only and token-gated, on 127.0.0.1 only.

The viewer is one more client of the tool: every journal text it serves comes from `run_tool`
(read back from the journal and redacted there), the figures from `status`. It never opens a
journal itself, takes ids and handles only (a project is a handle of a discovered project root,
never a path) and has no endpoint that writes.

The gate, in order: the Host header names 127.0.0.1 and this port (DNS rebinding), a cross-origin
Origin or cross-site fetch is refused, then the per-run token: the URL printed once carries it,
the first request trades it for an HttpOnly SameSite=Strict cookie and is redirected to the same
URL without it. Nothing logged ever holds a query string or a raw request line.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, TextIO
from urllib.parse import parse_qs, urlencode, urlsplit

import orjson

from ._extract import KINDS
from ._maintenance import status
from ._memory import Memory
from ._query import query_terms
from ._redact import redact_tree
from ._scope import SCOPES, project_root
from ._serve import _Instance
from ._tool import run_tool

__all__ = ["CSP", "ViewServer", "Viewer", "run_viewer"]

LOOPBACK = "127.0.0.1"
PAGE_DIR = Path(__file__).with_name("_view_page")
# Just what the page needs: its own script, stylesheet and JSON; no inline code, no other origin.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/app.css": ("app.css", "text/css; charset=utf-8"),
}
ALL = "all"  # the project handle that means every project (the tool's global scope)
_MAX_SESSIONS = 200


class BadRequest(Exception):
    """A request the viewer answers with 400 or 404 and a one-line reason."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass(frozen=True)
class Project:
    handle: str
    root: str
    name: str


_NONE = Project("", "", "")


def _handle(root: str) -> str:
    return hashlib.sha256(root.encode("utf-8", "surrogatepass")).hexdigest()[:12]


_Endpoint = Callable[["Viewer", dict[str, str]], dict[str, Any]]


class Viewer:
    """The JSON the page reads. One lock: the memory and its index connection are one client."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.home_cwd = memory.config.cwd
        self.lock = threading.Lock()
        self._projects: tuple[tuple[object, int], tuple[Project, list[Project]]] = ((None, -1), (_NONE, []))

    # -- projects --------------------------------------------------------------------------------

    def projects(self) -> tuple[Project, list[Project]]:
        """The project the viewer opened on, and every project with sessions (plus that one).

        Worked out again only when discovery changed (a journal appeared, went or changed its header)."""
        found = self.memory.discover()
        key = (self.memory.catalog.generation, len(found.journals))
        if self._projects[0] != key:
            home = self.memory.config.home
            cwds = {journal.cwd for journal in found.journals}
            roots = {project_root(cwd, home, cwds) for cwd in cwds}
            current = project_root(self.home_cwd, home, cwds)
            roots.add(current)
            projects = sorted(
                (Project(_handle(root), root, os.path.basename(root) or root) for root in roots),
                key=lambda project: (project.name.casefold(), project.root),
            )
            self._projects = (key, (next(p for p in projects if p.root == current), projects))
        return self._projects[1]

    def _project(self, handle: str | None) -> Project:
        current, projects = self.projects()
        if handle is None:
            return current
        found = next((project for project in projects if project.handle == handle), None)
        if found is None:
            raise BadRequest(404, "unknown_project", f"no project with handle {handle!r}")
        return found

    # -- endpoints -------------------------------------------------------------------------------

    def answer(self, route: str, params: dict[str, str]) -> dict[str, Any]:
        endpoint = self._ENDPOINTS.get(route)
        if endpoint is None:
            raise BadRequest(404, "not_found", f"no endpoint {route}")
        allowed, method = endpoint
        unknown = sorted(set(params) - set(allowed))
        if unknown:
            raise BadRequest(
                400, "bad_argument", f"unknown parameter {unknown[0]!r} (known: {', '.join(allowed)})"
            )
        with self.lock:
            try:
                body: dict[str, Any] = method(self, params)
            finally:
                self.memory.config.cwd = self.home_cwd
        return body

    def _meta(self, params: dict[str, str]) -> dict[str, Any]:
        current, projects = self.projects()
        return _redacted(
            {
                "current": current.handle,
                "projects": [{"handle": p.handle, "name": p.name, "root": p.root} for p in projects],
                "scopes": list(SCOPES),
                "kinds": list(KINDS),
                "session": self.memory.config.session_file is not None,
            }
        )

    def _tool(self, params: dict[str, str], arguments: dict[str, Any]) -> dict[str, Any]:
        handle = params.get("project")
        if handle == ALL:  # every project: the tool's global scope, nothing narrower
            if arguments.get("scope") not in (None, "global"):
                raise BadRequest(400, "bad_argument", 'project "all" is the global scope; omit "scope"')
            arguments = {**arguments, "scope": "global"}
        project = self._project(None if handle == ALL else handle)
        self.memory.config.cwd = project.root
        answer = run_tool(self.memory, {k: v for k, v in arguments.items() if v is not None})
        if "error" in answer:
            raise BadRequest(400, answer["error"]["code"], answer["error"]["message"])
        details: dict[str, Any] = answer["details"]
        return {"project": handle if handle == ALL else project.handle, **details}

    def _search(self, params: dict[str, str]) -> dict[str, Any]:
        query = params.get("q") or None
        body = self._tool(
            params,
            {
                "action": "search",
                "query": query,
                "scope": params.get("scope"),
                "kind": params.get("kind") or None,
                "since": params.get("since") or None,
                "until": params.get("until") or None,
                "limit": _integer(params, "limit"),
            },
        )
        body["highlight"] = query_terms(query) if query else []
        return body

    def _read(self, params: dict[str, str]) -> dict[str, Any]:
        return self._of_entry(params, "read", ("offset",))

    def _around(self, params: dict[str, str]) -> dict[str, Any]:
        return self._of_entry(params, "around", ("before", "after"))

    def _of_entry(self, params: dict[str, str], action: str, numbers: tuple[str, ...]) -> dict[str, Any]:
        """An action on one entry (by id or source handle), with its integer parameters."""
        arguments = {
            "action": action,
            "entryId": params.get("entry"),
            "source": params.get("source"),
            "scope": params.get("scope"),
        }
        return self._tool(params, {**arguments, **{name: _integer(params, name) for name in numbers}})

    def _sessions(self, params: dict[str, str]) -> dict[str, Any]:
        """Sessions per project, newest first, each with its summaries; forgotten sessions are gone."""
        handle = params.get("project")
        projects = self.projects()[1] if handle == ALL else [self._project(handle)]
        return _redacted({"groups": [self._project_sessions(project) for project in projects]})

    def _project_sessions(self, project: Project) -> dict[str, Any]:
        memory = self.memory
        memory.config.cwd = project.root
        hidden = memory.forget.now()
        journals = [
            journal
            for journal in memory.journals(memory.discover(), "project")
            if not hidden(journal.session_id, "")
        ]
        journals.sort(key=lambda journal: (journal.started, journal.path), reverse=True)
        sessions = []
        for journal in journals[:_MAX_SESSIONS]:
            found = self._tool(
                {"project": project.handle},
                {"action": "summaries", "scope": "project", "sessionId": journal.session_id, "limit": 50},
            )
            sessions.append(
                {
                    "sessionId": journal.session_id,
                    "started": journal.started,
                    "cwd": journal.cwd,
                    "bytes": journal.size,
                    "summaries": found["results"],
                }
            )
        return {
            "project": project.handle,
            "name": project.name,
            "sessions": sessions,
            "total": len(journals),
            "truncated": len(journals) > _MAX_SESSIONS,
        }

    def _status(self, params: dict[str, str]) -> dict[str, Any]:
        return _redacted(status(self.memory))

    _ENDPOINTS: ClassVar[
        dict[str, tuple[tuple[str, ...], Callable[[Viewer, dict[str, str]], dict[str, Any]]]]
    ] = {
        "/api/meta": ((), _meta),
        "/api/search": (("project", "q", "scope", "kind", "since", "until", "limit"), _search),
        "/api/read": (("project", "entry", "source", "scope", "offset"), _read),
        "/api/around": (("project", "entry", "source", "scope", "before", "after"), _around),
        "/api/sessions": (("project",), _sessions),
        "/api/status": ((), _status),
    }


def _redacted(value: dict[str, Any]) -> dict[str, Any]:
    """What is not the tool's own answer is redacted like it (header cwds, figures)."""
    redacted: dict[str, Any] = redact_tree(value)
    return redacted


def _integer(params: dict[str, str], name: str) -> int | None:
    value = params.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise BadRequest(400, "bad_argument", f"{name!r} must be an integer, got {value!r}") from None


# -- HTTP ----------------------------------------------------------------------------------------


class ViewServer(ThreadingHTTPServer):
    """Bound to 127.0.0.1 on a port the OS picks; `url` carries the token, once."""

    daemon_threads = True

    def __init__(self, viewer: Viewer, log: TextIO | None = None) -> None:
        super().__init__((LOOPBACK, 0), _Handler)
        self.viewer = viewer
        self.token = secrets.token_urlsafe(32)
        self.cookie_value = secrets.token_urlsafe(32)
        self.port = int(self.server_address[1])
        self.host = f"{LOOPBACK}:{self.port}"
        self.origin = f"http://{self.host}"
        self.cookie_name = f"pimem_view_{self.port}"  # cookies ignore ports; two viewers never share one
        self.log = log if log is not None else sys.stderr

    @property
    def url(self) -> str:
        return f"{self.origin}/?{urlencode({'token': self.token})}"


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (delayed ACK)

    def version_string(self) -> str:
        return "pimem-view"

    # http.server logs every request line, query string (and so the token) included: never that.
    def log_message(self, format: str, *args: Any) -> None:
        return

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        route = urlsplit(self.path).path if isinstance(self.path, str) else "?"
        try:
            self.server.log.write(f"pimem view: {self.command} {route} {code}\n")
            self.server.log.flush()
        except (OSError, ValueError):  # nobody reads the log any more (Pi went away)
            pass

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests and unknown methods get the same headers as every answer, and JSON."""
        self.close_connection = True
        self._json(code, {"error": {"code": "http", "message": message or self.responses[code][0]}})

    def _send(self, code: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, value: Any) -> None:
        self._send(code, orjson.dumps(value), "application/json")

    def _refuse(self, message: str) -> None:
        self._json(403, {"error": {"code": "forbidden", "message": message}})

    def _gate(self) -> str | None:
        """Why this request is refused, or None."""
        server = self.server
        if self.headers.get("Host") != server.host:
            return f"the Host header must be {server.host}"
        origin = self.headers.get("Origin")
        if origin is not None and origin != server.origin:
            return "cross-origin requests are refused"
        if self.headers.get("Sec-Fetch-Site", "none") not in ("none", "same-origin"):
            return "cross-site requests are refused"
        return None

    def _cookie_ok(self) -> bool:
        try:
            jar = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            return False
        morsel = jar.get(self.server.cookie_name)
        return morsel is not None and hmac.compare_digest(
            morsel.value.encode(), self.server.cookie_value.encode()
        )

    def do_GET(self) -> None:
        refused = self._gate()
        if refused:
            self._refuse(refused)
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        if "token" in query:
            self._trade(parts.path, query)
        elif not self._cookie_ok():
            self._refuse("open the URL `pimem view` printed (it carries this run's token)")
        elif parts.path in _STATIC:
            name, content_type = _STATIC[parts.path]
            self._send(200, (PAGE_DIR / name).read_bytes(), content_type)
        else:
            self._api(parts.path, query)

    do_HEAD = do_GET

    def _refuse_method(self) -> None:
        self.close_connection = True  # a body may follow that is never read
        body = orjson.dumps({"error": {"code": "read_only", "message": "the viewer is read-only: GET only"}})
        self._send(405, body, "application/json", {"Allow": "GET, HEAD"})

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _refuse_method

    def _trade(self, path: str, query: dict[str, list[str]]) -> None:
        """The token for a cookie, and the same URL without the token."""
        tokens = query.pop("token")
        if len(tokens) != 1 or not hmac.compare_digest(tokens[0].encode(), self.server.token.encode()):
            self._refuse("wrong token")
            return
        rest = urlencode(query, doseq=True)
        cookie = f"{self.server.cookie_name}={self.server.cookie_value}; HttpOnly; SameSite=Strict; Path=/"
        location = (path if path in _STATIC else "/") + (f"?{rest}" if rest else "")
        self._send(303, b"", "text/plain", {"Location": location, "Set-Cookie": cookie})

    def _api(self, route: str, query: dict[str, list[str]]) -> None:
        repeated = [name for name, values in query.items() if len(values) != 1]
        if repeated:
            self._json(400, {"error": {"code": "bad_argument", "message": f"{repeated[0]!r} given twice"}})
            return
        try:
            body = self.server.viewer.answer(route, {name: values[0] for name, values in query.items()})
        except BadRequest as error:
            self._json(error.status, {"error": {"code": error.code, "message": error.message}})
            return
        self._json(200, body)


# -- the command ---------------------------------------------------------------------------------


def _has_display() -> bool:
    return sys.platform == "darwin" or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _watch_parent(pid: int, server: ViewServer) -> None:
    """Stop when the process that started the viewer (Pi) is gone, even if it never said so."""
    stop = threading.Event()
    while not stop.wait(2.0):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            server.shutdown()
            return
        except PermissionError:
            continue


def run_viewer(memory: Memory, *, open_browser: bool, parent: int | None, out: TextIO) -> int:
    """Serve until interrupted (SIGINT, SIGTERM) or until `parent` exits; the index is kept current."""
    instance = _Instance("view", memory)
    instance.start_backfill()
    server = ViewServer(Viewer(memory))
    signal.signal(signal.SIGTERM, lambda signum, frame: threading.Thread(target=server.shutdown).start())
    if parent is not None:
        threading.Thread(target=_watch_parent, args=(parent, server), daemon=True).start()
    out.write(f"pimem view: {server.url}\n")
    out.flush()
    if open_browser and _has_display():
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        instance.halt()
        memory.close()
    return 0
