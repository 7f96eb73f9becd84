"""A Hypothesis state machine that drives any implementation through the adapter protocol.

Rules change journals on disk as Pi and users do (append, sometimes leaving a partial last line;
shrink; rewrite a line in place; delete; start new sessions; switch sessions and projects) and
ask the memory (search, read). A pure-Python model (`_model.py`) checks after every step:

- a read returns exactly the model's redacted text for that id, or `unavailable`, and never
  another entry's text;
- no output names an entry outside the scope of the call;
- no search finds a term that lives only in removed or not yet completed content;
- no output contains a planted secret.

Use it against any adapter (see `conformance/tests/test_state_machine.py`)::

    from hypothesis.stateful import run_state_machine_as_test
    from pimem_conformance.statemachine import MemoryMachine, machine_settings

    run_state_machine_as_test(lambda: MemoryMachine(adapter), settings=machine_settings())

`machine_settings()` is deterministic (derandomized) for CI; with `PIMEM_STATEFUL=long` it runs
a longer randomized search.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from pimem_conformance._adapter import Adapter
from pimem_conformance._jsjson import dumps_like_js
from pimem_conformance._model import SECRET_PREFIX, EntryModel, JournalModel, MemoryModel
from pimem_conformance._workspace import Workspace, scratch_dir
from pimem_conformance.journals import encoded_cwd, header_line

__all__ = ["MemoryMachine", "machine_settings"]

HOME = "/home/u"
# Sibling projects whose names share a prefix (app, app2), a nested project and a home child.
PROJECTS = ("/home/u/code/app", "/home/u/code/app2", "/home/u/code/app/sub", "/home/u/notes")
WORDS = ("harbor", "lantern", "meadow", "quartz")
START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
NOW = "2026-11-29T12:00:00.000Z"
MAX_JOURNALS = 6
_instances = itertools.count(1)


def machine_settings() -> settings:
    """Deterministic for CI; `PIMEM_STATEFUL=long` explores far more (minutes, randomized)."""
    if os.environ.get("PIMEM_STATEFUL") == "long":
        return settings(
            max_examples=300,
            stateful_step_count=60,
            deadline=None,
            derandomize=False,
            suppress_health_check=[HealthCheck.too_slow],
        )
    return settings(
        max_examples=10,
        stateful_step_count=20,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class MemoryMachine(RuleBasedStateMachine):
    """One instance over one workspace per example; `adapter` is started and shared by examples."""

    def __init__(self, adapter: Adapter) -> None:
        super().__init__()
        self.adapter = adapter
        self.root = Path(tempfile.mkdtemp(prefix="pimem-state-", dir=scratch_dir()))
        self.instance = f"m{next(_instances)}"
        self.counter = itertools.count(1)
        self.opened = False
        self.model = MemoryModel(home=HOME, cwd=PROJECTS[0], current="", allow_global=False)
        self.workspace = Workspace(self.root, {"cwd": PROJECTS[0], "now": NOW, "flat": ["flat"]})
        # The current session's file before Pi creates it: (key, session id).
        self._pending_session = ("", "")

    # ---- building journals ------------------------------------------------------------------

    def _entry(self, *, secret: bool, short: bool = False) -> EntryModel:
        n = next(self.counter)
        term = "qv" + "".join(chr(ord("a") + (n // 26**power) % 26) for power in range(3, -1, -1))
        if short:
            return EntryModel(id=f"zq{n:06d}", term=term, text=term)
        words = [WORDS[n % len(WORDS)], term, WORDS[(n * 7) % len(WORDS)]]
        secrets: tuple[str, ...] = ()
        if secret:
            planted = SECRET_PREFIX + f"Pm{n:04d}" + hashlib.sha256(str(n).encode()).hexdigest()[:30]
            words += ["deploy", "token", planted, "rotated"]
            secrets = (planted,)
        return EntryModel(id=f"zq{n:06d}", term=term, text=" ".join(words), secrets=secrets)

    def _line(self, entry: EntryModel, parent: str | None) -> str:
        moment = START + timedelta(minutes=int(entry.id[2:]))
        return dumps_like_js(
            {
                "type": "message",
                "id": entry.id,
                "parentId": parent,
                "timestamp": _iso(moment),
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": entry.text}],
                    "timestamp": int(moment.timestamp() * 1000),
                },
            }
        )

    def _new_key(self, cwd: str, flat: bool) -> tuple[str, str]:
        session_id = f"0193a4b2-{next(self.counter):04d}-7c3d-8e5f-000000000000"
        folder = "flat" if flat else f"agent/sessions/{encoded_cwd(cwd)}"
        return f"{folder}/{session_id}.jsonl", session_id

    def _parent(self, journal: JournalModel) -> str | None:
        return journal.lines[-1].id if journal.lines else None

    def _settle(self) -> None:
        self.adapter.send("idle", instance=self.instance)

    # ---- protocol ---------------------------------------------------------------------------

    def _tool(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.adapter.send("tool", instance=self.instance, name="memory_context", arguments=arguments)

    def _fail(self, message: str, response: dict[str, Any]) -> AssertionError:
        return AssertionError(
            f"{message}\nresponse: {json.dumps(response, ensure_ascii=False)[:3000]}\n"
            f"model: {json.dumps(self.model.describe(), indent=1)}"
        )

    def _check_output(self, response: dict[str, Any], scope: str, asked: str | None = None) -> None:
        """Nothing out of scope is named and no planted secret appears, anywhere in the response.

        `asked` is the id the call itself named: a read may echo it back.
        """
        text = json.dumps(response, ensure_ascii=False)
        if asked is not None:
            text = text.replace(asked, "")
        for secret in self.model.all_secrets():
            body = secret[len(SECRET_PREFIX) :]
            if body[:20] in text or body[-20:] in text:
                raise self._fail(f"planted secret {secret} appears in the output", response)
        for entry_id, entry in self.model.outside(scope).items():
            if entry_id in text or entry.term in text:
                raise self._fail(
                    f"entry {entry_id} (term {entry.term}) is out of {scope} scope but named", response
                )

    def _check_results(self, response: dict[str, Any], scope: str, asked: str | None = None) -> list[str]:
        if scope == "global" and not self.model.allow_global:
            code = response.get("error", {}).get("code")
            if code != "scope_denied":
                raise self._fail(
                    "global scope without the allow_global setting must be scope_denied", response
                )
            return []
        if "error" in response:
            raise self._fail("unexpected tool error", response)
        self._check_output(response, scope, asked)
        ids = [result["entryId"] for result in response["details"]["results"]]
        visible = self.model.scope_journals(scope)
        live = self.model.live()
        strays = [i for i in ids if i not in live or live[i][0].key not in visible]
        if strays:
            raise self._fail(f"results {strays} are not live entries of the {scope} scope", response)
        return ids

    # ---- setup ------------------------------------------------------------------------------

    @initialize(allow_global=st.booleans(), project=st.sampled_from(PROJECTS))
    def open_instance(self, allow_global: bool, project: str) -> None:
        self.workspace.prepare({})
        key, session_id = self._new_key(project, flat=False)
        self.model.cwd, self.model.current, self.model.allow_global = project, key, allow_global
        self.workspace.setup = {**self.workspace.setup, "cwd": project, "session": key}
        self._pending_session = (key, session_id)
        self.adapter.send(
            "open",
            instance=self.instance,
            workspace=self.workspace.open_workspace(),
            clock={"now": NOW, "tz": "UTC"},
            settings={"allow_global": allow_global},
        )
        self.opened = True
        self.adapter.send("event", instance=self.instance, name="session_start", data={"reason": "startup"})
        self._settle()

    def teardown(self) -> None:
        if self.opened:
            self.adapter.send("close", instance=self.instance)
        shutil.rmtree(self.root, ignore_errors=True)

    # ---- journal changes --------------------------------------------------------------------

    def _create(self, key: str, session_id: str, cwd: str, entries: list[EntryModel]) -> JournalModel:
        journal = JournalModel(key=key, cwd=cwd, session_id=session_id)
        lines: list[Any] = [header_line(session_id, cwd, _iso(START))]
        for entry in entries:
            lines.append(self._line(entry, self._parent(journal)))
            journal.lines.append(entry)
        self.workspace.mutate({"op": "write", "journal": key, "lines": lines})
        self.model.journals[key] = journal
        return journal

    @precondition(lambda self: len(self.model.journals) < MAX_JOURNALS)
    @rule(
        project=st.sampled_from(PROJECTS), flat=st.booleans(), count=st.integers(0, 3), secret=st.booleans()
    )
    def new_journal(self, project: str, flat: bool, count: int, secret: bool) -> None:
        key, session_id = self._new_key(project, flat)
        self._create(key, session_id, project, [self._entry(secret=secret and i == 0) for i in range(count)])
        self._settle()

    @rule(data=st.data(), count=st.integers(1, 3), partial=st.booleans(), secret=st.booleans())
    def append(self, data: st.DataObject, count: int, partial: bool, secret: bool) -> None:
        """Append to an existing journal or to the current session (creating it, as Pi does lazily)."""
        key = data.draw(st.sampled_from(sorted({*self.model.journals, self.model.current})), label="journal")
        entries = [self._entry(secret=secret and i == 0) for i in range(count)]
        journal = self.model.journals.get(key)
        if journal is None:
            session_id = self._pending_session[1] if key == self._pending_session[0] else key
            self._create(key, session_id, self.model.cwd, entries)
            self._settle()
            return
        if journal.pending is not None:  # Pi finishes the line it was writing first
            self.workspace.mutate(
                {"op": "append_partial", "journal": key, "text": journal.pending_rest + "\n"}
            )
            journal.lines.append(journal.pending)
            journal.pending = None
        lines = []
        for entry in entries:
            lines.append(self._line(entry, self._parent(journal)))
            journal.lines.append(entry)
        self.workspace.mutate({"op": "append", "journal": key, "lines": lines})
        if partial:
            entry = self._entry(secret=False)
            line = self._line(entry, self._parent(journal))
            cut = data.draw(st.integers(1, len(line) - 1), label="cut")
            self.workspace.mutate({"op": "append_partial", "journal": key, "text": line[:cut]})
            journal.pending, journal.pending_rest = entry, line[cut:]
        self._settle()

    @precondition(lambda self: any(j.lines or j.pending for j in self.model.journals.values()))
    @rule(data=st.data())
    def shrink(self, data: st.DataObject) -> None:
        key = data.draw(
            st.sampled_from(sorted(k for k, j in self.model.journals.items() if j.lines or j.pending))
        )
        journal = self.model.journals[key]
        keep = data.draw(
            st.integers(0, max(0, len(journal.lines) - (0 if journal.pending else 1))), label="keep"
        )
        self.workspace.mutate({"op": "truncate", "journal": key, "keep_lines": 1 + keep})
        self.model.removed.update({entry.id: entry for entry in journal.lines[keep:]})
        if journal.pending is not None:
            self.model.removed[journal.pending.id] = journal.pending
        journal.lines, journal.pending = journal.lines[:keep], None
        self._settle()

    @precondition(lambda self: any(j.lines for j in self.model.journals.values()))
    @rule(data=st.data(), same_length=st.booleans())
    def rewrite(self, data: st.DataObject, same_length: bool) -> None:
        """Replace one entry's line in place by another entry (the old one is removed)."""
        key = data.draw(st.sampled_from(sorted(k for k, j in self.model.journals.items() if j.lines)))
        journal = self.model.journals[key]
        index = data.draw(st.integers(0, len(journal.lines) - 1), label="line")
        old = journal.lines[index]
        new = self._entry(secret=False, short=same_length)
        parent = journal.lines[index - 1].id if index else None
        self.workspace.mutate(
            {
                "op": "rewrite",
                "journal": key,
                "line": index + 1,
                "with": self._line(new, parent),
                "length": "same" if same_length else "longer",
            }
        )
        journal.lines[index] = new
        self.model.removed[old.id] = old
        self._settle()

    @precondition(lambda self: bool(self.model.journals))
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.model.journals)), label="journal")
        self.workspace.mutate({"op": "delete", "journal": key})
        self.model.remove_journal(key)
        self._settle()

    @rule(data=st.data(), fresh=st.booleans())
    def switch_session(self, data: st.DataObject, fresh: bool) -> None:
        """/resume an existing journal (its project becomes the cwd) or /new in some project."""
        if fresh or not self.model.journals:
            cwd = data.draw(st.sampled_from(PROJECTS), label="project")
            key, session_id = self._new_key(cwd, flat=False)
            self._pending_session = (key, session_id)
        else:
            key = data.draw(st.sampled_from(sorted(self.model.journals)), label="journal")
            cwd = self.model.journals[key].cwd
        self.model.current, self.model.cwd = key, cwd
        self.adapter.send(
            "event",
            instance=self.instance,
            name="session_start",
            data={"reason": "resume", "session_file": str(self.workspace.path(key)), "cwd": cwd},
        )
        self._settle()

    # ---- questions --------------------------------------------------------------------------

    def _terms(self) -> dict[str, list[str]]:
        live, scope_keys = self.model.live(), self.model.scope_journals("project")
        return {
            "live": sorted(e.term for j, e in live.values() if j.key in scope_keys),
            "outside": sorted(e.term for e in self.model.outside("project").values()),
            "removed": sorted(e.term for e in self.model.removed.values()),
            "pending": sorted(e.term for e in self.model.pending().values()),
            "secret": sorted(self.model.all_secrets()),
            "word": list(WORDS),
        }

    @rule(data=st.data(), scope=st.sampled_from(["project", "project", "session", "global"]))
    def search(self, data: st.DataObject, scope: str) -> None:
        kinds = [kind for kind, terms in self._terms().items() if terms]
        kind = data.draw(st.sampled_from(kinds), label="kind")
        query = data.draw(st.sampled_from(self._terms()[kind]), label="query")
        response = self._tool({"action": "search", "query": query, "scope": scope, "limit": 50})
        ids = self._check_results(response, scope, asked=query)
        if kind in ("removed", "pending", "secret") and ids:
            raise self._fail(f"a search for {kind} text {query!r} finds {ids}", response)
        current = self.model.journals.get(self.model.current)
        if kind == "live" and current is not None and scope in ("project", "session"):
            # The current session is indexed before every tool call.
            wanted = [e.id for e in current.lines if e.term == query]
            if wanted and wanted[0] not in ids:
                raise self._fail(
                    f"{query!r} of the current session's entry {wanted[0]} is not found", response
                )

    @rule(data=st.data(), scope=st.sampled_from(["project", "project", "session", "global"]))
    def read(self, data: st.DataObject, scope: str) -> None:
        entries = self.model.all_entries()
        entry_id = data.draw(st.sampled_from([*sorted(entries), "zq999999"]), label="entryId")
        response = self._tool({"action": "read", "entryId": entry_id, "scope": scope})
        if scope == "global" and not self.model.allow_global:
            self._check_results(response, scope)  # must be scope_denied
            return
        if "error" in response:
            raise self._fail("unexpected tool error", response)
        self._check_output(response, scope, asked=entry_id)
        details = response["details"]
        status = details.get("status")
        live = self.model.live()
        in_scope = entry_id in live and live[entry_id][0].key in self.model.scope_journals(scope)
        if status == "ok":
            if not in_scope:
                raise self._fail(
                    f"{entry_id} is not a live entry of the {scope} scope but reads ok", response
                )
            if details.get("text") != entries[entry_id].redacted:
                raise self._fail(
                    f"read {entry_id} returns other text than {entries[entry_id].redacted!r}", response
                )
        elif in_scope and live[entry_id][0].key == self.model.current and scope != "global":
            raise self._fail(f"{entry_id} of the current session is not readable (status {status})", response)
        elif status not in ("unavailable", "not_found") or (not in_scope and status != "not_found"):
            expected = (
                "ok, unavailable or not_found" if in_scope else "not_found (like an id that exists nowhere)"
            )
            raise self._fail(f"read {entry_id}: status {status!r}, expected {expected}", response)

    @invariant()
    def listing_stays_in_scope(self) -> None:
        if not self.opened:
            return
        self._check_results(self._tool({"action": "search", "limit": 50}), "project")
