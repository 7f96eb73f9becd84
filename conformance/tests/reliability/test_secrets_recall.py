"""Issue 8.6: every corpus secret is redacted from the index and from every output; look-alikes survive.

Items are planted ten to a journal (one session id per journal), each in one of seven carriers a
real session uses (user text, assistant text, a tool call's arguments, a bash execution's output,
a tool result, a compaction summary, a custom message), beside a unique marker word. A secret is
*leaked* when any 8-character window of it is in any string of any response (read by id, a search
hit's excerpt, the summaries of its session), or when a search for the windows finds its entry and
does not find the same entry in a *twin journal* without the secret (issue 13). The twin holds
every entry again, in the same carriers, with each secret replaced by another secret of its kind
from the corpus, so a conforming implementation indexes both alike: identifier parts, n-grams and
the words of the `[REDACTED:<rule>]` marker find both entries, and only the secret's own
characters can find the first alone. The probe searches the letter/digit runs of every window (and
of the whole secret) and their identifier parts, many to a query; a query that finds both entries
is split until each of its terms is decided. The terms a read of the entry shows anyway go into
queries of their own, since they are the ones expected to find both. The marker word proves the
entry is indexed at all, so an implementation cannot pass by indexing nothing.

Recall is reported per kind and per text carrier (the corpus' `carrier`: plain, JSON-escaped, .env,
YAML, a URL ...), and so is whether the marker names the kind's rule (any marker, for a corpus
whose secrets name no class). Near-misses must come back unchanged; placeholders are reported
apart (masking them is allowed). PIMEM_SECRETS_CORPUS names another corpus file (the held-out
one, `secrets_corpus.HELDOUT_PATH`, or another seed's) to measure instead of the committed one.
"""

from __future__ import annotations

import os
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pimem_conformance import dumps_like_js, secrets_corpus
from pimem_conformance.journals import tool_call_line

from .reliability_kit import (
    JournalWriter,
    Memory,
    entry_line,
    header_line,
    record_figure,
    result_ids,
    strings_in,
    tally,
)

pytestmark = pytest.mark.reliability

CWD = "/home/u/vault-app"
CORPUS = secrets_corpus.load(Path(os.environ.get("PIMEM_SECRETS_CORPUS") or secrets_corpus.CORPUS_PATH))
MAX_FALSE_POSITIVE_RATE = 0.02
TERMS_PER_QUERY = 200  # the leak probe is split so no query is absurdly long
PAGE = 16_000
CARRIERS = 7  # user, assistant, tool call, bash, tool result, compaction summary, custom message
ITEMS_PER_JOURNAL = 10  # fewer, fuller journals keep each call's discovery cheap
SLICE = 1 << 20  # the spec's 1 MB redaction slice
_RUN = re.compile(r"[^\W_]+")
# Identifier parts (JM-SEARCH-042): a case change, an upper-case run before a word, letters and digits.
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+|[^\W\d_]+")


def runs(text: str) -> set[str]:
    """What a search can match: maximal runs of Unicode letters and digits and the identifier parts
    of each, case-folded."""
    found = set()
    for run in _RUN.findall(text):
        found.add(run.casefold())
        found.update(part.casefold() for part in _PART.findall(run))
    return found


def twin_values(secrets: tuple[secrets_corpus.Secret, ...]) -> list[str]:
    """For each corpus secret, another secret of its kind (planted in the same carrier when the kind
    has one there, so it reads the same way): what the twin journal holds in its place."""
    by_kind: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in secrets:
        for key in ((item.kind, item.carrier), (item.kind, "")):
            if item.secret not in by_kind[key]:
                by_kind[key].append(item.secret)
    twins = []
    for item in secrets:
        same_carrier = [value for value in by_kind[item.kind, item.carrier] if value != item.secret]
        others = same_carrier or [value for value in by_kind[item.kind, ""] if value != item.secret]
        twins.append(others[0])
    return twins


