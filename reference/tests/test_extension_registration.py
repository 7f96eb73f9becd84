"""The Pi extension's registration test (`node --test`, no npm packages), run from pytest.

It loads reference/pi-extension against a fake `pi` that records every call and a fake
`pimem serve`; see reference/pi-extension/test/registration.test.js for what it asserts.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION_DIR = Path(__file__).resolve().parents[1] / "pi-extension"


def test_extension_registers_exactly_the_manifest_and_round_trips_a_tool_call() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Pi extension's registration test needs Node.js >= 20")
    result = subprocess.run(
        [node, "--test", "test/registration.test.js"],
        cwd=EXTENSION_DIR,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"node --test failed:\n{result.stdout}\n{result.stderr}"
    assert "# fail 0" in result.stdout, result.stdout
