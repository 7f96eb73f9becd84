"""`/memory view` in the Pi extension against the real `pimem view` (`node --test`, no npm packages).

See reference/pi-extension/test/viewer.test.js for what it asserts.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from node_kit import run_node_test


def test_memory_view_prints_the_url_is_replaced_stopped_and_never_holds_pi_open() -> None:
    pimem = Path(sys.executable).with_name("pimem")
    assert pimem.exists(), f"the pimem command is not installed beside {sys.executable}"
    env = {**os.environ, "PIMEM_VIEW_TEST_COMMAND": str(pimem)}
    output = run_node_test("test/viewer.test.js", timeout=300, env=env)
    assert "# skipped 0" in output, output
