"""Pi start-up time with the memory extension ÷ without it, measured on the real Pi.

Start-up is the time from spawning `pi --mode rpc` until it answers its first RPC request
(`get_state`): by then Pi has loaded its extensions and emitted `session_start`. Runs with and
without `-e reference/pi-extension/index.js` alternate, so both see the same machine load; each gets
a fresh, empty agent dir, and the median of each side is compared. Pi is the one the end-to-end test
installs under `.cache/pi-0.73.1`; without it the target is recorded as not measured, with why.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PiStartup", "measure_pi_startup"]

PI_DIR = Path(".cache") / "pi-0.73.1"
EXTENSION = Path("reference") / "pi-extension" / "index.js"
_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class PiStartup:
    with_extension_ms: float | None = None
    without_extension_ms: float | None = None
    reason: str | None = None  # why it was not measured

    @property
    def ratio(self) -> float | None:
        if self.with_extension_ms is None or not self.without_extension_ms:
            return None
        return self.with_extension_ms / self.without_extension_ms


def _start_once(pi: Path, extension: Path | None, scratch: Path) -> float:
    """Milliseconds from spawning Pi to its answer to `get_state`."""
    agent_dir, project = scratch / "agent", scratch / "project"
    project.mkdir(parents=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PI_", "PIMEM_"))}
    env.update(HOME=str(scratch), PI_CODING_AGENT_DIR=str(agent_dir),
               PIMEM_COMMAND=str(Path(sys.executable).parent / "pimem"))  # fmt: skip
    argv = [str(pi), "--mode", "rpc", *(["-e", str(extension)] if extension else [])]
    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b'{"id":"bench","type":"get_state"}\n')
        process.stdin.flush()
        for line in process.stdout:
            if b'"id":"bench"' in line:
                return (time.perf_counter() - started) * 1000
        raise RuntimeError(f"pi exited with {process.wait()} before answering get_state")
    finally:
        process.stdin.close()  # Pi, and the extension's `pimem serve` with it, shut down on EOF
        try:
            process.wait(timeout=_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def measure_pi_startup(repo: Path, code_root: Path, runs_per_side: int) -> PiStartup:
    """Pi comes from the repo's cache, the extension from the measured code."""
    pi = repo.resolve() / PI_DIR / "node_modules" / ".bin" / "pi"
    extension = code_root.resolve() / EXTENSION
    if not pi.exists():
        return PiStartup(
            reason=f"Pi 0.73.1 is not installed at {PI_DIR} (the Pi end-to-end test installs it)"
        )
    if not extension.exists():
        return PiStartup(reason=f"the extension {EXTENSION} does not exist")
    with_ms: list[float] = []
    without_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="pimem-bench-pi-") as temp:
        try:
            for run in range(runs_per_side):
                without_ms.append(_start_once(pi, None, Path(temp) / f"without-{run}"))
                with_ms.append(_start_once(pi, extension, Path(temp) / f"with-{run}"))
        except (OSError, RuntimeError) as error:
            return PiStartup(reason=f"Pi did not start: {error}")
    return PiStartup(statistics.median(with_ms), statistics.median(without_ms))
