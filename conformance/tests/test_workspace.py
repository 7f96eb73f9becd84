"""Workspaces on disk: journal writing and every mutation between steps."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance import CaseError, Workspace, epoch_ns, substitute_workspace
from pimem_conformance.journals import encoded_cwd

KEY = "agent/sessions/--home-u-app--/s1.jsonl"
SETUP = {"cwd": "/home/u/app", "now": "2026-11-29T12:00:00Z", "session": KEY, "flat": ["flat"]}
LINES: list[Any] = [
    {"type": "session", "id": "s1", "cwd": "/home/u/app"},
    {"id": "a", "text": "ünï"},
    "raw line",
]


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    workspace = Workspace(tmp_path, SETUP)
    workspace.prepare({KEY: {"lines": LINES, "partial": '{"id": "half'}})
    return workspace


def content(workspace: Workspace) -> bytes:
    return workspace.path(KEY).read_bytes()


def test_journals_are_written_like_json_stringify_with_the_clock_as_mtime(workspace: Workspace) -> None:
    assert (
        content(workspace)
        == (
            '{"type":"session","id":"s1","cwd":"/home/u/app"}\n{"id":"a","text":"ünï"}\n'
            'raw line\n{"id": "half'
        ).encode()
    )
    assert workspace.path(KEY).stat().st_mtime_ns == epoch_ns("2026-11-29T12:00:00Z")
    opened = workspace.open_workspace()
    assert opened["session_dirs"] == [str(workspace.root / "flat")] and (workspace.root / "flat").is_dir()
    assert opened["session_file"] == str(workspace.root / KEY) and workspace.state_dir.is_dir()


def test_append_truncate_and_partial(workspace: Workspace) -> None:
    workspace.mutate({"op": "truncate", "journal": KEY, "keep_lines": 1})
    assert content(workspace) == b'{"type":"session","id":"s1","cwd":"/home/u/app"}\n'
    workspace.mutate({"op": "append", "journal": KEY, "lines": [{"id": "b"}]})
    workspace.mutate({"op": "append_partial", "journal": KEY, "text": '{"id":'})
    assert content(workspace).endswith(b'\n{"id":"b"}\n{"id":')


def test_same_length_rewrite_pads_and_keeps_the_mtime(workspace: Workspace) -> None:
    before = content(workspace)
    mtime = workspace.path(KEY).stat().st_mtime_ns
    workspace.mutate(
        {
            "op": "rewrite",
            "journal": KEY,
            "line": 1,
            "with": {"id": "z"},
            "length": "same",
            "keep_mtime": True,
        }
    )
    after = content(workspace)
    assert len(after) == len(before) and after.split(b"\n")[1].rstrip(b" ") == b'{"id":"z"}'
    assert workspace.path(KEY).stat().st_mtime_ns == mtime
    with pytest.raises(CaseError, match="bytes"):
        workspace.mutate({"op": "rewrite", "journal": KEY, "line": 1, "with": "x" * 99, "length": "same"})


def test_a_change_without_keep_mtime_moves_the_mtime(workspace: Workspace) -> None:
    os.utime(workspace.path(KEY), ns=(10**18, 10**18))
    workspace.mutate({"op": "rewrite", "journal": KEY, "line": 2, "with": "other line"})
    assert workspace.path(KEY).stat().st_mtime_ns != 10**18


def test_swap_touch_delete_write(workspace: Workspace) -> None:
    workspace.mutate({"op": "write", "journal": KEY, "lines": ["aa", "bb", "c"]})
    workspace.mutate({"op": "swap", "journal": KEY, "a": 0, "b": 1})
    assert content(workspace) == b"bb\naa\nc\n"
    with pytest.raises(CaseError, match="lengths differ"):
        workspace.mutate({"op": "swap", "journal": KEY, "a": 0, "b": 2})
    workspace.mutate({"op": "touch", "journal": KEY, "mtime": "2026-01-01T00:00:00+01:00"})
    assert workspace.path(KEY).stat().st_mtime_ns == epoch_ns("2025-12-31T23:00:00Z")
    workspace.mutate({"op": "delete", "journal": KEY})
    assert not workspace.path(KEY).exists()
    with pytest.raises(CaseError, match="does not exist"):
        workspace.mutate({"op": "append", "journal": KEY, "lines": []})


def test_keys_stay_inside_the_workspace(workspace: Workspace) -> None:
    with pytest.raises(CaseError):
        workspace.path("../outside.jsonl")


def test_workspace_substitution_and_cwd_encoding() -> None:
    assert substitute_workspace({"{ws}/k": ["{ws}/a", 1]}, "/tmp/w") == {"/tmp/w/k": ["/tmp/w/a", 1]}
    assert encoded_cwd("/home/u/app") == "--home-u-app--"
    # Pi drops one leading separator, then makes every /, \ and : a dash (Windows cwds too)
    assert encoded_cwd("C:\\Users\\u\\app") == "--C--Users-u-app--"
    assert encoded_cwd("\\\\server\\share") == "---server-share--"
    assert encoded_cwd("/home/u/app/") == "--home-u-app---"
    assert Workspace(Path("/w"), {"cwd": "/x/y", "now": "2026-11-29T12:00:00Z"}).session_file == Path(
        "/w/agent/sessions/--x-y--/current.jsonl"
    )


def test_repeat_expands_inside_written_lines(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, SETUP)
    line = {"id": "big", "parts": [{"$repeat": "ab\n", "times": 3}, "end"]}
    workspace.prepare({KEY: {"lines": [line]}})
    workspace.mutate(
        {"op": "append", "journal": KEY, "lines": [{"id": "more", "text": {"$repeat": "z", "times": 2}}]}
    )
    assert (
        content(workspace) == b'{"id":"big","parts":["ab\\nab\\nab\\n","end"]}\n{"id":"more","text":"zz"}\n'
    )
    with pytest.raises(CaseError, match="repeat"):
        workspace.mutate({"op": "append", "journal": KEY, "lines": [{"text": {"$repeat": 3, "times": 2}}]})


def test_symlink_and_fifo_create_new_paths(workspace: Workspace) -> None:
    link = "agent/sessions/--home-u-app--/link.jsonl"
    workspace.mutate({"op": "symlink", "journal": link, "target": KEY})
    assert workspace.path(link).is_symlink() and workspace.path(link).read_bytes() == content(workspace)
    workspace.mutate({"op": "fifo", "journal": "flat/pipe.jsonl"})
    assert stat.S_ISFIFO(workspace.path("flat/pipe.jsonl").stat().st_mode)
    with pytest.raises(CaseError, match="exists already"):
        workspace.mutate({"op": "fifo", "journal": KEY})


def test_the_state_check_reads_every_file_under_the_state_dir(workspace: Workspace) -> None:
    (workspace.state_dir / "deep").mkdir()
    (workspace.state_dir / "index.db").write_bytes(b"\x00\x01zebracorn\x00")
    (workspace.state_dir / "deep" / "log").write_text("mötley zebracorn", encoding="utf-8")
    assert workspace.state_holding(["zebracorn", "mötley", "quokka"]) == {
        "zebracorn": ["state/deep/log", "state/index.db"],
        "mötley": ["state/deep/log"],
    }
    assert workspace.state_holding(["quokka"]) == {}
