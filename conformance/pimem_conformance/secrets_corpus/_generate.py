"""Deterministic generator of the labeled secrets corpus (`spec/secrets-corpus.json`).

Every secret is synthetic: random characters from a seeded generator, shaped like a published format
(see _kinds.py). Each kind gets SECRETS_PER_KIND secrets, each planted in CARRIERS_PER_SECRET
carriers (see _carriers.py), the JSON-escaped one always among them; the others are the carriers
the kind can sit in that are used least so far, so every carrier is used by many kinds. The corpus
is generated from two seeds: CORPUS_SEED is committed (and what the redactor was tuned on),
HOLDOUT_SEED gives the same kinds with other values and lines, to check recall on examples nobody
tuned against (`python -m pimem_conformance.secrets_corpus --seed holdout --out FILE`).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from ._carriers import carriers_for, plant
from ._kinds import KINDS
from ._lookalikes import NEAR_MISS_KINDS, PLACEHOLDER_KINDS

__all__ = ["CARRIERS_PER_SECRET", "CORPUS_SEED", "HOLDOUT_SEED", "SECRETS_PER_KIND", "generate"]

CORPUS_SEED = 20261129
HOLDOUT_SEED = 20261201
SECRETS_PER_KIND = 3
CARRIERS_PER_SECRET = 3
PER_NEAR_MISS_KIND = 24
PER_PLACEHOLDER_KIND = 40
_VERSION = 2


def _secrets(rng: random.Random) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    used: Counter[str] = Counter()  # carrier -> kinds planted in it
    values: set[str] = set()
    for kind in KINDS:
        options = carriers_for(kind)
        chosen_for_kind: set[str] = set()
        for _ in range(SECRETS_PER_KIND):
            secret = kind.make(rng)
            while secret in values:
                secret = kind.make(rng)
            values.add(secret)
            others = sorted(options[1:], key=lambda name: (name in chosen_for_kind, used[name], rng.random()))
            for carrier in [options[0], *others[: CARRIERS_PER_SECRET - 1]]:
                planted = plant(rng, kind, secret, carrier)
                if planted is None or planted[1].count(planted[0]) != 1:
                    raise ValueError(f"{kind.id} cannot be planted in {carrier}: {planted!r}")
                if carrier not in chosen_for_kind:
                    chosen_for_kind.add(carrier)
                    used[carrier] += 1
                items.append(
                    {
                        "id": f"secret-{len(items) + 1:04d}",
                        "kind": kind.id,
                        "rule": kind.sources[0],
                        "rules": list(kind.sources),
                        "class": kind.marker,
                        "classes": list(kind.classes),
                        "public_prefix": max(
                            (prefix for prefix in kind.prefixes if planted[0].startswith(prefix)),
                            key=len,
                            default="",
                        ),
                        "carrier": carrier,
                        "secret": planted[0],
                        "context": planted[1],
                    }
                )
    return items


def draw_lookalikes(
    rng: random.Random,
    makers: dict[str, Callable[[random.Random], tuple[str, str]]],
    per_kind: int,
    prefix: str,
    tries_per_item: int = 50,
) -> list[dict[str, Any]]:
    """Up to `per_kind` distinct lines from each maker, in at most per_kind x tries_per_item draws."""
    items: list[dict[str, Any]] = []
    for kind, make in makers.items():
        seen: set[str] = set()
        attempts = 0
        while len(seen) < per_kind and attempts < per_kind * tries_per_item:
            attempts += 1
            value, context = make(rng)
            if context in seen or context.count(value) != 1:
                continue  # each line once per kind, and the value unambiguous inside it
            seen.add(context)
            items.append(
                {"id": f"{prefix}-{len(items) + 1:04d}", "kind": kind, "value": value, "context": context}
            )
    return items


def generate(seed: int = CORPUS_SEED) -> dict[str, Any]:
    """The whole corpus as JSON-ready data; the same seed always gives the same bytes."""
    rng = random.Random(seed)
    return {
        "version": _VERSION,
        "seed": seed,
        "about": (
            "Synthetic secrets (none real) shaped like published formats (gitleaks' default rules, "
            "detect-secrets 1.5.0 plugins, the spec's families), each planted in several carriers; "
            "benign near-misses that must come back unchanged; placeholders, which may be masked. "
            "`secret`/`value` occurs exactly once in `context`; `class` is the marker's class. "
            "Regenerate with: python -m pimem_conformance.secrets_corpus --write"
        ),
        "secrets": _secrets(rng),
        "lookalikes": draw_lookalikes(rng, NEAR_MISS_KINDS, PER_NEAR_MISS_KIND, "benign"),
        "placeholders": draw_lookalikes(rng, PLACEHOLDER_KINDS, PER_PLACEHOLDER_KIND, "placeholder"),
    }
