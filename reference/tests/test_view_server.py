"""`pimem view` through real HTTP: the security points of the viewer, each with its positive twin,
and the viewer showing exactly what the tool shows (it is one more client of the same code)."""

from __future__ import annotations

import hashlib
import io
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from viewer_kit import (
    BIG_CWD,
    ENV_VALUE,
    FORGOTTEN_TEXT,
    HOME,
    INJECTED,
    MARKER,
    PLANTED_CWD,
    TREE_CWD,
    RunningViewer,
    pimem,
    planted_viewer,
    running_viewer,
    secret_windows,
)

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@pytest.fixture(scope="module")
def viewer() -> Iterator[RunningViewer]:
    with planted_viewer() as running:
        assert running.login().status == 303
        yield running


@pytest.fixture(scope="module")
def corpus(viewer: RunningViewer) -> Path:
    return viewer.root


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((root / "journals").rglob("*")):
        if path.is_file():
            digest.update(str(path).encode() + path.read_bytes())
    forget = root / "state" / "forget.json"
    digest.update(forget.read_bytes() if forget.exists() else b"")
    return digest.hexdigest()


def _handle(viewer: RunningViewer, root: str) -> str:
    projects = viewer.api("meta")["projects"]
    return next(project["handle"] for project in projects if project["root"] == root)


# -- binding -------------------------------------------------------------------------------------


def test_it_binds_loopback_on_a_port_the_os_picks(corpus: Path, viewer: RunningViewer) -> None:
    assert viewer.url.startswith("http://127.0.0.1:")
    with running_viewer(corpus, PLANTED_CWD) as second:
        assert second.port != viewer.port  # no fixed port: each run gets its own
        assert second.token != viewer.token  # and its own token
    # the listening socket is 127.0.0.1:<port>, never a wildcard address (Linux's table of sockets)
    listening = Path(f"/proc/{viewer.process.pid}/net/tcp").read_text().splitlines()[1:]
    local = [fields[1] for fields in (line.split() for line in listening) if fields[3] == "0A"]
    assert f"0100007F:{viewer.port:04X}" in local
    assert f"00000000:{viewer.port:04X}" not in local


def test_other_addresses_of_the_host_do_not_answer(viewer: RunningViewer) -> None:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
            address = probe.getsockname()[0]
    except OSError:
        pytest.skip("this host has no address but loopback")
    if address.startswith("127."):
        pytest.skip("this host has no address but loopback")
    with pytest.raises(OSError), socket.create_connection((address, viewer.port), timeout=5):
        pass
    with socket.create_connection(("127.0.0.1", viewer.port), timeout=5):
        pass  # the twin: loopback does answer


# -- the token -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/app.js", "/app.css", "/api/meta", "/api/search?q=x", "/api/status"])
def test_without_the_token_every_path_is_403(viewer: RunningViewer, path: str) -> None:
    assert viewer.request(path, cookie=False).status == 403
    assert viewer.request(path, headers={"Cookie": "pimem_view_1=nope"}, cookie=False).status == 403
    assert viewer.request(path).status == 200  # the twin: with the cookie the token bought


def test_a_wrong_token_is_403_and_buys_no_cookie(viewer: RunningViewer) -> None:
    wrong = viewer.token[:-1] + ("A" if viewer.token[-1] != "A" else "B")
    for token in (wrong, "", viewer.token + "x"):
        reply = viewer.request("/?" + urlencode({"token": token}), cookie=False)
        assert reply.status == 403
        assert reply.headers.get("Set-Cookie") is None


def test_the_token_is_traded_for_a_strict_httponly_cookie_and_a_clean_url(viewer: RunningViewer) -> None:
    reply = viewer.request("/?" + urlencode({"token": viewer.token, "q": "keep"}), cookie=False)
    assert reply.status == 303
    assert reply.headers["Location"] == "/?q=keep"  # the token is gone, the rest stays
    cookie = reply.headers["Set-Cookie"]
    assert f"pimem_view_{viewer.port}=" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    value = cookie.split(";", 1)[0]
    assert viewer.token not in value  # the cookie is its own secret, not the token again
    assert viewer.request("/", headers={"Cookie": value}, cookie=False).status == 200


