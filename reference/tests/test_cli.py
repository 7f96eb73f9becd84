"""`pimem` as a person runs it: each test starts the command and checks what is seen (text on
stdout and stderr, the exit code) and what is left on disk."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "journals"
# How many fixture journals each root holds (the generator adds scenarios now and then).
DEFAULT_JOURNALS = len(list((FIXTURES / "agent" / "sessions").glob("*/*.jsonl")))
APP = "/home/u/app"  # a fixture project: entry 1f8abb0e asks about "retry logic"
APP_JOURNAL = (
    "agent/sessions/--home-u-app--/2026-11-08T10-00-00-000Z_01a1ba99-bd00-7f8e-956c-88442e4e7d6f.jsonl"
)
APP_SESSION = "01a1ba99-bd00-7f8e-956c-88442e4e7d6f"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("PI_") and key not in ("NO_COLOR", "HOME")
    }
    return {**env, "HOME": str(home), "TZ": "UTC", **extra}


class Pimem:
    """`pimem` over a copy of the fixture journals, from a project folder of the fixtures."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        shutil.copytree(FIXTURES, root / "j")
        self.where = ["--agent-dir", str(root / "j" / "agent"), "--sessions-dir", str(root / "j" / "flat")]

    def __call__(self, *argv: str, cwd: str = APP, **env: str) -> subprocess.CompletedProcess[str]:
        return run(*self.where, "--cwd", cwd, *argv, home=self.home, **env)

    def json(self, *argv: str) -> Any:
        done = self("--json", *argv)
        return json.loads(done.stdout)


def run(*argv: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pimem", *argv],
        capture_output=True,
        text=True,
        env=_env(home, **env),
        cwd=home,
        timeout=120,
    )


@pytest.fixture
def pimem(tmp_path: Path) -> Pimem:
    return Pimem(tmp_path)


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


# -- every tool action, every parameter ---------------------------------------------------------


def test_an_id_from_a_global_search_reads_with_the_same_scope(pimem: Pimem) -> None:
    found = pimem("search", "--scope", "global", "retry", cwd="/home/u/elsewhere")
    assert found.returncode == 0, found.stderr
    assert "1f8abb0e" in found.stdout and "pimem read ID --scope global" in found.stdout
    refused = pimem("read", "1f8abb0e", cwd="/home/u/elsewhere")
    assert refused.returncode == 1
    assert "--scope global" in refused.stdout  # says how to read it
    read = pimem("read", "1f8abb0e", "--scope", "global", cwd="/home/u/elsewhere")
    assert read.returncode == 0, read.stderr
    assert "Where is the retry logic of the sync worker (albatrossapp)" in read.stdout


def test_read_by_source_session_id_and_offset(pimem: Pimem) -> None:
    source = pimem.json("search", "retry")["results"][0]["source"]
    by_source = pimem("read", "--source", source)
    assert by_source.returncode == 0 and "albatrossapp" in by_source.stdout
    assert pimem("read", "1f8abb0e", "--session-id", APP_SESSION).returncode == 0
    other = pimem("read", "1f8abb0e", "--session-id", "01a1bad0-ab80-7f35-8d08-ab2f23f53cdf")
    assert other.returncode == 1  # narrowed to another session, the id is not there
    page = pimem.json("read", "1f8abb0e", "--offset", "9")
    assert page["text"] == "the retry logic of the sync worker (albatrossapp)" and page["offset"] == 9


def test_around_takes_before_and_after(pimem: Pimem) -> None:
    wide = pimem.json("around", "6ffabe74", "--before", "1", "--after", "1")
    assert [item["position"] for item in wide["entries"]] == ["before", "hit", "after"]
    narrow = pimem.json("around", "6ffabe74", "--before", "0", "--after", "0")
    assert [item["entryId"] for item in narrow["entries"]] == ["6ffabe74"]
    shown = pimem("around", "6ffabe74", "--before", "1", "--after", "0")
    assert shown.returncode == 0 and "Where is the retry logic" in shown.stdout


