"""Running one case against an adapter: workspace, instances, steps, expectations."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pimem_conformance._adapter import Adapter
from pimem_conformance._cases import Case, CaseError
from pimem_conformance._conformity import (
    PARAMETERS_REQUIREMENT,
    SCHEMA_REQUIREMENT,
    manifest_mismatches,
    response_mismatches,
)
from pimem_conformance._connector import AdapterError
from pimem_conformance._damage import JournalBytes, damage_state_dir, restore_permissions, snapshot_journals
from pimem_conformance._expect import (
    CAPTURE_KEY,
    MISSING,
    Mismatch,
    check_expectation,
    parse_capture,
    resolve_path,
)
from pimem_conformance._schemas import SchemaSet
from pimem_conformance._workspace import Workspace, scratch_dir, substitute_workspace

__all__ = ["TOOL_NAME", "CaseRun", "Outcome", "RunOutcome", "StepFailure", "run_case"]

TOOL_NAME = "memory_context"
COMMAND_NAME = "memory"


@dataclass(frozen=True)
class StepFailure:
    """A step whose response broke at least one expectation."""

    step: int
    request: dict[str, Any]
    mismatches: tuple[Mismatch, ...]

    def as_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "request": self.request,
            "mismatches": [mismatch.as_json() for mismatch in self.mismatches],
        }


# A case's outcome: what its run gave (pass, fail, error), what a baseline made of that (xfail,
# xpass), or why it did not run.
Outcome = Literal["pass", "fail", "error", "xfail", "xpass", "not_applicable", "not_run"]
RunOutcome = Literal["pass", "fail", "error"]


@dataclass
class CaseRun:
    """What happened: `passed`, or failures per step, or an adapter error (`error` set)."""

    failures: list[StepFailure] = field(default_factory=list)
    error: AdapterError | None = None
    broken_case: str | None = None  # the case itself could not be carried out (a suite bug)
    steps_run: int = 0

    @property
    def outcome(self) -> RunOutcome:
        if self.error is not None or self.broken_case is not None:
            return "error"
        return "fail" if self.failures else "pass"


def _request_for(step: dict[str, Any], instance: str) -> tuple[str, dict[str, Any]]:
    """The protocol command and fields a (non-mutation, non-request) step sends."""
    if "tool" in step:
        leaf = {"leafId": step["leafId"]} if "leafId" in step else {}
        return "tool", {"instance": instance, "name": TOOL_NAME, "arguments": step["tool"], **leaf}
    if "command" in step:
        return "command", {"instance": instance, "name": COMMAND_NAME, "args": step["command"]}
    if "event" in step:
        return "event", {
            "instance": instance,
            "name": step["event"]["name"],
            "data": step["event"].get("data", {}),
        }
    if "clock" in step:
        return "clock", {"instance": instance, "now": step["clock"]}
    if "idle" in step:
        return "idle", {"instance": instance}
    return "manifest", {}


def _send(
    adapter: Adapter, step: dict[str, Any], default_instance: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Send a step's request: (the request as sent, without seq; the response)."""
    if "request" in step:
        message = step["request"]
        expect_errored = step.get("expect", {}).get("errored", False)
        response = adapter.send_raw(message, errored_ok=expect_errored)
        return message, response
    cmd, fields = _request_for(step, step.get("instance", default_instance))
    return {"cmd": cmd, **fields}, adapter.send(cmd, **fields)


def _captured(value: Any, responses: dict[int, dict[str, Any]]) -> Any:
    """`value` with every `{"$from": "stepN.<path>"}` replaced by that value of step N's response.

    Raises LookupError naming the reference when the earlier response has nothing there (the
    implementation's answer lacked it: the step fails, the case is sound).
    """
    if isinstance(value, dict):
        if set(value) == {CAPTURE_KEY}:
            try:
                step, path = parse_capture(value[CAPTURE_KEY])
            except ValueError as exc:
                raise CaseError(str(exc)) from None
            found = resolve_path(responses.get(step, {}), path)
            if found is MISSING:
                raise LookupError(value[CAPTURE_KEY])
            return found
        return {key: _captured(item, responses) for key, item in value.items()}
    if isinstance(value, list):
        return [_captured(item, responses) for item in value]
    return value


def _open_requests(case: Case, workspace: Workspace, setup: dict[str, Any]) -> list[dict[str, Any]]:
    """The `open` request of every instance (without `cmd`); a damage step sends them again."""
    clock = {"now": setup["now"], "tz": setup.get("tz", "UTC")}
    return [
        {
            "instance": instance,
            "workspace": workspace.open_workspace(),
            "clock": clock,
            "settings": setup.get("settings", {}),
        }
        for instance in case.instances
    ]


def _open_instances(adapters: list[Adapter], opens: list[dict[str, Any]], setup: dict[str, Any]) -> None:
    """Open every instance in every process; then (autostart) start them all, then wait for all."""
    for adapter in adapters:
        for request in opens:
            adapter.send("open", **request)
    if setup.get("autostart", True):
        # Every instance starts as a Pi process would, then the case waits for backfill, so
        # each journal is indexed before the first step.
        for adapter in adapters:
            for request in opens:
                adapter.send(
                    "event", instance=request["instance"], name="session_start", data={"reason": "startup"}
                )
        for adapter in adapters:
            for request in opens:
                adapter.send("idle", instance=request["instance"])


def _close_instances(adapters: list[Adapter], case: Case) -> None:
    for each in adapters:
        for instance in case.instances:
            each.send("close", instance=instance)


