"""The shipped secrets corpus as cases: every run plants it through the protocol like any case.

One case per secret kind (`corpus-secret-<kind>`) and one per look-alike kind
(`corpus-lookalike-<kind>`), built from the spec's `secrets-corpus.json` on every load, so the corpus and
its cases never drift. Each item goes into its own entry of one journal, carried in turn by a user
message, an assistant text block, a bash execution's output and a tool result, beside a marker word
of its own. A secret is caught when its entry is found by its marker (so it was indexed), no read
of it and no search excerpt shows any `LEAK_WINDOW`-character window of the secret, and a search
for the secret's own letter-and-digit runs does not find the entry. A look-alike is kept when a read
of its entry shows the value unchanged.

`corpus_tally` turns the case results of a run into recall and false positives per kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pimem_conformance import secrets_corpus
from pimem_conformance._cases import Case
from pimem_conformance._paths import spec_dir

__all__ = ["CORPUS_CASE_PREFIX", "corpus_cases", "corpus_tally"]

CORPUS_CASE_PREFIX = "corpus-"
SECRET_REQUIREMENT = "JM-REDACT-024"
LOOKALIKE_REQUIREMENT = "JM-REDACT-025"
_JOURNAL = "agent/sessions/--home-u-vault--/corpus.jsonl"
_CWD = "/home/u/vault"
_HEADER_TIME = "2026-11-20T09:00:00.000Z"
_RUN = re.compile(r"[^\W_]+")


# The words of a `[REDACTED:<class>]` marker, which may stand where a secret was: markers name
# the rule that caught the secret, so every class the corpus expects.
def _marker_words(corpus: secrets_corpus.Corpus) -> frozenset[str]:
    return frozenset({"redacted"}) | {
        word
        for secret in corpus.secrets
        for marker in secret.classes
        for word in re.split(r"[^a-z0-9]+", marker)
        if word
    }


@dataclass(frozen=True)
class _Item:
    id: str  # the corpus id
    kind: str
    value: str  # the secret, or the look-alike's value
    context: str
    public_prefix: str = ""  # the literal start of a secret's format (`ghp_`): not secret


def _runs(text: str) -> set[str]:
    return {run.casefold() for run in _RUN.findall(text)}


def _marker(number: int) -> str:
    """A word that is a search term of its own: `corpusmark` and the number in letters a..j."""
    return "corpusmark" + "".join("abcdefghij"[int(digit)] for digit in f"{number:04d}")


def _line(number: int, item: _Item, parent: str | None) -> dict[str, Any]:
    entry_id = f"c{number:07d}"
    text = f"note {_marker(number)}\n{item.context}"  # first: a key block cut off runs to the end
    stamp = f"2026-11-21T{10 + number // 3600 % 10:02d}:{number // 60 % 60:02d}:{number % 60:02d}.000Z"
    message: dict[str, Any]
    carrier = number % 4
    if carrier == 0:
        message = {"role": "user", "content": [{"type": "text", "text": text}]}
    elif carrier == 1:
        message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    elif carrier == 2:
        message = {
            "role": "bashExecution",
            "command": f"echo {_marker(number)}",
            "output": text,
            "exitCode": 0,
            "cancelled": False,
            "truncated": False,
        }
    else:
        message = {
            "role": "toolResult",
            "toolCallId": f"call{number}",
            "toolName": "bash",
            "content": [{"type": "text", "text": text}],
            "isError": False,
        }
    message["timestamp"] = 1795255200000 + number * 1000
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp, "message": message}


def _leak_windows(item: _Item) -> list[str]:
    """The secret's windows that nothing else in its entry holds (so finding one is a leak)."""
    rest = item.context.replace(item.value, " ")
    windows = secrets_corpus.windows(item.value, skip=len(item.public_prefix))
    return sorted(window for window in windows if window not in rest)


def _secret_terms(item: _Item, marker_words: frozenset[str]) -> str:
    """A query of the secret's own runs: those its entry holds nowhere else, and no marker word."""
    innocent = _runs(item.context.replace(item.value, " ")) | marker_words | {"note"}
    return " ".join(sorted(_runs(item.value[len(item.public_prefix) :]) - innocent))


