"""The Pi extension's settings test (`node --test`, no npm packages), run from pytest: redaction
patterns come from the user's and the project's settings, the allowlist from the user's only
(reference/pi-extension/test/settings.test.js)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION_DIR = Path(__file__).resolve().parents[1] / "pi-extension"


def test_a_project_adds_redaction_patterns_but_never_an_allowlist() -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI") == "true":
            pytest.fail("node is not installed; CI must have Node.js >= 20")
        pytest.skip("node is not installed: the Pi extension's settings test needs Node.js >= 20")
    result = subprocess.run(
        [node, "--test", "test/settings.test.js"],
        cwd=EXTENSION_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"node --test failed:\n{result.stdout}\n{result.stderr}"
    assert "# fail 0" in result.stdout and "# pass 2" in result.stdout, result.stdout
