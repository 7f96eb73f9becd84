"""The reference judged in-process and as a subprocess (`pimem serve`) gets identical outcomes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pimem_conformance import main
from suite_kit import outcomes, read_lines


def test_in_process_and_subprocess_reference_agree_case_by_case(
    reference_report: Path, tmp_path: Path
) -> None:
    served = tmp_path / "served.jsonl"
    main(
        [
            "run",
            "--impl",
            f"{sys.executable} -m pimem serve",
            "--validate-adapter",
            "-q",
            "--report",
            str(served),
        ]
    )
    assert outcomes(read_lines(reference_report)) == outcomes(read_lines(served))
    assert read_lines(served)[0]["implementation"]["name"] == "pimem"


def test_cov_reports_the_reference_branch_coverage(tmp_path: Path) -> None:
    # A fresh process, so the reference is imported (and measured) only after coverage starts.
    report = tmp_path / "report.jsonl"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pimem_conformance",
            "run",
            "--impl",
            "reference",
            "--cov",
            "-k",
            "read-",
            "-q",
            "--report",
            str(report),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert (tmp_path / ".coverage").is_file()  # saved, for `coverage report -m`
    found = re.search(r"^reference branch coverage: (\d+\.\d)%$", run.stdout, re.MULTILINE)
    assert found is not None and 0 < float(found.group(1)) <= 100
    assert read_lines(report)[-1]["reference_branch_coverage"] == float(found.group(1))
