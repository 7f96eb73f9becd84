"""The real Pis the end-to-end tests run, and the throwaway world each test runs them in.

Every folder `pi-<version>/` beside this file pins one Pi with a package.json and its lockfile;
`pimem_tools.pi_install` (shared with the benchmark) installs it once with `npm ci` into
`<repo>/.cache/pi-<version>`, Node 22 included for Pi 1.x.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mock_llm import Again, MockLLM, Text, ToolCall
from pi_rpc import PiProcess
from pimem_tools.pi_install import InstalledPi, PiUnavailable, install_pi, pinned_versions

__all__ = [
    "HERE",
    "REPO",
    "TOOL",
    "VERSIONS",
    "InstalledPi",
    "SearchUntilIndexed",
    "World",
    "installed_pi",
    "journal_lines",
    "pi_versions",
    "tool_results",
    "world_for",
]

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
VERSIONS = pinned_versions(HERE)
TOOL = "memory_context"


def journal_lines(journal: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]


def tool_results(journal: Path, count: int) -> list[dict[str, Any]]:
    """The memory tool's first `count` results as Pi wrote them into the journal.

    Pi persists a message after the extensions' message_end handlers ran, so its next request to
    the model can arrive before the line is written: wait (bounded) for it.
    """
    results: list[dict[str, Any]] = []
    for _ in range(200):
        if journal.exists():
            messages = [line["message"] for line in journal_lines(journal) if line["type"] == "message"]
            results = [m for m in messages if m["role"] == "toolResult" and m["toolName"] == TOOL]
            if len(results) >= count:
                return results[:count]
        time.sleep(0.05)
    raise AssertionError(f"{journal.name} holds {len(results)} {TOOL} result(s), not {count}: {results}")


class SearchUntilIndexed:
    """A scripted reply: while the last memory_context result in the journal says indexing is in
    progress, search `query` again after the model's thinking time (at most `most` searches in
    all), then answer `then`. `searches` counts the searches, the first one (queued before this
    reply) included. `journal` is called when the reply is due (Pi names the file once it runs)."""

    def __init__(
        self, journal: Callable[[], Path], query: str, then: Text | ToolCall, most: int = 50
    ) -> None:
        self.journal, self.query, self.then, self.most = journal, query, then, most
        self.searches = 1

    def __call__(self, _request: dict[str, Any]) -> Text | ToolCall | Again:
        latest = tool_results(self.journal(), self.searches)[-1]
        if not latest["details"]["indexing"]["complete"] and self.searches < self.most:
            self.searches += 1
            time.sleep(0.2)  # the model's thinking time, during which indexing goes on
            return Again(ToolCall(TOOL, {"action": "search", "query": self.query}))
        return self.then


def pi_versions(*, since: str | None = None) -> list[Any]:
    """pytest params of the pinned Pi versions (from `since`'s major version on), ids `pi-<version>`."""
    major = int(since.split(".")[0]) if since else 0
    return [
        pytest.param(version, id=f"pi-{version}")
        for version in VERSIONS
        if int(version.split(".")[0]) >= major
    ]


def _missing(what: str) -> None:
    # CI installs everything it needs: there a missing tool is a failure, not a skip.
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} (CI=true: the end-to-end test must run)")
    pytest.skip(what)


def installed_pi(version: str) -> InstalledPi:
    """Pi `version` from its lockfile, installed once into the cache folder."""
    try:
        return install_pi(version, HERE, REPO / ".cache")
    except PiUnavailable as error:
        _missing(str(error))
        raise


@dataclass
class World:
    """A throwaway HOME with a mock LLM and one installed Pi."""

    installed: InstalledPi
    home: Path
    agent_dir: Path
    env: dict[str, str]
    llm: MockLLM
    logs: Path

    @property
    def pi(self) -> Path:
        return self.installed.pi

    def run_pi(self, cwd: Path, *extra: str) -> PiProcess:
        return PiProcess(self.pi, cwd, self.env, self.logs / "pi.stderr", list(extra))

    def pi_command(self, *argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """`pi <argv>` as a user types it; its output is returned, never checked here."""
        return subprocess.run(
            [str(self.pi), *argv],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def version(self) -> str:
        asked = self.pi_command("--version")
        return (asked.stdout + asked.stderr).strip()  # Pi 0.73.1 prints its version on stderr

    def update_settings(self, **fields: Any) -> None:
        path = self.agent_dir / "settings.json"
        settings = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        path.write_text(json.dumps({**settings, **fields}, indent=2), encoding="utf-8")


@contextmanager
def world_for(version: str, root: Path, *, pimem: bool = True) -> Iterator[World]:
    """A world for Pi `version` under `root`. With `pimem`, PIMEM_COMMAND names this venv's
    `pimem`; without, no `pimem` is anywhere on PATH (a fresh machine, for provisioning)."""
    installed = installed_pi(version)
    home = root / "home"
    agent_dir = home / ".pi" / "agent"
    agent_dir.mkdir(parents=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_", "PIMEM_"))}
    env.update(HOME=str(home), PI_OFFLINE="1", PI_TELEMETRY="0")
    if pimem:
        command = Path(sys.executable).parent / "pimem"
        assert command.exists(), f"{command} is missing: install the project first (./dev test does)"
        env["PIMEM_COMMAND"] = str(command)
    else:
        venv_bin = str(Path(sys.executable).parent)
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
        assert shutil.which("pimem", path=env["PATH"]) is None, "a pimem is on PATH: not a fresh machine"
    env = installed.env(env)
    with MockLLM() as llm:
        provider = {
            "baseUrl": llm.base_url,
            "api": "openai-completions",
            "apiKey": "mock-key",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [
                {
                    "id": "mock-model",
                    "name": "Mock Model",
                    "reasoning": False,
                    "input": ["text"],
                    "contextWindow": 128000,
                    "maxTokens": 4096,
                }
            ],
        }
        (agent_dir / "models.json").write_text(
            json.dumps({"providers": {"mock": provider}}), encoding="utf-8"
        )
        world = World(installed, home, agent_dir, env, llm, root)
        # Small sessions can be compacted only when little is kept (pi-platform §5).
        world.update_settings(compaction={"enabled": True, "reserveTokens": 16384, "keepRecentTokens": 60})
        yield world
