"""Helpers for the suite's own tests: a throwaway spec folder of synthetic cases, fake adapters."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance import spec_dir
from pimem_conformance.journals import header_line

FAUX = Path(__file__).with_name("fauxmplementation.py")
HEADER = header_line("s1", "/home/u/app", "2026-11-20T09:00:00.000Z")
JOURNAL_KEY = "agent/sessions/--home-u-app--/s1.jsonl"
NODE_EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "minimal-adapter.mjs"


def required_node(why: str) -> str:
    """The path of `node`; else a skip, which is a failure under CI=true (there, everything runs)."""
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"node is not installed (CI=true: this test must run): {why}")
        pytest.skip(f"node is not installed: {why}")
    return node


def required_commit(commit: str, why: str) -> Path:
    """The checkout's root, whose git history holds `commit`; else a skip (no git, no history, a
    shallow clone), which is a failure under CI=true (there, everything runs)."""
    root = Path(__file__).resolve().parents[2]
    try:
        found = subprocess.run(
            ["git", "-C", str(root), "cat-file", "-e", f"{commit}^{{commit}}"],
            capture_output=True,
            timeout=30,
        )
        missing = found.returncode != 0
    except (OSError, subprocess.SubprocessError):
        missing = True
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"commit {commit} is not in this checkout's history (CI=true: this test must run): {why}"
            )
        pytest.skip(f"commit {commit} is not in this checkout's history: {why}")
    return root


def faux_command(mode: str = "ok") -> str:
    """The --impl command of a fauxmplementation in `mode`."""
    return f"{sys.executable} {FAUX} {mode}"


def search_case(
    case_id: str,
    query: str,
    expected_ids: list[str],
    *,
    profile: str = "core",
    requirement: str = "JM-SEARCH-001",
    **extra: Any,
) -> dict[str, Any]:
    """One search step; against the fauxmplementation it passes iff the ids are the query words."""
    return {
        "id": case_id,
        "description": f"A search for {query!r} finds {expected_ids}.",
        "requirements": [requirement],
        "profile": profile,
        "polarity": "must",
        "journals": {JOURNAL_KEY: {"lines": [HEADER]}},
        "setup": {"cwd": "/home/u/app", "now": "2026-11-29T12:00:00.000Z", "session": JOURNAL_KEY},
        "steps": [{"tool": {"action": "search", "query": query}, "expect": {"ids": expected_ids}}],
        **extra,
    }


def make_spec(
    root: Path,
    cases: list[dict[str, Any]],
    *,
    documents: dict[str, str] | None = None,
    ledger: dict[str, Any] | None = None,
) -> Path:
    """A spec folder with these cases (area "x"), the real schemas, and optional documents and ledger."""
    spec = root / "spec"
    (spec / "cases").mkdir(parents=True)
    (spec / "schemas").symlink_to(spec_dir() / "schemas", target_is_directory=True)
    (spec / "README.md").write_text("**Spec version: 9.9.9.**\n")
    (spec / "cases" / "x.json").write_text(json.dumps({"area": "x", "cases": cases}))
    for name, text in (documents or {}).items():
        (spec / name).write_text(text)
    if ledger is not None:
        (spec / "requirements-ledger.json").write_text(json.dumps(ledger))
    return spec


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def outcomes(lines: list[dict[str, Any]]) -> dict[str, str]:
    """Case id -> outcome, from a run's report lines."""
    return {line["id"]: line["outcome"] for line in lines if line["type"] == "case"}
