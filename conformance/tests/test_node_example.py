"""The minimal Node adapter in conformance/examples/ speaks the protocol: failures, never a broken adapter."""

from __future__ import annotations

from pathlib import Path

from pimem_conformance import REPORT_SCHEMA_ID, load_schemas, main
from suite_kit import NODE_EXAMPLE, read_lines, required_node


def test_the_minimal_node_adapter_fails_cases_but_is_never_broken(node_example_run: tuple[int, Path]) -> None:
    code, report = node_example_run
    assert code == 1
    lines = read_lines(report)
    schemas = load_schemas()
    assert [problem for line in lines for problem in schemas.errors(REPORT_SCHEMA_ID, line)] == []
    cases = [line for line in lines if line["type"] == "case"]
    assert {line["outcome"] for line in cases} >= {"pass", "fail"}
    assert [line["id"] for line in cases if line.get("error", {}).get("source") == "adapter"] == []
    assert lines[0]["implementation"]["language"] == "javascript"


def test_the_minimal_node_adapter_passes_every_protocol_case(tmp_path: Path) -> None:
    node = required_node("the Node example cannot run")
    # Whoever copies the example inherits no protocol fault: every protocol case, adapter envelopes checked.
    report = tmp_path / "report.jsonl"
    run = ["run", "--impl", f"{node} {NODE_EXAMPLE}", "--validate-adapter", "-k", "protocol-*", "-q"]
    assert main([*run, "--report", str(report)]) == 0
    cases = [line for line in read_lines(report) if line["type"] == "case"]
    assert len(cases) >= 10 and {line["outcome"] for line in cases} == {"pass"}
