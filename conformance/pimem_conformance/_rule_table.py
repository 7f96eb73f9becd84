"""The redaction rule table (`spec/redaction-rules.json`): its checks and the document written from it.

The table is the source of truth for rule IDs, their order, formats and examples. The lint checks:

- the table validates under `schemas/redaction-rules.schema.json`, its IDs are unique, every
  rule's family is one of `families`, and every pattern is in the portable dialect;
- every example is consistent: its secret occurs once in its text, has a length the format allows,
  is what the rule's pattern takes there (or, for a vendor-name rule, its value pattern matches it
  whole after a key name), and no rule before it in the table takes any of it by its pattern (or
  the marker would name that rule);
- `redaction-rules.md` is what `render_rules_doc` writes (`pimem-conformance lint --write`);
- every rule ID the family table of `redaction.md` names is in the table, in that row's family,
  and every family has its row;
- every rule ID a live case expects (`[REDACTED:<id>]` in what a step expects, less the names of
  the case's own `redact_patterns`) and every class of the secrets corpus is in the table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped]  # no stubs in the deps

from pimem_conformance._cases import Case
from pimem_conformance._expect import json_objects
from pimem_conformance._portable_regex import portable_problem

__all__ = [
    "CORPUS_FILE",
    "RULES_DOC",
    "RULES_FILE",
    "check_rule_table",
    "expected_markers",
    "load_table",
    "render_rules_doc",
    "write_rules_doc",
]

RULES_FILE = "redaction-rules.json"
RULES_DOC = "redaction-rules.md"
CORPUS_FILE = "secrets-corpus.json"
_SCHEMA = "schemas/redaction-rules.schema.json"
_MARKER = re.compile(r"\[REDACTED:([a-z0-9][a-z0-9-]*)\]")
_FAMILY_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*((?:[^|\\]|\\.)*?)\s*\|")
_CODE = re.compile(r"`([^`]+)`")


def load_table(spec: Path) -> dict[str, Any] | None:
    path = spec / RULES_FILE
    if not path.is_file():
        return None
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _flags(rule: dict[str, Any]) -> int:
    return re.IGNORECASE if rule.get("case_insensitive") else 0


_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPE_BEFORE = re.compile(r"(?:\\[bfnrt\"\\/]|\\u[0-9A-Fa-f]{4})$")


def _starts_token(text: str, start: int) -> bool:
    """The table's token_start: at the start, after a character that is no token character, or
    right after a JSON escape."""
    return start == 0 or text[start - 1] not in _TOKEN_CHARS or bool(_ESCAPE_BEFORE.search(text[:start]))


def _taken(rule: dict[str, Any], pattern: str, text: str) -> Iterator[tuple[int, int]]:
    """The spans a rule's pattern takes in `text`: its first group's, or the whole match's; a token
    rule's match must start a token (unless the rule says anywhere)."""
    compiled = re.compile(pattern, _flags(rule))
    starts = rule["kind"] == "token" and not rule.get("anywhere")
    position = 0
    while (match := compiled.search(text, position)) is not None:
        position = match.start() + 1
        if starts and not _starts_token(text, match.start()):
            continue
        span = match.span(1) if compiled.groups else match.span()
        if span[1] > span[0]:
            yield span


def _example_problems(rule: dict[str, Any], earlier: list[dict[str, Any]]) -> list[str]:
    where = f"{RULES_FILE}: rule {rule['id']}"
    text, secret = rule["example"]["text"], rule["example"]["secret"]
    if text.count(secret) != 1:
        return [f"{where}: its example's secret occurs {text.count(secret)} times in its text, not once"]
    start = text.index(secret)
    span = (start, start + len(secret))
    problems: list[str] = []
    length = rule["format"]["length"]
    if len(secret) < length["min"] or (length["max"] is not None and len(secret) > length["max"]):
        problems.append(
            f"{where}: its example's secret has {len(secret)} characters, outside its format's length"
        )
    flags = _flags(rule)
    if "pattern" in rule and span not in set(_taken(rule, rule["pattern"], text)):
        problems.append(f"{where}: its pattern does not take its example's secret from the example's text")
    if "value" in rule:
        if re.fullmatch(rule["value"], secret, flags) is None:
            problems.append(f"{where}: its value pattern does not match its example's secret")
        if re.search(rule["key_name"], text[:start], flags) is None:
            problems.append(f"{where}: no key name matching key_name stands before its example's secret")
    for other in earlier:
        if "pattern" not in other or other["id"] == rule["id"]:
            continue
        if any(a < span[1] and span[0] < b for a, b in _taken(other, other["pattern"], text)):
            problems.append(
                f"{where}: the earlier rule {other['id']} takes part of its example, so the marker would "
                f"name {other['id']}: move the rule before it or choose another example"
            )
    return problems