@dataclass(frozen=True)
class Planted:
    entry_id: str
    session_id: str
    marker: str
    text: str  # what was planted: the item's text and the marker line
    secrets: tuple[str, ...]  # values that must not leak (empty for a look-alike)
    keep: str = ""  # for a look-alike: the value that must come back unchanged
    public: tuple[str, ...] = ()  # each secret's public prefix (`ghp_`), which may show
    twin_entry_id: str = ""  # the same entry in the twin journal, without the secrets
    twin_session_id: str = ""

    def windows(self) -> set[str]:
        public = self.public or ("",) * len(self.secrets)
        return set().union(
            *(
                secrets_corpus.windows(secret, skip=len(prefix))
                for secret, prefix in zip(self.secrets, public, strict=True)
            )
        )

    def leak_terms(self) -> list[str]:
        """What a search for the secret's windows can match: the runs of the secret past its
        public prefix and of every window, and their identifier parts."""
        terms: set[str] = set()
        public = self.public or ("",) * len(self.secrets)
        for secret, prefix in zip(self.secrets, public, strict=True):
            terms |= runs(secret[len(prefix) :])
        for window in self.windows():
            terms |= runs(window)
        return sorted(terms)


def carrier_lines(index: int, entry_id: str, text: str) -> list[dict[str, Any]]:
    """The entry (and any call it answers) that puts `text` into a journal in carrier `index % CARRIERS`;
    the call's id is the entry's with its first letter moved on by one."""
    stamp = "2026-11-02T10:00:00.000Z"
    carrier = index % CARRIERS
    if carrier == 0:
        return [entry_line(entry_id, None, text, timestamp=stamp)]
    if carrier == 1:
        return [entry_line(entry_id, None, text, role="assistant", timestamp=stamp)]
    if carrier == 2:
        call = {"id": f"call_{entry_id}", "name": "write", "arguments": {"path": "notes.md", "content": text}}
        return [tool_call_line(entry_id, None, call, timestamp=stamp)]
    if carrier == 3:
        return [
            {
                "type": "message",
                "id": entry_id,
                "parentId": None,
                "timestamp": stamp,
                "message": {
                    "role": "bashExecution",
                    "command": "printenv",
                    "output": text,
                    "exitCode": 0,
                    "cancelled": False,
                    "truncated": False,
                    "timestamp": 1793613600000,
                },
            }
        ]
    if carrier == 5:
        return [
            {
                "type": "compaction",
                "id": entry_id,
                "parentId": None,
                "timestamp": stamp,
                "summary": text,
                "firstKeptEntryId": entry_id,
                "tokensBefore": 5000,
            }
        ]
    if carrier == 6:
        return [
            {
                "type": "custom_message",
                "customType": "notes",
                "content": text,
                "display": True,
                "id": entry_id,
                "parentId": None,
                "timestamp": stamp,
            }
        ]
    call_id = f"call_{entry_id}"
    call = {"type": "toolCall", "id": call_id, "name": "read", "arguments": {"path": "notes.md"}}
    call_entry = chr(ord(entry_id[0]) + 1) + entry_id[1:]
    return [
        {
            "type": "message",
            "id": call_entry,
            "parentId": None,
            "timestamp": stamp,
            "message": {
                "role": "assistant",
                "content": [call],
                "api": "mock",
                "provider": "mock",
                "model": "mock",
                "stopReason": "toolUse",
                "timestamp": 1793613600000,
            },
        },
        {
            "type": "message",
            "id": entry_id,
            "parentId": call_entry,
            "timestamp": stamp,
            "message": {
                "role": "toolResult",
                "toolCallId": call_id,
                "toolName": "read",
                "content": [{"type": "text", "text": text}],
                "isError": False,
                "timestamp": 1793613600000,
            },
        },
    ]


@dataclass(frozen=True)
class Item:
    text: str
    secrets: tuple[str, ...] = ()
    keep: str = ""
    big: bool = False  # a plain user message, whatever the carrier rotation says
    public: tuple[str, ...] = ()
    twins: tuple[str, ...] = ()  # what stands in each secret's place in the twin journal


