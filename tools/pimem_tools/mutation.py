"""Mutation testing of the reference against the conformance cases alone.

`python -m pimem_tools.mutation run [--per-module N] [--seed S] [--modules a,b] [--jobs J]`
enumerates the mutants of the core modules of `reference/pimem`, runs the conformance cases (every
scored case, no `reference/tests`) against each mutant, and writes `tools/mutation/results.json`
with the tree it measured. A mutant is *killed* when some case fails or errors, *survived* otherwise.

Each mutant is applied at import: a meta-path finder hands the interpreter the mutated source of
its module before anything imports it, so every `from ._x import name` binds the mutated code and
the suite cannot reach an unmutated copy (the trap of tools that copy the tree). The further
processes of a multi-process case serve `mutated_server`, which applies the same mutant. `check`
proves the set-up: a planted mutant that the suite must kill, killed through the same path, and
the unmutated module, which every case passes.

Speed: one traced run records which statements of the core modules each case executes (kept in
`.cache/mutation/` per reference tree). A mutant changes one statement, so only the cases that
execute it can kill it: each mutant runs those, fastest first, in a child forked from one warm
interpreter (cases and schemas loaded once). A mutant on a statement no case executes survives
without a run; one on a statement run at import (a constant, a default) runs every case. Caches
shared between cases make the trace miss a few executions, so the selection can only under-count
kills, never invent them.

The operator set is fixed:
- `compare`: a comparison flipped (`==`/`!=`, `<`/`>=`, `>`/`<=`, `in`/`not in`, `is`/`is not`);
- `boolean`: `True`/`False` swapped, and `not x` replaced by `x`;
- `boolop`: `and`/`or` swapped;
- `int`: an integer constant plus one and minus one (two mutants), except the arguments of a
  `functools.lru_cache(...)` decorator: a memo's size, which no answer of the pure function it
  memoizes can show (every memoized function of the core modules is pure), so no case could ever
  kill it and calling each one equivalent would only spend the cap below;
- `statement`: a statement that is a call removed (replaced by `pass`);
- `return`: a returned value replaced by `None`.

Equivalent mutants: `tools/mutation/equivalent.json` lists the mutants called equivalent, each with
a one-line reason: `equivalent` (no input through the protocol tells it apart) or
`implementation-defined` with the item of spec/README.md's list that frees the behaviour it
changes. An entry names its mutant by module, enclosing function, stripped source line, operator,
change and occurrence on that line (`show module:index` prints them), never by its index, which
shifts with every edit above it. At most `EQUIVALENT_CAP` (10 %) of all the core modules' mutants
may be listed, both kinds together. A run does not run the listed ones, reports them apart, and
gives each module's kill rate twice: raw (killed / sampled) and over the non-equivalent mutants
(killed / (sampled - equivalent)), and lists the modules that reach `KILL_TARGET` over the latter.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "CORE_MODULES",
    "EQUIVALENT",
    "EQUIVALENT_CAP",
    "KINDS",
    "OPERATORS",
    "PLANTED_KILLER",
    "Equivalent",
    "Mutant",
    "apply",
    "check",
    "equivalent_mutants",
    "forked_verdicts",
    "load_equivalents",
    "mutants",
    "planted_source",
    "run_mutant",
]

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "reference" / "pimem"
RESULTS = REPO / "tools" / "mutation" / "results.json"
EQUIVALENT = REPO / "tools" / "mutation" / "equivalent.json"
EQUIVALENT_CAP = 0.10  # at most this share of all the core modules' mutants may be called equivalent
KILL_TARGET = 0.95  # the kill rate over the non-equivalent mutants every core module must reach
KINDS = ("equivalent", "implementation-defined")
CORE_MODULES = (
    "_scope",
    "_query",
    "_terms",
    "_journals",
    "_extract",
    "_redact",
    "_prepare",
    "_index",
    "_store",
)
OPERATORS = ("compare", "boolean", "boolop", "int", "statement", "return")
_FLIPPED: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
# The mutant the set-up check plants: the tool's largest limit of 50 becomes 51 (the case
# search-limit-invalid-over-fifty kills it).
PLANTED = ("_tool", '"limit": _Bounds(1, 50, 10)', '"limit": _Bounds(1, 51, 10)')
PLANTED_KILLER = "search-limit-invalid-over-fifty"


@dataclass(frozen=True)
class Mutant:
    module: str  # "_query"
    index: int  # the n-th mutation site of the module, in walk order (shifts with edits)
    operator: str
    line: int
    description: str
    text: str = ""  # the source line it changes, stripped
    where: str = ""  # the qualified name of the function or class holding it ("" at module level)
    occurrence: int = 0  # among the mutants with the same line, operator and change, the n-th

    @property
    def name(self) -> str:
        return f"{self.module}:{self.index}"

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        """What names the mutant across edits elsewhere in its module (the equivalents' key)."""
        return (self.module, self.where, self.text, self.operator, self.description, self.occurrence)


def _returns_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _memo_sizes(tree: ast.AST) -> set[int]:
    """The ids of the constants in a `functools.lru_cache(...)` decorator: a memo's size, which no
    answer of the pure function it memoizes can show (left out of the `int` operator)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for decorator in node.decorator_list:
                called = decorator.func if isinstance(decorator, ast.Call) else None
                name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
                if name == "lru_cache":
                    skipped |= {id(inner) for inner in ast.walk(decorator) if isinstance(inner, ast.Constant)}
    return skipped


def _sites(tree: ast.AST) -> Iterator[tuple[ast.AST, str, int, str]]:
    """(node, operator, variant, description) of every mutation, in a stable walk order."""
    memo_sizes = _memo_sizes(tree)
    for node in ast.walk(tree):
        if id(node) in memo_sizes:
            continue
        if isinstance(node, ast.Compare):
            for number, op in enumerate(node.ops):
                if type(op) in _FLIPPED:
                    yield node, "compare", number, f"{type(op).__name__} -> {_FLIPPED[type(op)].__name__}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            yield node, "boolean", 0, f"{node.value} -> {not node.value}"
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            yield node, "int", 1, f"{node.value} -> {node.value + 1}"
            yield node, "int", -1, f"{node.value} -> {node.value - 1}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "boolean", 1, "not x -> x"
        elif isinstance(node, ast.BoolOp):
            yield (
                node,
                "boolop",
                0,
                f"{type(node.op).__name__} -> {'Or' if isinstance(node.op, ast.And) else 'And'}",
            )
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            yield node, "statement", 0, "call statement removed"
        elif isinstance(node, ast.Return) and node.value is not None and not _returns_none(node.value):
            yield node, "return", 0, "return value -> None"


@dataclass(frozen=True)
class Equivalent:
    """A mutant called equivalent, with its reason: one entry of `tools/mutation/equivalent.json`."""

    module: str
    where: str
    line: str
    operator: str
    change: str
    kind: str  # "equivalent": no input tells it apart; "implementation-defined": the README frees it
    reason: str
    readme_item: int | None
    occurrence: int = 0

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.module, self.where, self.line, self.operator, self.change, self.occurrence)

    def describe(self) -> dict[str, Any]:
        found: dict[str, Any] = {"kind": self.kind, "reason": self.reason}
        if self.readme_item is not None:
            found["readme_item"] = self.readme_item
        return found


_ENTRY_KEYS = {"module", "in", "line", "operator", "change", "occurrence", "kind", "reason", "readme_item"}


def load_equivalents(path: Path = EQUIVALENT) -> list[Equivalent]:
    """The registry of equivalent mutants, checked: each entry names a core module, an operator, a
    kind, a one-line reason, and for an implementation-defined one the spec README's item."""
    from pimem_conformance import implementation_defined_items, spec_dir

    if not path.is_file():
        return []
    items = implementation_defined_items(spec_dir())
    found: list[Equivalent] = []
    for number, raw in enumerate(json.loads(path.read_text(encoding="utf-8"))["mutants"]):
        where = f"{path.name} entry {number}"
        if not isinstance(raw, dict) or set(raw) - _ENTRY_KEYS:
            raise ValueError(f"{where}: an object with keys among {sorted(_ENTRY_KEYS)}, got {raw!r}")
        if raw.get("module") not in CORE_MODULES or raw.get("operator") not in OPERATORS:
            raise ValueError(f"{where}: module one of {CORE_MODULES}, operator one of {OPERATORS}")
        if raw.get("kind") not in KINDS:
            raise ValueError(f'{where}: kind is one of {KINDS}, e.g. "kind": "equivalent"')
        reason = raw.get("reason")
        if not isinstance(reason, str) or not reason.strip() or "\n" in reason:
            raise ValueError(
                f'{where}: a one-line reason, e.g. "any positive chunk size reads the same lines"'
            )
        item = raw.get("readme_item")
        if (raw["kind"] == "implementation-defined") != (item is not None) or (
            item is not None and item not in items
        ):
            raise ValueError(
                f"{where}: an implementation-defined mutant names its item of spec/README.md's "
                f"implementation-defined list ({', '.join(map(str, sorted(items)))}) in readme_item; "
                "an equivalent one names none"
            )
        for text in ("in", "line", "change"):
            if not isinstance(raw.get(text, ""), str):
                raise ValueError(f"{where}: {text} is a string")
        occurrence = raw.get("occurrence", 0)
        if type(occurrence) is not int or occurrence < 0:
            raise ValueError(f"{where}: occurrence is a count from 0, as `show` prints it")
        found.append(
            Equivalent(
                raw["module"],
                raw.get("in", ""),
                raw["line"],
                raw["operator"],
                raw["change"],
                raw["kind"],
                reason,
                item,
                occurrence,
            )
        )
    return found


def equivalent_mutants(entries: Sequence[Equivalent]) -> dict[str, Any]:
    """Which mutants of today's core modules the registry calls equivalent, its share of the whole
    population against the cap, and the entries that name no mutant any more (stale)."""
    by_key = {entry.key: entry for entry in entries}
    population = {module: mutants(module) for module in CORE_MODULES}
    matched = {key: 0 for key in by_key}
    per_module: dict[str, dict[str, int]] = {}
    for module, found in population.items():
        called = 0
        for mutant in found:
            if mutant.key in by_key:
                matched[mutant.key] += 1
                called += 1
        per_module[module] = {"mutants": len(found), "equivalent": called}
    total = sum(figures["mutants"] for figures in per_module.values())
    called_all = sum(figures["equivalent"] for figures in per_module.values())
    return {
        "entries": len(entries),
        "population": total,
        "equivalent": called_all,
        "share": round(called_all / total, 4) if total else 0.0,
        "cap": EQUIVALENT_CAP,
        "modules": per_module,
        "stale": [list(key) for key, count in matched.items() if count == 0],
    }


def _source(module: str) -> str:
    return (PACKAGE / f"{module}.py").read_text(encoding="utf-8")


def _holders(tree: ast.AST) -> dict[int, str]:
    """For each node's id, the qualified name of the innermost function or class holding it."""
    holders: dict[int, str] = {}

    def visit(node: ast.AST, where: str) -> None:
        holders[id(node)] = where
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            where = f"{where}.{node.name}" if where else node.name
        for child in ast.iter_child_nodes(node):
            visit(child, where)

    visit(tree, "")
    return holders


def mutants(module: str) -> list[Mutant]:
    source = _source(module)
    tree = ast.parse(source)
    lines, holders = source.splitlines(), _holders(tree)
    found: list[Mutant] = []
    seen: dict[tuple[str, ...], int] = {}
    for number, (node, operator, _variant, description) in enumerate(_sites(tree)):
        line = getattr(node, "lineno", 0)
        text = lines[line - 1].strip() if line else ""
        same = (holders[id(node)], text, operator, description)
        seen[same] = occurrence = seen.get(same, -1) + 1
        found.append(Mutant(module, number, operator, line, description, text, holders[id(node)], occurrence))
    return found


class _Mutate(ast.NodeTransformer):
    def __init__(self, target: ast.AST, operator: str, variant: int) -> None:
        self.target, self.operator, self.variant = target, operator, variant

    def visit(self, node: ast.AST) -> Any:
        if node is not self.target:
            return self.generic_visit(node)
        if isinstance(node, ast.Compare):
            ops = list(node.ops)
            ops[self.variant] = _FLIPPED[type(ops[self.variant])]()
            return ast.copy_location(ast.Compare(node.left, ops, node.comparators), node)
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return ast.copy_location(ast.Constant(not node.value), node)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return ast.copy_location(ast.Constant(node.value + self.variant), node)
        if isinstance(node, ast.UnaryOp):
            return node.operand
        if isinstance(node, ast.BoolOp):
            flipped = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            return ast.copy_location(ast.BoolOp(flipped, node.values), node)
        if isinstance(node, ast.Expr):
            return ast.copy_location(ast.Pass(), node)
        if isinstance(node, ast.Return):
            return ast.copy_location(ast.Return(ast.Constant(None)), node)
        raise AssertionError(f"no mutation for {ast.dump(node)[:80]}")


def apply(mutant: Mutant) -> str:
    """The mutated source of the mutant's module."""
    tree = ast.parse(_source(mutant.module))
    node, operator, variant, _ = list(_sites(tree))[mutant.index]
    mutated = ast.fix_missing_locations(_Mutate(node, operator, variant).visit(tree))
    return ast.unparse(mutated)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `pimem.<module>` from the given source instead of the file."""

    def __init__(self, fullname: str, source: str) -> None:
        self.fullname, self.source = fullname, source

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != self.fullname:
            return None
        origin = str(PACKAGE / f"{fullname.rsplit('.', 1)[1]}.py")
        return importlib.util.spec_from_loader(fullname, self, origin=origin)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        module.__file__ = str(PACKAGE / f"{self.fullname.rsplit('.', 1)[1]}.py")
        exec(compile(self.source, module.__file__, "exec"), module.__dict__)


# A case may take this long against a mutant (floor + factor x its unmutated time) before the mutant
# counts as killed by a timeout: loose enough for a loaded machine, tight enough that a mutant that
# loops forever costs seconds.
_CASE_LIMIT_FLOOR, _CASE_LIMIT_FACTOR = 20.0, 10.0

# The peer processes of a multi-process case are `python -m pimem_conformance.host` subprocesses;
# they serve `mutated_server`, which applies the mutant this variable names before the reference
# is imported, so every process of the case runs the same mutant.
_MUTANT_ENV = "PIMEM_MUTANT"  # "<module>:<file holding the mutated source>"
_PEER = "pimem_tools.mutation:mutated_server"


def mutated_server() -> Any:
    """A protocol server over the mutant `PIMEM_MUTANT` names (the unmutated one without it)."""
    named = os.environ.get(_MUTANT_ENV, "")
    if named and not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        module, _, path = named.partition(":")
        sys.meta_path.insert(0, _Finder(f"pimem.{module}", Path(path).read_text(encoding="utf-8")))
    from pimem._serve import ProtocolServer

    return ProtocolServer()


@contextlib.contextmanager
def _mutant_installed(module: str, source: str) -> Iterator[None]:
    """The mutant served to this process's imports and to the peers it starts."""
    sys.meta_path.insert(0, _Finder(f"pimem.{module}", source))
    with tempfile.TemporaryDirectory(prefix="pimem-mutant-") as folder:
        path = Path(folder) / f"{module}.py"
        path.write_text(source, encoding="utf-8")
        os.environ[_MUTANT_ENV] = f"{module}:{path}"
        try:
            yield
        finally:
            del os.environ[_MUTANT_ENV]


def _cases() -> list[Any]:
    """Every case a mutant is measured on: the cases still scored (withdrawn cases are history),
    multi-process ones too (their peers run the mutant as well)."""
    from pimem_conformance import load_cases, scored

    return [case for case in load_cases() if scored(case, None)]


class _CaseTimedOut(BaseException):
    """A case ran far longer than unmutated (a BaseException: no handler of the reference swallows it)."""


def _raise_timed_out(signum: int, frame: Any) -> None:
    raise _CaseTimedOut


def _run_cases_here(cases: Sequence[Any], limits: dict[str, float] | None = None) -> tuple[bool, str]:
    """(killed, the first failing case) over `cases`, stopping at the first failure. With `limits`
    (case id -> seconds), a case still running after its limit kills the mutant (a loop that never
    ends is caught in seconds, not at the whole run's deadline)."""
    from pimem._serve import ProtocolServer
    from pimem_conformance import Adapter, InProcessConnector, load_schemas, run_case

    schemas = load_schemas()
    adapter = Adapter(InProcessConnector(ProtocolServer, target=_PEER), schemas)
    if limits:
        signal.signal(signal.SIGALRM, _raise_timed_out)
    try:
        adapter.start()
        for case in cases:
            if limits:
                signal.setitimer(signal.ITIMER_REAL, limits.get(case.id, _CASE_LIMIT_FLOOR))
            try:
                outcome = run_case(adapter, case, schemas).outcome
            except _CaseTimedOut:
                return True, f"{case.id} (timed out)"
            finally:
                if limits:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            if outcome != "pass":
                return True, f"{case.id} ({outcome})"
    except Exception as error:  # a mutant that breaks the adapter itself is killed too
        return True, f"adapter broke: {type(error).__name__}"
    finally:
        with contextlib.suppress(Exception):  # the mutant may have broken stop; the verdict stands
            adapter.stop()
    return False, ""


def _worker(module: str, source: str, only: Sequence[str] = ()) -> int:
    with _mutant_installed(module, source):
        killed, by = _run_cases_here([case for case in _cases() if not only or case.id in only])
    print(json.dumps({"killed": killed, "by": by}))
    return 0


def run_mutant(module: str, source: str, timeout: float = 180, cases: Sequence[str] = ()) -> dict[str, Any]:
    """Run every case (or these) against `module` replaced by `source`, in a fresh interpreter
    (the set-up check's path: nothing of the run's own machinery is trusted)."""
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [sys.executable, "-m", "pimem_tools.mutation", "worker", module, *cases]
    try:
        done = subprocess.run(
            command, input=source, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {"killed": True, "by": "timeout"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:  # the mutant does not even import: the suite's very first request fails
        return {"killed": True, "by": f"no verdict (exit {done.returncode})"}
    verdict: dict[str, Any] = json.loads(lines[-1])
    return verdict


# -- which cases can kill a mutant ----------------------------------------------------------------
#
# A mutation changes one statement, so a case that never executes that statement gives the same
# answers as against the unmutated reference: it cannot kill the mutant. One traced run of every
# case records which statements of the core modules each case executes; a mutant is then run only
# against the cases that execute its statement, fastest first. A statement executed only at import
# (a module constant, a default argument, a class body) is reached by every case.

_IMPORT = "(import)"


def statement_starts(source: str) -> dict[int, int]:
    """For each line of `source`, the first line of the innermost statement spanning it: a trace
    records the line that ran (a condition's second line), a mutant names its statement's first."""
    starts: dict[int, int] = {}

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.stmt):  # before its children, which hold statements of their own
            decorators = getattr(node, "decorator_list", [])  # above a def's own first line
            first = min([node.lineno, *(decorator.lineno for decorator in decorators)])
            starts.update(dict.fromkeys(range(first, (node.end_lineno or node.lineno) + 1), node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return starts


def statement_of(mutant: Mutant) -> int:
    """The first line of the statement a mutant changes."""
    return statement_starts(_source(mutant.module))[mutant.line]


@dataclass(frozen=True)
class Coverage:
    """Which cases execute each statement of the core modules, and how long each case took."""

    tree: str  # the reference tree it was traced on
    lines: dict[str, dict[int, list[str]]]  # module -> statement line -> case ids
    seconds: dict[str, float]  # case id -> seconds, unmutated

    def cases_for(self, mutant: Mutant, line: int) -> list[str] | None:
        """The ids of the cases that can kill the mutant, fastest first; None: every case."""
        executed = self.lines.get(mutant.module, {}).get(line)
        if executed is None:
            return []  # no case executes it: it survives unless it is reached at import
        if _IMPORT in executed:
            return None
        return sorted(executed, key=lambda case_id: self.seconds.get(case_id, 0.0))


def _trace_cases() -> Coverage:
    import coverage

    files = {str(PACKAGE / f"{module}.py"): module for module in CORE_MODULES}
    tracer = coverage.Coverage(data_file=None, config_file=False, include=list(files), concurrency=["thread"])
    tracer.start()
    tracer.switch_context(_IMPORT)
    from pimem._serve import ProtocolServer
    from pimem_conformance import Adapter, InProcessConnector, load_schemas, run_case

    schemas = load_schemas()
    adapter = Adapter(InProcessConnector(ProtocolServer, target=_PEER), schemas)
    adapter.start()
    seconds: dict[str, float] = {}
    try:
        for case in _cases():
            _forget_memos()
            tracer.switch_context(case.id)
            started = time.perf_counter()
            outcome = run_case(adapter, case, schemas).outcome
            seconds[case.id] = round(time.perf_counter() - started, 4)
            if outcome != "pass":
                raise SystemExit(f"the unmutated reference does not pass {case.id} ({outcome})")
    finally:
        adapter.stop()
        tracer.stop()
    data = tracer.get_data()
    data.set_query_contexts(None)
    lines: dict[str, dict[int, list[str]]] = {}
    for path in data.measured_files():
        module = files.get(str(Path(path).resolve()))
        if module is not None:
            starts = statement_starts(_source(module))
            by_statement: dict[int, set[str]] = {}
            for line, contexts in data.contexts_by_lineno(path).items():
                by_statement.setdefault(starts.get(line, line), set()).update(contexts)
            lines[module] = {line: sorted(contexts) for line, contexts in by_statement.items()}
    return Coverage(_git("rev-parse", "HEAD:reference"), lines, seconds)


def _forget_memos() -> None:
    """Empty the reference's module-level memos, so that each case's trace holds the lines of every
    memoized function it calls: a value kept from an earlier case would run no line, and a mutant
    of that function would never meet this case."""
    from pimem._memo import PureMemo

    for name, module in list(sys.modules.items()):
        if name != "pimem" and not name.startswith("pimem."):
            continue
        for value in vars(module).values():
            if isinstance(value, PureMemo):
                value.clear()
            elif callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


_TRACE_FORM = b"by statement, memos emptied before each case"  # a change here traces anew


def _coverage_file(tree: str) -> Path:
    """The trace's file: traced anew for another reference tree, module set or set of cases."""
    traced = hashlib.sha256(",".join(CORE_MODULES).encode() + _TRACE_FORM)
    for path in sorted((REPO / "spec" / "cases").glob("*.json")):
        traced.update(path.read_bytes())
    return REPO / ".cache" / "mutation" / f"coverage-{tree[:12]}-{traced.hexdigest()[:12]}.json"


def _read_trace(path: Path) -> Coverage:
    raw = json.loads(path.read_text(encoding="utf-8"))
    lines = {module: {int(k): v for k, v in by.items()} for module, by in raw["lines"].items()}
    return Coverage(raw["tree"], lines, raw["seconds"])


def load_coverage() -> Coverage:
    """The trace of today's reference tree and cases, traced once and kept in `.cache/mutation/`
    (traced again whenever `reference/` has uncommitted changes)."""
    path = _coverage_file(_git("rev-parse", "HEAD:reference"))
    if _git("status", "--porcelain", "--", "reference") == "" and path.is_file():
        return _read_trace(path)
    # traced in an interpreter of its own: the mutants are forked from this one, which must not
    # have the reference imported nor the trace's threads running
    path.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pimem_tools.mutation", "trace", str(path)]
    subprocess.run(command, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    return _read_trace(path)


def _write_trace(path: Path) -> None:
    found = _trace_cases()
    raw = {"tree": found.tree, "lines": found.lines, "seconds": found.seconds}
    path.write_text(json.dumps(raw), encoding="utf-8")


# -- running mutants: forked from one warm interpreter ---------------------------------------------


@dataclass(frozen=True)
class _Task:
    mutant: Mutant
    source: str
    case_ids: list[str] | None  # None: every case
    timeout: float
    limits: dict[str, float] | None = None  # case id -> seconds it may take


def _child(task: _Task, cases: dict[str, Any], write: int) -> None:
    """In a forked child: measure one mutant, write the verdict."""
    for loaded in [name for name in sys.modules if name == "pimem" or name.startswith("pimem.")]:
        del sys.modules[loaded]  # every module of the reference is imported again, over the mutant
    chosen = list(cases.values()) if task.case_ids is None else [cases[i] for i in task.case_ids]
    with _mutant_installed(task.mutant.module, task.source):
        try:
            killed, by = _run_cases_here(chosen, task.limits)
        except BaseException as error:  # whatever the mutant raised (SystemExit too) kills it
            killed, by = True, f"raised {type(error).__name__}"
    os.write(write, json.dumps({"killed": killed, "by": by}).encode())


def _forked(tasks: Sequence[_Task], jobs: int) -> Iterator[tuple[_Task, dict[str, Any]]]:
    """(task, verdict) for each task, `jobs` children at a time, each a fork of this process."""
    cases = {case.id: case for case in _cases()}  # loaded once, inherited by every child
    from pimem_conformance import load_schemas

    load_schemas()
    pending = list(reversed(tasks))
    running: dict[int, tuple[_Task, int, float]] = {}  # pid -> (task, read end, deadline)
    while pending or running:
        while pending and len(running) < jobs:
            task = pending.pop()
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                os.close(read)
                try:
                    _child(task, cases, write)
                finally:
                    os._exit(0)
            os.close(write)
            running[pid] = (task, read, time.monotonic() + task.timeout)
        pid, _status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for late, (task, read, deadline) in list(running.items()):
                if now > deadline:
                    os.kill(late, 9)
                    os.waitpid(late, 0)
                    os.close(read)
                    del running[late]
                    yield task, {"killed": True, "by": "timeout"}
            time.sleep(0.02)
            continue
        task, read, _ = running.pop(pid)
        with os.fdopen(read, "rb") as pipe:
            answer = pipe.read()
        yield task, json.loads(answer) if answer else {"killed": True, "by": "no verdict (the child died)"}


def planted_source() -> str:
    module, old, new = PLANTED
    source = _source(module)
    if old not in source:
        raise ValueError(f"the planted mutant needs {old!r} in pimem/{module}.py")
    return source.replace(old, new, 1)


def check(cases: Sequence[str] = ()) -> tuple[dict[str, Any], dict[str, Any]]:
    """The verdicts on the planted mutant (must be killed) and on the unmutated module (must
    survive), over every case or these."""
    planted = run_mutant(PLANTED[0], planted_source(), cases=cases)
    return planted, run_mutant(PLANTED[0], _source(PLANTED[0]), cases=cases)


def forked_verdicts(module: str, sources: Sequence[str], cases: Sequence[str]) -> list[dict[str, Any]]:
    """The verdicts of the run's own path (forked children, chosen cases) on these sources."""
    tasks = [
        _Task(Mutant(module, n, "planted", 0, ""), text, list(cases), 120) for n, text in enumerate(sources)
    ]
    found = {task.mutant.index: verdict for task, verdict in _forked(tasks, jobs=1)}
    return [found[n] for n in range(len(sources))]


def _git(*argv: str) -> str:
    return subprocess.run(["git", *argv], cwd=REPO, check=True, capture_output=True, text=True).stdout.strip()


def _sample(module: str, per_module: int | None, seed: int) -> list[Mutant]:
    every = mutants(module)
    if per_module is None or per_module >= len(every):
        return every
    return sorted(random.Random(f"{seed}:{module}").sample(every, per_module), key=lambda m: m.index)


def kills_kept_from(earlier: dict[str, Any], reference_tree: str) -> set[str]:
    """The mutants an earlier full run of this very reference tree killed, by name. A case added
    since can only kill more, so a rerun runs the rest: its survivors and the mutants it did not
    run because the registry called them equivalent then."""
    if earlier["sample"]["per_module"] is not None:
        raise SystemExit("a rerun starts from a full run, not a sample")
    if earlier["trees"]["reference"] != reference_tree:
        raise SystemExit(
            f"the earlier run measured reference tree {earlier['trees']['reference']}, today's is "
            f"{reference_tree}: its mutants are other code, run them all"
        )
    kept: set[str] = set()
    for module, figures in earlier["modules"].items():
        spared = {entry["mutant"] for entry in [*figures["survived"], *figures["equivalent"]]}
        kept.update(mutant.name for mutant in mutants(module) if mutant.name not in spared)
    return kept


def _rate(killed: int, of: int) -> float | None:
    return round(killed / of, 4) if of else None


def _named(mutant: Mutant) -> dict[str, Any]:
    return {
        "mutant": mutant.name,
        "operator": mutant.operator,
        "line": mutant.line,
        "in": mutant.where,
        "text": mutant.text,
        "description": mutant.description,
    }


def run(
    modules: Sequence[str],
    per_module: int | None,
    seed: int,
    output: Path,
    jobs: int = 1,
    rerun_of: Path | None = None,
) -> dict[str, Any]:
    started = time.time()
    earlier = None if rerun_of is None else json.loads(rerun_of.read_text(encoding="utf-8"))
    kept = set() if earlier is None else kills_kept_from(earlier, _git("rev-parse", "HEAD:reference"))
    planted, control = check()
    if not planted["killed"] or control["killed"]:
        raise SystemExit(f"the set-up is broken: planted {planted}, unmutated {control}")
    entries = load_equivalents()
    registry = equivalent_mutants(entries)
    if registry["share"] > EQUIVALENT_CAP:
        raise SystemExit(
            f"{registry['equivalent']} mutants called equivalent: over the {EQUIVALENT_CAP:.0%} cap"
        )
    called = {entry.key: entry for entry in entries}
    traced = load_coverage()
    limits = {case: _CASE_LIMIT_FLOOR + _CASE_LIMIT_FACTOR * spent for case, spent in traced.seconds.items()}
    tasks: list[_Task] = []
    unreached: list[Mutant] = []
    for module in modules:
        for mutant in _sample(module, per_module, seed):
            if mutant.key in called:
                continue  # not run: the registry gives its reason
            if mutant.name in kept:
                continue  # killed by the earlier run of this tree
            chosen = traced.cases_for(mutant, statement_of(mutant))
            if chosen == []:
                unreached.append(mutant)
                continue
            spent = sum(traced.seconds.values()) if chosen is None else sum(traced.seconds[i] for i in chosen)
            tasks.append(_Task(mutant, apply(mutant), chosen, timeout=30 + 10 * spent, limits=limits))
    verdicts: dict[str, dict[str, Any]] = {
        m.name: {"killed": False, "by": "no case executes it"} for m in unreached
    }
    verdicts.update((name, {"killed": True, "by": "the earlier run"}) for name in kept)
    for task, verdict in _forked(tasks, jobs):
        verdicts[task.mutant.name] = verdict
        state = "killed" if verdict["killed"] else "SURVIVED"
        print(f"{task.mutant.name:<14} {state} {verdict.get('by', '')}", flush=True)
    results: dict[str, Any] = {}
    for module in modules:
        sample = _sample(module, per_module, seed)
        equivalent = [
            {**_named(mutant), **called[mutant.key].describe()} for mutant in sample if mutant.key in called
        ]
        survived = [
            {**_named(mutant), "reached": verdicts[mutant.name]["by"] != "no case executes it"}
            for mutant in sample
            if mutant.key not in called and not verdicts[mutant.name]["killed"]
        ]
        killed = len(sample) - len(survived) - len(equivalent)
        results[module] = {
            "mutants_in_module": len(mutants(module)),
            "sampled": len(sample),
            "killed": killed,
            "survived": survived,
            "equivalent": equivalent,
            "kill_rate": _rate(killed, len(sample)),
            "kill_rate_non_equivalent": _rate(killed, len(sample) - len(equivalent)),
        }
    sampled = sum(r["sampled"] for r in results.values())
    killed_all = sum(r["killed"] for r in results.values())
    equivalent_all = sum(len(r["equivalent"]) for r in results.values())
    content = {
        "trees": {
            "reference": _git("rev-parse", "HEAD:reference"),
            "commit": _git("rev-parse", "HEAD"),
            "clean": _git("status", "--porcelain", "--", "reference") == "",
        },
        "operators": list(OPERATORS),
        "cases": "every scored conformance case (no reference/tests), each mutant against "
        "the cases that execute its statement",
        "sample": {"per_module": per_module, "seed": seed, "jobs": jobs},
        "rerun": None
        if earlier is None
        else {"of_commit": earlier["trees"]["commit"], "kills_kept": len(kept), "run": len(tasks)},
        "planted": {"mutant": f"{PLANTED[0]}: {PLANTED[1]} -> {PLANTED[2]}", "killed_by": planted["by"]},
        "modules": results,
        "overall": {
            "sampled": sampled,
            "killed": killed_all,
            "equivalent": equivalent_all,
            "kill_rate": _rate(killed_all, sampled),
            "kill_rate_non_equivalent": _rate(killed_all, sampled - equivalent_all),
        },
        "target": {
            "kill_rate_non_equivalent": KILL_TARGET,
            "met": [m for m, r in results.items() if (r["kill_rate_non_equivalent"] or 0) >= KILL_TARGET],
            "unmet": [m for m, r in results.items() if (r["kill_rate_non_equivalent"] or 0) < KILL_TARGET],
        },
        "equivalent_registry": {
            key: registry[key] for key in ("entries", "population", "equivalent", "share", "cap")
        },
        "seconds": round(time.time() - started),
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    return content


def _mutant_named(name: str) -> Mutant:
    """The mutant a run calls `name` (module:index); ValueError saying what is wrong otherwise."""
    module, _, index = name.partition(":")
    if module not in CORE_MODULES:
        raise ValueError(
            f"{name!r}: no core module {module!r}; one of {', '.join(CORE_MODULES)}, as in _query:12"
        )
    found = mutants(module)
    if not index.isdigit() or int(index) >= len(found):
        raise ValueError(f"{name!r}: {module} has mutants 0 to {len(found) - 1}; name one as {module}:12")
    return found[int(index)]


def _show(name: str) -> dict[str, Any]:
    """A mutant by its run name: where it is, what it changes, and the entry that would call it
    equivalent (reason to be written)."""
    mutant = _mutant_named(name)
    statement = statement_of(mutant)
    before = ast.unparse(ast.parse(_source(mutant.module))).splitlines()
    after = apply(mutant).splitlines()
    changed = [f"- {old}\n+ {new}" for old, new in zip(before, after, strict=False) if old != new][:1]
    return {
        "mutant": name,
        "line": mutant.line,
        "statement_line": statement,
        "diff": changed[0] if changed else "",
        "entry": {
            "module": mutant.module,
            "in": mutant.where,
            "line": mutant.text,
            "operator": mutant.operator,
            "change": mutant.description,
            **({"occurrence": mutant.occurrence} if mutant.occurrence else {}),
            "kind": "equivalent",
            "reason": "",
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pimem_tools.mutation", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    runs = commands.add_parser("run", help="measure the core modules and write the results")
    runs.add_argument("--modules", default=",".join(CORE_MODULES))
    runs.add_argument("--per-module", type=int, default=None, help="a seeded sample of this many per module")
    runs.add_argument("--seed", type=int, default=12)
    runs.add_argument("--output", type=Path, default=RESULTS)
    runs.add_argument("--jobs", type=int, default=1, help="mutants run at once (each in its own interpreter)")
    runs.add_argument(
        "--rerun-of",
        type=Path,
        help="an earlier full run's results of the same reference tree: keep its kills, run the rest",
    )
    commands.add_parser("check", help="the planted mutant must be killed")
    tries = commands.add_parser("try", help="run one mutant against these cases (default: every case)")
    tries.add_argument("mutant", help="module:index, as a run prints it")
    tries.add_argument("cases", nargs="*", help="case ids")
    show = commands.add_parser("show", help="a mutant's changed line and its equivalent.json key")
    show.add_argument("mutant", nargs="+", help="module:index, as a run prints it")
    trace = commands.add_parser("trace", help=argparse.SUPPRESS)
    trace.add_argument("path", type=Path)
    worker = commands.add_parser("worker", help=argparse.SUPPRESS)
    worker.add_argument("module")
    worker.add_argument("cases", nargs="*")
    options = parser.parse_args(argv)
    if options.command == "trace":
        _write_trace(options.path)
        return 0
    if options.command == "worker":
        return _worker(options.module, sys.stdin.read(), options.cases)
    if options.command == "show":
        try:
            shown = [_show(name) for name in options.mutant]
        except ValueError as error:
            parser.error(str(error))
        for one in shown:
            print(json.dumps(one, indent=2, ensure_ascii=False))
        return 0
    if options.command == "try":
        unknown = set(options.cases) - {case.id for case in _cases()}
        if unknown:
            parser.error(f"no scored case has the id {', '.join(sorted(unknown))}")
        try:
            mutant = _mutant_named(options.mutant)
        except ValueError as error:
            parser.error(str(error))
        verdict = run_mutant(mutant.module, apply(mutant), timeout=1800, cases=options.cases)
        print(json.dumps({"mutant": options.mutant, **verdict}))
        return 0 if verdict["killed"] else 1
    if options.command == "check":
        planted, control = check()
        print(json.dumps({"planted": planted, "unmutated": control}))
        return 0 if planted["killed"] and not control["killed"] else 1
    content = run(
        options.modules.split(","),
        options.per_module,
        options.seed,
        options.output,
        options.jobs,
        options.rerun_of,
    )
    print(json.dumps(content["overall"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
