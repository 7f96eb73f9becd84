"""The conformance state machine against `--pimem-impl` (default: the reference), and its oracle."""

from __future__ import annotations

from hypothesis.stateful import run_state_machine_as_test
from pimem_conformance import Adapter, project_root, redacted_text
from pimem_conformance.statemachine import MemoryMachine, machine_settings


def test_the_memory_keeps_its_invariants_under_journal_changes(pimem_adapter: Adapter) -> None:
    run_state_machine_as_test(lambda: MemoryMachine(pimem_adapter), settings=machine_settings())


def test_project_root_takes_the_outermost_journal_cwd_but_never_home_or_its_children() -> None:
    cwds = {"/home/u/code/app", "/home/u/code/app/sub", "/home/u/code", "/home/u"}
    assert project_root("/home/u/code/app/sub", cwds, "/home/u") == "/home/u/code/app"
    assert project_root("/home/u/code", cwds, "/home/u") == "/home/u/code"
    assert project_root("/home/u/code/app2", cwds, "/home/u") == "/home/u/code/app2"
    assert project_root("/srv/x/", {"/srv"}, "/home/u") == "/srv/x"


def test_redaction_replaces_only_the_planted_secret() -> None:
    assert redacted_text("key ghp_abc here", ("ghp_abc",)) == "key [REDACTED:token] here"
