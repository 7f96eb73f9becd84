"""A frozen release is judged by what it froze: the reference as it was when 0.1.0 was last frozen
passes `run --as-of 0.1.0`, and the reference of the 0.2.0 freeze passes `run --as-of 0.2.0`,
though the cases and schemas have moved on since."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from pimem_conformance import main
from suite_kit import outcomes, read_lines, required_commit

# Spec 0.1.0 was last frozen at this commit (spec/releases/0.1.0.json, 274 case hashes); 0.2.0 at
# the other (spec/releases/0.2.0.json: 792 case hashes, 780 scored as of 0.2.0, the 12 withdrawn in 0.2.0
# not; the 16 withdrawn in 0.3.0, whose page the 0.3.0 reference fills, are judged as frozen there).
LAST_FROZEN_0_1_0 = "26efc93"
FROZEN_0_2_0 = "b33717a"


@pytest.mark.parametrize(
    ("commit", "version", "cases"), [(LAST_FROZEN_0_1_0, "0.1.0", 274), (FROZEN_0_2_0, "0.2.0", 780)]
)
def test_the_reference_of_a_freeze_passes_as_of_its_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, commit: str, version: str, cases: int
) -> None:
    root = required_commit(commit, f"the reference of spec {version} is taken from it")
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", commit, "reference/pimem"],
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
    report = tmp_path / f"as-of-{version}.jsonl"
    command = f"{sys.executable} -m pimem serve"
    code = main(
        ["run", "--impl", command, "--as-of", version, "--validate-adapter", "-q", "--report", str(report)]
    )
    lines = read_lines(report)
    scored = outcomes(lines)
    assert len(scored) == cases  # every case the release froze, those withdrawn since included
    assert {case_id for case_id, outcome in scored.items() if outcome != "pass"} == set()
    assert code == 0
    assert lines[0]["implementation"]["version"] == version