def test_summaries_take_scope_dates_and_limit(pimem: Pimem) -> None:
    every = pimem.json("summaries", "--scope", "global")["results"]
    assert len(every) >= 2
    one = pimem.json("summaries", "--scope", "global", "--limit", "1")["results"]
    assert one == every[:1]
    newest = every[0]["timestamp"][:10]
    later = pimem("summaries", "--scope", "global", "--since", newest, "--until", "2099-01-01")
    assert later.returncode == 0
    none = pimem("summaries", "--scope", "global", "--since", "2099-01-01")
    assert none.returncode == 1 and "0 summary" in none.stdout


# -- exit codes ---------------------------------------------------------------------------------


def test_exit_codes_say_what_happened(pimem: Pimem, tmp_path: Path) -> None:
    assert pimem("search", "retry").returncode == 0
    assert pimem("search", "nosuchwordanywhere").returncode == 1
    assert pimem("read", "deadbeef").returncode == 1
    assert pimem("around", "deadbeef").returncode == 1
    assert pimem("status").returncode == 0
    assert pimem("index").returncode == 0
    assert pimem("gc").returncode == 0
    assert pimem("forget", "1f8abb0e").returncode == 0
    assert pimem("search", "--limit", "51", "retry").returncode == 2
    assert pimem("frobnicate").returncode == 2
    folder = tmp_path / "index-is-a-folder"
    folder.mkdir()
    (folder / "index.sqlite").mkdir()  # the index path cannot be a database
    unavailable = pimem("--index", str(folder / "index.sqlite"), "search", "retry")
    assert unavailable.returncode == 3, unavailable.stderr
    assert "pimem rebuild" in unavailable.stderr and "Traceback" not in unavailable.stderr


# -- no journals --------------------------------------------------------------------------------


def test_no_journals_says_where_it_looked_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run("search", "retry", home=home)
    assert done.returncode == 1
    assert str(home / ".pi" / "agent" / "sessions") in done.stderr
    for way in ("--agent-dir", "--sessions-dir", "PI_CODING_AGENT_DIR"):
        assert way in done.stderr
    assert "Try other words" not in done.stdout + done.stderr
    status = run("status", home=home)
    assert status.returncode == 0 and "not created yet" in status.stdout
    assert _files(home) == set()


def test_no_journals_without_home_creates_nothing_either(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    env = {key: value for key, value in _env(tmp_path).items() if key != "HOME"}
    done = subprocess.run(
        [sys.executable, "-m", "pimem", "search", "retry"],
        capture_output=True,
        text=True,
        env={**env, "PI_CODING_AGENT_DIR": str(agent)},
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 1 and str(agent / "sessions") in done.stderr
    assert _files(agent) == set()


def test_journals_found_are_indexed_and_searched(pimem: Pimem) -> None:
    """The positive twin: with journals, the first search indexes them and finds."""
    done = pimem("search", "retry")
    assert done.returncode == 0 and "1f8abb0e" in done.stdout
    assert (pimem.root / "j" / "agent" / "memory" / "index.sqlite").is_file()


# -- honest hints -------------------------------------------------------------------------------


def test_scope_session_without_a_session_says_so(pimem: Pimem) -> None:
    done = pimem("search", "--scope", "session", "retry")
    assert done.returncode == 2 and "--session FILE" in done.stderr
    session = ["--session", str(pimem.root / "j" / APP_JOURNAL), "search", "--scope", "session", "retry"]
    given = pimem(*session, "--include-context")
    assert given.returncode == 0 and "1f8abb0e" in given.stdout
    # without it, the session's path up to its last entry is the model's context, left out (#29)
    left_out = pimem(*session)
    assert left_out.returncode == 1 and "--include-context" in left_out.stdout


def test_inverted_dates_are_an_error(pimem: Pimem) -> None:
    done = pimem("search", "retry", "--since", "2026-11-30", "--until", "2026-11-01")
    assert done.returncode == 2 and "swap" in done.stderr
    right = pimem("search", "retry", "--since", "2026-11-01", "--until", "2026-11-30")
    assert right.returncode == 0


def test_kind_repeated_means_any_of_them(pimem: Pimem) -> None:
    def kinds(*argv: str) -> set[str]:
        return {item["kind"] for item in pimem.json("search", "--scope", "global", *argv)["results"]}

    assert kinds("retry", "--kind", "user") == {"user"}
    assert kinds("retry", "--kind", "assistant") == {"assistant"}
    assert kinds("retry", "--kind", "user", "--kind", "assistant") == {"user", "assistant"}


# -- errors in command-line form ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["search", "retry", "--limit", "0"], "--limit 10"),
        (["read", "1f8abb0e", "--offset", "999999"], "pimem read ID --offset 0"),
        (["search", "retry", "--since", "yesterday"], "--since 2026-11-01"),
        (["around", "1f8abb0e", "--before", "21"], "--before 3"),
        (["read"], "pimem read d24d95c5"),
    ],
)
def test_errors_show_the_right_command_line(pimem: Pimem, argv: list[str], shown: str) -> None:
    done = pimem(*argv)
    assert done.returncode == 2, done.stderr
    assert shown in done.stderr
    for foreign in ('{"action"', "/memory", "Traceback"):
        assert foreign not in done.stderr


