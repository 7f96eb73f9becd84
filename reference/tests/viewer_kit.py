"""The viewer's test corpus and a running `pimem view` (a real process, spoken to over real HTTP).

The corpus is the generated fixture journals plus one planted project: every secret of the
secrets corpus, markup that would run if it were ever put into the page as HTML, a read of a
sensitive file, and an entry the user forgot.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from pimem_conformance.secrets_corpus import load as load_secrets

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "journals"
HOME = "/home/u"
PLANTED_CWD = "/home/u/viewproj"
TREE_CWD = "/home/u/treeproj"  # branch summary and compactions (fixtures scenario branches-compactions)
BIG_CWD = "/home/u/bigproj"  # one entry of more than a megabyte (scenario large-entry)
INJECTED = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'
ENV_VALUE = "viewerEnvValue7Qx2Lm9Zp"  # only in the result of a read of .env: withheld
FORGOTTEN_TEXT = "forgottenkestrelnote"
MARKER = "viewerplover"  # a search term of the planted journal


def _line(entry_id: str, parent: str | None, minute: int, message: dict[str, Any]) -> dict[str, Any]:
    stamp = f"2026-11-21T10:{minute:02d}:00.000Z"
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": text}]}


def planted_lines() -> list[dict[str, Any]]:
    header = {
        "type": "session",
        "version": 3,
        "id": "0v1e2w3e-0000-7000-8000-000000000001",
        "timestamp": "2026-11-21T10:00:00.000Z",
        "cwd": PLANTED_CWD,
    }
    lines: list[dict[str, Any]] = [
        header,
        _line("a0000001", None, 1, _text("user", f"{MARKER} markup check: {INJECTED}")),
        _line(
            "a0000002",
            "a0000001",
            2,
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"{MARKER} reading the env file"},
                    {"type": "toolCall", "id": "call-env", "name": "read", "arguments": {"path": ".env"}},
                ],
            },
        ),
        _line(
            "a0000003",
            "a0000002",
            3,
            {
                "role": "toolResult",
                "toolCallId": "call-env",
                "toolName": "read",
                "content": [{"type": "text", "text": f"SERVICE_TOKEN_VALUE={ENV_VALUE} {MARKER}"}],
            },
        ),
        _line("a0000004", "a0000003", 4, _text("user", f"{MARKER} {FORGOTTEN_TEXT} please hide this")),
    ]
    parent = "a0000004"
    for number, secret in enumerate(load_secrets().secrets):
        entry_id = f"b{number:07x}"
        lines.append(_line(entry_id, parent, 5 + number % 50, _text("user", f"{MARKER} {secret.context}")))
        parent = entry_id
    return lines


def secret_windows() -> list[str]:
    """Every planted secret (whole: a leak of any part is caught by the suite's own recall test)."""
    return [secret.secret for secret in load_secrets().secrets]


def build_corpus(root: Path) -> Path:
    """The fixture journals and the planted project under `root`; returns the agent dir."""
    shutil.copytree(FIXTURES, root / "journals")
    folder = root / "journals" / "agent" / "sessions" / "--home-u-viewproj--"
    folder.mkdir(parents=True)
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in planted_lines())
    (folder / "2026-11-21T10-00-00-000Z_0v1e2w3e-0000-7000-8000-000000000001.jsonl").write_text(
        text, encoding="utf-8"
    )
    return root / "journals" / "agent"


def pimem_argv(root: Path, cwd: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pimem",
        "--agent-dir",
        str(root / "journals" / "agent"),
        "--sessions-dir",
        str(root / "journals" / "flat"),
        "--index",
        str(root / "state" / "index.sqlite"),
        "--cwd",
        cwd,
    ]


def pimem_env() -> dict[str, str]:
    return {**os.environ, "HOME": HOME, "TZ": "UTC", "PYTHONUNBUFFERED": "1"}


def pimem(root: Path, cwd: str, *args: str) -> Any:
    """The command line's answer as JSON (the tool the viewer must agree with)."""
    result = subprocess.run(
        [*pimem_argv(root, cwd), "--json", *args],
        env=pimem_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout)


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class RunningViewer:
    process: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)
    cookie: str = ""
    root: Path = Path()  # the corpus it serves

    @property
    def port(self) -> int:
        return int(urlsplit(self.url).port or 0)

    @property
    def token(self) -> str:
        return urlsplit(self.url).query.removeprefix("token=")

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def request(
        self,
        path: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        host: str | None = None,
        cookie: bool = True,
    ) -> Reply:
        """One request over a fresh connection; Host and Cookie are set unless told otherwise."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            connection.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
            if cookie and self.cookie:
                connection.putheader("Cookie", self.cookie)
            for name, value in (headers or {}).items():
                connection.putheader(name, value)
            connection.endheaders()
            response = connection.getresponse()
            return Reply(response.status, response.headers, response.read())
        finally:
            connection.close()

    def login(self) -> Reply:
        """Trade the token for the cookie, as a browser does on the first request."""
        reply = self.request("/?" + urlencode({"token": self.token}), cookie=False)
        set_cookie = reply.headers.get("Set-Cookie", "")
        self.cookie = set_cookie.split(";", 1)[0]
        return reply

    def api(self, route: str, **params: Any) -> Any:
        reply = self.request(f"/api/{route}?{urlencode(params)}")
        assert reply.status == 200, (route, params, reply.status, reply.body[:300])
        return reply.json()

    def stderr_text(self) -> str:
        return "".join(self.stderr)


@contextmanager
def planted_viewer() -> Iterator[RunningViewer]:
    """The corpus indexed, entry a0000004 forgotten by the user, and a viewer on the planted project."""
    with tempfile.TemporaryDirectory(prefix="pimem-view-") as folder:
        root = Path(folder)
        build_corpus(root)
        pimem(root, PLANTED_CWD, "index")
        pimem(root, PLANTED_CWD, "forget", "a0000004")
        with running_viewer(root, PLANTED_CWD) as running:
            running.root = root
            yield running


_URL = re.compile(r"pimem view: (http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+)")


@contextmanager
def running_viewer(root: Path, cwd: str, *extra: str) -> Iterator[RunningViewer]:
    """`pimem view` on the corpus under `root`, until the block ends; stderr is collected."""
    process = subprocess.Popen(
        [*pimem_argv(root, cwd), *extra, "view"],
        env=pimem_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    found = _URL.search(first)
    if found is None:
        process.kill()
        raise AssertionError(f"pimem view printed no URL: {first!r} {process.stderr.read()}")
    viewer = RunningViewer(process, found.group(1))
    reader = threading.Thread(target=lambda: viewer.stderr.extend(iter(process.stderr.readline, "")))
    reader.start()
    try:
        yield viewer
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
            reader.join(timeout=10)
