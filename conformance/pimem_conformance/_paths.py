"""Where the suite finds its data: the spec, the fixtures, and (in a checkout) the real Pi journals.

Installed from a wheel, `spec/` and `fixtures/` ship inside the package as `_data/`; in a source
checkout they sit at the repository root. Every module locates them through this one helper so
the two cases never drift apart.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "FIXTURES_ENV",
    "SHARED_JOURNALS_1X_ENV",
    "SHARED_JOURNALS_ENV",
    "examples_dir",
    "fixtures_dir",
    "repo_root",
    "shared_journals_1x_dir",
    "shared_journals_dir",
    "spec_dir",
]

_PACKAGE_DIR = Path(__file__).resolve().parent
_BUNDLED_DATA = _PACKAGE_DIR / "_data"
# conformance/pimem_conformance/_paths.py -> the checkout root is two folders above the package.
_CHECKOUT_ROOT = _PACKAGE_DIR.parents[1]

# Names the folder of real journals; used by tests, never by the suite's cases.
FIXTURES_ENV = "PIMEM_FIXTURES"
SHARED_JOURNALS_ENV = "PIMEM_SHARED_JOURNALS"
SHARED_JOURNALS_1X_ENV = "PIMEM_SHARED_JOURNALS_1X"


def repo_root() -> Path | None:
    """The source checkout's root, or None when running from an installed wheel."""
    if _BUNDLED_DATA.is_dir():
        return None
    if (_CHECKOUT_ROOT / "pyproject.toml").is_file() and (_CHECKOUT_ROOT / "spec").is_dir():
        return _CHECKOUT_ROOT
    return None


def _data_root() -> Path:
    return _BUNDLED_DATA if _BUNDLED_DATA.is_dir() else _CHECKOUT_ROOT


def spec_dir() -> Path:
    """The `spec/` folder: requirement documents, cases and schemas."""
    return _data_root() / "spec"


def fixtures_dir() -> Path:
    """The `fixtures/` folder: generated journals, scenarios and the manifest; `$PIMEM_FIXTURES`
    names another (a spec folder of one's own whose cases read journals of their own)."""
    configured = os.environ.get(FIXTURES_ENV)
    return Path(configured) if configured else _data_root() / "fixtures"


def examples_dir() -> Path:
    """The example adapters (`init-adapter` prints them): `conformance/examples/` in a checkout."""
    return _BUNDLED_DATA / "examples" if _BUNDLED_DATA.is_dir() else _PACKAGE_DIR.parent / "examples"


def _shared(env: str, folder: str) -> Path | None:
    configured = os.environ.get(env)
    if configured:
        candidate = Path(configured)
        return candidate if candidate.is_dir() else None
    root = repo_root()
    if root is None:
        return None
    candidate = root.parent / "shared" / folder
    return candidate if candidate.is_dir() else None


def shared_journals_dir() -> Path | None:
    """The folder of real Pi 0.73.1 journals (with `sessions/` and `flat/`), or None when unavailable.

    `$PIMEM_SHARED_JOURNALS` wins; otherwise a checkout looks for `shared/pi-journals` beside
    itself. A user's fresh clone has neither, and the tests that need it skip.
    """
    return _shared(SHARED_JOURNALS_ENV, "pi-journals")


def shared_journals_1x_dir() -> Path | None:
    """The folder of real Pi 1.6.0 journals: `$PIMEM_SHARED_JOURNALS_1X`, else `shared/pi-journals-1x`
    beside the checkout; None when neither is there."""
    return _shared(SHARED_JOURNALS_1X_ENV, "pi-journals-1x")
