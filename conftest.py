"""Settings and fixtures every test folder shares.

Hypothesis is derandomized by default, so that a green `./dev test` says the same on every run;
`PIMEM_SLOW=1` or `PIMEM_STATEFUL=long` explores with fresh random examples instead, and prints a
reproduction blob for each failure it finds (pin it as `@example`).

The browser tests get a real Chromium driven by Playwright: Debian's `chromium` (never
`playwright install`, whose download server is unreachable); when it is missing and the tests run
as root, it is installed with apt. Where it cannot be had, the browser tests skip with the
reason, except under CI=true, where that is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

EXPLORING = os.environ.get("PIMEM_SLOW") == "1" or os.environ.get("PIMEM_STATEFUL") == "long"

settings.register_profile("pimem-ci", derandomize=True, database=None)
settings.register_profile("pimem-explore", derandomize=False, database=None, print_blob=True)
settings.load_profile("pimem-explore" if EXPLORING else "pimem-ci")

REPO = Path(__file__).resolve().parent
SCREENSHOTS = REPO / ".cache" / "screenshots"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and the browser tests cannot run: {reason}")
    pytest.skip(reason)


def _find_chromium() -> str | None:
    return shutil.which("chromium") or next(
        (path for path in ("/usr/bin/chromium", "/usr/bin/chromium-browser") if os.access(path, os.X_OK)),
        None,
    )


def _install_chromium() -> str:
    """apt-get install chromium, as root only; returns why it could not be done, or ''."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "Chromium is not installed (install Debian's `chromium`; the tests do it themselves as root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1200, check=False)
        if done.returncode != 0:
            return f"`{' '.join(argv)}` failed: {done.stderr.strip()[-300:]}"
    return ""


@pytest.fixture(scope="session")
def chromium_path() -> str:
    found = _find_chromium()
    if found is None:
        failure = _install_chromium()
        found = _find_chromium()
        if found is None:
            _unavailable(failure or "apt-get installed chromium but no chromium binary is on PATH")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator[Any]:
    """One headless Chromium for the session; each test opens its own context (fresh profile)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as error:
        _unavailable(f"Playwright for Python is not installed ({error}); it comes with the test extra")
    with sync_playwright() as playwright:
        # Playwright gives every launch a fresh, temporary --user-data-dir of its own.
        launched = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
