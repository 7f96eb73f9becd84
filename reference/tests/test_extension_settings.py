"""The Pi extension's settings test (`node --test`, no npm packages), run from pytest: redaction
patterns come from the user's and the project's settings, the allowlist from the user's only
(reference/pi-extension/test/settings.test.js)."""

from __future__ import annotations

from node_kit import run_node_test


def test_a_project_adds_redaction_patterns_but_never_an_allowlist() -> None:
    output = run_node_test("test/settings.test.js", timeout=120)
    assert "# pass 2" in output, output
