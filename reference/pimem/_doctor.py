"""`pimem doctor`: one screen that checks what the memory needs and explains what is missing, and
the command line's other diagnostics: which folders discovery looked in (also what `pimem` says
when it finds no journals) and where the skipped lines are (`pimem status`). No protocol request
reaches them; the /memory commands report counts only."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path
from typing import Any

from . import SPEC_VERSION, __version__
from ._journals import parse_line
from ._memory import Memory
from ._store_checks import paths_with_skipped_lines, probe_fts5, sqlite_versions

__all__ = ["doctor", "journal_folders", "skipped_lines"]

EXTENSION_PACKAGE = "pimem-pi-extension"


def journal_folders(memory: Memory) -> list[dict[str, Any]]:
    """Every folder discovery looks in, whether it exists, and how many journals it gave."""
    found = memory.discover(full=True)
    rows = []
    for folder in [os.path.join(memory.config.agent_dir, "sessions"), *memory.config.session_dirs]:
        prefix = folder.rstrip("/") + "/"
        count = sum(journal.path.startswith(prefix) for journal in found.journals)
        rows.append({"path": folder, "exists": os.path.isdir(folder), "journals": count})
    return rows


def skipped_lines(memory: Memory, first: int) -> list[dict[str, Any]]:
    """The file and 1-based line number of the first `first` skipped lines, and why."""
    limit = memory.config.max_line_bytes
    found: list[dict[str, Any]] = []
    for path in paths_with_skipped_lines(memory.index.store):
        try:
            with open(path, "rb") as handle:
                for number, raw in enumerate(handle, 1):
                    if len(found) >= first:
                        return found
                    if not raw.endswith(b"\n"):
                        break  # a partial last line is not skipped, only not written yet
                    if len(raw) > limit:
                        found.append({"path": path, "line": number, "reason": f"longer than {limit} bytes"})
                    elif number > 1 and not isinstance(parse_line(raw), dict):
                        found.append({"path": path, "line": number, "reason": "not a JSON object"})
        except OSError:
            continue
    return found


def _fts5() -> dict[str, Any]:
    """Whether SQLite has FTS5 with what the index uses: contentless_delete, detail=none, unicode61."""
    error = probe_fts5()
    if error is not None:
        return {"ok": False, "detail": error}
    return {"ok": True, "detail": "contentless_delete, detail=none, unicode61 remove_diacritics 2"}


def _writable(path: str) -> tuple[bool, str]:
    """Whether the index can be written, without creating anything to find out."""
    folder = path
    while not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    target = path if os.path.exists(path) else folder
    if os.access(target, os.W_OK):
        return True, "exists, writable" if target == path else f"not created yet; {folder} is writable"
    return False, f"{target} is not writable"


def _settings(agent_dir: str) -> dict[str, Any]:
    path = Path(agent_dir, "settings.json")
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"path": str(path), "found": False, "memory": {}, "packages": []}
    except (OSError, ValueError) as error:
        return {"path": str(path), "found": True, "error": str(error), "memory": {}, "packages": []}
    value = value if isinstance(value, dict) else {}
    memory = value.get("memory") if isinstance(value.get("memory"), dict) else {}
    listed = [*value.get("packages", []), *value.get("extensions", [])]
    return {"path": str(path), "found": True, "memory": memory, "packages": [str(item) for item in listed]}


def _package_name(folder: Path) -> str | None:
    try:
        name = json.loads((folder / "package.json").read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def _extension(agent_dir: str, packages: list[str]) -> str | None:
    """Where Pi loads the extension from, if it does: a `packages` entry of settings.json (`pi
    install` writes a local path there), or a folder Pi discovers under the agent dir."""
    for entry in packages:
        if entry.startswith(("npm:", "git:")):
            if EXTENSION_PACKAGE in entry:
                return f"settings: {entry}"
            continue
        folder = Path(agent_dir, os.path.expanduser(entry))  # a relative path is the agent dir's
        if _package_name(folder) == EXTENSION_PACKAGE:
            return f"settings: {entry}"
    root = Path(agent_dir)
    for folder in [*root.glob("extensions/*"), *root.glob("npm/node_modules/*")]:
        if _package_name(folder) == EXTENSION_PACKAGE:
            return str(folder)
    return None


def doctor(memory: Memory) -> tuple[str, dict[str, Any]]:
    config = memory.config
    fts5 = _fts5()
    writable, where = _writable(memory.index_path)
    folders = journal_folders(memory)
    settings = _settings(config.agent_dir)
    extension = _extension(config.agent_dir, settings["packages"])
    details = {
        "pimem": __version__,
        "spec": SPEC_VERSION,
        "python": platform.python_version(),
        **sqlite_versions(),
        "fts5": fts5,
        "index": {"path": memory.index_path, "writable": writable, "detail": where},
        "folders": folders,
        "settings": settings,
        "extension": extension,
    }
    mark = {True: "ok  ", False: "FAIL"}
    lines = [
        f"pimem {__version__} (spec {SPEC_VERSION}) · Python {details['python']} · apsw {details['apsw']}"
        f" · SQLite {details['sqlite']}",
        f"{mark[fts5['ok']]} FTS5: {fts5['detail']}",
        f"{mark[writable]} index {memory.index_path}: {where}",
    ]
    for folder in folders:
        state = f"{folder['journals']} journal(s)" if folder["exists"] else "missing"
        lines.append(f"{mark[folder['journals'] > 0]} journals in {folder['path']}: {state}")
    if not any(folder["journals"] for folder in folders):
        lines.append(
            "     no journals: point at them with --agent-dir DIR, --sessions-dir DIR or PI_CODING_AGENT_DIR"
        )
    if not settings["found"]:
        lines.append(f"     {settings['path']}: none (every default applies: memory.allowGlobal false)")
    elif "error" in settings:
        lines.append(f"FAIL {settings['path']}: not valid JSON ({settings['error']})")
    else:
        shown = json.dumps(settings["memory"], ensure_ascii=False) if settings["memory"] else "none"
        lines.append(f"     {settings['path']}: memory.* = {shown}")
    if extension:
        lines.append(f"ok   Pi extension: {extension}")
    else:
        lines.append('     Pi extension: not found (README, "Use it in Pi")')
    return "\n".join(lines), details
