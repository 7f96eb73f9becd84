"""The repository root is a Pi package (issue 15): `pi install <checkout>` loads the extension,
and `npm pack` would publish exactly what the extension and its self-install need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from node_kit import required_tool

REPO = Path(__file__).resolve().parents[2]
SCOPES = ("@mariozechner", "@earendil-works")
CORE = ("pi-ai", "pi-agent-core", "pi-coding-agent", "pi-tui")


def _package(path: Path) -> dict[str, Any]:
    package: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return package


def _npm() -> str:
    return required_tool("npm", "the package test packs the Pi package with npm")


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


def test_the_packed_package_builds_the_python_side_the_extension_installs(tmp_path: Path) -> None:
    """What `npm pack` would publish is enough for the extension's self-install: pip builds the
    Python package from the unpacked tarball alone, with the shipped pins (the build backend too)."""
    subprocess.run(
        [_npm(), "pack", "--quiet", "--pack-destination", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    (tarball,) = tmp_path.glob("*.tgz")
    with tarfile.open(tarball) as packed:
        packed.extractall(tmp_path, filter="data")
    package = tmp_path / "package"
    constraints = package / "reference" / "pi-extension" / "python-constraints.txt"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(tmp_path / "wheels"),
            str(package),
        ],
        env={**os.environ, "PIP_CONSTRAINT": str(constraints), "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp_path / "wheels").glob("pi_memory_spec-*.whl")
    with zipfile.ZipFile(wheel) as contents:
        names = set(contents.namelist())
    assert {"pimem/_serve.py", "pimem_conformance/_data/spec/journals.md"} <= names


def test_the_package_ships_everything_the_wheel_build_reads() -> None:
    """A folder added to pyproject's wheel (a package or a force-include) must be shipped too."""
    build = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]
    wheel = build["targets"]["wheel"]
    needed = [*wheel["packages"], *wheel.get("force-include", {})]
    shipped = [root.rstrip("/") for root in _package(REPO / "package.json")["files"]]
    assert [path for path in needed if path not in shipped] == []
