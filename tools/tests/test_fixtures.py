"""pimem-fixtures: the committed fixtures are what the generator writes, byte for byte as Pi would."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from pimem_conformance import dumps_like_js, fixtures_dir
from pimem_tools.fixtures import main, parse_size
from pimem_tools.fixtures._scale import SCRIPT_SHARES, TARGET_MIX, write_scale_corpus

FIXTURES = fixtures_dir()


def _all_fixture_lines() -> list[bytes]:
    return [
        line
        for path in sorted((FIXTURES / "journals").rglob("*.jsonl"))
        for line in path.read_bytes().splitlines()
    ]


@pytest.fixture
def fixtures_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "fixtures"
    shutil.copytree(FIXTURES, copy)
    return copy


def test_check_passes_on_an_unchanged_copy(fixtures_copy: Path) -> None:
    assert main(["--check", "--fixtures-dir", str(fixtures_copy)]) == 0


def test_check_names_an_altered_fixture(fixtures_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = sorted((fixtures_copy / "journals").rglob("*.jsonl"))[0]
    victim.write_bytes(victim.read_bytes().replace(b'"cwd":"', b'"cwd":"/x', 1))
    assert main(["--check", "--fixtures-dir", str(fixtures_copy)]) == 1
    relative = victim.relative_to(fixtures_copy).as_posix()
    assert f"differs from what the generator writes: {relative}" in capsys.readouterr().err


def test_check_names_missing_and_extra_files(fixtures_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = sorted((fixtures_copy / "journals").rglob("*.jsonl"))[-1]
    victim.rename(victim.with_name("renamed.jsonl"))
    assert main(["--check", "--fixtures-dir", str(fixtures_copy)]) == 1
    err = capsys.readouterr().err
    missing = victim.relative_to(fixtures_copy).as_posix()
    assert f"missing (the generator writes it, fixtures/ lacks it): {missing}" in err
    assert "extra (in fixtures/, the generator does not write it): " in err and "renamed.jsonl" in err


def test_regenerating_a_copy_restores_it(fixtures_copy: Path) -> None:
    victim = sorted((fixtures_copy / "journals").rglob("*.jsonl"))[0]
    victim.unlink()
    assert main(["--fixtures-dir", str(fixtures_copy)]) == 0
    assert main(["--check", "--fixtures-dir", str(fixtures_copy)]) == 0


def test_manifest_hashes_match_the_files() -> None:
    manifest = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    for journal in manifest["journals"]:
        data = (FIXTURES / journal["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == journal["sha256"], journal["path"]
        assert data.count(b"\n") == journal["lines"], journal["path"]


def test_fixture_lines_are_their_own_js_serialisation() -> None:
    lines = _all_fixture_lines()
    mismatched = [line[:120] for line in lines if dumps_like_js(json.loads(line)).encode() != line]
    assert not mismatched


def test_fixture_lines_round_trip_through_node_unchanged() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: cannot compare with JSON.parse/JSON.stringify")
    script = (
        "let data='';process.stdin.setEncoding('utf8');process.stdin.on('data',c=>data+=c).on('end',()=>{"
        "const out=data.split('\\n').filter(l=>l.length).map(l=>JSON.stringify(JSON.parse(l)));"
        "process.stdout.write(out.join('\\n')+'\\n');});"
    )
    lines = _all_fixture_lines()
    result = subprocess.run(
        [node, "-e", script], input=b"\n".join(lines) + b"\n", capture_output=True, check=True, timeout=120
    )
    node_lines = result.stdout.splitlines()
    assert len(node_lines) == len(lines)
    differing = [ours[:120] for ours, theirs in zip(lines, node_lines, strict=True) if ours != theirs]
    assert not differing


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("corpus")
    return out, write_scale_corpus(out, 5_000_000, seed=7)


def test_scale_corpus_mix_is_near_the_documented_shares(small_corpus: tuple[Path, dict[str, Any]]) -> None:
    _, stats = small_corpus
    mix = stats["mix"]
    assert isinstance(mix, dict)
    for category, share in TARGET_MIX.items():
        assert abs(mix[category] - share) <= 0.025, (category, mix[category], share)
    assert stats["big_entries"] == stats["entries"] // 100


def _script_of(char: str) -> str | None:
    point = ord(char)
    if 0x0E00 <= point <= 0x0E7F:
        return "thai"
    if 0x0900 <= point <= 0x097F:
        return "devanagari"
    if 0x3000 <= point <= 0x9FFF or 0xAC00 <= point <= 0xD7AF:
        return "cjk"
    return None


def test_scale_corpus_has_the_documented_share_of_other_scripts(
    small_corpus: tuple[Path, dict[str, Any]],
) -> None:
    """Counted here from the decoded journals, by Unicode block, not by the generator's own count."""
    out, stats = small_corpus
    counted = dict.fromkeys(SCRIPT_SHARES, 0)
    for path in out.glob("agent/sessions/*/*.jsonl"):
        for char in path.read_text(encoding="utf-8"):
            if not char.isascii() and (script := _script_of(char)) is not None:
                counted[script] += len(char.encode())
    for script, share in SCRIPT_SHARES.items():
        measured = counted[script] / stats["bytes"]
        assert share * 0.7 <= measured <= share * 1.3, (script, measured, share)
        assert stats["scripts"][script] == pytest.approx(measured, abs=0.001)


def test_scale_corpus_lines_are_js_serialised_and_sessions_have_headers(
    small_corpus: tuple[Path, dict[str, Any]],
) -> None:
    out, stats = small_corpus
    journals = sorted(out.glob("agent/sessions/*/*.jsonl"))
    assert len(journals) == stats["files"]
    total = sum(path.stat().st_size for path in journals)
    assert total == stats["bytes"]
    for path in journals[:3]:
        lines = path.read_bytes().splitlines()
        assert orjson.loads(lines[0])["type"] == "session"
        assert all(dumps_like_js(orjson.loads(line)).encode() == line for line in lines)


def test_scale_corpus_is_deterministic(tmp_path: Path) -> None:
    def digest(out: Path) -> str:
        write_scale_corpus(out, 400_000, seed=3)
        paths = sorted(out.glob("agent/sessions/*/*.jsonl"))
        return hashlib.sha256(
            b"".join(p.relative_to(out).as_posix().encode() + p.read_bytes() for p in paths)
        ).hexdigest()

    assert digest(tmp_path / "a") == digest(tmp_path / "b")


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("200MB", 200_000_000),
        ("1GiB", 1 << 30),
        ("5000000", 5_000_000),
        ("512 KiB", 512 << 10),
        ("1.5gb", 1_500_000_000),
    ],
)
def test_scale_sizes_take_units(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_scale_with_a_unit_writes_about_that_much_and_a_bad_size_says_how(tmp_path: Path) -> None:
    command = [sys.executable, "-c", "import sys; from pimem_tools.fixtures import main; sys.exit(main())"]
    done = subprocess.run(
        [*command, "--scale", "2MB", "--out", str(tmp_path / "c")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    written = sum(path.stat().st_size for path in (tmp_path / "c").rglob("*.jsonl"))
    assert 1_900_000 <= written <= 2_200_000  # 2MB is 2,000,000 bytes, not 2 MiB
    bad = subprocess.run(
        [*command, "--scale", "lots", "--out", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "200MB or 1GiB" in bad.stderr and not (tmp_path / "d").exists()