def test_gc_and_forget_speak_pimem_not_slash_commands(pimem: Pimem) -> None:
    preview = pimem("gc")
    assert "pimem gc --confirm" in preview.stdout and "/memory" not in preview.stdout
    unknown = pimem("forget", "0000beef")
    assert unknown.returncode == 1 and "/memory" not in unknown.stderr


def test_json_errors_are_an_object_on_stdout(pimem: Pimem) -> None:
    usage = pimem("--json", "search", "--limit", "0")
    assert usage.returncode == 2 and usage.stderr == ""
    assert json.loads(usage.stdout)["error"]["code"] == "usage"
    after = pimem("read", "1f8abb0e", "--offset", "999999", "--json")  # --json after the command too
    assert after.returncode == 2 and json.loads(after.stdout)["error"]["code"] == "bad_offset"


# -- readable output ----------------------------------------------------------------------------


def test_a_hit_header_is_short(pimem: Pimem) -> None:
    lines = pimem("search", "retry").stdout.splitlines()
    header = next(line for line in lines if "1f8abb0e" in line)
    assert header == "2026-11-08 10:00 · user · app · 1f8abb0e"
    assert APP_SESSION not in pimem("search", "retry").stdout


def _on_a_terminal(pimem: Pimem, *argv: str, **env: str) -> str:
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "pimem", *pimem.where, "--cwd", APP, *argv],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=_env(pimem.home, **env),
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal is closed once the process is gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode()


def test_matches_are_highlighted_on_a_terminal_only(pimem: Pimem) -> None:
    assert "\x1b[1;33mretry\x1b[0m" in _on_a_terminal(pimem, "search", "retry")
    assert "\x1b[" not in _on_a_terminal(pimem, "search", "retry", NO_COLOR="1")
    assert "\x1b[" not in pimem("search", "retry").stdout


def test_status_shows_index_folders_and_skipped_lines(pimem: Pimem) -> None:
    journal = pimem.root / "j" / APP_JOURNAL
    with journal.open("a") as handle:
        handle.write("{not json\n")
    pimem("index")
    done = pimem("status")
    assert done.returncode == 0
    index = pimem.root / "j" / "agent" / "memory" / "index.sqlite"
    assert str(index) in done.stdout and "KiB" in done.stdout
    assert f"{pimem.root / 'j' / 'agent' / 'sessions'} ({DEFAULT_JOURNALS} journal(s))" in done.stdout
    assert f"{pimem.root / 'j' / 'flat'} (3 journal(s))" in done.stdout
    assert f"{journal}:8 (not a JSON object)" in done.stdout


def test_help_gives_every_option_its_form_and_bounds(pimem: Pimem) -> None:
    search = pimem("search", "--help").stdout
    for shown in ("--limit N", "1-50", "--since DATE", "YYYY-MM-DD", "--kind KIND", "repeatable"):
        assert shown in search
    assert "0-20" in pimem("around", "--help").stdout
    assert "--offset N" in pimem("read", "--help").stdout
    top = pimem("--help").stdout
    for command in ("search", "read", "around", "summaries", "status", "doctor", "gc", "forget"):
        assert command in top
    assert "Exit codes" in top


