"""An engine never imports the suite, and holds only storage: the front is the kit's (issue 17).

The suite (the plugin, the rows, the harness, the expected values, the
report) judges engines; an engine that imported it could read the expected
values it is checked against, or need pytest to run. So every import of
``alkstore_contract`` in every engine package, the example's too, must name
one of ``ENGINE_FACING`` — read from the source (an AST walk, so an import
inside a function counts too), without importing the engines.

And within those modules, the names that make up a front — argument checks,
payload encoding, option and retry resolution, one-shot handles, the
contract's strings — are the kit's alone (``FRONT``): an engine importing one
would be writing a front of its own again, and the copies would drift.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

from alkstore_contract._moved import new_path
from tools import public_api

REPO = Path(__file__).resolve().parent.parent
ENGINE_PACKAGES = sorted(
    path.parent
    for pattern in ("reference_engine/*/__init__.py", "engines_under_test/*/__init__.py", "examples/*/*/__init__.py")
    for path in REPO.glob(pattern)
)
ENGINE_FACING = frozenset({*public_api.CONTRACT, "alkstore_contract.kit"})
"""What an engine may import: the surface it implements, the kit, and the rules and helpers written once for it."""


FRONT = frozenset(
    {
        *(
            f"alkstore_contract.validation.{name}"
            for name in (
                "encode_payload",
                "duration_seconds",
                "optional_duration_seconds",
                "validate_batch_size",
                "validate_error",
                "validate_instant",
                "validate_job_id",
                "validate_job_ids",
                "validate_max_attempts",
                "validate_priority",
                "validate_queue_name",
                "validate_worker_id",
            )
        ),
        "alkstore_contract.types.validate_queue_opts",
        "alkstore_contract.handles.OneShot",
        *(
            f"alkstore_contract.resolution.{name}"
            for name in (
                "EnqueueOptions",
                "resolve_new_jobs",
                "decide_retry",
                "encode_payloads",
                "fail_error",
                "LAST_ERROR_EXPIRED",
                "LAST_ERROR_FAILED",
                "LAST_ERROR_MAX_ATTEMPTS",
            )
        ),
    }
)
"""Names of engine-facing modules that are the kit's front; a driver uses ``NewJobs``, ``decode_payload``,
``JobId`` and the like. ``handles.raise_if_closed`` stays open to drivers: storage that closes while a
step waits for it refuses the step with the same ``StoreClosed`` message the kit gives before any I/O."""


def contract_imports(path: Path) -> list[tuple[int, str]]:
    """Every ``alkstore_contract`` module or name ``path`` imports, by line.

    ``from pkg import x`` gives ``pkg`` and ``pkg.x`` (a module or a name in it).
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return [(line, name) for line, name in found if name.partition(".")[0] == "alkstore_contract"]


def suite_import(name: str) -> bool:
    """Whether module ``name`` (or a name inside ``alkstore_contract``) lies outside the engine-facing part.

    The suite's and the report's old paths (``alkstore_contract.harness``), which still import for a
    release, count as theirs.
    """
    if name in ENGINE_FACING or name.rpartition(".")[0] in ENGINE_FACING - {"alkstore_contract"}:
        return False
    if new_path(name) is not None:
        return True
    module = REPO.joinpath(*name.split("."))
    return module.with_suffix(".py").exists() or module.is_dir()


def imports_in(package: Path, wanted: Callable[[str], bool]) -> list[str]:
    """``file:line: name`` of every ``alkstore_contract`` import in ``package`` whose name is ``wanted``."""
    return [
        f"{path.relative_to(REPO)}:{line}: {name}"
        for path in sorted(package.rglob("*.py"))
        for line, name in contract_imports(path)
        if wanted(name)
    ]


def test_every_engine_package_is_scanned() -> None:
    names = {path.name for path in ENGINE_PACKAGES}
    assert {"alkstore_sqlite", "alkstore_mem", "alkstore_postgres", "alkstore_example_dict"} <= names


@pytest.mark.parametrize("package", ENGINE_PACKAGES, ids=lambda path: path.name)
def test_an_engine_imports_nothing_of_the_suite(package: Path) -> None:
    offending = imports_in(package, suite_import)
    assert not offending, (
        "an engine imports the suite (declare pytest options as the adapter's AdapterOption instead of a "
        "plugin of its own; see alkstore_contract/adapter.py):\n" + "\n".join(offending)
    )


@pytest.mark.parametrize("package", ENGINE_PACKAGES, ids=lambda path: path.name)
def test_an_engine_holds_only_storage(package: Path) -> None:
    offending = imports_in(package, FRONT.__contains__)
    assert not offending, (
        "an engine imports the kit's front (validation, encoding, resolution, one-shot handles, the contract's "
        "strings); implement alkstore_contract.kit.StorageDriver and let KitStore do it:\n" + "\n".join(offending)
    )


def test_the_scan_sees_a_suite_import(tmp_path: Path) -> None:
    """The check above can fail: the imports the Postgres engine's old pytest plugin made, the report part's
    and the old paths of both (which still import for a release) are caught."""
    module = tmp_path / "options.py"
    module.write_text(
        "from alkstore_contract.suite.run import SESSION_PLUGIN_NAME\n"
        "from alkstore_contract.suite import rows\n"
        "from alkstore_contract import report\n"
        "import alkstore_contract.harness\n"
        "def later():\n"
        "    import alkstore_contract.suite.plugin\n"
        "from alkstore_contract.report.build import build_report\n"
        "import alkstore_contract.render\n"
        "from alkstore_contract.rows import claim_order\n"
        "from alkstore_contract.validation import describe_value\n"
        "from alkstore_contract import JobId\n",
        encoding="utf-8",
    )
    found = [name for _, name in contract_imports(module) if suite_import(name)]
    assert found == [
        "alkstore_contract.suite.run",
        "alkstore_contract.suite",
        "alkstore_contract.suite.rows",
        "alkstore_contract.report",
        "alkstore_contract.harness",
        "alkstore_contract.report.build",
        "alkstore_contract.render",
        "alkstore_contract.rows",
        "alkstore_contract.rows.claim_order",
        "alkstore_contract.suite.plugin",
    ]


def test_the_scan_sees_a_front_import(tmp_path: Path) -> None:
    """The storage-only check can fail, and lets a driver's own names through."""
    module = tmp_path / "queue.py"
    module.write_text(
        "from alkstore_contract.validation import validate_worker_id, decode_payload\n"
        "from alkstore_contract.handles import OneShot, raise_if_closed\n"
        "from alkstore_contract.kit import KitStore, NewJobs\n",
        encoding="utf-8",
    )
    found = [name for _, name in contract_imports(module) if name in FRONT]
    assert found == ["alkstore_contract.validation.validate_worker_id", "alkstore_contract.handles.OneShot"]