def _peers(adapter: Adapter, case: Case) -> list[Adapter]:
    """The adapters of a `processes: N` case: this one, then N-1 more, each its own OS process."""
    adapters = [adapter]
    try:
        for _ in range(case.processes - 1):
            adapters.append(adapter.peer())
    except ValueError as exc:
        for peer in adapters[1:]:
            peer.stop()
        raise CaseError(
            f"a case of {case.processes} processes needs an adapter that can start more: {exc}"
        ) from None
    except AdapterError:
        for peer in adapters[1:]:
            peer.stop()
        raise
    return adapters


def _always_checked(
    request: dict[str, Any], response: dict[str, Any], schemas: SchemaSet, requirements: Set[str] | None
) -> list[Mismatch]:
    """What every response must satisfy whatever its step expects (see `_conformity`), when the
    judged release holds the requirement (`requirements` None: the spec now, which holds all)."""
    cmd = request.get("cmd")
    if cmd in ("tool", "command") and request.get("name") in (TOOL_NAME, COMMAND_NAME):
        if requirements is not None and SCHEMA_REQUIREMENT not in requirements:
            return []
        return response_mismatches(str(cmd), request, response, schemas)
    if cmd == "manifest" and response.get("errored") is not True:
        if requirements is not None and PARAMETERS_REQUIREMENT not in requirements:
            return []
        return manifest_mismatches(response, schemas)
    return []


def _journals_changed(before: JournalBytes | None, root: Path, workspace: Workspace) -> list[str]:
    """The journals whose bytes differ from what they were at the last damage step, or after the
    case's own mutations since (or that appeared or went since)."""
    if before is None:
        raise CaseError("journals_kept needs an earlier damage step")
    after = snapshot_journals(root, workspace.state_dir)
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))


def run_case(
    adapter: Adapter,
    case: Case,
    schemas: SchemaSet,
    *,
    workdir: Path | None = None,
    requirements: Set[str] | None = None,
) -> CaseRun:
    """Run every step of `case` in a fresh workspace; an AdapterError ends the case as `error`.

    Steps after a failing step still run (a baseline may list single steps), and instances are
    closed whatever happened. `requirements` are the requirement IDs of the release judged
    (`run --as-of`); None judges by the spec now.
    """
    root = Path(tempfile.mkdtemp(prefix=f"pimem-{case.id[:40]}-", dir=workdir or scratch_dir()))
    run = CaseRun()
    opened = False
    adapters = [adapter]
    try:
        setup = substitute_workspace(case.setup, str(root))
        workspace = Workspace(root, setup)
        workspace.prepare(substitute_workspace(case.journals, str(root)))
        adapters = _peers(adapter, case)
        opens = _open_requests(case, workspace, setup)
        _open_instances(adapters, opens, setup)
        opened = True
        journals_before: JournalBytes | None = None  # as they were when the last damage was made
        default_instance = case.instances[0]
        responses: dict[int, dict[str, Any]] = {}  # by step index, for `$from` captures
        for index, raw_step in enumerate(case.steps):
            step = substitute_workspace(raw_step, str(root))
            run.steps_run = index + 1
            if "mutate" in step:
                workspace.mutate(step["mutate"])
                if journals_before is not None:  # the case's own change is no change by the implementation
                    journals_before = snapshot_journals(root, workspace.state_dir)
                continue
            if "damage" in step:
                # no instance is open while the state dir is damaged; each opens again as at setup
                _close_instances(adapters, case)
                journals_before = snapshot_journals(root, workspace.state_dir)
                damage_state_dir(workspace.state_dir, step["damage"]["kind"], step["damage"]["seed"])
                _open_instances(adapters, opens, setup)
                continue
            if "journals_kept" in step:
                changed = _journals_changed(journals_before, root, workspace)
                if changed:
                    mismatch = Mismatch(
                        "journals_kept", [], changed, f"journals changed since the damage: {changed}"
                    )
                    run.failures.append(StepFailure(index, raw_step, (mismatch,)))
                continue
            if "state_lacks" in step:
                held = workspace.state_holding(step["state_lacks"])
                if held:
                    mismatch = Mismatch(
                        "state_lacks", [], held, f"the state dir still holds {sorted(held)}: {held}"
                    )
                    run.failures.append(StepFailure(index, raw_step, (mismatch,)))
                continue
            try:
                step = _captured(step, responses)
            except LookupError as missing:
                mismatch = Mismatch(
                    CAPTURE_KEY, str(missing), MISSING, f"{missing}: the earlier response has no such value"
                )
                run.failures.append(StepFailure(index, raw_step, (mismatch,)))
                continue
            request, response = _send(adapters[step.get("process", 0)], step, default_instance)
            responses[index] = response
            expect = step.get("expect")
            mismatches = _always_checked(request, response, schemas, requirements)
            if expect is not None or "error" in response:
                schema_target = "details" if "tool" in step or "command" in step else None
                mismatches += check_expectation(
                    expect or {}, response, schemas=schemas, schema_target=schema_target
                )
            if mismatches:
                run.failures.append(StepFailure(index, request, tuple(mismatches)))
    except AdapterError as exc:
        run.error = exc
    except CaseError as exc:
        run.broken_case = f"the case cannot be carried out: {exc}"
    finally:
        if opened and run.error is None:
            try:
                _close_instances(adapters, case)
            except AdapterError as exc:
                run.error = exc
        for peer in adapters[1:]:
            peer.stop()
        restore_permissions(root)  # a read_only damage step leaves folders that cannot be emptied
        shutil.rmtree(root, ignore_errors=True)
    return run
