"""Node.js for the Pi extension's own tests (`node --test`, no npm packages), run from pytest.

A missing `node` or `npm` skips the test on a developer's machine and fails it under CI=true,
where everything must run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["EXTENSION_DIR", "required_tool", "run_node_test"]

EXTENSION_DIR = Path(__file__).resolve().parents[1] / "pi-extension"


def required_tool(name: str, why: str) -> str:
    """The path of `name` on PATH; else a skip (a failure under CI=true) that says `why`."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is not installed (CI=true: this test must run): {why}")
        pytest.skip(f"{name} is not installed: {why}")
    return found


def run_node_test(script: str, *, timeout: int, env: dict[str, str] | None = None) -> str:
    """Run one of the extension's `node --test` files; its TAP output, once it exited cleanly."""
    node = required_tool("node", "the Pi extension's tests need Node.js >= 20")
    result = subprocess.run(
        [node, "--test", script],
        cwd=EXTENSION_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"node --test failed:\n{result.stdout}\n{result.stderr}"
    assert "# fail 0" in result.stdout, result.stdout
    return result.stdout
