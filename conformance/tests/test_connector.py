"""The connector seam: JSON round trips in-process, faults detected in subprocesses."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from fauxmplementation import FakeServer
from pimem_conformance import (
    Adapter,
    AdapterError,
    Connector,
    InProcessConnector,
    SubprocessConnector,
    load_schemas,
)
from suite_kit import FAUX


class Recorder:
    """An in-process handler that keeps what it was given and hands back an object it keeps too."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.answer: dict[str, Any] = {"seq": 1, "details": {"list": [1, 2]}}

    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        self.received.append(message)
        return self.answer


def test_in_process_messages_cross_as_json_copies() -> None:
    recorder = Recorder()
    connector = InProcessConnector(lambda: recorder)
    message = {"seq": 1, "cmd": "tool", "arguments": {"tuple": (1, 2)}}
    response = connector.request(message)
    assert recorder.received[0] == {"seq": 1, "cmd": "tool", "arguments": {"tuple": [1, 2]}}
    assert recorder.received[0] is not message
    response["details"]["list"].append(3)
    assert recorder.answer["details"]["list"] == [1, 2]


@pytest.mark.parametrize("answer", [{"seq": 1, "value": {1, 2}}, {"seq": 1, "value": float("nan")}])
def test_in_process_answers_that_are_not_json_are_adapter_errors(answer: dict[str, Any]) -> None:
    recorder = Recorder()
    recorder.answer = answer
    with pytest.raises(AdapterError, match="not JSON") as caught:
        InProcessConnector(lambda: recorder).request({"seq": 1, "cmd": "stop"})
    assert caught.value.kind == "framing"


def test_an_exception_in_handle_is_a_crash_and_the_next_request_starts_afresh() -> None:
    created: list[FakeServer] = []

    def factory() -> FakeServer:
        created.append(FakeServer("crash"))
        return created[-1]

    connector = InProcessConnector(factory)
    with pytest.raises(AdapterError, match="Misbehaviour") as caught:
        connector.request({"seq": 1, "cmd": "tool", "instance": "a", "arguments": {}})
    assert "Traceback" in caught.value.traceback
    assert caught.value.kind == "crash" and caught.value.as_context()["kind"] == "crash"
    connector.request({"seq": 2, "cmd": "stop"})
    assert len(created) == 2


WORKSPACE = {
    "home": "/home/u",
    "agent_dir": "/tmp/ws/agent",
    "session_dirs": [],
    "state_dir": "/tmp/ws/state",
    "cwd": "/home/u/app",
    "session_file": "/tmp/ws/agent/sessions/--home-u-app--/s1.jsonl",
}
CLOCK = {"now": "2026-11-29T12:00:00.000Z", "tz": "UTC"}


def test_both_connectors_satisfy_the_protocol_and_agree() -> None:
    subprocess_connector = SubprocessConnector([sys.executable, str(FAUX), "ok"], timeout=5)
    answers = []
    for connector in (InProcessConnector(FakeServer), subprocess_connector):
        assert isinstance(connector, Connector)
        adapter = Adapter(connector, load_schemas(), validate=True)
        implementation = adapter.start()
        adapter.send("open", instance="a", workspace=WORKSPACE, clock=CLOCK, settings={})
        answers.append(
            (
                implementation,
                adapter.send("tool", instance="a", name="memory_context", arguments={"query": "x y"}),
            )
        )
        adapter.stop()
    assert answers[0] == answers[1]


def test_a_subprocess_that_cannot_start_is_an_adapter_error() -> None:
    with pytest.raises(AdapterError, match="cannot start adapter") as caught:
        SubprocessConnector(["/nonexistent/adapter"]).request({"seq": 1, "cmd": "start"})
    assert caught.value.kind == "handshake"
