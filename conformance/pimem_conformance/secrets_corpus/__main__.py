"""`python -m pimem_conformance.secrets_corpus [--write | --check]`: regenerate or verify corpus.json."""

from __future__ import annotations

import argparse
import json
import sys

from pimem_conformance.secrets_corpus import CORPUS_PATH
from pimem_conformance.secrets_corpus._generate import generate


def render() -> str:
    return json.dumps(generate(), ensure_ascii=False, indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pimem_conformance.secrets_corpus", description=__doc__)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help=f"regenerate {CORPUS_PATH.name}")
    mode.add_argument(
        "--check", action="store_true", help=f"fail if {CORPUS_PATH.name} differs from the generator"
    )
    options = parser.parse_args(argv)
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