def _steps(
    items: list[_Item], first: int, secret: bool, marker_words: frozenset[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The steps of one case and, for each step, the corpus id it checks."""
    steps: list[dict[str, Any]] = []
    owners: list[str] = []
    for offset, item in enumerate(items):
        number = first + offset
        entry_id = f"c{number:07d}"
        found: dict[str, Any] = {"includes_ids": [entry_id]}
        if secret:
            windows = _leak_windows(item)
            found["excludes_text"] = windows
            steps.append({"tool": {"action": "search", "query": _marker(number)}, "expect": found})
            read = {"equals": {"details.status": "ok"}, "excludes_text": windows}
            steps.append({"tool": {"action": "read", "entryId": entry_id}, "expect": read})
            owners += [item.id, item.id]
            terms = _secret_terms(item, marker_words)
            if terms:
                probe = {"tool": {"action": "search", "query": terms, "limit": 50}}
                steps.append({**probe, "expect": {"excludes_ids": [entry_id]}})
                owners.append(item.id)
        else:
            steps.append({"tool": {"action": "search", "query": _marker(number)}, "expect": found})
            read = {"equals": {"details.status": "ok"}, "includes_text": [item.value]}
            steps.append({"tool": {"action": "read", "entryId": entry_id}, "expect": read})
            owners += [item.id, item.id]
    return steps, owners


# corpus case id -> the corpus id each of its steps checks (filled by corpus_cases)
_STEP_OWNERS: dict[str, list[str]] = {}
_KINDS: dict[str, tuple[str, str]] = {}  # corpus id -> ("secret" | "lookalike", kind)


def _case(
    case_id: str, kind: str, items: list[_Item], first: int, secret: bool, marker_words: frozenset[str]
) -> Case:
    header = {"type": "session", "version": 3, "id": f"corpus-{kind}", "timestamp": _HEADER_TIME, "cwd": _CWD}
    lines: list[dict[str, Any]] = [header]
    for offset, item in enumerate(items):
        lines.append(_line(first + offset, item, lines[-1].get("id") if offset else None))
    steps, owners = _steps(items, first, secret, marker_words)
    _STEP_OWNERS[case_id] = owners
    what = "secret" if secret else "look-alike"
    raw: dict[str, Any] = {
        "id": case_id,
        "description": (
            f"Every {what} of kind {kind} in the shipped secrets corpus ({len(items)}), each in its own "
            + (
                "entry, is found by its marker word, never shown and never a search term."
                if secret
                else "entry, comes back unchanged."
            )
        ),
        "requirements": [SECRET_REQUIREMENT if secret else LOOKALIKE_REQUIREMENT],
        "profile": "core",
        "polarity": "must",
        "since": "0.2.0",
        "comment": "Generated from pimem_conformance.secrets_corpus on every load.",
        "journals": {_JOURNAL: {"lines": lines}},
        "setup": {"home": "/home/u", "cwd": _CWD, "session": _JOURNAL, "now": "2026-11-29T12:00:00.000Z"},
        "steps": steps,
    }
    return Case.from_json(raw, area="corpus")  # not a file of its own: the lint checks no name


def _slug(kind: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


def corpus_cases(spec: Path | None = None) -> list[Case]:
    """One case per secret kind and per look-alike kind of the corpus of `spec` (None: the shipped
    spec's), in corpus order."""
    corpus = secrets_corpus.load((spec or spec_dir()) / secrets_corpus.CORPUS_FILE)
    words = _marker_words(corpus)
    groups: dict[tuple[bool, str], list[_Item]] = {}
    for secret in corpus.secrets:
        groups.setdefault((True, secret.kind), []).append(
            _Item(secret.id, secret.kind, secret.secret, secret.context, secret.public_prefix)
        )
        _KINDS[secret.id] = ("secret", secret.kind)
    for lookalike in corpus.lookalikes:
        groups.setdefault((False, lookalike.kind), []).append(
            _Item(lookalike.id, lookalike.kind, lookalike.value, lookalike.context)
        )
        _KINDS[lookalike.id] = ("lookalike", lookalike.kind)
    cases: list[Case] = []
    first = 1
    for (is_secret, kind), items in groups.items():
        prefix = "secret" if is_secret else "lookalike"
        case_id = f"{CORPUS_CASE_PREFIX}{prefix}-{_slug(kind)}"
        cases.append(_case(case_id, kind, items, first, is_secret, words))
        first += len(items)
    return cases


def corpus_tally(outcomes: Iterable[tuple[str, bool, Iterable[int]]]) -> dict[str, Any] | None:
    """Recall and false positives per kind from (case id, ran, failing step indices) of a run.

    None when no corpus case ran. A secret whose case did not run is counted as not caught.
    """
    secrets: dict[str, dict[str, int]] = {}
    lookalikes: dict[str, dict[str, int]] = {}
    any_ran = False
    for case_id, ran, failing in outcomes:
        owners = _STEP_OWNERS.get(case_id)
        if owners is None:
            continue
        any_ran = True
        missed = {owners[step] for step in failing if step < len(owners)}
        for item_id in dict.fromkeys(owners):
            what, kind = _KINDS[item_id]
            good = ran and item_id not in missed
            if what == "secret":
                tally = secrets.setdefault(kind, {"planted": 0, "caught": 0})
                tally["planted"] += 1
                tally["caught"] += good
            else:
                tally = lookalikes.setdefault(kind, {"planted": 0, "false_positives": 0})
                tally["planted"] += 1
                tally["false_positives"] += not good
    if not any_ran:
        return None
    planted = sum(t["planted"] for t in secrets.values())
    caught = sum(t["caught"] for t in secrets.values())
    values = sum(t["planted"] for t in lookalikes.values())
    wrong = sum(t["false_positives"] for t in lookalikes.values())
    return {
        "secrets": {
            "planted": planted,
            "caught": caught,
            "recall": round(caught / planted, 4) if planted else 1.0,
        },
        "lookalikes": {
            "planted": values,
            "false_positives": wrong,
            "rate": round(wrong / values, 4) if values else 0.0,
        },
        "secret_kinds": {
            kind: {**t, "recall": round(t["caught"] / t["planted"], 4)} for kind, t in sorted(secrets.items())
        },
        "lookalike_kinds": dict(sorted(lookalikes.items())),
    }
