"""reference/pi-extension/manifest.json is what `pimem manifest` prints and what `pimem serve`
reports to a `manifest` request, so what the suite checks through the protocol is what Pi gets.

Regenerate it with: pimem manifest > reference/pi-extension/manifest.json
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

MANIFEST_FILE = Path(__file__).resolve().parents[1] / "pi-extension" / "manifest.json"
REGENERATE = "regenerate it with: pimem manifest > reference/pi-extension/manifest.json"


def _pimem(*args: str, stdin: str = "") -> str:
    result = subprocess.run(
        [sys.executable, "-m", "pimem", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout


def _committed() -> dict[str, Any]:
    manifest: dict[str, Any] = json.loads(MANIFEST_FILE.read_text(encoding="utf-8"))
    return manifest


def test_manifest_file_equals_pimem_manifest() -> None:
    assert json.loads(_pimem("manifest")) == _committed(), REGENERATE


def test_manifest_file_equals_what_pimem_serve_reports() -> None:
    requests = [
        {"seq": 1, "cmd": "start", "protocol": 1},
        {"seq": 2, "cmd": "manifest"},
        {"seq": 3, "cmd": "stop"},
    ]
    lines = _pimem("serve", stdin="".join(json.dumps(request) + "\n" for request in requests)).splitlines()
    responses = [json.loads(line) for line in lines]
    assert [response["seq"] for response in responses] == [1, 2, 3]
    reported = {key: value for key, value in responses[1].items() if key != "seq"}
    assert reported == _committed(), REGENERATE
