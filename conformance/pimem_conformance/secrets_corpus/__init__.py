"""The labeled secrets corpus: synthetic secrets every memory must redact, and look-alikes it must keep.

The corpus is plain JSON, `spec/secrets-corpus.json` (`CORPUS_PATH`; in the wheel, the spec folder
the suite ships), so an implementation in any language reads every secret the suite plants from
`spec/` alone; Python callers use `load()`. It is generated deterministically
(`python -m pimem_conformance.secrets_corpus --write`) and committed, so its bytes never drift;
`--check` verifies the committed file against the generator, and `--seed holdout --out FILE`
writes the same kinds with other values. `heldout.json` (`HELDOUT_PATH`, same shape) holds examples
written apart from the tuned corpus, from the public format descriptions, in other carriers.

Each secret belongs to a *kind* (a published format, tied to the source rules it follows in
`rules`), sits in one *carrier* (plain text, a JSON-escaped tool-call string, `.env`, YAML, TOML,
XML, a command line, a URL, an HTTP header, a connection string, a Kubernetes Secret), and names the
marker class that should replace it (`redaction_class`, or any of `classes`).

A secret counts as leaked when any 8-character window of it that reaches past its public prefix
(`public_prefix`, the literal start of its format, such as `ghp_`) is searchable or appears in any
output (`Secret.windows()`). A look-alike counts as altered when its `value` does not come back
unchanged. Placeholders (`AKIA...EXAMPLE`, `<your-token>`) are reported apart: masking them is allowed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pimem_conformance._paths import spec_dir

__all__ = [
    "CORPUS_FILE",
    "CORPUS_PATH",
    "HELDOUT_PATH",
    "LEAK_WINDOW",
    "Corpus",
    "Lookalike",
    "Secret",
    "load",
    "windows",
]

# The spec's copy: the canonical corpus lives under spec/ (the lint checks its classes are rules of
# spec/redaction-rules.json); the generator here writes it and checks it.
CORPUS_FILE = "secrets-corpus.json"
CORPUS_PATH = spec_dir() / CORPUS_FILE
# Examples written apart from the tuned corpus, in carriers it does not use (see _heldout.py).
HELDOUT_PATH = Path(__file__).resolve().parent / "heldout.json"
# The length of a substring that counts as a leak: long enough that chance matches are negligible.
LEAK_WINDOW = 8


@dataclass(frozen=True)
class Secret:
    """A synthetic secret: `secret` occurs exactly once in `context`, the text planted in a journal."""

    id: str
    kind: str  # the format, named after the source rule it follows
    rule: (
        str  # the first source rule: "gitleaks:<rule id>", "detect-secrets:<plugin>" or "pimem-spec:<family>"
    )
    redaction_class: str  # the class of the spec's `[REDACTED:<class>]` marker expected here
    secret: str
    context: str
    carrier: str = "plain"
    rules: tuple[str, ...] = ()  # every source rule the kind covers
    classes: tuple[str, ...] = ()  # every marker class that names it rightly
    public_prefix: str = ""  # the literal start of its format, which is not secret

    def windows(self, width: int = LEAK_WINDOW) -> set[str]:
        """The windows of the secret that reach past its public prefix: finding any is a leak."""
        return windows(self.secret, width, skip=len(self.public_prefix))


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
    lookalikes: tuple[Lookalike, ...]  # near-misses: must come back unchanged
    placeholders: tuple[Lookalike, ...] = ()  # stand-ins for secrets: masking them is allowed


def _lookalike(item: dict[str, str]) -> Lookalike:
    return Lookalike(id=item["id"], kind=item["kind"], value=item["value"], context=item["context"])


def load(path: Path = CORPUS_PATH) -> Corpus:
    """Read the committed corpus (or another one the generator wrote)."""
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
                carrier=item.get("carrier", "plain"),
                rules=tuple(item.get("rules", [item["rule"]])),
                classes=tuple(item.get("classes", [item["class"]])),
                public_prefix=item.get("public_prefix", ""),
            )
            for item in data["secrets"]
        ),
        lookalikes=tuple(_lookalike(item) for item in data["lookalikes"]),
        placeholders=tuple(_lookalike(item) for item in data.get("placeholders", [])),
    )


def windows(secret: str, width: int = LEAK_WINDOW, skip: int = 0) -> set[str]:
    """Every substring of `width` characters (but those within the first `skip`): finding any of
    them outside the secret is a leak."""
    return {
        secret[start : start + width]
        for start in range(max(1, len(secret) - width + 1))
        if start + width > skip or len(secret) <= width
    }
