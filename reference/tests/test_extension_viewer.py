"""`/memory view` in the Pi extension against the real `pimem view` (`node --test`, no npm packages).

See reference/pi-extension/test/viewer.test.js for what it asserts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXTENSION_DIR = Path(__file__).resolve().parents[1] / "pi-extension"


def test_memory_view_prints_the_url_is_replaced_stopped_and_never_holds_pi_open() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the Pi extension's tests need Node.js >= 20")
    pimem = Path(sys.executable).with_name("pimem")
    assert pimem.exists(), f"the pimem command is not installed beside {sys.executable}"
    result = subprocess.run(
        [node, "--test", "test/viewer.test.js"],
        cwd=EXTENSION_DIR,
        env={**os.environ, "PIMEM_VIEW_TEST_COMMAND": str(pimem)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"node --test failed:\n{result.stdout}\n{result.stderr}"
    assert "# fail 0" in result.stdout and "# skipped 0" in result.stdout, result.stdout
