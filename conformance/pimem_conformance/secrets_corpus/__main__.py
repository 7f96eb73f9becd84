"""`python -m pimem_conformance.secrets_corpus [--write | --check | --out FILE] [--seed S]`:
regenerate or verify spec/secrets-corpus.json and heldout.json, or write the corpus of another seed
(`--seed holdout`) elsewhere."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pimem_conformance.secrets_corpus import CORPUS_PATH, HELDOUT_PATH
from pimem_conformance.secrets_corpus._generate import CORPUS_SEED, HOLDOUT_SEED, generate
from pimem_conformance.secrets_corpus._heldout import generate_heldout

_SEEDS = {"committed": CORPUS_SEED, "holdout": HOLDOUT_SEED}


def render(seed: int = CORPUS_SEED) -> str:
    return _dump(generate(seed))


def render_heldout() -> str:
    return _dump(generate_heldout())


def _dump(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def _seed(text: str) -> int:
    if text in _SEEDS:
        return _SEEDS[text]
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected committed, holdout or a number, e.g. 7"
        ) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pimem_conformance.secrets_corpus", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument(
        "--write", action="store_true", help=f"regenerate {CORPUS_PATH.name} and {HELDOUT_PATH.name}"
    )
    mode.add_argument(
        "--check",
        action="store_true",
        help=f"fail if {CORPUS_PATH.name} or {HELDOUT_PATH.name} differs from its generator",
    )
    mode.add_argument("--out", type=Path, help="write the corpus of --seed to this file")
    parser.add_argument(
        "--seed", type=_seed, default=CORPUS_SEED, help="committed (default), holdout, or a number"
    )
    options = parser.parse_args(argv)
    if options.out is not None:
        options.out.write_text(render(options.seed), encoding="utf-8")
        return 0
    if options.seed != CORPUS_SEED:
        parser.error("--write and --check are for the committed seed; use --out for another")
    stale = 0
    for path, expected in ((CORPUS_PATH, render()), (HELDOUT_PATH, render_heldout())):
        if options.write:
            path.write_text(expected, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != expected:
            print(f"{path} differs from the generator; run with --write", file=sys.stderr)
            stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main())