def plant_all(writer: JournalWriter, items: list[Item]) -> list[Planted]:
    """Write the items, ITEMS_PER_JOURNAL to a journal (and so to a session id), in carrier rotation,
    and the twin journal of each journal that holds secrets (see twin_secret)."""
    planted, lines, twins = [], [], []
    for index, item in enumerate(items):
        group = index // ITEMS_PER_JOURNAL
        session_id = f"01935c00-{group:04x}-7000-8000-{group:012x}"
        twin_session = f"01935c00-{group:04x}-7000-9000-{group:012x}"
        entry_id = f"a{index:07x}"  # 8 hex digits, like Pi's; the carrier's call entry uses "b..."
        twin_id = f"t{index:07x}" if item.secrets else ""  # its call entry "u..."
        marker = f"plantmark{index:05d}"
        body = f"note {marker}\n{item.text}"  # first: a key block cut off runs to the end
        lines += [entry_line(entry_id, None, body)] if item.big else carrier_lines(index, entry_id, body)
        if item.secrets:
            twin = body
            for secret, stand_in in zip(item.secrets, item.twins, strict=True):
                twin = twin.replace(secret, stand_in)
            twins += [entry_line(twin_id, None, twin)] if item.big else carrier_lines(index, twin_id, twin)
        # A look-alike inside a tool call's JSON arguments comes back in its escaped form.
        keep = item.keep if item.big or index % CARRIERS != 2 else dumps_like_js(item.keep)[1:-1]
        planted.append(
            Planted(
                entry_id, session_id, marker, body, item.secrets, keep, item.public, twin_id, twin_session
            )
        )
        if index % ITEMS_PER_JOURNAL == ITEMS_PER_JOURNAL - 1 or index == len(items) - 1:
            writer.write(writer.path_for(CWD, f"items-{group:04d}"), [header_line(session_id, CWD), *lines])
            if twins:
                writer.write(
                    writer.path_for(CWD, f"twins-{group:04d}"), [header_line(twin_session, CWD), *twins]
                )
            lines, twins = [], []
    return planted


