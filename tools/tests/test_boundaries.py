"""Import boundaries: one module owns the index's SQL, and only it (and the bench's raw baselines) talks
to SQLite; the suite is used through its public face; tests share helpers through modules, never by
importing conftest. Each check is also run where the thing must be found, so it cannot pass by
finding nothing anywhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TREES = ("reference", "conformance", "tools")
SQLITE_MODULES = {"apsw", "sqlite3"}
# the store, and the bench's ceiling (a bare FTS5 table), its read of the reference's FTS5 options,
# its floor (a bare FTS5 table of its own) and its count of the statements a search runs
SQLITE_OWNERS = {
    "reference/pimem/_store.py",
    "reference/pimem/_store_checks.py",  # what no answer of the memory runs: the doctor's checks, test damage
    "reference/pimem/_pages.py",  # the page check: the VFS that writes each page's CRC (no SQL)
    "tools/pimem_tools/bench/_ceiling.py",
    "tools/pimem_tools/bench/_floor.py",
    "tools/pimem_tools/bench/_reference.py",
    "tools/pimem_tools/bench/_work.py",
}
SQL_STATEMENT = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+(OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(VIRTUAL\s+)?(TABLE|INDEX)\b|\bDROP\s+TABLE\b|\bPRAGMA\s+\w+|\bBEGIN\s+IMMEDIATE\b"
    r"|\bATTACH\s+DATABASE\b|\bVACUUM\b",
    re.DOTALL,
)


def python_files() -> list[Path]:
    return sorted(
        path
        for tree in TREES
        for path in (REPO / tree).rglob("*.py")
        if ".venv" not in path.parts and "node_modules" not in path.parts
    )


def _relative(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def imported_modules(path: Path) -> set[str]:
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def sql_strings(path: Path) -> list[str]:
    """The string literals (f-string pieces included) that contain an SQL statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_STATEMENT.search(node.value)
    ]


def test_only_the_store_and_the_bench_baselines_import_sqlite() -> None:
    importers = {_relative(path) for path in python_files() if imported_modules(path) & SQLITE_MODULES}
    assert importers == SQLITE_OWNERS


def test_no_sql_statement_outside_the_store() -> None:
    exempt = {
        *SQLITE_OWNERS,
        _relative(Path(__file__)),  # this file names the statements it looks for
        # a carrier of the held-out secrets: SQL as text a journal holds, never run
        "conformance/pimem_conformance/secrets_corpus/_heldout.py",
    }
    found = {
        _relative(path): strings
        for path in python_files()
        if _relative(path) not in exempt and (strings := sql_strings(path))
    }
    assert found == {}


def test_the_sql_check_finds_the_stores_statements() -> None:
    verbs = set()
    for statement in sql_strings(REPO / "reference/pimem/_store.py"):
        found = SQL_STATEMENT.search(statement)
        assert found is not None
        verbs.add(found.group(0).split()[0])
    assert verbs >= {"SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "PRAGMA", "BEGIN", "VACUUM"}
    assert not SQL_STATEMENT.search("select a journal from the list; update the cursor, then delete it")


def private_suite_imports(path: Path) -> list[str]:
    """The private `pimem_conformance._*` modules a file imports, and any `conftest` import."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        found += [
            name
            for name in names
            if name.startswith("pimem_conformance._") or name.split(".")[0] == "conftest"
        ]
    return found


def test_nothing_outside_the_suite_imports_its_private_modules_or_conftest() -> None:
    package = REPO / "conformance" / "pimem_conformance"
    found = {
        _relative(path): imports
        for path in python_files()
        if package not in path.parents and (imports := private_suite_imports(path))
    }
    assert found == {}


def test_the_private_import_check_sees_the_suites_own_imports() -> None:
    assert "pimem_conformance._connector" in private_suite_imports(
        REPO / "conformance/pimem_conformance/_adapter.py"
    )
