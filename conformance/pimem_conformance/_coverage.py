"""Branch coverage of the in-process reference while the cases run (`run --cov`).

It shows code that no requirement exercises. Settings come from the checkout's pyproject
`[tool.coverage.run]`; an installed wheel has none, and then the same defaults apply. The data is
saved (to `.coverage` in the working directory, unless the settings say otherwise), so
`python -m coverage report -m` lists the lines and branches no case reaches.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import coverage

from pimem_conformance._paths import repo_root

__all__ = ["ReferenceCoverage"]


class ReferenceCoverage:
    def __init__(self) -> None:
        root = repo_root()
        pyproject = root / "pyproject.toml" if root is not None else None
        if pyproject is not None and pyproject.is_file():
            self._coverage = coverage.Coverage(config_file=str(pyproject))
        else:
            self._coverage = coverage.Coverage(config_file=False, branch=True, source=["pimem"])

    def start(self) -> None:
        self._coverage.start()

    def stop(self) -> float:
        """Stop measuring; the percentage of branches taken (100.0 when there is no branch)."""
        self._coverage.stop()
        self._coverage.save()
        with tempfile.TemporaryDirectory() as folder:
            target = Path(folder) / "coverage.json"
            try:
                self._coverage.json_report(outfile=str(target))
            except coverage.exceptions.NoDataError:
                return 0.0  # the reference never ran a line
            totals = json.loads(target.read_text())["totals"]
        branches = totals.get("num_branches", 0)
        return 100.0 * totals.get("covered_branches", 0) / branches if branches else 100.0
