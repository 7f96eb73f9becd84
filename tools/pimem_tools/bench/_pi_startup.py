"""Pi's time from launch to its first answered prompt with the memory extension ÷ without it.

Each run spawns `pi --mode rpc` in a fresh throwaway HOME and agent dir whose `sessions/` holds the
journal corpus (1 GiB in the full run; hard links into the cached corpus, copies where links fail),
sends one prompt, and stops the clock at the `agent_end` event; a mock OpenAI-compatible model on
127.0.0.1 answers the prompt with one streamed text. With the extension, Pi starts `pimem serve`
(the venv's `pimem`), which meets the whole corpus on its first start. Runs with and without
`-e reference/pi-extension/index.js` alternate, so each pair sees the same machine load; the figure
is the median of the per-pair ratios. Each Pi is the pinned one the end-to-end tests install
(`pimem_tools.pi_install`: `.cache/pi-<version>`, Node 22 for Pi 1.x); where it cannot be
installed the figure is recorded as not measured, with why.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pimem_tools.bench._corpus import Corpus
from pimem_tools.pi_install import PINS, InstalledPi, PiUnavailable, install_pi

__all__ = ["PI_VERSIONS", "PiStartup", "measure_pi_startup"]

EXTENSION = Path("reference") / "pi-extension" / "index.js"
PI_VERSIONS = ("1.6.0", "0.73.1")  # the target names 1.6.0; 0.73.1 is reported beside it
_TIMEOUT_SECONDS = 120
_ANSWER = "Hello from the benchmark's mock model."


@dataclass(frozen=True)
class PiStartup:
    with_extension_ms: float | None = None  # median over the runs with the extension
    without_extension_ms: float | None = None  # median over the runs without it
    reason: str | None = None  # why it was not measured
    pair_ratios: tuple[float, ...] = field(default=())  # with ÷ without, one per pair, in run order
    corpus_bytes: int | None = None

    @property
    def ratio(self) -> float | None:
        """The median of the paired ratios."""
        return statistics.median(self.pair_ratios) if self.pair_ratios else None


def _handler() -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            chunks: list[dict[str, object]] = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": _ANSWER},
                              "finish_reason": None}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 8, "total_tokens": 18}},
            ]  # fmt: skip
            for chunk in chunks:
                event = {
                    "id": "chatcmpl-bench",
                    "object": "chat.completion.chunk",
                    "model": "mock-model",
                    **chunk,
                }
                self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def log_message(self, format: str, *args: object) -> None:
            """Quiet: the benchmark prints its own progress."""

    return Handler


@contextmanager
def _mock_llm() -> Iterator[str]:
    """A stdlib OpenAI-compatible chat-completions server; yields its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host!s}:{port}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _agent_dir(scratch: Path, sessions: Path, base_url: str) -> Path:
    """A throwaway agent dir: the corpus under `sessions/`, and `models.json` naming the mock."""
    agent_dir = scratch / "agent"
    shutil.copytree(sessions, agent_dir / "sessions", copy_function=_link_or_copy)
    provider = {
        "baseUrl": base_url, "api": "openai-completions", "apiKey": "mock-key",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "mock-model", "name": "Mock Model", "reasoning": False, "input": ["text"],
                    "contextWindow": 128000, "maxTokens": 4096}],
    }  # fmt: skip
    (agent_dir / "models.json").write_text(json.dumps({"providers": {"mock": provider}}), encoding="utf-8")
    return agent_dir


def _first_prompt_once(
    pi: InstalledPi, extension: Path | None, scratch: Path, sessions: Path, base_url: str
) -> float:
    """Milliseconds from spawning Pi to the `agent_end` of its first prompt."""
    scratch = scratch.resolve()  # Pi runs in its project dir: every path it gets must be absolute
    agent_dir, project = _agent_dir(scratch, sessions, base_url), scratch / "project"
    project.mkdir(parents=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_", "PIMEM_"))}
    env.update(HOME=str(scratch), PI_CODING_AGENT_DIR=str(agent_dir), PI_OFFLINE="1", PI_TELEMETRY="0",
               PIMEM_COMMAND=str(Path(sys.executable).parent / "pimem"))  # fmt: skip
    env = pi.env(env)
    argv = [str(pi.pi), "--mode", "rpc", "--provider", "mock", "--model", "mock-model",
            *(["-e", str(extension)] if extension else [])]  # fmt: skip
    started = time.perf_counter()
    # Its own process group, so that killing it also kills the extension's `pimem serve`.
    process = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    timer = threading.Timer(_TIMEOUT_SECONDS, process.kill)
    timer.start()
    try:
        process.stdin.write(b'{"id":"bench","type":"prompt","message":"hello"}\n')
        process.stdin.flush()
        for line in process.stdout:  # LF-framed JSON lines
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if not isinstance(message, dict):
                continue
            if message.get("type") == "agent_end":
                return (time.perf_counter() - started) * 1000
            if message.get("id") == "bench" and message.get("success") is False:
                raise RuntimeError(f"pi refused the prompt: {message.get('error')}")
        raise RuntimeError(f"pi exited with {process.wait()} before answering the prompt")
    finally:
        timer.cancel()
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        process.stdin.close()
        process.stdout.close()


def measure_pi_startup(
    version: str, repo: Path, code_root: Path, runs_per_side: int, corpus: Corpus
) -> PiStartup:
    """Pi `version` (installed from the measured code's pins into the repo's cache) with the measured
    extension, on `corpus`; at least 5 pairs."""
    extension = code_root.resolve() / EXTENSION
    try:
        pi = install_pi(version, code_root.resolve() / PINS, repo.resolve() / ".cache")
    except (PiUnavailable, RuntimeError, OSError) as error:
        return PiStartup(reason=f"Pi {version} could not be installed: {error}")
    if not extension.exists():
        return PiStartup(reason=f"the extension {EXTENSION} does not exist")
    if corpus.agent_dir is None:
        return PiStartup(reason=f"the corpus at {corpus.root} has no <agentDir>/sessions layout")
    sessions = corpus.agent_dir / "sessions"
    with_ms: list[float] = []
    without_ms: list[float] = []
    # Under the cache (same file system as the corpus), so the journals can be hard links.
    with (
        tempfile.TemporaryDirectory(prefix="pimem-bench-pi-", dir=corpus.root.parent) as temp,
        _mock_llm() as url,
    ):
        try:
            for run in range(max(runs_per_side, 5)):
                without_ms.append(_first_prompt_once(pi, None, Path(temp) / f"without-{run}", sessions, url))
                with_ms.append(_first_prompt_once(pi, extension, Path(temp) / f"with-{run}", sessions, url))
        except (OSError, RuntimeError) as error:
            return PiStartup(reason=f"Pi {version} did not answer its first prompt: {error}")
    return PiStartup(
        statistics.median(with_ms),
        statistics.median(without_ms),
        pair_ratios=tuple(w / wo for w, wo in zip(with_ms, without_ms, strict=True)),
        corpus_bytes=corpus.bytes,
    )
