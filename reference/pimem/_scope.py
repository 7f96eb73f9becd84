"""Scope: which journals a call may see. Project roots come from discovered journal headers."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from typing import Literal, get_args

from ._journals import Journal

__all__ = ["SCOPES", "ScopeName", "in_project", "project_root", "scoped_journals"]

ScopeName = Literal["project", "session", "global"]
SCOPES: tuple[ScopeName, ...] = get_args(ScopeName)


@functools.lru_cache(maxsize=4096)
def _norm(path: str) -> str:
    """Realpath-normalised, no trailing slash (except the root itself)."""
    return os.path.realpath(os.path.normpath(path)) if path else path


def _ancestors(path: str) -> list[str]:
    """The path and each parent up to `/`, outermost first."""
    chain = [path]
    while (parent := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    return chain[::-1]


def project_root(cwd: str, home: str, header_cwds: Iterable[str]) -> str:
    """The outermost ancestor of cwd that has sessions of its own.

    Home, `/` and their direct children count only when they are the cwd itself, so a session
    started in ~ or ~/code never pulls every project below it into one scope.
    """
    cwd, home = _norm(cwd), _norm(home)
    known = {_norm(path) for path in header_cwds}
    broad = ("/", home)
    for candidate in _ancestors(cwd):
        too_broad = candidate in broad or os.path.dirname(candidate) in broad
        if candidate in known and (candidate == cwd or not too_broad):
            return candidate
    return cwd


def in_project(cwd: str, root: str) -> bool:
    """Component-wise containment: /a/bc is not inside /a/b."""
    cwd, root = _norm(cwd), _norm(root)
    return cwd == root or cwd.startswith(root.rstrip("/") + "/")


def scoped_journals(
    journals: list[Journal], scope: ScopeName, *, cwd: str, home: str, session_file: str | None
) -> list[Journal]:
    """The discovered journals a call in `scope` may see (global is gated by the caller)."""
    if scope == "global":
        return list(journals)
    if scope == "session":
        current = _norm(session_file) if session_file else None
        return [journal for journal in journals if _norm(journal.path) == current]
    root = project_root(cwd, home, (journal.cwd for journal in journals))
    return [journal for journal in journals if in_project(journal.cwd, root)]
