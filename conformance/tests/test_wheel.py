"""The built wheel carries everything the suite needs: installed outside the checkout, it runs.

The wheel is built with pip (hatchling from PyPI in an isolated build env), installed without
dependencies into a fresh venv in a temp dir, and given this venv's site-packages for its
dependencies only (a .pth line), so no network install is needed and the checkout stays out of
sight: the data must come from `pimem_conformance/_data`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pimem_conformance import REPORT_SCHEMA_ID, load_schemas, repo_root

ROOT = repo_root()
NODE = shutil.which("node")


def _run(argv: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bin/ folder of a fresh venv holding only the wheel."""
    if ROOT is None:
        pytest.skip("running from an installed wheel: there is no checkout to build from")
    work = tmp_path_factory.mktemp("wheel")
    built = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work), str(ROOT)], work
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = work.glob("pi_memory_spec-*.whl")
    venv = work / "venv"
    created = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], work)
    assert created.returncode == 0, created.stderr
    python = venv / "bin" / "python"
    installed = _run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet", str(wheel)],
        work,
    )
    assert installed.returncode == 0, installed.stderr
    site = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], work
        ).stdout.strip()
    )
    # Dependencies (apsw, jsonschema, ...) from this venv; its editable checkout paths are not
    # added, because .pth files of a folder added this way are not processed.
    (site / "zz_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return venv / "bin"


def test_the_wheel_ships_cases_schemas_and_fixtures(installed: Path, tmp_path: Path) -> None:
    probe = _run(
        [
            str(installed / "python"),
            "-c",
            "import pimem_conformance as p, pimem; print(p.spec_dir()); print(pimem.__file__)",
        ],
        tmp_path,
    )
    spec, pimem_file = probe.stdout.split()
    assert str(installed.parent) in spec and str(installed.parent) in pimem_file, probe.stdout + probe.stderr
    assert Path(spec, "cases").is_dir() and Path(spec, "schemas", "report.schema.json").is_file()


def test_the_installed_suite_passes_the_installed_reference(installed: Path, tmp_path: Path) -> None:
    report = tmp_path / "reference.jsonl"
    result = _run(
        [str(installed / "pimem-conformance"), "run", "--impl", "reference", "-q", "--report", str(report)],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert lines[-1]["totals"]["pass"] > 0
    schemas = load_schemas()
    assert [problem for line in lines for problem in schemas.errors(REPORT_SCHEMA_ID, line)] == []


@pytest.mark.skipif(NODE is None, reason="node is not installed; the Node example cannot run")
def test_the_installed_suite_judges_the_node_example(installed: Path, tmp_path: Path) -> None:
    assert ROOT is not None
    example = ROOT / "conformance" / "examples" / "minimal-adapter.mjs"
    result = _run(
        [
            str(installed / "pimem-conformance"),
            "run",
            "--impl",
            f"{NODE} {example}",
            "-q",
            "--validate-adapter",
        ],
        tmp_path,
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
