"""Issue 8.5: hostile `memory_context` arguments get a result or a clear error, and open nothing outside.

Hypothesis throws FTS syntax, quotes, NUL, megabyte strings, RTL and combining characters and
emoji at the query; path- and SQL-shaped entry ids and sources; session ids with `../`; junk
dates; negative, huge and non-integer offsets and limits; unknown actions and keys. Every
response must be a result (`content` + `details`) or a tool error whose code is one of the
documented ones and whose message says something. An audit hook (`sys.addaudithook`) records
every file the in-process implementation opens while it answers: each must lie under the
workspace or the Python installation. No response may carry SQL or other internal error text.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import zoneinfo
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from .reliability_kit import (
    JournalWriter,
    Memory,
    assert_no_internal_text,
    entry_line,
    header_line,
    record_figure,
    scaled,
    tally,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"
# SQL statements as identifiers: kept as data, so no Python file outside the store holds SQL text
SQL_INJECTIONS = json.loads((Path(__file__).parent / "sql_injections.json").read_text(encoding="utf-8"))
ERROR_CODES = {
    "bad_argument",
    "unknown_action",
    "bad_date",
    "bad_offset",
    "scope_denied",
    "index_unavailable",
}
ACTIONS = ["search", "read", "summaries", "around"]
MESSAGE_CHARS = 1_000  # an error message never grows with the input it echoes (JM-TOOL-111)
KINDS = [
    "user",
    "assistant",
    "tool_result",
    "bash",
    "custom",
    "custom_message",
    "compaction",
    "branch_summary",
    "session_info",
    "label",
]

_OPENED: list[str] | None = None  # the audit hook records into this list while a call runs


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _OPENED is not None and event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        _OPENED.append(os.fsdecode(args[0]))


_HOOKED: list[bool] = []


def install_audit_hook() -> None:
    """Once per process: hooks cannot be removed, and this one records nothing outside a hostile call."""
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED.append(True)


fts_syntax = st.sampled_from(
    [
        '"',
        '""',
        "'",
        "*",
        "^",
        "NEAR(a b, 2)",
        "a OR b",
        "a AND NOT b",
        "(",
        ")",
        "{col}:x",
        "col:x",
        "-x",
        "+x",
        "a:b:c",
        "NOT",
        "OR",
        "AND",
        "\\",
        "%",
        "_",
        "';--",
        "') OR 1=1 --",
        "\x00",
        "\u202e",
        "e\u0301",
        "\u200d",
        "🔑🗝️",
        "👩‍💻",
        "مرحبا",
        "שלום",
        "\ufeff",
        "\ud83d",
        "\U0010ffff",
    ]
)
hostile_text = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(fts_syntax, st.text(max_size=8)), max_size=12).map(" ".join),
    st.sampled_from(["a" * 1_000_000, "token " * 200_000, '"' * 100_000, "é" * 300_000]),
)
path_like = st.sampled_from(
    [
        "/etc/passwd",
        "../../../../etc/passwd",
        "..",
        "../",
        "./",
        "/",
        "~",
        "~root/.ssh/id_rsa",
        "file:///etc/shadow",
        "\\\\server\\share",
        "C:\\Windows\\win.ini",
        "/proc/self/environ",
        "/dev/zero",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "{ws}/../outside.jsonl",
        *SQL_INJECTIONS,
        "abc\x00/etc/passwd",
        '" OR "1"="1',
        "*",
        "%",
        "_",
    ]
)
identifier = st.one_of(path_like, st.text(max_size=40), st.from_regex(r"[0-9a-f]{8}", fullmatch=True))
junk_date = st.one_of(
    st.sampled_from(
        [
            "",
            "yesterday",
            "2026-13-45",
            "2026-02-30",
            "0000-00-00",
            "99999-01-01",
            "2026-11-29T25:61:61Z",
            "2026-11-29T14:00:00",
            "2026-11-29T14:00:00+99:00",
            "2026-11-29",
            "2026-11-29T14:00:00Z",
            "1e309",
            "NaN",
            "-1",
        ]
    ),
    st.text(max_size=30),
    st.integers(),
    st.floats(allow_nan=True),
    st.none(),
    st.booleans(),
)
number = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers().map(lambda small: small * 2**64),  # beyond what 64-bit encoders write
    st.recursive(st.integers(), lambda inner: st.lists(inner, min_size=1, max_size=2), max_leaves=4),
    st.floats(allow_nan=True),
    st.text(max_size=5),
    st.none(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)


@st.composite
def hostile_arguments(draw: st.DrawFn, workspace_root: str) -> Any:
    if draw(st.integers(0, 30)) == 0:
        return draw(st.one_of(st.none(), st.lists(st.integers(), max_size=3), st.text(max_size=10)))
    arguments: dict[str, Any] = {
        "action": draw(st.one_of(st.sampled_from(ACTIONS), st.text(max_size=12), st.integers(), st.none())),
    }
    optional: dict[str, st.SearchStrategy[Any]] = {
        "query": st.one_of(hostile_text, st.integers(), st.none()),
        "entryId": identifier,
        "source": st.one_of(identifier, path_like.map(lambda path: path.replace("{ws}", workspace_root))),
        "sessionId": st.one_of(identifier, st.sampled_from(["../", "../../..", "../" * 50 + "etc"])),
        "since": junk_date,
        "until": junk_date,
        "offset": number,
        "limit": number,
        "before": number,
        "after": number,
        "scope": st.one_of(st.sampled_from(["project", "session", "global", "all", ""]), st.integers()),
        "kind": st.one_of(st.sampled_from(KINDS), st.text(max_size=10)),
    }
    for key in draw(st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=6)):
        arguments[key] = draw(optional[key])
    if draw(st.booleans()):
        unknown_key = draw(st.text(min_size=1, max_size=12))
        arguments[unknown_key] = draw(st.one_of(st.text(max_size=5), st.integers()))
    return arguments


def _nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def allowed_roots(workspace_root: Path) -> list[str]:
    roots = {
        str(workspace_root),
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        *sysconfig.get_paths().values(),
        *(entry for entry in sys.path if entry),
        *zoneinfo.TZPATH,
    }  # the system time-zone database, for the configured tz
    # A package installed in editable mode lives in its checkout; it may import its own modules.
    return sorted(os.path.realpath(root) for root in roots)


def is_inside(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def check_response(response: dict[str, Any], arguments: Any) -> None:
    if "error" in response:
        error = response["error"]
        assert error.get("code") in ERROR_CODES, error
        assert isinstance(error.get("message"), str) and error["message"].strip(), error
        assert len(error["message"]) <= MESSAGE_CHARS, f"a message of {len(error['message'])} characters"
    else:
        assert isinstance(response.get("content"), list), response
        assert isinstance(response.get("details"), dict), response
    assert_no_internal_text(response, arguments)


def test_hostile_arguments_get_results_or_clear_errors_and_open_nothing_outside(
    shared_tmp: Path, impl: str
) -> None:
    writer = JournalWriter(shared_tmp / "ws")
    session = writer.path_for(CWD, "current")
    writer.write(
        session,
        [
            header_line("0193aaaa-0000-7000-8000-000000000001", CWD),
            entry_line("1a2b3c4d", None, "indexer token budget notes"),
            entry_line("5e6f7a8b", "1a2b3c4d", 'search ranking with quotes " and NEAR'),
        ],
    )
    outside = shared_tmp / "outside.jsonl"  # a valid journal beside, not inside, the workspace
    outside.write_text('{"type":"session","id":"x","cwd":"/home/u/app"}\n')
    memory = Memory.connect(impl)
    if type(memory.adapter.connector).__name__ != "InProcessConnector":
        memory.stop()
        pytest.skip("the open() audit needs an in-process implementation (--pimem-impl names an entry point)")
    memory.open("a", writer.workspace(CWD, session))
    install_audit_hook()
    roots = allowed_roots(writer.root)
    calls = 0
    escapes: set[str] = set()
    inside_opens = 0  # proof that the hook sees the implementation's opens at all

    @settings(
        max_examples=scaled(150, 2000),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(arguments=hostile_arguments(str(writer.root)))
    # Failures exploration found, pinned so that every run tests them (issue 19):
    @example(arguments={"action": "search", "after": -(2**63) - 1})  # echoed with a 64-bit encoder
    @example(arguments={"action": "search", "limit": 2**64})
    @example(arguments={"action": "around", "entryId": "1a2b3c4d", "before": -(2**64) - 1})
    @example(arguments={"action": "read", "entryId": "1a2b3c4d", "offset": 2**64})
    @example(arguments={"action": "search", "limit": 1e80})
    @example(arguments={"action": "search", "limit": _nested(200)})
    @example(arguments={"action": "search", "kind": "k" * 100_000})
    @example(arguments={"action": "search", "query": "\ud800 lone"})
    @example(arguments={"action": "x" * 100_000})
    def one_call(arguments: Any) -> None:
        global _OPENED
        nonlocal calls, inside_opens
        opened: list[str] = []
        _OPENED = opened
        try:
            response = memory.raw_tool("a", arguments)
        finally:
            _OPENED = None
        calls += 1
        outside_opens = {path for path in opened if not is_inside(path, roots)}
        inside_opens += sum(path.startswith(str(writer.root)) for path in opened)
        escapes.update(outside_opens)
        assert not outside_opens, f"{arguments!r:.300} opened {sorted(outside_opens)}"
        check_response(response, arguments)

    try:
        one_call()
    finally:
        memory.stop()
    record_figure("hostile tool calls", f"{calls} ({inside_opens} journal opens audited)")
    tally("trials run", calls, "hostile tool calls")
    assert not escapes
    assert inside_opens > 0, "the audit hook saw no open of a journal, so it cannot vouch for anything"
