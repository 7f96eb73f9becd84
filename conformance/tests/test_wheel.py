"""The built wheel carries everything the suite needs: installed outside the checkout, it runs.

The wheel is built with pip (hatchling from PyPI in an isolated build env), installed without
dependencies into a fresh venv in a temp dir, and given this venv's site-packages for its
dependencies only (a .pth line), so no network install is needed and the checkout stays out of
sight: the data must come from `pimem_conformance/_data`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from pimem_conformance import REPORT_SCHEMA_ID, load_schemas, repo_root
from suite_kit import NODE_EXAMPLE, required_node

ROOT = repo_root()


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


def test_the_installed_suite_judges_the_node_example(installed: Path, tmp_path: Path) -> None:
    node = required_node("the Node example cannot run")
    result = _run(
        [
            str(installed / "pimem-conformance"),
            "run",
            "--impl",
            f"{node} {NODE_EXAMPLE}",
            "-q",
            "--validate-adapter",
        ],
        tmp_path,
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]


# -- the README, run as written -----------------------------------------------------------------


def _section(title: str) -> str:
    assert ROOT is not None
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def _blocks(section: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", section, re.DOTALL)


def _commands(block: str) -> list[str]:
    """The block's command lines, continuation lines joined (bash itself skips the comments)."""
    joined = block.replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.startswith("#")]


def _reader_env(home: Path, installed: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PI_", "PIMEM_")) and key not in ("XDG_CACHE_HOME", "NO_COLOR", "VIRTUAL_ENV")
    }
    return {**env, "HOME": str(home), "PATH": f"{installed}{os.pathsep}{env['PATH']}", "TZ": "UTC"}


def _bash(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_readme_pimem_section_runs_as_written(installed: Path, tmp_path: Path) -> None:
    assert ROOT is not None
    home, work = tmp_path / "home", tmp_path / "work"
    shutil.copytree(
        ROOT / "fixtures" / "journals" / "agent" / "sessions", home / ".pi" / "agent" / "sessions"
    )
    work.mkdir()
    env = _reader_env(home, installed)
    blocks = _blocks(_section("The reference implementation: `pimem`"), "bash")
    lines = [line for block in blocks for line in _commands(block)]
    # `pimem view` serves until stopped: reference/tests/test_view_server.py starts it as written
    viewer = [line for line in lines if "view" in line.split()]
    assert viewer and len(lines) - len(viewer) >= 10, lines
    for line in [line for line in lines if line not in viewer]:
        done = _bash(line, work, env)
        seen = done.stdout + done.stderr
        assert done.returncode in (0, 1), f"{line}\n{seen}"  # found or not; never usage (2) or broken (3)
        assert "Traceback" not in seen, f"{line}\n{seen}"
        if line.startswith(("pimem doctor", "pimem status", "pimem index", "pimem rebuild")):
            assert done.returncode == 0, f"{line}\n{seen}"
        if line.startswith("pimem doctor"):
            count = len(list((home / ".pi" / "agent" / "sessions").glob("*/*.jsonl")))
            assert f"{home / '.pi' / 'agent' / 'sessions'}: {count} journal(s)" in done.stdout
        if "/path/to/agent" in line:  # the placeholder folders hold nothing: said so, nothing made
            assert "no Pi journals found" in done.stderr and not Path("/path/to/agent").exists()


def test_the_readme_test_your_own_implementation_runs_as_written(installed: Path, tmp_path: Path) -> None:
    required_node("the README's Node adapter cannot run")
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    # `pip install pytest`: the test's own pytest, importable through the wheel venv's .pth
    shim = installed / "pytest"
    shim.write_text(f"#!{installed / 'python'}\nimport sys, pytest\nsys.exit(pytest.console_main())\n")
    shim.chmod(0o755)
    env = _reader_env(home, installed)
    section = _section("Test your own implementation")
    (python_file,) = _blocks(section, "python")
    name = python_file.splitlines()[0].removeprefix("# ").strip()
    (work / name).write_text(python_file, encoding="utf-8")
    ran = []
    for block in _blocks(section, "bash"):
        for line in _commands(block):
            if line.startswith("pip install"):  # the wheel is installed (and pytest above) instead
                continue
            # -x: the first failing case is enough to know the route works (all of them take minutes)
            done = _bash(line, work, {**env, "PYTEST_ADDOPTS": "-x -p no:cacheprovider"})
            seen = done.stdout[-3000:] + done.stderr[-3000:]
            judged = line.startswith(("pimem-conformance run", "pytest"))
            assert done.returncode == (1 if judged else 0), f"{line}\n{seen}"  # fails cases, never broken
            assert "Traceback" not in done.stderr, f"{line}\n{seen}"
            ran.append((line, done))
    commands = [
        line.split()[1] if line.startswith("pimem-conformance") else line.split()[0] for line, _ in ran
    ]
    assert commands == [
        "init-adapter", "run", "summary", "init-adapter", "run", "show", "pytest", "report", "report"
    ]  # fmt: skip
    assert (work / "report.jsonl").is_file() and (work / "junit.xml").is_file()
    summary = ran[2][1].stdout
    assert summary.startswith("## minimal-adapter") and "| area | status |" in summary
    assert (work / "adapter.py").read_text() == (
        ROOT / "conformance" / "examples" / "minimal_adapter.py"
    ).read_text()
    pytest_run = ran[commands.index("pytest")][1]
    assert "test_my_memory.py" in pytest_run.stdout and "failed" in pytest_run.stdout
    assert "<html" in (work / "report.html").read_text() and "<svg" in (work / "badge.svg").read_text()
