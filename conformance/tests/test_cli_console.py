"""`pimem-conformance` as an implementer runs it: each test starts the command and checks what is
seen on the console, the exit code and the files written."""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pimem_conformance import AdapterError, InProcessConnector, examples_dir, load_cases

PYTHON_EXAMPLE = examples_dir() / "minimal_adapter.py"
PYTHON_ADAPTER = f"{sys.executable} {PYTHON_EXAMPLE}"
# Adapter-level protocol errors on purpose, then the adapter must keep serving.
TOOL_ERRORS = "JM-TOOL-006"  # the Python example passes one of these cases and fails the others
PASSING = "protocol-tool-arguments-not-an-object"


def conformance(*argv: str, cache: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "pimem_conformance", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or cache,
        timeout=300,
    )


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path


def test_version_names_package_spec_and_protocol(cache: Path) -> None:
    done = conformance("--version", cache=cache)
    assert done.returncode == 0
    assert done.stdout.startswith("pimem-conformance 0.") and "spec 0." in done.stdout
    assert "protocol 1" in done.stdout


def test_a_closed_pipe_exits_0_quietly(cache: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "pimem_conformance", "dump"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "XDG_CACHE_HOME": str(cache)},
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == 0
    assert error == ""


@pytest.mark.parametrize(
    ("lang", "name"), [("node", "minimal-adapter.mjs"), ("python", "minimal_adapter.py")]
)
def test_init_adapter_prints_the_shipped_example(cache: Path, lang: str, name: str) -> None:
    done = conformance("init-adapter", "--lang", lang, cache=cache)
    assert done.returncode == 0
    assert done.stdout == (examples_dir() / name).read_text(encoding="utf-8")
    assert "pimem-conformance run --impl" in done.stderr  # the next step, kept out of the file


def test_the_python_example_passes_every_protocol_case(cache: Path) -> None:
    done = conformance("run", "--impl", PYTHON_ADAPTER, "--validate-adapter", "-k", "protocol-*", cache=cache)
    assert done.returncode == 0, done.stdout + done.stderr
    protocol_cases = [case for case in load_cases() if fnmatch.fnmatch(case.id, "protocol-*")]
    assert len(protocol_cases) >= 10
    assert f"totals: {len(protocol_cases)} pass\n" in done.stdout


def test_run_v_shows_every_mismatch_with_expected_and_actual(cache: Path) -> None:
    case = "tool-ill-typed-parameter"  # several mismatches against the Python example
    report = cache / "report.jsonl"
    short = conformance("run", "--impl", PYTHON_ADAPTER, "-k", case, "--report", str(report), cache=cache)
    assert short.returncode == 1
    (line,) = [json.loads(text) for text in report.read_text().splitlines() if f'"id": "{case}"' in text]
    count = sum(len(failure["mismatches"]) for failure in line["actual"])
    assert count >= 2
    assert f"{case} [fail] step 0 (0-based): " in short.stdout
    assert f"+{count - 1} more mismatch(es); -v shows all" in short.stdout and "expected:" not in short.stdout
    verbose = conformance("run", "--impl", PYTHON_ADAPTER, "-k", case, "-v", cache=cache)
    assert f"+{count - 1} more mismatch(es); all below" in verbose.stdout
    details = verbose.stdout.split("details (steps are 0-based):")[1]
    assert details.count("expected:") == count and details.count("actual:") == count
    assert "step 0 (0-based): {" in details and '"arguments"' in details


def test_result_ids_that_differ_are_named(cache: Path) -> None:
    done = conformance("run", "--impl", PYTHON_ADAPTER, "-k", "search-any-fallback", "-v", cache=cache)
    assert "result ids differ: missing f0000001, f0000002, g0000001" in done.stdout


def test_show_prints_the_case_and_the_last_reports_answer(cache: Path) -> None:
    case = "search-any-fallback"
    before = conformance("show", case, cache=cache)
    assert before.returncode == 0 and "last report: none yet" in before.stdout
    conformance("run", "--impl", PYTHON_ADAPTER, "-k", case, cache=cache)
    done = conformance("show", case, cache=cache)
    assert done.returncode == 0
    out = done.stdout
    assert out.startswith(f"{case} (search, core, must)")
    assert "journal agent/sessions/--home-u-app--/s1.jsonl:" in out and '"zebracorn42' in out
    assert 'step 0: {"tool": {"action": "search"' in out and "expect: {" in out
    assert "steps (0-based):" in out
    assert "last report (" in out and "): fail" in out and "expected:" in out
    unknown = conformance("show", "search-any", cache=cache)
    assert unknown.returncode == 2 and "did you mean: search-any-fallback" in unknown.stderr


