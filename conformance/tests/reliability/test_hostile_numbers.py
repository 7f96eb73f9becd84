"""Issue 19: numbers no 64-bit encoder writes, sent to `pimem serve` as JSON-like text.

Python's own JSON writer, like many others, writes NaN, Infinity and integers of any size. The
adapter must parse such a request and answer its tool call with a tool error that names the
parameter and shows a capped rendering of the value; for the protocol's own fields (`seq`,
`clock.now`), an answer that echoes `seq` or an `errored` one, and it keeps serving afterwards.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .reliability_kit import JournalWriter, entry_line, header_line, pimem_command, record_figure, tally

pytestmark = pytest.mark.reliability

CWD = "/home/u/app"
INTEGERS = {"offset": "read", "limit": "search", "before": "around", "after": "around"}
# Written as JSON-like text, exactly as a lenient writer sends them.
HOSTILE = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    str(2**63),
    str(-(2**63) - 1),
    str(2**64),
    str(-(2**64) - 1),
    "1" + "0" * 5000,  # beyond the 4,300 digits Python converts to int by default
    "0.5",
]
MESSAGE_CHARS = 1_000


class Serve:
    """`pimem serve` driven line by line with raw request text."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [*pimem_command(), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def send(self, text: str) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"pimem serve ended; stderr: {self.stop()[-2000:]}"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stop(self) -> str:
        _, stderr = self.process.communicate('{"seq": 0, "cmd": "stop"}\n', timeout=60)
        return stderr


def _tool_request(seq: int, name: str, raw_value: str) -> str:
    action = INTEGERS[name]
    target = ', "entryId": "1a2b3c4d"' if action in ("read", "around") else ', "query": "budget"'
    arguments = f'{{"action": "{action}"{target}, "{name}": {raw_value}}}'
    return (
        f'{{"seq": {seq}, "cmd": "tool", "instance": "a", "name": "memory_context", '
        f'"arguments": {arguments}}}'
    )


@pytest.fixture
def serve(tmp_path: Path) -> Any:
    writer = JournalWriter(tmp_path / "ws")
    session = writer.write(
        writer.path_for(CWD, "current"),
        [
            header_line("0193aaaa-0000-7000-8000-000000000019", CWD),
            entry_line("1a2b3c4d", None, "indexer token budget notes"),
        ],
    )
    server = Serve()
    assert server.send('{"seq": "s", "cmd": "start", "protocol": 1}')["protocol"] == 1
    opened = {
        "seq": "o",
        "cmd": "open",
        "instance": "a",
        "workspace": writer.workspace(CWD, session),
        "clock": {"now": "2026-11-29T12:00:00.000Z", "tz": "UTC"},
        "settings": {},
    }
    assert server.send(json.dumps(opened)) == {"seq": "o", "instance": "a"}
    yield server
    server.stop()


def test_every_integer_parameter_answers_hostile_numbers_with_a_capped_tool_error(serve: Serve) -> None:
    calls = 0
    for name in INTEGERS:
        for raw_value in HOSTILE:
            calls += 1
            answer = serve.send(_tool_request(calls, name, raw_value))
            assert answer.get("seq") == calls, answer
            assert "errored" not in answer, (name, raw_value[:40], answer)
            error = answer["error"]
            # a whole positive offset is in range, and past the end of the text
            past_the_text = name == "offset" and raw_value in (str(2**63), str(2**64))
            assert error["code"] == ("bad_offset" if past_the_text else "bad_argument"), (name, error)
            if error["code"] == "bad_argument":
                assert f'"{name}"' in error["message"], error
            assert len(error["message"]) <= MESSAGE_CHARS, (name, raw_value[:40], len(error["message"]))
            assert "0" * 61 not in error["message"], error["message"]
    # the adapter still answers an ordinary call afterwards
    ordinary = serve.send(_tool_request(calls + 1, "limit", "5"))
    assert ordinary["details"]["results"][0]["entryId"] == "1a2b3c4d"
    record_figure("hostile numbers through pimem serve", f"{calls} calls, every one a tool error")
    tally("trials run", calls, "hostile numbers through pimem serve")


@pytest.mark.parametrize("seq", ["NaN", "Infinity", str(2**64), str(-(2**63) - 1), '"\\ud800"', "[[[[1]]]]"])
def test_any_seq_is_answered_and_the_adapter_keeps_serving(serve: Serve, seq: str) -> None:
    answer = serve.send(f'{{"seq": {seq}, "cmd": "manifest"}}')
    assert answer["tools"][0]["name"] == "memory_context"
    if seq in ("NaN", "Infinity"):
        assert answer["seq"] is None  # JSON has no such number; null is the nearest echo
    else:
        assert answer["seq"] == json.loads(seq)
    assert serve.send('{"seq": 7, "cmd": "manifest"}')["seq"] == 7


@pytest.mark.parametrize("now", ["NaN", "1e400", str(2**64), "1" + "0" * 5000, '"x' + "y" * 10_000 + '"'])
def test_a_hostile_clock_is_errored_with_a_capped_message_and_the_adapter_keeps_serving(
    serve: Serve, now: str
) -> None:
    answer = serve.send(f'{{"seq": 3, "cmd": "clock", "instance": "a", "now": {now}}}')
    assert answer["seq"] == 3 and answer["errored"] is True, answer
    assert "clock" in answer["context"]["message"]
    assert len(answer["context"]["message"]) <= MESSAGE_CHARS
    assert serve.send('{"seq": 4, "cmd": "clock", "instance": "a", "now": "2026-11-30T12:00:00Z"}') == {
        "seq": 4
    }