def test_version_names_package_spec_and_protocol(pimem: Pimem) -> None:
    done = pimem("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("pimem 0.") and "spec 0." in done.stdout and "protocol 1" in done.stdout


def test_a_closed_pipe_ends_quietly(pimem: Pimem) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "pimem", *pimem.where, "--cwd", APP, "search", "--scope", "global"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(pimem.home),
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # like `| head` that has read enough, before a line was written
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0
    assert error == ""


# -- doctor -------------------------------------------------------------------------------------


def test_doctor_explains_in_one_screen(pimem: Pimem) -> None:
    settings = pimem.root / "j" / "agent" / "settings.json"
    extension = pimem.root / "checkout" / "reference" / "pi-extension"  # what `pi install` names
    extension.mkdir(parents=True)
    (extension / "package.json").write_text(json.dumps({"name": "pimem-pi-extension"}))
    settings.write_text(json.dumps({"memory": {"allowGlobal": True}, "packages": [str(extension)]}))
    done = pimem("doctor")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) <= 24
    assert "Python 3." in lines[0] and "apsw" in lines[0] and "SQLite 3." in lines[0]
    assert any(line.startswith("ok   FTS5") and "contentless_delete" in line for line in lines)
    assert any("index" in line and "writable" in line for line in lines)
    assert any(f"{DEFAULT_JOURNALS} journal(s)" in line for line in lines) and any(
        "3 journal(s)" in line for line in lines
    )
    assert any('"allowGlobal": true' in line for line in lines)
    assert any(line.startswith("ok   Pi extension") for line in lines)
    other = pimem.root / "other-extension"  # another package installed the same way is not ours
    other.mkdir()
    (other / "package.json").write_text(json.dumps({"name": "pi-extension-something-else"}))
    settings.write_text(json.dumps({"packages": [str(other), "npm:@someone/pi-tools@1.0.0"]}))
    assert "Pi extension: not found" in pimem("doctor").stdout
    settings.unlink()
    bare = pimem("doctor").stdout
    assert "Pi extension: not found" in bare and "none (every default applies" in bare


def _append_user_texts(journal: Path, texts: list[str]) -> None:
    """Entries e0000000, e0000001, ... after the journal's last line, as Pi appends them."""
    lines = journal.read_text().splitlines()
    parent = json.loads(lines[-1])["id"]
    with journal.open("a") as handle:
        for number, text in enumerate(texts):
            entry_id = f"e{number:07d}"
            content = [{"type": "text", "text": text}]
            stamp = f"2026-11-08T12:{number // 60:02d}:{number % 60:02d}.000Z"
            line = {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp}
            handle.write(json.dumps({**line, "message": {"role": "user", "content": content}}) + "\n")
            parent = entry_id


def test_excerpts_run_from_word_to_word_and_keep_markers_whole(pimem: Pimem) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"  # a GitHub token shape: redacted
    texts = [
        "opening words " * 6 + f"lead{shift}x needleword " + "y" * shift + " mid" * 40 + f" {token} tail end"
        for shift in range(0, 40, 3)
    ]
    texts.append("日本語の文章" * 30 + " needleword " + "日本語の文章" * 60)
    _append_user_texts(pimem.root / "j" / APP_JOURNAL, texts)
    results = pimem.json("search", "needleword", "--limit", "50")["results"]
    assert len(results) == len(texts)
    for item in results:
        text = texts[int(item["entryId"][1:])]
        excerpt = item["excerpt"].removeprefix("…").removesuffix("…")
        assert token not in excerpt and "ghp_" not in excerpt
        assert excerpt.count("[REDACTED:") == excerpt.count("]")  # never cut inside a marker
        if "日本語" in text:
            assert len(excerpt) >= 200  # no spaces to cut at: cut at characters, not emptied
            continue
        words = set(text.replace(token, " ").split())
        first, last = excerpt.split()[0], excerpt.split()[-1]
        assert first in words, (first, excerpt)
        assert last in words or last.startswith("[REDACTED:"), (last, excerpt)