def straddling_texts() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """Big entries whose secrets sit across the 1 MB slice boundaries of a redactor: (text, its
    secrets, their twins' stand-ins)."""
    rng = random.Random(8)
    # two secrets of a kind of the committed corpus (whichever corpus is measured), as they read in
    # plain text (a key block is escaped or indented elsewhere)
    committed = sorted(secrets_corpus.load().secrets, key=lambda item: item.carrier != "plain")

    def two(kind: str) -> tuple[str, str]:
        values = list(dict.fromkeys(item.secret for item in committed if item.kind == kind))
        return values[0], values[1]

    (pem, pem_twin), (token, token_twin), (aws, aws_twin) = (
        two("private-key"),
        two("github-pat"),
        two("aws-secret"),
    )
    filler_line = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n"

    def filler(chars: int) -> str:
        return (filler_line * (chars // len(filler_line) + 1))[:chars]

    texts: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
    for boundary in (1_000_000, SLICE, 2 * SLICE):
        # A PEM block that begins a few lines before a slice boundary and ends after it.
        text = filler(boundary - len(pem) // 2) + "\n" + pem + "\n" + filler(4096)
        texts.append((text, (pem,), (pem_twin,)))
        # One huge line: no line boundary near the slice, the token straddles it.
        offset = rng.randint(4, len(token) - 4)
        words = "lorem ipsum dolor sit amet " * (boundary // 27 + 1)
        line = words[: boundary - offset - 1] + " " + token + " " + words[:4096]
        texts.append((line, (token,), (token_twin,)))
    # Context in one slice, value in the next: the key name ends exactly at the boundary.
    prefix = "aws_secret_access_key = "
    texts.append((filler(SLICE - len(prefix)) + prefix + aws + "\n" + filler(2048), (aws,), (aws_twin,)))
    return texts


def read_window(memory: Memory, planted: Planted, start: int) -> dict[str, Any]:
    """Two consecutive read pages from `start`, merged, so a secret across a page edge is seen whole."""
    first = memory.tool("a", action="read", entryId=planted.entry_id, offset=max(0, start))
    details = first.get("details", {})
    if details.get("status") != "ok" or details.get("nextOffset") is None:
        return first
    second = memory.tool("a", action="read", entryId=planted.entry_id, offset=details["nextOffset"])
    return {"pages": [first, second], "joined": details.get("text", "") + second["details"].get("text", "")}


def leaked_windows(planted: Planted, response: Any) -> set[str]:
    windows = planted.windows()
    return {window for text in strings_in(response) for window in windows if window in text}


def search_session(memory: Memory, session_id: str, terms: list[str]) -> dict[str, Any]:
    """A search for any of `terms`, narrowed to the session."""
    return memory.tool("a", action="search", query=" ".join(terms), sessionId=session_id, limit=50)


def leaking_term(
    memory: Memory, planted: Planted, terms: list[str], hits: dict[str, Any] | None = None
) -> str:
    """A term that finds the planted entry and not its twin (empty when none does): a query that
    finds both is split in halves until each of its terms is decided. `hits`: the answer to the
    search for `terms` in the planted session, when it was made already."""
    hits = hits or search_session(memory, planted.session_id, terms)
    if planted.entry_id not in result_ids(hits):
        return ""
    twin = search_session(memory, planted.twin_session_id, terms)
    if planted.twin_entry_id not in result_ids(twin):
        while len(terms) > 1:  # name one term that does it
            half = terms[: len(terms) // 2]
            terms = half if leaking_term(memory, planted, half) else terms[len(terms) // 2 :]
        return terms[0]
    if len(terms) == 1:
        return ""
    middle = len(terms) // 2
    return leaking_term(memory, planted, terms[:middle]) or leaking_term(memory, planted, terms[middle:])


def probe(memory: Memory, planted: Planted) -> list[str]:
    """Why this planted secret leaked (empty when it did not)."""
    problems: list[str] = []
    found = memory.tool("a", action="search", query=planted.marker, limit=5)
    if planted.entry_id not in result_ids(found):
        return [f"{planted.entry_id}: not found by its marker {planted.marker!r}, so it was not indexed"]
    if leaked := leaked_windows(planted, found):
        problems.append(f"search excerpt shows {sorted(leaked)[:3]}")
    starts = (
        [0]
        if len(planted.text) <= PAGE
        else [planted.text.index(secret) - PAGE // 2 for secret in planted.secrets]
    )
    shown: set[str] = set()
    for start in starts:
        read = read_window(memory, planted, start)
        if leaked := leaked_windows(planted, read):
            problems.append(f"read shows {sorted(leaked)[:3]}")
        shown |= set().union(*(runs(text) for text in strings_in(read)))
    # Terms the entry shows anyway (its other words, the marker's) are expected to find the twin
    # too, so they get queries of their own: a query with one of them in it finds both entries and
    # has to be split.
    terms = planted.leak_terms()
    expected = [term for term in terms if term in shown]
    chunks = [expected] if expected else []
    unexpected = [term for term in terms if term not in shown]
    chunks += [
        unexpected[first : first + TERMS_PER_QUERY] for first in range(0, len(unexpected), TERMS_PER_QUERY)
    ]
    for chunk in chunks:
        hits = search_session(memory, planted.session_id, chunk)
        # Only the entry's own result: `details.query` echoes the probe itself, and the other
        # entries of the session hold this secret in other carriers (their own probes judge them).
        own = [
            hit
            for hit in hits.get("details", {}).get("results", [])
            if hit.get("entryId") == planted.entry_id
        ]
        if leaked := leaked_windows(planted, own):
            problems.append(f"search excerpt shows {sorted(leaked)[:3]}")
        if term := leaking_term(memory, planted, chunk, hits):
            problems.append(f"searchable by {term!r} (its twin is not)")
    return problems


def named_by_its_rule(memory: Memory, planted: Planted, classes: tuple[str, ...]) -> bool:
    """Whether a read shows a marker naming one of `classes` (any marker, when there are none)."""
    text = memory.tool("a", action="read", entryId=planted.entry_id).get("details", {}).get("text", "")
    return any(f"[REDACTED:{name}]" in text for name in classes) if classes else "[REDACTED:" in text


def _recall_table(title: str, counts: dict[str, list[int]]) -> list[str]:
    lines = [f"{title}:"]
    for name, (caught, total) in sorted(counts.items()):
        lines.append(f"  {name:48s} {caught:4d}/{total:<4d} {caught / total:7.2%}")
    return lines


def test_every_secret_is_caught_and_lookalikes_survive(shared_tmp: Any, impl: str) -> None:
    writer = JournalWriter(shared_tmp)
    straddling_items = [
        Item(text, values, big=True, twins=twins) for text, values, twins in straddling_texts()
    ]
    everything = plant_all(
        writer,
        [
            *(
                Item(item.context, (item.secret,), public=(item.public_prefix,), twins=(twin,))
                for item, twin in zip(CORPUS.secrets, twin_values(CORPUS.secrets), strict=True)
            ),
            *straddling_items,
            *(Item(item.context, keep=item.value) for item in CORPUS.lookalikes),
            *(Item(item.context, keep=item.value) for item in CORPUS.placeholders),
        ],
    )
    secrets = everything[: len(CORPUS.secrets)]
    straddling = everything[len(secrets) : len(secrets) + len(straddling_items)]
    lookalikes = everything[len(secrets) + len(straddling) : len(everything) - len(CORPUS.placeholders)]
    placeholders = everything[len(everything) - len(CORPUS.placeholders) :]
    items = {secret.entry_id: item for secret, item in zip(secrets, CORPUS.secrets, strict=True)}

    memory = Memory.connect(impl)
    try:
        memory.open("a", writer.workspace(CWD, writer.path_for(CWD, "current")))
        leaks = {
            secret.entry_id: problems
            for secret in (*secrets, *straddling)
            if (problems := probe(memory, secret))
        }
        for session_id in sorted({secret.session_id for secret in secrets}):
            shown = memory.tool("a", action="summaries", sessionId=session_id, limit=50)
            for secret in secrets:
                if secret.session_id == session_id and (leaked := leaked_windows(secret, shown)):
                    leaks.setdefault(secret.entry_id, []).append(f"summaries show {sorted(leaked)[:3]}")
        misnamed = [
            f"{item.kind} in {item.carrier}: not [REDACTED:{item.redaction_class}]"
            for secret in secrets
            if secret.entry_id not in leaks
            and not named_by_its_rule(memory, secret, (item := items[secret.entry_id]).classes)
        ]
        altered: dict[str, str] = {}
        for lookalike, near_miss in zip(lookalikes, CORPUS.lookalikes, strict=True):
            read = memory.tool("a", action="read", entryId=lookalike.entry_id)
            text = read.get("details", {}).get("text", "")
            if lookalike.keep not in text:
                altered[lookalike.entry_id] = (
                    f"{near_miss.kind}: {near_miss.context[:80]!r} came back as {text[:120]!r}"
                )
        masked_placeholders = sum(
            placeholder.keep
            not in memory.tool("a", action="read", entryId=placeholder.entry_id)
            .get("details", {})
            .get("text", "")
            for placeholder in placeholders
        )
    finally:
        memory.stop()

    by_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_carrier: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for secret in secrets:
        item = items[secret.entry_id]
        for counts in (by_kind[item.kind], by_carrier[item.carrier]):
            counts[0] += secret.entry_id not in leaks
            counts[1] += 1
    total = len(secrets) + len(straddling)
    recall = (total - len(leaks)) / total
    rate = len(altered) / len(lookalikes)
    print("\n".join(_recall_table("recall per carrier", by_carrier)))
    print("\n".join(_recall_table("recall per kind", by_kind)))
    record_figure("secrets corpus seed", CORPUS.seed)
    record_figure("secrets planted (incl. straddling 1 MB slices)", total)
    record_figure("secrets kinds", len(by_kind))
    record_figure("secrets recall", f"{recall:.2%} ({total - len(leaks)}/{total})")
    record_figure("kinds with full recall", f"{sum(c == t for c, t in by_kind.values())}/{len(by_kind)}")
    worst = min(by_carrier.items(), key=lambda entry: entry[1][0] / entry[1][1])
    record_figure("lowest carrier recall", f"{worst[0]} {worst[1][0]}/{worst[1][1]}")
    record_figure(
        "markers naming the kind's rule",
        f"{len(secrets) - len(misnamed) - len(leaks)}/{len(secrets) - len(leaks)}",
    )
    record_figure("near-misses altered", f"{rate:.2%} ({len(altered)}/{len(lookalikes)})")
    record_figure("placeholders masked (allowed)", f"{masked_placeholders}/{len(placeholders)}")
    tally("entries checked", total + len(lookalikes) + len(placeholders), "planted secrets and look-alikes")
    for problem in altered.values():
        print(f"near-miss altered: {problem}")
    details = [
        f"{items[entry_id].kind if entry_id in items else 'straddling'} {entry_id}: {'; '.join(problems)}"
        for entry_id, problems in leaks.items()
    ]
    assert not leaks, f"{len(leaks)} secrets leaked:\n" + "\n".join(details[:40])
    assert not misnamed, f"{len(misnamed)} markers name another rule:\n" + "\n".join(misnamed[:40])
    assert rate <= MAX_FALSE_POSITIVE_RATE, "\n".join(altered.values())
