"""The Pi extension's registration test (`node --test`, no npm packages), run from pytest.

It loads reference/pi-extension against a fake `pi` that records every call and a fake
`pimem serve`; see reference/pi-extension/test/registration.test.js for what it asserts.
"""

from __future__ import annotations

from node_kit import run_node_test


def test_extension_registers_exactly_the_manifest_and_round_trips_a_tool_call() -> None:
    run_node_test("test/registration.test.js", timeout=300)
