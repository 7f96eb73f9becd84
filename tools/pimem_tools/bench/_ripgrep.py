"""The alternative a user would pick: ripgrep over the same journals.

The set-up installs Debian's `ripgrep` when `rg` is missing. When that cannot be done the measurement
is reported as unavailable, with the reason, rather than skipped silently.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Ripgrep", "ensure_ripgrep", "time_ripgrep"]


@dataclass(frozen=True)
class Ripgrep:
    executable: str | None
    version: str | None
    unavailable_reason: str | None


def _version(executable: str) -> str:
    out = subprocess.run([executable, "--version"], capture_output=True, text=True, check=True).stdout
    return out.splitlines()[0]


def _apt_get(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["apt-get", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env={"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )


def ensure_ripgrep() -> Ripgrep:
    found = shutil.which("rg")
    if found is None:
        if shutil.which("apt-get") is None:
            return Ripgrep(None, None, "rg is not installed and apt-get is not available")
        installed = _apt_get("install", "-y", "ripgrep")
        if installed.returncode != 0:  # a fresh machine often has no package lists yet
            _apt_get("update")
            installed = _apt_get("install", "-y", "ripgrep")
        found = shutil.which("rg")
        if found is None:
            tail = (installed.stderr or installed.stdout).strip().splitlines()[-1:] or ["no output"]
            return Ripgrep(None, None, f"`apt-get install -y ripgrep` failed: {tail[0]}")
    return Ripgrep(found, _version(found), None)


def time_ripgrep(executable: str, term: str, root: Path) -> float:
    """Seconds for `rg` to list the journals containing `term` (the cheapest useful rg call).

    `-F -i` makes it literal and case-insensitive like the index; `-l` lets it stop reading a file at
    its first match, which favours rg. `--no-ignore --hidden` because the cached corpus sits in a
    git-ignored folder, and a user's `~/.pi` is hidden.
    """
    started = time.perf_counter()
    result = subprocess.run(
        [executable, "-F", "-i", "-l", "--no-ignore", "--hidden", "--no-messages", "--", term, str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):  # 1 = no match, which is a valid timing
        raise RuntimeError(f"rg exited with {result.returncode} for {term!r}")
    return elapsed
