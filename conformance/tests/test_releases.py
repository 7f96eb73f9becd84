"""A frozen release is judged by what it froze: the reference as it was when 0.1.0 was last frozen
passes `run --as-of 0.1.0`, though the cases and schemas have moved on since."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from pimem_conformance import main
from suite_kit import outcomes, read_lines, required_commit

# Spec 0.1.0 was last frozen at this commit (spec/releases/0.1.0.json, 274 case hashes).
LAST_FROZEN_0_1_0 = "26efc93"


def test_the_reference_of_the_last_0_1_0_freeze_passes_as_of_0_1_0(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = required_commit(LAST_FROZEN_0_1_0, "the reference of spec 0.1.0 is taken from it")
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", LAST_FROZEN_0_1_0, "reference/pimem"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp_path, filter="data")
    old = tmp_path / "reference"
    # `pimem serve` from the old tree, with this venv's python and dependencies.
    monkeypatch.setenv("PYTHONPATH", str(old))
    served = subprocess.run(
        [sys.executable, "-c", "import pimem; print(pimem.__file__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(served.stdout.strip()).is_relative_to(old)
    report = tmp_path / "as-of-0.1.0.jsonl"
    command = f"{sys.executable} -m pimem serve"
    code = main(
        ["run", "--impl", command, "--as-of", "0.1.0", "--validate-adapter", "-q", "--report", str(report)]
    )
    lines = read_lines(report)
    scored = outcomes(lines)
    assert len(scored) == 274  # every case 0.1.0 froze, the 12 withdrawn since included
    assert {case_id for case_id, outcome in scored.items() if outcome != "pass"} == set()
    assert code == 0
    assert lines[0]["implementation"]["version"] == "0.1.0"
