"""The labeled secrets corpus: synthetic secrets every memory must redact, and look-alikes it must keep.

The corpus is plain JSON (`corpus.json` beside this module), so an implementation in any language
can use it directly; Python callers use `load()`. It is generated deterministically
(`python -m pimem_conformance.secrets_corpus --write`) and committed, so its bytes never drift;
`--check` verifies the committed file against the generator.

A secret counts as leaked when any 8-character substring of `secret` is searchable or appears in
any output (`windows()` lists them). A look-alike counts as a false positive when its `value` does
not come back unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CORPUS_PATH", "LEAK_WINDOW", "Corpus", "Lookalike", "Secret", "load", "windows"]

CORPUS_PATH = Path(__file__).resolve().parent / "corpus.json"
# The length of a substring that counts as a leak: long enough that chance matches are negligible.
LEAK_WINDOW = 8


@dataclass(frozen=True)
class Secret:
    """A synthetic secret: `secret` occurs exactly once in `context`, the text planted in a journal."""

    id: str
    kind: str  # the gitleaks rule id the format follows (or the spec class when gitleaks has none)
    rule: str  # "gitleaks:<rule id>" or "pimem-spec:<class>"
    redaction_class: str  # the class of the spec's `[REDACTED:<class>]` marker expected here
    secret: str
    context: str


@dataclass(frozen=True)
class Lookalike:
    """A benign value that resembles a secret: `value` occurs exactly once in `context`."""

    id: str
    kind: str
    value: str
    context: str


@dataclass(frozen=True)
class Corpus:
    seed: int
    secrets: tuple[Secret, ...]
    lookalikes: tuple[Lookalike, ...]


def load(path: Path = CORPUS_PATH) -> Corpus:
    """Read the committed corpus."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return Corpus(
        seed=int(data["seed"]),
        secrets=tuple(
            Secret(
                id=item["id"],
                kind=item["kind"],
                rule=item["rule"],
                redaction_class=item["class"],
                secret=item["secret"],
                context=item["context"],
            )
            for item in data["secrets"]
        ),
        lookalikes=tuple(
            Lookalike(id=item["id"], kind=item["kind"], value=item["value"], context=item["context"])
            for item in data["lookalikes"]
        ),
    )


def windows(secret: str, width: int = LEAK_WINDOW) -> set[str]:
    """Every substring of `width` characters: finding any of them outside the secret is a leak."""
    return {secret[start : start + width] for start in range(max(1, len(secret) - width + 1))}
