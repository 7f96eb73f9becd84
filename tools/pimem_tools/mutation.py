"""Mutation testing of the reference against the conformance cases alone.

`python -m pimem_tools.mutation run [--per-module N] [--modules a,b] [--jobs J]` enumerates the
mutants of the core modules of `reference/pimem`, runs the conformance cases (single-process cases,
no `reference/tests`) against each mutant, and writes `tools/mutation/results.json` with the tree it
measured. A mutant is *killed* when some case fails or errors, *survived* otherwise.

Each mutant is applied at import: a meta-path finder hands the interpreter the mutated source of
its module before anything imports it, so every `from ._x import name` binds the mutated code and
the suite cannot reach an unmutated copy (the trap of tools that copy the tree). `check` proves the
set-up: a planted mutant that the suite must kill, killed through the same path, and the unmutated
module, which every case passes.

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
- `int`: an integer constant plus one and minus one (two mutants);
- `statement`: a statement that is a call removed (replaced by `pass`);
- `return`: a returned value replaced by `None`.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = [
    "CORE_MODULES",
    "OPERATORS",
    "PLANTED_KILLER",
    "Mutant",
    "apply",
    "check",
    "forked_verdicts",
    "mutants",
    "planted_source",
    "run_mutant",
]

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "reference" / "pimem"
RESULTS = REPO / "tools" / "mutation" / "results.json"
CORE_MODULES = ("_scope", "_query", "_journals", "_extract", "_redact", "_index", "_store")
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
    index: int  # the n-th mutation site of the module, in walk order
    operator: str
    line: int
    description: str

    @property
    def name(self) -> str:
        return f"{self.module}:{self.index}"


def _returns_none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None


def _sites(tree: ast.AST) -> Iterator[tuple[ast.AST, str, int, str]]:
    """(node, operator, variant, description) of every mutation, in a stable walk order."""
    for node in ast.walk(tree):
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


def _source(module: str) -> str:
    return (PACKAGE / f"{module}.py").read_text(encoding="utf-8")


def mutants(module: str) -> list[Mutant]:
    tree = ast.parse(_source(module))
    return [
        Mutant(module, number, operator, getattr(node, "lineno", 0), description)
        for number, (node, operator, _variant, description) in enumerate(_sites(tree))
    ]


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


def _cases() -> list[Any]:
    """Every case a mutant is measured on: the single-process cases still scored (peer processes
    would import the unmutated module; withdrawn cases are history)."""
    from pimem_conformance import load_cases, scored

    return [case for case in load_cases() if case.processes == 1 and scored(case, None)]


def _run_cases_here(cases: Sequence[Any]) -> tuple[bool, str]:
    """(killed, the first failing case) over `cases`, stopping at the first failure."""
    from pimem._serve import ProtocolServer
    from pimem_conformance import Adapter, InProcessConnector, load_schemas, run_case

    schemas = load_schemas()
    adapter = Adapter(InProcessConnector(ProtocolServer), schemas)
    try:
        adapter.start()
        for case in cases:
            outcome = run_case(adapter, case, schemas).outcome
            if outcome != "pass":
                return True, f"{case.id} ({outcome})"
    except Exception as error:  # a mutant that breaks the adapter itself is killed too
        return True, f"adapter broke: {type(error).__name__}"
    finally:
        with contextlib.suppress(Exception):  # the mutant may have broken stop; the verdict stands
            adapter.stop()
    return False, ""


def _worker(module: str, source: str, only: Sequence[str] = ()) -> int:
    sys.meta_path.insert(0, _Finder(f"pimem.{module}", source))
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


def _statement_lines(tree: ast.AST) -> dict[int, int]:
    """For each node's id, the first line of the innermost statement holding it (what a trace
    records for a statement spread over several lines)."""
    lines: dict[int, int] = {}

    def visit(node: ast.AST, line: int) -> None:
        line = node.lineno if isinstance(node, ast.stmt) else line
        lines[id(node)] = line
        for child in ast.iter_child_nodes(node):
            visit(child, line)

    visit(tree, 0)
    return lines


def statement_of(mutant: Mutant) -> int:
    """The first line of the statement a mutant changes."""
    tree = ast.parse(_source(mutant.module))
    node = list(_sites(tree))[mutant.index][0]
    return _statement_lines(tree)[id(node)]


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
    adapter = Adapter(InProcessConnector(ProtocolServer), schemas)
    adapter.start()
    seconds: dict[str, float] = {}
    try:
        for case in _cases():
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
            by_line = data.contexts_by_lineno(path)
            lines[module] = {line: sorted(set(contexts)) for line, contexts in by_line.items()}
    return Coverage(_git("rev-parse", "HEAD:reference"), lines, seconds)


def _coverage_file(tree: str) -> Path:
    return REPO / ".cache" / "mutation" / f"coverage-{tree[:12]}.json"


def _read_trace(path: Path) -> Coverage:
    raw = json.loads(path.read_text(encoding="utf-8"))
    lines = {module: {int(k): v for k, v in by.items()} for module, by in raw["lines"].items()}
    return Coverage(raw["tree"], lines, raw["seconds"])


def load_coverage() -> Coverage:
    """The trace of today's reference tree, traced once and kept in `.cache/mutation/` (traced
    again whenever `reference/` has uncommitted changes)."""
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


def _child(task: _Task, cases: dict[str, Any], write: int) -> None:
    """In a forked child: measure one mutant, write the verdict."""
    for loaded in [name for name in sys.modules if name == "pimem" or name.startswith("pimem.")]:
        del sys.modules[loaded]  # every module of the reference is imported again, over the mutant
    sys.meta_path.insert(0, _Finder(f"pimem.{task.mutant.module}", task.source))
    chosen = list(cases.values()) if task.case_ids is None else [cases[i] for i in task.case_ids]
    try:
        killed, by = _run_cases_here(chosen)
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


def run(
    modules: Sequence[str], per_module: int | None, seed: int, output: Path, jobs: int = 1
) -> dict[str, Any]:
    started = time.time()
    planted, control = check()
    if not planted["killed"] or control["killed"]:
        raise SystemExit(f"the set-up is broken: planted {planted}, unmutated {control}")
    traced = load_coverage()
    tasks: list[_Task] = []
    unreached: list[Mutant] = []
    for module in modules:
        for mutant in _sample(module, per_module, seed):
            chosen = traced.cases_for(mutant, statement_of(mutant))
            if chosen == []:
                unreached.append(mutant)
                continue
            spent = sum(traced.seconds.values()) if chosen is None else sum(traced.seconds[i] for i in chosen)
            tasks.append(_Task(mutant, apply(mutant), chosen, timeout=30 + 10 * spent))
    verdicts: dict[str, dict[str, Any]] = {
        m.name: {"killed": False, "by": "no case executes it"} for m in unreached
    }
    for task, verdict in _forked(tasks, jobs):
        verdicts[task.mutant.name] = verdict
        state = "killed" if verdict["killed"] else "SURVIVED"
        print(f"{task.mutant.name:<14} {state} {verdict.get('by', '')}", flush=True)
    results: dict[str, Any] = {}
    for module in modules:
        sample = _sample(module, per_module, seed)
        survived = [
            {
                "mutant": mutant.name,
                "operator": mutant.operator,
                "line": mutant.line,
                "description": mutant.description,
                "reached": verdicts[mutant.name]["by"] != "no case executes it",
            }
            for mutant in sample
            if not verdicts[mutant.name]["killed"]
        ]
        killed = len(sample) - len(survived)
        results[module] = {
            "mutants_in_module": len(mutants(module)),
            "sampled": len(sample),
            "killed": killed,
            "survived": survived,
            "equivalent": [],
            "kill_rate": round(killed / len(sample), 4) if sample else None,
        }
    sampled = sum(r["sampled"] for r in results.values())
    killed_all = sum(r["killed"] for r in results.values())
    content = {
        "trees": {
            "reference": _git("rev-parse", "HEAD:reference"),
            "commit": _git("rev-parse", "HEAD"),
            "clean": _git("status", "--porcelain", "--", "reference") == "",
        },
        "operators": list(OPERATORS),
        "cases": "every single-process conformance case (no reference/tests), each mutant against "
        "the cases that execute its statement",
        "sample": {"per_module": per_module, "seed": seed, "jobs": jobs},
        "planted": {"mutant": f"{PLANTED[0]}: {PLANTED[1]} -> {PLANTED[2]}", "killed_by": planted["by"]},
        "modules": results,
        "overall": {
            "sampled": sampled,
            "killed": killed_all,
            "kill_rate": round(killed_all / sampled, 4) if sampled else None,
        },
        "seconds": round(time.time() - started),
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
    return content


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
    commands.add_parser("check", help="the planted mutant must be killed")
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
    if options.command == "check":
        planted, control = check()
        print(json.dumps({"planted": planted, "unmutated": control}))
        return 0 if planted["killed"] and not control["killed"] else 1
    content = run(options.modules.split(","), options.per_module, options.seed, options.output, options.jobs)
    print(json.dumps(content["overall"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