BROKEN = """
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["cmd"] == "start":
        described = {"name": "breaks-on-open", "version": "1.0", "language": "python"}
        print(json.dumps({"seq": request["seq"], "protocol": 1, "implementation": described,
                          "profiles": ["core"]}), flush=True)
        continue
    for number in range(1, 31):
        print(f"stderr line {number}", file=sys.stderr)
    sys.exit(1)
"""


def test_a_broken_adapter_shows_its_stderr_tail_and_the_pending_request(cache: Path) -> None:
    adapter = cache / "broken.py"
    adapter.write_text(BROKEN)
    report = cache / "report.jsonl"
    done = conformance(
        "run",
        "--impl",
        f"{sys.executable} {adapter}",
        "-k",
        "search-kind",
        "--report",
        str(report),
        cache=cache,
    )
    assert done.returncode == 3
    out = done.stdout
    assert "adapter stderr (last 20 lines):" in out
    assert "| stderr line 11" in out and "| stderr line 30" in out and "| stderr line 10\n" not in out
    assert 'pending request: {"seq": ' in out and '"cmd": "open"' in out
    assert out.count("the same adapter error as above") == 2  # said once, not three times
    assert "adapter never started" not in out and "breaks-on-open 1.0" in out  # the handshake worked
    header = json.loads(report.read_text().splitlines()[0])
    assert header["implementation"]["name"] == "breaks-on-open"


def test_an_adapter_that_never_starts_is_said_so(cache: Path) -> None:
    done = conformance(
        "run", "--impl", f"{sys.executable} {cache / 'missing.py'}", "-k", "search-kind", cache=cache
    )
    assert done.returncode == 3
    assert "(adapter never started)" in done.stdout and "No such file or directory" in done.stdout


def _baseline(path: Path, *ids: str) -> None:
    entries = [{"id": case_id, "reason": "step 0 (0-based): old failure text"} for case_id in ids]
    path.write_text(json.dumps({"known_failures": entries}))


def _ids(path: Path) -> list[str]:
    return [entry["id"] for entry in json.loads(path.read_text())["known_failures"]]


def test_xpass_says_remove_it_and_prune_does(cache: Path) -> None:
    baseline = cache / "known.json"
    _baseline(baseline, PASSING, "tool-missing-action", "no-such-case")
    run = ("run", "--impl", PYTHON_ADAPTER, "-k", TOOL_ERRORS, "--baseline", str(baseline))
    done = conformance(*run, cache=cache)
    line = next(line for line in done.stdout.splitlines() if PASSING in line and "[xpass]" in line)
    assert "now passes: remove it from the baseline" in line and "old failure text" not in line
    assert baseline.read_text().count("known_failures") == 1 and len(_ids(baseline)) == 3  # untouched
    pruned = conformance(*run, "--prune-baseline", cache=cache)
    assert "removed 2" in pruned.stdout
    assert _ids(baseline) == ["tool-missing-action"]


def _failing(cache: Path) -> list[str]:
    """The cases of the selection that the Python example fails today (the spec grows)."""
    report = cache / "today.jsonl"
    conformance("run", "--impl", PYTHON_ADAPTER, "-k", TOOL_ERRORS, "--report", str(report), cache=cache)
    lines = [json.loads(text) for text in report.read_text().splitlines()]
    failing = [line["id"] for line in lines if line["type"] == "case" and line["outcome"] == "fail"]
    assert PASSING not in failing and "tool-missing-action" in failing and len(failing) >= 2
    return failing


