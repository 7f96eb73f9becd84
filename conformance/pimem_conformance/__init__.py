"""pimem_conformance: the conformance suite for journal-index memories for Pi.

The public face; every `_module` behind it is private. Running the suite: `load_cases`,
`select_cases`, `run_cases` (or `judge_case` for one case) over an `Adapter`, which speaks the
protocol through a `Connector` (`connector_for` picks the in-process or the subprocess one). Its
failures: `AdapterError` and one subclass per kind (crash, timeout, framing, schema, handshake),
`CaseError`, `CaseFileError`. Checking answers: `check_expectation` and its helpers. Generating
input: `strategies` (Hypothesis), `MemoryMachine` (a stateful test), `journals` (Pi journal
builders), `secrets_corpus`. The pytest plugin is `pimem_conformance.pytest_plugin`.
"""

__version__ = "0.3.0"

from pimem_conformance import journals, strategies
from pimem_conformance._adapter import PROTOCOL_VERSION, Adapter, Implementation
from pimem_conformance._cases import Case, CaseError, CaseFileError, load_cases
from pimem_conformance._cli import main, version_line
from pimem_conformance._conformity import (
    TOOL_PARAMETERS_SCHEMA_ID,
    manifest_mismatches,
    parameter_differences,
    response_mismatches,
)
from pimem_conformance._connector import (
    AdapterCrashed,
    AdapterError,
    AdapterErrorKind,
    AdapterTimedOut,
    Connector,
    FramingError,
    HandshakeFailed,
    InProcessConnector,
    SchemaViolation,
    SubprocessConnector,
    connector_for,
)
from pimem_conformance._corpus_cases import CORPUS_CASE_PREFIX, corpus_cases, corpus_tally
from pimem_conformance._driver import CaseRun, run_case
from pimem_conformance._expect import (
    MISSING,
    Mismatch,
    check_expectation,
    resolve_path,
    result_ids,
    strings_in,
)
from pimem_conformance._jsjson import dumps_like_js, js_number
from pimem_conformance._lint import implementation_defined_items, lint_spec
from pimem_conformance._model import project_root, redacted_text
from pimem_conformance._paths import (
    examples_dir,
    fixtures_dir,
    repo_root,
    shared_journals_1x_dir,
    shared_journals_dir,
    spec_dir,
)
from pimem_conformance._releases import freeze_release, scored
from pimem_conformance._report import REPORT_SCHEMA_ID, render_summary, summarise
from pimem_conformance._report_html import badge_svg, badge_text, page_data, render_page
from pimem_conformance._runner import (
    OUTCOMES,
    Baseline,
    BaselineError,
    CaseResult,
    RunResult,
    judge_case,
    run_cases,
    select_cases,
)
from pimem_conformance._schemas import SchemaSet, load_schemas
from pimem_conformance._workspace import Workspace, epoch_ns, substitute_workspace
from pimem_conformance.statemachine import MemoryMachine, machine_settings

__all__ = [
    "CORPUS_CASE_PREFIX",
    "MISSING",
    "OUTCOMES",
    "PROTOCOL_VERSION",
    "REPORT_SCHEMA_ID",
    "TOOL_PARAMETERS_SCHEMA_ID",
    "Adapter",
    "AdapterCrashed",
    "AdapterError",
    "AdapterErrorKind",
    "AdapterTimedOut",
    "Baseline",
    "BaselineError",
    "Case",
    "CaseError",
    "CaseFileError",
    "CaseResult",
    "CaseRun",
    "Connector",
    "FramingError",
    "HandshakeFailed",
    "Implementation",
    "InProcessConnector",
    "MemoryMachine",
    "Mismatch",
    "RunResult",
    "SchemaSet",
    "SchemaViolation",
    "SubprocessConnector",
    "Workspace",
    "__version__",
    "badge_svg",
    "badge_text",
    "check_expectation",
    "connector_for",
    "corpus_cases",
    "corpus_tally",
    "dumps_like_js",
    "epoch_ns",
    "examples_dir",
    "fixtures_dir",
    "freeze_release",
    "implementation_defined_items",
    "journals",
    "js_number",
    "judge_case",
    "lint_spec",
    "load_cases",
    "load_schemas",
    "machine_settings",
    "main",
    "manifest_mismatches",
    "page_data",
    "parameter_differences",
    "project_root",
    "redacted_text",
    "render_page",
    "render_summary",
    "repo_root",
    "resolve_path",
    "response_mismatches",
    "result_ids",
    "run_case",
    "run_cases",
    "scored",
    "select_cases",
    "shared_journals_1x_dir",
    "shared_journals_dir",
    "spec_dir",
    "strategies",
    "strings_in",
    "substitute_workspace",
    "summarise",
    "version_line",
]
