"""A release builds and passes PyPI's checks: `python -m build` makes the sdist and the wheel (the
wheel from the sdist), and `twine check --strict` accepts both; the changelog has a section for
the version being built, and the README names the publish command."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from pimem_conformance import repo_root

ROOT = repo_root()


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if ROOT is None:
        pytest.skip("running from an installed wheel: there is no checkout to build")
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def _version() -> str:
    assert ROOT is not None
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def test_build_and_twine_check_pass_on_the_sdist_and_the_wheel(dist: Path) -> None:
    version = _version()
    sdist, wheel = (
        dist / f"pi_memory_spec-{version}.tar.gz",
        dist / f"pi_memory_spec-{version}-py3-none-any.whl",
    )
    assert sdist.is_file() and wheel.is_file()
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2
    names = zipfile.ZipFile(wheel).namelist()
    assert "pimem_conformance/_data/examples/minimal_adapter.py" in names  # init-adapter's source


def test_the_changelog_has_a_section_for_this_release_and_the_readme_says_how_to_publish() -> None:
    assert ROOT is not None
    changelog = (ROOT / "CHANGELOG.md").read_text()
    sections = re.findall(r"^## (\S+)", changelog, re.MULTILINE)
    assert _version() in sections
    assert sections[0] in ("Unreleased", _version())  # the newest first
    assert "twine upload dist/*" in (ROOT / "README.md").read_text()