def test_write_baseline_refuses_new_failures_over_an_existing_baseline(cache: Path) -> None:
    failing = _failing(cache)
    baseline = cache / "known.json"
    _baseline(baseline, "tool-missing-action")
    run = ("run", "--impl", PYTHON_ADAPTER, "-k", TOOL_ERRORS, "--write-baseline", str(baseline))
    refused = conformance(*run, cache=cache)
    assert f"not written: {len(failing) - 1} case(s) fail that" in refused.stderr
    assert "--accept-new-failures" in refused.stderr
    assert _ids(baseline) == ["tool-missing-action"]
    accepted = conformance(*run, "--accept-new-failures", cache=cache)
    assert accepted.returncode == 1 and sorted(_ids(baseline)) == sorted(failing)
    fresh = cache / "fresh.json"
    written = conformance(
        "run", "--impl", PYTHON_ADAPTER, "-k", TOOL_ERRORS, "--write-baseline", str(fresh), cache=cache
    )
    assert f"{len(failing)} known failure(s)" in written.stdout and sorted(_ids(fresh)) == sorted(failing)
    assert all(" (0-based): " in entry["reason"] for entry in json.loads(fresh.read_text())["known_failures"])


def test_list_and_dump_select_like_run(cache: Path) -> None:
    listed = conformance("list", "-k", "search-kind-list*", cache=cache)
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [
        "search-kind-list-any",
        "search-kind-list-invalid",
    ]
    dumped = json.loads(conformance("dump", "--profile", "forget", cache=cache).stdout)
    assert dumped["cases"] and {case["profile"] for case in dumped["cases"]} == {"forget"}
    none = conformance("list", "-k", "no-such-thing", cache=cache)
    assert none.returncode == 2 and "no case matches" in none.stderr


def test_summary_defaults_to_the_last_report_with_a_table_per_area(cache: Path) -> None:
    missing = conformance("summary", cache=cache)
    assert missing.returncode == 2 and "pimem-conformance run --impl" in missing.stderr
    conformance("run", "--impl", "reference", "-k", "search-kind", cache=cache)
    done = conformance("summary", cache=cache)
    assert done.returncode == 0 and done.stdout.startswith("pimem ")
    areas = done.stdout.split("areas:\n")[1].splitlines()[0]
    assert areas.split()[:3] == ["search", "pass", "pass"]
    markdown = conformance("summary", "--format", "markdown", cache=cache).stdout
    assert "| area | status |" in markdown and "| search | pass |" in markdown


def test_a_passing_in_process_run_prints_nothing_on_stderr(cache: Path) -> None:
    done = conformance("run", "--impl", "reference", "-q", "-k", "tool-index-unavailable", cache=cache)
    assert done.returncode == 0, done.stdout
    assert done.stderr == ""


class _Noisy:
    def handle(self, message: dict[str, object]) -> dict[str, object]:
        print("noisy: about to fail", file=sys.stderr)
        raise RuntimeError("boom")


def test_what_an_in_process_implementation_prints_shows_when_it_breaks() -> None:
    """The twin of the quiet run: the captured stderr is not lost, it explains the error."""
    connector = InProcessConnector(_Noisy)
    real = sys.stderr
    with pytest.raises(AdapterError) as raised:
        connector.request({"seq": 1, "cmd": "start", "protocol": 1})
    assert "noisy: about to fail" in raised.value.stderr
    assert sys.stderr is real  # restored when the implementation is dropped


USER_TESTS = """
import pytest
from pimem_conformance.pytest_plugin import case_params

@pytest.mark.parametrize("pimem_case", case_params()[:2])
def test_case(pimem_case, pimem_check):
    pimem_check(pimem_case)
"""


def test_pytest_beside_a_checkout_collects_only_the_users_file(tmp_path: Path) -> None:
    checkout = tmp_path / "pi-memory-spec"  # what `pip install ./pi-memory-spec` leaves beside
    (checkout / "conformance" / "pimem_conformance").mkdir(parents=True)
    (checkout / "spec" / "cases").mkdir(parents=True)
    (checkout / "conformance" / "tests").mkdir()
    (checkout / "conformance" / "tests" / "test_suite_itself.py").write_text("def test_x():\n    pass\n")
    (tmp_path / "test_my_memory.py").write_text(USER_TESTS)

    def collected(cwd: Path) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=120,
        )
        return [line for line in done.stdout.splitlines() if "::" in line]

    beside = collected(tmp_path)
    assert len(beside) == 2 and all(line.startswith("test_my_memory.py::test_case[") for line in beside)
    inside = collected(checkout)  # the checkout's own tests still run from inside it
    assert inside == ["conformance/tests/test_suite_itself.py::test_x"]