def _pattern_problems(rule: dict[str, Any]) -> list[str]:
    problems = []
    for key in ("pattern", "key_name", "value"):
        if key in rule and (problem := portable_problem(rule[key])) is not None:
            problems.append(
                f"{RULES_FILE}: rule {rule['id']}: its {key} is not in the portable dialect: {problem}"
            )
    return problems


def _family_rows(spec: Path) -> dict[str, list[str]]:
    """The family table of redaction.md: family -> the rule IDs its `rules` column names."""
    document = spec / "redaction.md"
    rows: dict[str, list[str]] = {}
    if not document.is_file():
        return rows
    lines = document.read_text(encoding="utf-8").splitlines()
    inside = False
    for line in lines:
        if line.startswith("| family |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        row = _FAMILY_ROW.match(line) if inside else None
        if row is None or set(row.group(1)) <= set("-: "):
            continue
        family = re.sub(r"\s*\(.*\)$", "", row.group(1))
        rows[family] = _CODE.findall(row.group(2))
    return rows


def _user_names(value: Any) -> Iterator[str]:
    """The names of the user's own patterns a case sets (`{"name": ..., "pattern": ...}` items)."""
    for item in json_objects(value):
        if isinstance(item.get("name"), str) and "pattern" in item:
            yield item["name"]


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "excludes_text":  # what must not appear names no rule a case expects
                yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def expected_markers(case: Case) -> set[str]:
    """The rule IDs a case expects to see in a marker, less its own user patterns' names."""
    found = {
        marker.group(1)
        for step in case.steps
        for text in _strings(step.get("expect", {}))
        for marker in _MARKER.finditer(text)
    }
    return found - set(_user_names(case.raw))


def _markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{_markdown_cell(text)}{pad}{fence}"


def render_rules_doc(table: dict[str, Any]) -> str:
    """The per-rule document, written from the table (never by hand)."""
    lines = [
        "# Redaction rules",
        "",
        f"<!-- Generated from {RULES_FILE} by `pimem-conformance lint --write`; do not edit. -->",
        "",
        f"Every rule of [`{RULES_FILE}`]({RULES_FILE}), the normative rule table of",
        "[redaction.md](redaction.md), in its order. The order decides which rule a marker names: where",
        "the secrets of several rules overlap, one marker `[REDACTED:<id>]` covers them all and names the",
        "first of them in this list (JM-REDACT-003). Patterns are in the portable dialect (the part of",
        "regular-expression syntax Python's `re` and ECMAScript with the `u` flag read alike; see",
        "[`schemas/redaction-rules.schema.json`](schemas/redaction-rules.schema.json)). Every rule has a",
        "synthetic example in the table. Lengths count the code points a marker replaces, prefix included.",
        "",
        "## Terms the rules use",
        "",
        f"- **Token start.** {table['token_start']}",
        f"- **Assignment** (vendor-name rules). {table['assignment']}",
        f"- **Kept values.** {table['kept_values']}",
        f"- **Credential words.** {', '.join(f'`{word}`' for word in table['credential_words'])}. "
        f"{table['credential_word_rules']}",
        f"- **Qualifiers.** {', '.join(f'`{word}`' for word in table['qualifiers'])}. "
        f"{table['qualifier_rule']}",
        f"- **Looks generated.** {table['looks_generated']}",
        "",
        "## Rules",
        "",
        "| # | rule | family | kind | prefixes | alphabet | length | format and context |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for number, rule in enumerate(table["rules"], start=1):
        form = rule["format"]
        length = form["length"]
        span = (
            f"{length['min']}"
            if length["min"] == length["max"]
            else f"{length['min']} to {length['max'] or 'any'}"
        )
        shapes = []
        if "pattern" in rule:
            shapes.append(f"pattern {_code(rule['pattern'])}")
        if "key_name" in rule:
            shapes.append(f"key name {_code(rule['key_name'])}, value {_code(rule['value'])}")
        if rule.get("case_insensitive"):
            shapes.append("any case")
        shapes.append(_markdown_cell(form["context"]))
        prefixes = " ".join(_code(prefix) for prefix in form["prefixes"])
        lines.append(
            f"| {number} | `{rule['id']}` | {rule['family']} | {rule['kind']} | {prefixes} | "
            f"{_markdown_cell(form['alphabet'])} | {span} | {'; '.join(shapes)} |"
        )
    return "\n".join(lines) + "\n"


def write_rules_doc(spec: Path) -> bool:
    """Write redaction-rules.md from the table; False when there is no table."""
    table = load_table(spec)
    if table is None:
        return False
    (spec / RULES_DOC).write_text(render_rules_doc(table), encoding="utf-8")
    return True


def _check_table(spec: Path, table: dict[str, Any], problems: list[str]) -> None:
    schema_path = spec / _SCHEMA
    if schema_path.is_file():
        validator = Draft202012Validator(json.loads(schema_path.read_text(encoding="utf-8")))
        errors = sorted(validator.iter_errors(table), key=lambda error: list(error.absolute_path))
        problems += [f"{RULES_FILE}: {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20]]
        if errors:
            return
    seen: set[str] = set()
    earlier: list[dict[str, Any]] = []
    for rule in table["rules"]:
        if rule["id"] in seen:
            problems.append(f"{RULES_FILE}: rule {rule['id']} is listed twice (one entry per rule ID)")
        seen.add(rule["id"])
        if rule["family"] not in table["families"]:
            problems.append(f"{RULES_FILE}: rule {rule['id']}: family {rule['family']!r} is not in families")
        pattern_problems = _pattern_problems(rule)
        problems += pattern_problems
        if not pattern_problems:
            problems += _example_problems(rule, earlier)
            earlier.append(rule)
    document = spec / RULES_DOC
    if not document.is_file() or document.read_text(encoding="utf-8") != render_rules_doc(table):
        problems.append(f"{RULES_DOC} is not what {RULES_FILE} gives: run pimem-conformance lint --write")
    families = {rule["id"]: rule["family"] for rule in table["rules"]}
    rows = _family_rows(spec)
    for family, named in rows.items():
        if family not in table["families"]:
            problems.append(
                f"redaction.md: the family table's row {family!r} is not in {RULES_FILE}'s families"
            )
        for rule_id in named:
            if rule_id not in families:
                problems.append(f"redaction.md: the family table names {rule_id}, which {RULES_FILE} lacks")
            elif families[rule_id] != family:
                problems.append(
                    f"redaction.md: the family table names {rule_id} in {family!r}; "
                    f"{RULES_FILE} puts it in {families[rule_id]!r}"
                )
    for family in table["families"]:
        if rows and family not in rows:
            problems.append(f"redaction.md: the family table has no row for {family!r}")


def check_rule_table(spec: Path, cases: list[Case], problems: list[str]) -> None:
    """Check the table, its document, the family table and every rule ID a case or the corpus expects."""
    table = load_table(spec)
    if table is not None:
        _check_table(spec, table, problems)
    known = {rule.get("id") for rule in table.get("rules", [])} if table else set()
    for case in cases:
        if "withdrawn" in case.raw:
            continue
        for rule_id in sorted(expected_markers(case) - known):
            problems.append(
                f"case {case.id} expects [REDACTED:{rule_id}], but {RULES_FILE} has no rule {rule_id}"
            )
    corpus = spec / CORPUS_FILE
    if corpus.is_file():
        secrets = json.loads(corpus.read_text(encoding="utf-8"))["secrets"]
        expected = {name for item in secrets for name in [item["class"], *item.get("classes", [])]}
        for rule_id in sorted(expected - known):
            problems.append(
                f"{CORPUS_FILE} expects the class {rule_id}, but {RULES_FILE} has no rule {rule_id}"
            )
