"""`python -m pimem_conformance.secrets_corpus [--write | --check | --out FILE] [--seed S]`:
regenerate or verify corpus.json, or write the corpus of another seed (`--seed holdout`) elsewhere."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pimem_conformance.secrets_corpus import CORPUS_PATH
from pimem_conformance.secrets_corpus._generate import CORPUS_SEED, HOLDOUT_SEED, generate

_SEEDS = {"committed": CORPUS_SEED, "holdout": HOLDOUT_SEED}


def render(seed: int = CORPUS_SEED) -> str:
    return json.dumps(generate(seed), ensure_ascii=False, indent=1) + "\n"


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
    mode.add_argument("--write", action="store_true", help=f"regenerate {CORPUS_PATH.name}")
    mode.add_argument(
        "--check", action="store_true", help=f"fail if {CORPUS_PATH.name} differs from the generator"
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
    expected = render()
    if options.write:
        CORPUS_PATH.write_text(expected, encoding="utf-8")
        return 0
    if CORPUS_PATH.read_text(encoding="utf-8") != expected:
        print(f"{CORPUS_PATH} differs from the generator; run with --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
