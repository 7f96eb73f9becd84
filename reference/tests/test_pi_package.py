"""The repository root is a Pi package (issue 15): `pi install <checkout>` loads the extension,
and `npm pack` would publish exactly what the extension and its self-install need."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SCOPES = ("@mariozechner", "@earendil-works")
CORE = ("pi-ai", "pi-agent-core", "pi-coding-agent", "pi-tui")


def _package(path: Path) -> dict[str, Any]:
    package: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return package


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("npm is missing (CI=true: the package test must run)")
        pytest.skip("npm is not installed")
    return npm


def test_the_root_package_points_pi_at_the_extension() -> None:
    package = _package(REPO / "package.json")
    assert "pi-package" in package["keywords"]
    (extension,) = package["pi"]["extensions"]
    assert (REPO / extension).resolve() == REPO / "reference" / "pi-extension" / "index.js"


@pytest.mark.parametrize("path", ["package.json", "reference/pi-extension/package.json"])
def test_both_pi_scopes_are_optional_peer_dependencies(path: str) -> None:
    package = _package(REPO / path)
    wanted = {f"{scope}/{name}" for scope in SCOPES for name in CORE} | {"typebox"}
    assert set(package["peerDependencies"]) == wanted
    assert all(package["peerDependencies"][name] == "*" for name in wanted)
    assert all(package["peerDependenciesMeta"][name] == {"optional": True} for name in wanted)
    assert "dependencies" not in package  # Pi provides its own packages; nothing is bundled


def test_npm_pack_lists_exactly_the_extension_and_the_python_package_sources() -> None:
    packed = subprocess.run(
        [_npm(), "pack", "--dry-run", "--json"], cwd=REPO, capture_output=True, text=True, check=True
    )
    files = {entry["path"] for entry in json.loads(packed.stdout)[0]["files"]}
    roots = _package(REPO / "package.json")["files"]
    tracked = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *roots],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    assert files == {*filter(None, tracked), "package.json", "README.md"}
    # What the extension loads, and what `pip install <package root>` builds from.
    for needed in ("reference/pi-extension/lib/runtime.js", "reference/pimem/_serve.py", "pyproject.toml"):
        assert needed in files
    assert not {path for path in files if "/tests/" in path or "/test/" in path or path.startswith(".")}