def test_the_token_and_cookie_are_compared_in_constant_time(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server runs in this process here, to see which comparison it calls."""
    import hmac

    from pimem import _view
    from pimem._memory import Config, Memory

    compared: list[tuple[bytes, bytes]] = []
    constant_time = hmac.compare_digest

    def recording(left: bytes, right: bytes) -> bool:
        compared.append((left, right))
        return constant_time(left, right)

    monkeypatch.setattr(_view.hmac, "compare_digest", recording)
    config = Config(
        state_dir=str(corpus / "state"),
        agent_dir=str(corpus / "journals" / "agent"),
        home=HOME,
        cwd=PLANTED_CWD,
        index_path=str(corpus / "state" / "in-process.sqlite"),
    )
    server = _view.ViewServer(_view.Viewer(Memory(config)), log=io.StringIO())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        running = RunningViewer(process=None, url=server.url)  # type: ignore[arg-type]
        assert running.login().status == 303
        assert running.request("/").status == 200
    finally:
        server.shutdown()
        server.server_close()
    assert (server.token.encode(), server.token.encode()) in compared
    assert (server.cookie_value.encode(), server.cookie_value.encode()) in compared


def test_the_token_is_never_logged(corpus: Path) -> None:
    with running_viewer(corpus, PLANTED_CWD) as fresh:
        fresh.login()
        fresh.request("/api/nothing?token=" + fresh.token)
        fresh.request("/?token=" + fresh.token + "&token=" + fresh.token)
        fresh.request("/api/search?" + urlencode({"q": fresh.token}))
        fresh.request("/?token=wrong")
        # a malformed request line holding the token: http.server would log it raw
        with socket.create_connection(("127.0.0.1", fresh.port), timeout=10) as raw:
            raw.sendall(f"GET /?token={fresh.token} HTTP/9.9 extra\r\n\r\n".encode())
            raw.recv(4096)
    log = fresh.stderr_text()
    assert fresh.token not in log
    assert "GET / 303" in log and "GET /api/search 200" in log  # the twin: requests are logged


# -- Host and Origin -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:{port}", "localhost:{port}", "127.0.0.1:1", "127.0.0.1", ""]
)
def test_a_host_other_than_loopback_and_this_port_is_refused(viewer: RunningViewer, host: str) -> None:
    reply = viewer.request("/api/meta", host=host.format(port=viewer.port))
    assert reply.status == 403
    assert viewer.request("/api/meta").status == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Origin": "http://127.0.0.1:1"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_cross_origin_request_is_refused(viewer: RunningViewer, headers: dict[str, str]) -> None:
    assert viewer.request("/api/meta", headers=headers).status == 403


def test_a_same_origin_request_is_answered(viewer: RunningViewer) -> None:
    same = {"Origin": viewer.origin, "Sec-Fetch-Site": "same-origin"}
    assert viewer.request("/api/meta", headers=same).status == 200


# -- headers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cookie", "method", "status"),
    [
        ("/", True, "GET", 200),
        ("/app.js", True, "GET", 200),
        ("/api/meta", True, "GET", 200),
        ("/api/nothing", True, "GET", 404),
        ("/", False, "GET", 403),
        ("/?token=bad", False, "GET", 403),
        ("/api/meta", True, "POST", 405),
    ],
)
def test_every_answer_carries_the_security_headers(
    viewer: RunningViewer, path: str, cookie: bool, method: str, status: int
) -> None:
    reply = viewer.request(path, cookie=cookie, method=method)
    assert reply.status == status
    assert reply.headers["Content-Security-Policy"] == CSP
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["Referrer-Policy"] == "no-referrer"
    assert reply.headers["Cache-Control"] == "no-store"


def test_the_redirect_carries_them_too(viewer: RunningViewer) -> None:
    reply = viewer.request("/?token=" + viewer.token, cookie=False)
    assert reply.status == 303
    assert reply.headers["Content-Security-Policy"] == CSP
    assert reply.headers["Referrer-Policy"] == "no-referrer"


def test_the_page_shell_holds_no_journal_text_and_no_inline_code(viewer: RunningViewer) -> None:
    page = viewer.request("/").body.decode()
    assert MARKER not in page
    assert "<script>" not in page and "onclick" not in page and "<style>" not in page  # CSP allows none
    assert '<script src="/app.js" defer></script>' in page


# -- ids and handles only, read-only -------------------------------------------------------------


@pytest.mark.parametrize(
    ("route", "params"),
    [
        ("search", {"project": PLANTED_CWD}),
        ("search", {"project": "../../etc"}),
        ("sessions", {"project": "/home/u/treeproj"}),
        ("read", {"project": "not-a-handle", "entry": "a0000001"}),
    ],
)
def test_a_path_is_never_a_project(viewer: RunningViewer, route: str, params: dict[str, str]) -> None:
    reply = viewer.request(f"/api/{route}?{urlencode(params)}")
    assert reply.status == 404
    assert reply.json()["error"]["code"] == "unknown_project"


@pytest.mark.parametrize("params", [{"path": "/etc/passwd"}, {"file": "x"}, {"q": "a", "dir": "/"}])
def test_unknown_parameters_are_refused(viewer: RunningViewer, params: dict[str, str]) -> None:
    reply = viewer.request(f"/api/search?{urlencode(params)}")
    assert reply.status == 400
    assert "unknown parameter" in reply.json()["error"]["message"]


def test_entry_ids_and_sources_reach_only_discovered_journals(viewer: RunningViewer, corpus: Path) -> None:
    journal = next((corpus / "journals").rglob("*viewproj*/*.jsonl"))
    for params in (
        {"entry": str(journal)},
        {"entry": "../../../etc/passwd"},
        {"source": f"{journal}:a0000001"},
        {"source": "/etc/passwd:a0000001"},
    ):
        body = viewer.api("read", **params)
        assert body["status"] == "not_found", params
    assert viewer.api("read", entry="a0000001")["status"] == "ok"  # the twin: an id in scope


def test_a_handle_reaches_that_project(viewer: RunningViewer) -> None:
    tree = _handle(viewer, TREE_CWD)
    results = viewer.api("search", project=tree, q="tokenizer")["results"]
    assert results and {item["cwd"] for item in results} == {TREE_CWD}


def test_the_viewer_never_writes(viewer: RunningViewer, corpus: Path) -> None:
    before = _tree_digest(corpus)
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/api/forget?entry=a0000001", "/api/gc", "/api/search"):
            assert viewer.request(path, method=method).status == 405
    for route in ("forget", "gc", "rebuild", "delete", "index"):
        assert viewer.request(f"/api/{route}?entry=a0000001").status == 404
    assert _tree_digest(corpus) == before
    assert viewer.api("read", entry="a0000001")["status"] == "ok"


# -- the same answers as the tool ----------------------------------------------------------------


def _without_project(body: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in body.items() if key not in ("project", "highlight")}


@pytest.mark.parametrize(
    ("cwd", "query"), [(PLANTED_CWD, MARKER), (TREE_CWD, "tokenizer"), (BIG_CWD, None), (PLANTED_CWD, None)]
)
def test_search_answers_exactly_as_the_tool(
    viewer: RunningViewer, corpus: Path, cwd: str, query: str | None
) -> None:
    params = {"project": _handle(viewer, cwd), "limit": 50, **({"q": query} if query else {})}
    shown = _without_project(viewer.api("search", **params))
    told = pimem(corpus, cwd, "search", *([query] if query else []), "--limit", "50")
    assert shown == {**told, "indexing": shown["indexing"]}
    assert shown["results"]


def test_all_projects_is_the_global_scope(viewer: RunningViewer, corpus: Path) -> None:
    shown = _without_project(viewer.api("search", project="all", q="the", limit=50))
    told = pimem(corpus, PLANTED_CWD, "search", "the", "--scope", "global", "--limit", "50")
    assert shown == {**told, "indexing": shown["indexing"]}
    assert len({item["cwd"] for item in shown["results"]}) > 1
    reply = viewer.request("/api/search?" + urlencode({"project": "all", "scope": "project"}))
    assert reply.status == 400  # all projects is never narrowed silently


def test_read_and_around_answer_as_the_tool(viewer: RunningViewer, corpus: Path) -> None:
    tree = _handle(viewer, TREE_CWD)
    hit = viewer.api("search", project=tree, q="tokenizer")["results"][0]
    shown = _without_project(viewer.api("around", project=tree, source=hit["source"]))
    assert shown["entries"] and any(item["position"] == "hit" for item in shown["entries"])
    read = _without_project(viewer.api("read", project=tree, source=hit["source"]))
    told = pimem(corpus, TREE_CWD, "read", hit["entryId"])
    assert read == told


def test_a_long_entry_is_paged(viewer: RunningViewer) -> None:
    big = _handle(viewer, BIG_CWD)
    first = viewer.api("search", project=big, limit=50)["results"]
    longest = max(
        (viewer.api("read", project=big, source=item["source"]) for item in first),
        key=lambda body: body["totalChars"],
    )
    assert longest["nextOffset"] is not None
    second = viewer.api("read", project=big, source=longest["source"], offset=longest["nextOffset"])
    assert second["offset"] == longest["nextOffset"] and second["text"] != longest["text"]


def test_forgotten_withheld_and_secret_text_never_comes_back(viewer: RunningViewer) -> None:
    for query in (FORGOTTEN_TEXT, ENV_VALUE):  # their searches find nothing (the answer echoes the query)
        assert viewer.api("search", project="all", q=query)["results"] == []
    bodies = [
        viewer.request("/api/search?" + urlencode({"project": "all", "q": query, "limit": 50})).body
        for query in (MARKER, "REDACTED", "please")
    ]
    results = viewer.api("search", q=MARKER, limit=50)["results"]
    bodies += [viewer.request(f"/api/read?source={item['source']}").body for item in results]
    bodies += [viewer.request(f"/api/around?source={item['source']}").body for item in results[:5]]
    bodies += [viewer.request(f"/api/{route}?entry=a0000003").body for route in ("read", "around")]
    planted = len(secret_windows())  # every planted entry, read by id
    bodies += [viewer.request(f"/api/read?entry=b{number:07x}").body for number in range(planted)]
    bodies += [viewer.request("/api/sessions?project=all").body]
    text = b"".join(bodies).decode()
    assert FORGOTTEN_TEXT not in text
    assert ENV_VALUE not in text
    leaked = [secret for secret in secret_windows() if secret in text]
    assert leaked == []
    # the twins: the same journal's other text, the withheld marker and the markup do come back
    assert MARKER in text and "[sensitive file withheld]" in text
    assert "[REDACTED:" in text
    assert INJECTED in "".join(item["excerpt"] for item in results) or "window.__pwned" in text


def test_sessions_are_newest_first_with_their_summaries(viewer: RunningViewer) -> None:
    groups = viewer.api("sessions", project="all")["groups"]
    assert {group["name"] for group in groups} >= {"viewproj", "treeproj", "oddproj"}
    odd = next(group for group in groups if group["name"] == "oddproj")["sessions"]
    started = [session["started"] for session in odd]
    assert len(started) > 1 and started == sorted(started, reverse=True)
    tree = next(group for group in groups if group["name"] == "treeproj")["sessions"]
    kinds = {summary["kind"] for summary in tree[0]["summaries"]}
    assert kinds == {"compaction", "branch_summary"}


def test_status_figures_are_the_commands(viewer: RunningViewer, corpus: Path) -> None:
    shown = viewer.api("status")
    told = pimem(corpus, PLANTED_CWD, "status")
    assert {key: shown[key] for key in ("journals", "entries", "summaries")} == {
        key: told[key] for key in ("journals", "entries", "summaries")
    }
    assert shown["journals"] > 20


def test_it_opens_on_the_current_project(viewer: RunningViewer) -> None:
    meta = viewer.api("meta")
    current = next(project for project in meta["projects"] if project["handle"] == meta["current"])
    assert current["root"] == PLANTED_CWD
    assert HOME not in [project["root"] for project in meta["projects"]]
